"""Progress bars on stderr for fitting, scoring and each importance measure: only when
stderr is a terminal, never with --quiet or --json."""

import io
import re

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from sapwood.cli import _commands, main
from sapwood.cli._ui import UI
from sapwood.report._steps import Steps


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(size=80), "b": rng.uniform(size=80)})
    frame["y"] = (frame["a"] > 0.5).astype(int)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def terminal(monkeypatch):
    """Make the commands' stderr console a terminal writing into a buffer."""
    buffer = io.StringIO()

    def ui(quiet=False, json=False):
        console = Console(file=buffer, force_terminal=True, color_system=None, width=100)
        return UI(quiet=quiet, json=json, err=console)

    monkeypatch.setattr(_commands, "UI", ui)
    return buffer


def test_progress_on_a_terminal(terminal, csv, capsys):
    assert main(["explain", str(csv), "--target", "y", "--model", "tree"]) == 0
    text = terminal.getvalue()
    for label in ("Fitting DecisionTreeClassifier(max_depth=8) on 60 rows",
                  "Scoring on 20 held-out rows",
                  "Computing mdi importance from the fitted trees"):
        assert f"✓ {label}" in text, text
    # The checks count their work (one unit per column, three besides).
    assert re.search(r"Checking for identifiers, leakage and correlated features .*?"
                     r"(\d+)/\1", text), text
    # Permutation counts its permuted scores in a bar of its own, under its line.
    assert "Computing permutation importance on the held-out rows" in text
    out, err = capsys.readouterr()
    assert "permuted scores" in err
    # Results still go to stdout, untouched by the bars.
    assert out.startswith(f"Data: {csv}: 80 rows")


@pytest.fixture
def cached(monkeypatch):
    """The kernels in Numba's cache (else a note says they were compiled)."""
    monkeypatch.setattr(_commands, "uncompiled", lambda methods: [])


@pytest.mark.parametrize("flag", ["--quiet", "--json"])
def test_no_progress_with_quiet_or_json(terminal, csv, flag, capsys, cached):
    assert main(["explain", str(csv), "--target", "y", "--model", "tree", flag]) == 0
    assert terminal.getvalue() == ""


def test_no_progress_when_stderr_is_not_a_terminal(csv, capsys, cached):
    assert main(["explain", str(csv), "--target", "y", "--model", "tree"]) == 0
    assert capsys.readouterr().err == ""


def test_a_failed_step_is_marked(capsys):
    buffer = io.StringIO()
    steps = Steps(Console(file=buffer, force_terminal=True, color_system=None, width=80))
    with pytest.raises(RuntimeError), steps.step("Fitting"):
        raise RuntimeError("boom")
    assert "Fitting (failed)" in buffer.getvalue()


def test_a_skipped_measure_is_marked():
    buffer = io.StringIO()
    steps = Steps(Console(file=buffer, force_terminal=True, color_system=None, width=80))
    with steps.step("Computing mdi importance") as step:
        step.skipped()
    assert "Computing mdi importance (skipped)" in buffer.getvalue()
    assert "✓" not in buffer.getvalue()


def test_a_forest_fit_counts_its_trees_and_a_refit_measure_its_refits(terminal, csv, capsys):
    assert main(["explain", str(csv), "--target", "y", "--model", "rf", "--methods",
                 "mdi,drop"]) == 0
    text = terminal.getvalue()
    assert "Fitting RandomForestClassifier(n_estimators=100, max_depth=None) on 60 rows" \
        in text
    assert "Computing drop importance by refitting without each feature" in text
    err = capsys.readouterr().err
    # The library's own bars: tree by tree, refit by refit, with counts.
    assert "Growing trees" in err and "100/100" in err
    assert "drop-column refits" in err and "3/3" in err


def test_a_finished_step_and_a_heading_leave_the_screen():
    # Issue 51: the finished bars stayed and pushed the verdict down the screen.
    from tests.cli.test_cli_screen import _what_stays

    buffer = io.StringIO()
    steps = Steps(Console(file=buffer, force_terminal=True, color_system=None, width=80))
    with steps.step("Fitting a tree"):
        pass
    with steps.line("Computing permutation importance on the held-out rows " * 2):
        pass  # a heading of two lines, above a bar the measure draws itself
    with steps.step("Computing mdi importance") as step:
        step.skipped()
    assert "Fitting a tree" in buffer.getvalue()  # drawn, then erased
    [stays] = _what_stays(buffer.getvalue(), 80)  # a skipped step stays, marked
    assert stays.startswith("– Computing mdi importance (skipped)")


def test_a_wide_table_counts_the_rank_intervals(terminal, csv, capsys, monkeypatch):
    from sapwood.report import _explain

    monkeypatch.setattr(_explain, "MANY_FEATURES", 2)  # as if the table were wide
    assert main(["explain", str(csv), "--target", "y", "--model", "tree"]) == 0
    assert re.search(r"Computing each measure's rank intervals .*2/2", terminal.getvalue())


def test_a_narrow_table_has_no_rank_interval_bar(terminal, csv, capsys):
    assert main(["explain", str(csv), "--target", "y", "--model", "tree"]) == 0
    assert "rank intervals" not in terminal.getvalue()
