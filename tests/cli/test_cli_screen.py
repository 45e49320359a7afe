"""One screen: ``sapwood explain`` in a pseudo-terminal 80 columns wide prints a
10-feature, 4-measure run in at most 40 lines, the verdict in the first 12, the progress
bars erased when each step ends (issue 51, item 8); piped, it honours COLUMNS and wraps
its warnings between words."""

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sapwood.cli import main
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


def _in_terminal(argv, columns=80, rows=50, stderr=False, term="dumb") -> str:
    """What ``argv`` writes to a terminal ``columns`` wide (stdout on the terminal;
    stderr, the notes and bars, there too when ``stderr``, else elsewhere)."""
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    process = subprocess.Popen(argv, stdout=secondary,
                               stderr=secondary if stderr else subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=_environment(TERM=term))
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


_CONTROL = re.compile(r"\x1b\[(\??)(\d*)([A-Za-z])|\r|\n|[^\x1b\r\n]+")


def _what_stays(text, width):
    """The lines a terminal ``width`` wide shows once ``text`` is written (a small
    emulator: text wrapping at the width, newline, carriage return, cursor up, erase
    in line; other control sequences, colours and the cursor's, are ignored)."""
    lines, row, column = [""], 0, 0
    for match in _CONTROL.finditer(text.replace("\r\n", "\n")):
        piece = match.group(0)
        if piece == "\n":
            row, column = row + 1, 0
        elif piece == "\r":
            column = 0
        elif match.group(3):
            if match.group(3) == "A" and not match.group(1):
                row = max(0, row - int(match.group(2) or 1))
            elif match.group(3) == "K":
                lines[row] = ""
            continue
        else:
            for char in piece:
                if column == width:
                    row, column = row + 1, 0
                while len(lines) <= row:
                    lines.append("")
                line = lines[row].ljust(column)
                lines[row] = line[:column] + char + line[column + 1:]
                column += 1
        while len(lines) <= row:
            lines.append("")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def test_one_screen_in_an_80_column_terminal(csv):
    # stdout and stderr on one terminal 80 x 24, as a user runs it. Issue 51: the
    # finished bars stayed on screen and pushed the verdict to line 16-18.
    text = _in_terminal([SAPWOOD, "explain", str(csv), "--target", "y", "--methods",
                         "mdi,permutation,oob,shap"], stderr=True, rows=24, term="xterm")
    assert "Computing permutation importance" in text  # the bars were drawn
    lines = _what_stays(text, 80)
    assert not any("Computing" in line or "Fitting" in line for line in lines), lines
    assert len(lines) <= 40, lines
    assert any(line.startswith("Verdict") for line in lines[:12]), lines
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


def test_piped_warnings_wrap_between_words(tmp_path, capsys, monkeypatch):
    # Issue 51: in a pipe the warning lines were cut at 80 columns ("no s...").
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    frame["y"] = rng.normal(size=300)  # no signal: the baseline warning is long
    path = tmp_path / "noise.csv"
    frame.to_csv(path, index=False)
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["explain", str(path), "--target", "y", "--methods", "permutation"]) == 0
    out = capsys.readouterr().out
    warning = out[out.index("Warning (baseline)"):out.index("\nEvery measure's table")]
    assert "…" not in warning and "..." not in warning
    assert len(warning.splitlines()) > 1 and all(len(line) <= 60
                                                 for line in warning.splitlines())
    assert "than a constant model" in " ".join(warning.split())
