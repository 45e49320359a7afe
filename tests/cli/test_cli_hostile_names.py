"""Names from data are data: markup, mathtext, terminal control sequences and very
long names in column names reach the terminal, the report and the drawings as the
characters they are, and nothing breaks."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from sapwood._text import for_plot, quoted, shorten, visible
from sapwood.cli import main

OSC8 = "\x1b]8;;http://example.com\x1b\\link\x1b]8;;\x1b\\"
NAMES = ["[/]", "$\\foo$", OSC8, "bell\x07\x08over", "[bold red]x[/bold red]", "L" * 5000]


@pytest.fixture(scope="module")
def hostile_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({name: rng.normal(size=300) for name in NAMES})
    frame["y"] = (frame["[/]"] + frame["$\\foo$"] > 0).astype(int)
    path = tmp_path_factory.mktemp("hostile") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return code, stdout.getvalue(), stderr.getvalue()


def test_the_terminal_shows_names_as_characters(hostile_csv, tmp_path):
    report = tmp_path / "report.html"
    code, out, err = run(["explain", str(hostile_csv), "--target", "y", "--methods",
                          "mdi,permutation", "--report", str(report)])
    assert code == 0, err
    for control in ("\x1b", "\x07", "\x08"):
        assert control not in out and control not in err
    assert "[/]" in out and "$\\foo$" in out and "[bold red]x[/bold red]" in out
    assert "\\x1b]8;;http://example.com" in out and "bell\\x07\\x08over" in out
    # The long name is shortened in tables and messages, never printed whole.
    assert "L" * 5000 not in out and "L" * 59 + "…" in out
    text = report.read_text(encoding="utf-8")
    assert "\x1b" not in text and "L" * 5000 not in text
    assert "[/]" in text and "$\\foo$" in text


def test_json_keeps_names_whole(hostile_csv):
    code, out, err = run(["explain", str(hostile_csv), "--target", "y", "--methods",
                          "mdi", "--json"])
    assert code == 0, err
    document = json.loads(out)
    assert {row["feature"] for row in document["measures"]["mdi"]} == set(NAMES)


def test_drawings_do_not_parse_mathtext(hostile_csv, tmp_path):
    for suffix in (".png", ".svg"):
        out = tmp_path / f"tree{suffix}"
        code, _, err = run(["tree", str(hostile_csv), "--target", "y", "--out", str(out)])
        assert code == 0, err
        assert out.stat().st_size > 0
    code, out, _ = run(["tree", str(hostile_csv), "--target", "y"])
    assert code == 0 and "\x1b" not in out


def test_text_helpers():
    assert visible("a\x1bb\u202ec") == "a\\x1bb\\u202ec"
    assert visible("plain [/] $x$ é") == "plain [/] $x$ é"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"
    assert for_plot("$\\alpha$") == "\\$\\alpha\\$"
    assert quoted("a\x07") == "'a\\x07'"
