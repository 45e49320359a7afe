"""The commands on good input: in-process through ``main`` and as a subprocess."""

import contextlib
import gc
import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sapwood.cli import command, main
from sapwood.datasets._ground_truth import make_ground_truth
from sapwood.report._measures import DEMO_METHODS

# Large enough for a 100-tree forest to show MDI's bias on every seed we tried.
DEMO_ROWS = 1000


@pytest.fixture
def mixed_csv(tmp_path):
    """Numbers, a text column with missing values, a text target."""
    rng = np.random.default_rng(0)
    n = 120
    x = rng.uniform(size=n)
    frame = pd.DataFrame({
        "x": x,
        "colour": rng.choice(["red", "green", "blue", None], size=n),
        "count": rng.integers(0, 5, size=n).astype(float),
        "label": np.where(x > 0.5, "high", "low"),
    })
    frame.loc[::7, "count"] = np.nan
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """One demo run, as JSON, that also writes a report."""
    report = tmp_path_factory.mktemp("demo") / "report.html"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["demo", "--n-samples", str(DEMO_ROWS), "--json", "--report", str(report)])
    return code, json.loads(stdout.getvalue()), report


def test_demo_exit_code_and_json(demo_run):
    code, document, report = demo_run
    assert code == 0
    assert document["data"]["n_rows"] == DEMO_ROWS
    assert document["truth"]["noise_id"] == "noise"
    # The demo shows every measure that applies to its forest.
    assert list(document["measures"]) == list(DEMO_METHODS)
    assert report.is_file()


def test_demo_report_is_complete_and_self_contained(demo_run):
    _, _, report = demo_run
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert '<img alt=\'mdi importance\' src="data:image/png;base64,' in text
    assert "MDI node trace" in text
    assert "Ranks side by side" in text
    assert "http://" not in text and "https://" not in text
    assert [p.name for p in report.parent.iterdir()] == ["report.html"]


def test_demo_shows_mdi_bias_toward_the_id_column(demo_run):
    _, document, report = demo_run
    ranks = {row["feature"]: row for row in document["ranks"]}
    truth = document["truth"]
    informative = [name for name, role in truth.items() if role == "informative"]
    # MDI ranks the ID column above at least one informative feature ...
    assert any(ranks["noise_id"]["mdi"] < ranks[name]["mdi"] for name in informative)
    # ... held-out permutation ranks it below every one of them.
    assert all(ranks["noise_id"]["permutation"] > ranks[name]["permutation"]
               for name in informative)
    assert any("noise_id" in warning["features"] for warning in document["warnings"]
               if warning["kind"] == "disagreement")
    assert "class='warning'" in report.read_text(encoding="utf-8")


