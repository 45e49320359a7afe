"""``sapwood explain --select knockoffs --fdr Q``: the selection printed, in --json and in
the report (W with the threshold as a plot), equal to ``knockoffs`` on the training
rows; the new measures by name; and the bad inputs."""

import json

import matplotlib
import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.cli import main
from sapwood.plotting import plot_knockoffs
from sapwood.report._data import prepare
from sapwood.report._explain import split_rows
from sapwood.selection import knockoffs
from tests.cli._helpers import run_bad

matplotlib.use("Agg")

N_ROWS = 300
N_FEATURES = 12


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    """y depends on a, b, c, d; eight noise columns."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((N_ROWS, N_FEATURES))
    names = list("abcd") + [f"noise{j}" for j in range(N_FEATURES - 4)]
    frame = pd.DataFrame(X, columns=names)
    frame["y"] = X[:, :4] @ np.array([2.0, 1.5, 1.5, 1.0]) + 0.5 * rng.standard_normal(N_ROWS)
    path = tmp_path_factory.mktemp("select") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run_json(argv, capsys):
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def selection(csv):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["explain", str(csv), "--target", "y", "--model", "et", "--select",
                     "knockoffs", "--fdr", "0.25", "--json", "--quiet"])
    assert code == 0
    return json.loads(out.getvalue())["selection"]


def test_the_selection_is_knockoffs_on_the_training_rows(csv, selection):
    data = prepare(pd.read_csv(csv), "y", "auto")
    X_train, _, y_train, _ = split_rows(data, 0.25, 0)
    estimator = sapwood.ExtraTreesRegressor(n_estimators=100, random_state=0)
    expected = knockoffs(X_train, y_train, fdr=0.25, estimator=estimator, random_state=0)
    assert selection["method"] == "knockoffs" and selection["fdr"] == 0.25
    assert selection["selected"] == expected.selected
    assert selection["threshold"] == pytest.approx(float(expected.threshold[0]))
    W = np.array([selection["W"][name] for name in expected.feature_names])
    np.testing.assert_allclose(W, expected.W[0])
    chosen = [name for name, w in selection["W"].items() if w >= selection["threshold"]]
    assert sorted(chosen) == sorted(selection["selected"])
    assert set(selection["selected"]) >= {"a", "b", "c"}


def test_the_terminal_and_the_report_show_it(csv, tmp_path, capsys):
    report = tmp_path / "report.html"
    assert main(["explain", str(csv), "--target", "y", "--model", "et", "--select",
                 "knockoffs", "--report", str(report), "--details"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Model-X knockoff selection on the training rows" in out
    assert "Selected at FDR 0.1 (" in out and "Threshold T = " in out
    page = report.read_text(encoding="utf-8")
    section = page[page.index("<summary>Model-X knockoff selection</summary>"):]
    assert "alt='knockoff W'" in section and "Threshold T = " in section


def test_plot_knockoffs_draws_w_and_the_threshold(csv):
    data = prepare(pd.read_csv(csv), "y", "auto")
    result = knockoffs(data.X, data.y, fdr=0.25, statistic="mdi", random_state=0,
                       estimator=sapwood.ExtraTreesRegressor(n_estimators=30))
    ax = plot_knockoffs(result)
    assert len(ax.patches) == N_FEATURES
    widths = sorted(patch.get_width() for patch in ax.patches)
    np.testing.assert_allclose(widths, np.sort(result.W[0]))
    lines = [line.get_xdata()[0] for line in ax.get_lines()]
    assert float(result.threshold[0]) in lines and -float(result.threshold[0]) in lines
    with pytest.raises(ValueError, match="draw must be in"):
        plot_knockoffs(result, draw=1)


@pytest.mark.parametrize("method", ["cpi", "mdi_plus", "sage"])
def test_the_new_measures_run_by_name(csv, capsys, method):
    document = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                         "--methods", method], capsys)
    rows = document["measures"][method]
    assert len(rows) == N_FEATURES
    top = max(rows, key=lambda row: row["importance"])
    assert top["feature"] == "a"


def test_rows_knockoffs_cannot_take_skip_the_selection_with_a_note(csv, tmp_path, capsys):
    # Gaussian knockoffs need finite numbers: with a missing value the run still gives
    # its verdict, and says why nothing was selected.
    frame = pd.read_csv(csv)
    frame.loc[::7, "a"] = np.nan
    path = tmp_path / "missing.csv"
    frame.to_csv(path, index=False)
    document = run_json(["explain", str(path), "--target", "y", "--model", "tree",
                         "--select", "knockoffs"], capsys)
    assert document["selection"] is None
    assert document["verdict"] is not None
    notes = [note for note in document["notes"] if note.startswith("select knockoffs")]
    assert len(notes) == 1 and "skipped" in notes[0] and "NaN" in notes[0]


def test_bad_inputs(csv, capsys):
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--fdr", "0.1"],
            "--fdr 0.1", "add --select knockoffs")
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--select", "boruta"],
            "--select", "knockoffs")
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--select", "knockoffs",
                     "--fdr", "1.5"], "--fdr", "(0, 1)")
