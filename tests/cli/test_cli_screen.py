"""One screen: ``sapwood explain`` in a pseudo-terminal 80 columns wide prints a
10-feature, 4-measure run in at most 40 lines, the verdict in the first 12; piped, it
honours COLUMNS."""

import fcntl
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest

from sapwood.datasets import make_ground_truth

SAPWOOD = shutil.which("sapwood", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(SAPWOOD is None, reason="the sapwood executable is not "
                                "installed beside this Python")


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    X, y, _ = make_ground_truth(1200, task="classification", random_state=2)
    X["extra_noise"] = np.random.default_rng(2).normal(size=len(X))
    assert X.shape[1] == 10
    path = tmp_path_factory.mktemp("screen") / "data.csv"
    X.assign(y=y).to_csv(path, index=False)
    return path


def _environment(**extra):
    env = {key: value for key, value in os.environ.items()
           if key not in ("COLUMNS", "LINES", "SAPWOOD_DEBUG")}
    env.update(extra)
    return env


def _in_terminal(argv, columns=80, rows=50) -> str:
    """What ``argv`` shows on a terminal ``columns`` wide (stdout on the terminal;
    stderr, the notes and bars, elsewhere)."""
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    process = subprocess.Popen(argv, stdout=secondary, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=_environment(TERM="dumb"))
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(timeout=600) == 0
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def _screen_lines(text, width):
    return [line[i:i + width] for line in text.splitlines()
            for i in range(0, max(len(line), 1), width)]


def test_one_screen_in_an_80_column_terminal(csv):
    text = _in_terminal([SAPWOOD, "explain", str(csv), "--target", "y", "--methods",
                         "mdi,permutation,oob,shap"])
    lines = _screen_lines(text, 80)
    assert len(lines) <= 40, text
    assert any(line.startswith("Verdict") for line in lines[:12]), text
    assert "The model clearly relies on:" in text


def test_piped_output_honours_columns(csv):
    for width in (60, 100):
        result = subprocess.run([SAPWOOD, "explain", str(csv), "--target", "y",
                                 "--methods", "mdi,permutation"], capture_output=True,
                                text=True, env=_environment(COLUMNS=str(width)), timeout=600)
        assert result.returncode == 0, result.stderr
        table = [line for line in result.stdout.splitlines()
                 if not line.startswith(("Data:", "Model:"))]
        assert max(len(line) for line in table) <= width
