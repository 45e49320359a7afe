"""The default forest on a large table: each tree draws a bounded number of rows.

The bound (sapwood.report._models.LARGE_TABLE_ROWS, 100,000 training rows) is lowered
here with monkeypatch, so that small tables cross it."""

from __future__ import annotations

import json

import pytest

import sapwood
from sapwood.cli import main
from sapwood.report import _models
from sapwood.report._models import build_model, large_table_note, large_table_params

BOUND = 100


@pytest.fixture
def bound(monkeypatch):
    monkeypatch.setattr(_models, "LARGE_TABLE_ROWS", BOUND)
    return BOUND


def _model_line(report):
    return next(line for line in str(report).splitlines() if line.startswith("Model: "))


@pytest.mark.parametrize("name", ["rf", "et"])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_forest_by_name_draws_the_bound_per_tree_above_it(bound, name, task):
    model = build_model(name, task, n_train=bound + 1)
    assert model.max_samples == bound
    assert model.bootstrap is True  # extra trees: only with bootstrap
    assert model.random_state == 0
    assert large_table_params(name, bound + 1) == (
        {"max_samples": bound} if name == "rf" else {"max_samples": bound, "bootstrap": True})


@pytest.mark.parametrize("name", ["rf", "et", "gb", "tree"])
@pytest.mark.parametrize("n_train", [None, 10, BOUND])
def test_at_or_below_the_bound_every_model_has_its_plain_defaults(bound, name, n_train):
    model = build_model(name, "regression", n_train=n_train)
    plain = build_model(name, "regression")
    assert model.get_params() == plain.get_params()
    assert large_table_params(name, n_train) == {}
    assert large_table_note(name, n_train) is None
    if name in ("rf", "et"):
        assert model.max_samples is None


@pytest.mark.parametrize("name", ["gb", "tree"])
def test_boosting_and_a_single_tree_are_never_bounded(bound, name):
    model = build_model(name, "classification", n_train=10 * bound)
    assert model.get_params() == build_model(name, "classification").get_params()
    assert large_table_note(name, 10 * bound) is None


def test_an_explicit_depth_is_kept_beside_the_bound(bound):
    model = build_model("rf", "regression", max_depth=5, n_train=bound + 1)
    assert (model.max_depth, model.max_samples) == (5, bound)


def test_the_default_bound_is_documented_and_large():
    assert _models.LARGE_TABLE_ROWS == 100_000
    assert large_table_params("rf", 100_000) == {}
    assert large_table_params("rf", 100_001) == {"max_samples": 100_000}


def test_explain_bounds_the_default_forest_and_says_so(bound, table):
    X, y = table
    report = sapwood.explain(X, y, methods="mdi")
    assert report.n_train == 300
    assert report.model.max_samples == bound
    line = _model_line(report)
    assert f"RandomForestRegressor(n_estimators=100, max_depth=None, max_samples={bound})" \
        in line
    assert "trained on 300 rows" in line
    document = json.loads(report.to_json())
    assert document["model"]["params"]["max_samples"] == bound
    assert document["model"]["name"] == report.model_text
    note = next(text for text in report.notes if "max_samples" in text)
    assert f"{bound:,} rows drawn from the 300 training rows" in note
    assert note in document["notes"]
    # Every tree drew the bound: its in-bag counts sum to it.
    assert {int(report.model.bootstrap_counts(i).sum()) for i in range(3)} == {bound}


def test_extra_trees_by_name_are_bootstrapped_to_the_bound(bound, table):
    X, y = table
    report = sapwood.explain(X, y, model="et", methods="mdi")
    assert (report.model.bootstrap, report.model.max_samples) == (True, bound)
    assert ("ExtraTreesRegressor(n_estimators=100, max_depth=None, bootstrap=True, "
            f"max_samples={bound})") in _model_line(report)


def test_below_the_bound_explain_fits_the_plain_default_forest(monkeypatch, table):
    monkeypatch.setattr(_models, "LARGE_TABLE_ROWS", 300)  # 300 training rows: not above
    X, y = table
    report = sapwood.explain(X, y, methods="mdi")
    assert report.model.max_samples is None
    assert "Model: RandomForestRegressor(n_estimators=100, max_depth=None), trained on 300" \
        in _model_line(report)
    assert json.loads(report.to_json())["model"]["params"]["max_samples"] is None
    assert not any("max_samples" in text for text in report.notes)


def test_the_rows_counted_are_the_training_rows(bound, table):
    X, y = table
    # 120 training rows given apart: above the bound; the 400 rows are held out.
    report = sapwood.explain(X, y, X_train=X.iloc[:120], y_train=y.iloc[:120], methods="mdi")
    assert (report.n_train, report.model.max_samples) == (120, bound)
    # 90 training rows given apart: below it.
    report = sapwood.explain(X, y, X_train=X.iloc[:90], y_train=y.iloc[:90], methods="mdi")
    assert (report.n_train, report.model.max_samples) == (90, None)
    # Half of 180 rows held out: 90 training rows, below it.
    report = sapwood.explain(X.iloc[:180], y.iloc[:180], test_size=0.5, methods="mdi")
    assert (report.n_train, report.model.max_samples) == (90, None)
    # No rows held out: all 120 are training rows.
    report = sapwood.explain(X.iloc[:120], y.iloc[:120], test_size=0, methods="mdi")
    assert (report.n_train, report.model.max_samples) == (120, bound)


def test_an_estimator_passed_in_is_grown_as_given(bound, table):
    X, y = table
    forest = sapwood.RandomForestRegressor(n_estimators=20, random_state=0)
    report = sapwood.explain(X, y, model=forest, methods="mdi")
    assert report.model.max_samples is None
    assert "RandomForestRegressor(n_estimators=20, max_depth=None), trained on 300" \
        in _model_line(report)
    assert not any("max_samples" in text for text in report.notes)
    # The user's own bound is shown as theirs, without the note on sapwood's default.
    forest = sapwood.RandomForestRegressor(n_estimators=20, max_samples=50, random_state=0)
    report = sapwood.explain(X, y, model=forest, methods="mdi")
    assert report.model.max_samples == 50
    assert "max_samples=50)" in _model_line(report)
    assert not any("max_samples" in text for text in report.notes)


def test_a_gradient_boosting_model_by_name_is_not_bounded(bound, table):
    X, y = table
    report = sapwood.explain(X, y, model="gb", methods="mdi")
    assert "max_samples" not in report.model.get_params()
    assert report.model.subsample == 1.0
    assert not any("max_samples" in text for text in report.notes)


def test_the_command_line_bounds_its_default_forest_but_not_a_given_depth(
        bound, table, tmp_path, capsys):
    X, y = table
    path = tmp_path / "table.csv"
    X.assign(y=y).to_csv(path, index=False)
    code = main(["explain", str(path), "--target", "y", "--methods", "mdi", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    document = json.loads(out)
    assert document["model"]["params"]["max_samples"] == bound
    assert f"max_samples={bound}" in document["model"]["name"]
    assert any("max_samples" in text for text in document["notes"])
    code = main(["explain", str(path), "--target", "y", "--methods", "mdi", "--json",
                 "--max-depth", "6"])
    out, _ = capsys.readouterr()
    assert code == 0
    document = json.loads(out)
    assert document["model"]["params"]["max_depth"] == 6
    assert document["model"]["params"]["max_samples"] is None
    assert "max_samples" not in document["model"]["name"]