def test_demo_tables_in_process(capsys):
    assert main(["demo", "--n-samples", "300", "--details"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("Data: ground truth (make_ground_truth, seed 0): 300 rows, 9 features")
    assert "mdi: mean decrease in impurity, on the training data" in out
    assert "MDI evidence: first tree's split nodes" in out
    assert "The ID column noise_id (pure noise): MDI rank " in out
    assert "Ranks side by side (1 = most important)" in out


def test_explain_mixed_types_in_process(capsys, mixed_csv, tmp_path):
    report = tmp_path / "explain.html"
    code = main(["explain", str(mixed_csv), "--target", "label", "--model", "tree",
                 "--max-depth", "3", "--report", str(report)])
    out, err = capsys.readouterr()
    assert code == 0, err
    # The summary lines fit the console (80 columns when piped): read them unwrapped.
    out = " ".join(out.split())
    assert out.startswith(f"Data: {mixed_csv}: 120 rows, 3 features, target 'label' "
                          "(classification, 2 distinct values) Encoded as ordinal codes "
                          "(text sorted; a categorical column in its own order): colour "
                          "Missing feature values (cells) kept as missing: ")
    assert "Model: DecisionTreeClassifier(max_depth=3), trained on 90 rows" in out
    assert f"Report written to {report}" in out
    assert 'src="data:image/png;base64,' in report.read_text(encoding="utf-8")


def test_explain_regression_json(capsys, tmp_path):
    X, y, _ = make_ground_truth(200, task="regression", random_state=1)
    path = tmp_path / "reg.csv"
    X.assign(target=y).to_csv(path, index=False)
    assert main(["explain", str(path), "--target", "target", "--model", "tree", "--json",
                 "--methods", "mdi"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["data"]["task"] == "regression"
    assert document["model"]["score_name"] == "R²"
    assert list(document["measures"]) == ["mdi"]
    assert len(document["measures"]["mdi"]) == X.shape[1]


def test_explain_task_override(capsys, mixed_csv):
    # count has missing values: those rows are left out with a note, the rest regressed.
    assert main(["explain", str(mixed_csv), "--target", "count", "--task", "regression",
                 "--model", "tree", "--methods", "mdi", "--json"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["data"]["task"] == "regression"
    assert "note: 18 row(s) whose target 'count' is missing left out; 102 rows remain" in err
    assert any("18 row(s)" in note for note in document["notes"])


def test_quiet_prints_nothing(capsys, mixed_csv):
    assert main(["explain", str(mixed_csv), "--target", "label", "--model", "tree",
                 "--methods", "mdi", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_tree_prints_rules(capsys, mixed_csv):
    assert main(["tree", str(mixed_csv), "--target", "label", "--max-depth", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("|--- x <= 0.")
    assert "class: high" in out or "class: low" in out


@pytest.mark.parametrize("suffix, start", [(".txt", b"|--- "), (".dot", b"digraph Tree {"),
                                           (".svg", b"<?xml")])
def test_tree_writes_file(capsys, mixed_csv, tmp_path, suffix, start):
    out_file = tmp_path / f"tree{suffix}"
    assert main(["tree", str(mixed_csv), "--target", "label", "--out", str(out_file)]) == 0
    assert out_file.read_bytes().startswith(start)
    assert capsys.readouterr().out.startswith("Tree (classification, depth ")


def test_help_lists_encoding_and_the_default_score(capsys):
    assert main(["explain", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "ordinal codes" in out
    # The default the library applies (report._models.default_scoring), not the model's.
    assert "(default: the Brier score for a classifier" in out


def test_the_executable_runs_main_on_its_arguments_then_freezes_the_collector(monkeypatch,
                                                                              capsys):
    # So that the interpreter's exit does not walk every object the run left; main,
    # which a program may call many times, leaves the collector alone.
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    monkeypatch.setattr(sys, "argv", ["sapwood", "--version"])
    assert main(["--version"]) == 0 and frozen == []
    assert command() == 0 and frozen == [True]
    assert capsys.readouterr().out.startswith("sapwood ")


# -- as a subprocess, the way a user runs it --------------------------------------------

def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "sapwood.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_subprocess_bad_input_is_one_line(tmp_path):
    result = run_cli("explain", str(tmp_path / "missing.csv"), "--target", "y")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"sapwood: error: data file not found: {tmp_path / 'missing.csv'}"]


def test_subprocess_tree(mixed_csv):
    result = run_cli("tree", str(mixed_csv), "--target", "label", "--max-depth", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("|--- x <= 0.")
    assert result.stderr == ""


def test_subprocess_explain_json(mixed_csv):
    result = run_cli("explain", str(mixed_csv), "--target", "label", "--model", "tree",
                     "--methods", "mdi", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["data"]["encoded"] == {"colour": ["blue", "green", "red"]}


def test_explain_out_of_bag_measures_on_a_forest(capsys, tmp_path):
    X, y, _ = make_ground_truth(300, random_state=2)
    path = tmp_path / "gt.csv"
    X.assign(target=y).to_csv(path, index=False)
    assert main(["explain", str(path), "--target", "target", "--model", "rf", "--json",
                 "--methods", "mdi,oob,ufi"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document["measures"]) == ["mdi", "oob", "ufi"]


def test_out_of_bag_measures_are_skipped_with_a_note_for_a_single_tree(capsys, mixed_csv):
    code = main(["explain", str(mixed_csv), "--target", "label", "--model", "tree",
                 "--methods", "mdi,oob"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "note: oob importance skipped: oob_permutation_importance needs a bagged forest" in err
