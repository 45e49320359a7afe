"""What explain does after the fit on a large table: the held-out rows predicted once (a
bar with the time left on many rows), the training score made only when a warning reads
it, and the checks that fit on the training rows reading a sample of them above
sapwood.report._verdict.CHECK_ROWS (lowered here with monkeypatch, so that small tables
cross it)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.report import _models, _verdict
from sapwood.report._models import KeptPredictions


@pytest.fixture(scope="module")
def classes(table):
    X, y = table
    return X, pd.Series(np.where(y > y.median(), "yes", "no"), name="y")


class Counting:
    """Counts the rows each predict / predict_proba call of its forests' classes reads."""

    def __init__(self, monkeypatch):
        self.calls = []
        for cls in (sapwood.RandomForestRegressor, sapwood.RandomForestClassifier):
            for name in ("predict", "predict_proba"):
                if hasattr(cls, name):
                    monkeypatch.setattr(cls, name, self._counted(name, getattr(cls, name)))

    def _counted(self, name, method):
        def counted(model, X, *args, **kwargs):
            self.calls.append((name, len(X)))
            return method(model, X, *args, **kwargs)
        return counted

    def rows(self, n_rows, name="predict") -> int:
        return sum(1 for called, rows in self.calls if (called, rows) == (name, n_rows))


def _forest(task, X, y):
    cls = sapwood.RandomForestClassifier if task == "classification" else (
        sapwood.RandomForestRegressor)
    return cls(n_estimators=10, random_state=0).fit(X, y)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_inside_with_a_table_is_predicted_once(monkeypatch, table, classes, task):
    X, y = classes if task == "classification" else table
    model = _forest(task, X, y)
    counting = Counting(monkeypatch)
    first, other = X.iloc[:100], X.iloc[100:200]
    kept = KeptPredictions(model, first)
    with kept:
        once = model.predict(first)
        again = model.predict(first)
        model.predict(other)
    assert counting.rows(100) == 2  # the other table's call is its own
    np.testing.assert_array_equal(once, again)
    np.testing.assert_array_equal(once, model.predict(first))
    assert once is not again  # a copy each time: a caller may write into it
    # Leaving gives the model its class's methods back.
    assert "predict" not in vars(model) and "predict_proba" not in vars(model)
    # Entered again, what was made is kept.
    with kept:
        np.testing.assert_array_equal(model.predict(first), once)
    assert counting.rows(100) == 3  # the call after leaving only
    if task == "classification":
        with kept:
            proba = model.predict_proba(first)
            assert model.score(first, y.iloc[:100]) == pytest.approx(
                float(np.mean(once == y.iloc[:100].to_numpy())))
        np.testing.assert_array_equal(proba, model.predict_proba(first))


def test_a_model_without_instance_attributes_predicts_as_usual():
    class Slotted:
        __slots__ = ()

        def predict(self, X):
            return np.zeros(len(X))

    model = Slotted()
    with KeptPredictions(model, np.zeros((3, 1))) as kept:
        assert model.predict(np.zeros((3, 1))).tolist() == [0, 0, 0]
    assert kept._replaced == []


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_counted_prediction_in_pieces_is_the_whole_one(monkeypatch, table, classes, task,
                                                        capsys):
    monkeypatch.setattr(_models, "COUNTED_PREDICTION_ROWS", 50)
    monkeypatch.setattr(_models, "PREDICTION_PIECE", 30)
    X, y = classes if task == "classification" else table
    model = _forest(task, X, y)
    counting = Counting(monkeypatch)
    kept = KeptPredictions(model, X, progress=True)
    assert kept.counted
    with kept:
        # As explain asks: a classifier's probabilities (its Brier score) first.
        proba = model.predict_proba(X) if task == "classification" else None
        predicted = model.predict(X)
    method = "predict_proba" if task == "classification" else "predict"
    # 400 rows in pieces of 30: 13 pieces, the last of 10 rows.
    assert counting.rows(30, method) == 13 and counting.rows(10, method) == 1
    # A classifier's predict then reads the kept probabilities in one call.
    assert counting.rows(400, "predict") == (task == "classification")
    assert counting.rows(400, "predict_proba") == 0
    assert len(counting.calls) == 14 + (task == "classification")
    np.testing.assert_array_equal(predicted, model.predict(X))
    if proba is not None:
        np.testing.assert_array_equal(proba, model.predict_proba(X))
    assert capsys.readouterr().err.count("held-out rows predicted") == 1
    # Without a bar, or on few rows, one call.
    assert not KeptPredictions(model, X).counted
    assert not KeptPredictions(model, X.iloc[:50], progress=True).counted


def test_explain_predicts_the_held_out_rows_once_and_the_training_rows_never(
        monkeypatch, table):
    X, y = table
    counting = Counting(monkeypatch)
    # mdi alone (permutation checks its evaluator against the model's own prediction
    # of the first rows, here all of them).
    report = sapwood.explain(X, y, methods="mdi")
    assert (report.n_train, report.n_test) == (300, 100)
    # The score, the baseline and the leakage check read one prediction.
    assert counting.rows(100) == 1
    # No disagreement warning: the training score is never made.
    assert "disagreement" not in {finding.kind for finding in report.warnings}
    assert counting.rows(300) == 0


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_the_report_is_the_one_made_by_predicting_each_time(monkeypatch, table, classes,
                                                           task):
    X, y = classes if task == "classification" else table
    kept = json.loads(sapwood.explain(X, y, methods="mdi,permutation").to_json())
    monkeypatch.setattr(KeptPredictions, "__enter__", lambda self: self)
    again = json.loads(sapwood.explain(X, y, methods="mdi,permutation").to_json())
    assert kept == again


def test_the_counted_bar_shows_under_the_scoring_line(monkeypatch, table, capsys):
    monkeypatch.setattr(_models, "COUNTED_PREDICTION_ROWS", 50)
    X, y = table
    plain = json.loads(sapwood.explain(X, y, methods="mdi").to_json())
    counted = sapwood.explain(X, y, methods="mdi", progress=True)
    err = capsys.readouterr().err
    assert "Scoring on 100 held-out rows" in err
    assert "held-out rows predicted" in err
    assert json.loads(counted.to_json()) == plain


def test_check_rows_samples_above_the_bound(monkeypatch):
    assert _verdict.CHECK_ROWS == 100_000
    assert _verdict.check_rows(100_000, 0) is None
    monkeypatch.setattr(_verdict, "CHECK_ROWS", 100)
    rows = _verdict.check_rows(300, 0)
    assert len(rows) == 100 == len(set(rows.tolist()))
    assert (np.diff(rows) > 0).all() and rows.max() < 300
    np.testing.assert_array_equal(rows, _verdict.check_rows(300, 0))  # seeded
    assert not np.array_equal(rows, _verdict.check_rows(300, 1))


def test_the_leakage_check_reads_a_sample_of_many_training_rows(monkeypatch, table):
    X, y = table
    seen = []
    find_leakage = _verdict.find_leakage

    def spy(X_train, y_train, *args, **kwargs):
        seen.append((len(X_train), len(y_train)))
        return find_leakage(X_train, y_train, *args, **kwargs)

    monkeypatch.setattr(_verdict, "find_leakage", spy)
    report = sapwood.explain(X, y, methods="mdi")
    assert seen == [(300, 300)]
    assert not any("seeded sample" in note for note in report.notes)
    monkeypatch.setattr(_verdict, "CHECK_ROWS", 100)
    report = sapwood.explain(X, y, methods="mdi")
    assert seen[1:] == [(100, 100)]
    note = next(note for note in report.notes if "seeded sample" in note)
    assert "100 of the 300 training rows" in note
    assert "'Large tables'" in note
    assert note in json.loads(report.to_json())["notes"]


def test_a_leak_is_still_found_on_the_sample(monkeypatch):
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.random((800, 3)), columns=["a", "b", "c"])
    y = pd.Series(np.where(X["a"] + rng.normal(0, 0.3, 800) > 0.5, 1, 0), name="y")
    X["leak"] = y + rng.normal(0, 0.01, 800)
    monkeypatch.setattr(_verdict, "CHECK_ROWS", 200)
    report = sapwood.explain(X, y, methods="mdi,permutation")
    leaks = [f for f in report.warnings if f.kind == "leakage"]
    assert [f.features for f in leaks] == [("leak",)]
    assert any("seeded sample of 200 of the 600 training rows" in n for n in report.notes)


def test_the_training_score_is_made_once_when_read(monkeypatch, table):
    X, y = table
    model = _forest("regression", X, y)
    counting = Counting(monkeypatch)
    score = _verdict.TrainingScore(model, X, y, "regression")
    assert counting.calls == []
    assert score.rows == "its training rows"
    assert score.value == pytest.approx(model.score(X, y))
    assert score.value == score.value
    assert counting.rows(400) == 2  # the value's prediction, then the check's own
    monkeypatch.setattr(_verdict, "CHECK_ROWS", 100)
    sampled = _verdict.TrainingScore(model, X, y, "regression", seed=3)
    rows = _verdict.check_rows(400, 3)
    assert sampled.rows == "a sample of 100 of its 400 training rows"
    assert sampled.value == pytest.approx(model.score(X.iloc[rows], y.iloc[rows]))


def _parted():
    """An MDI result ranking "id" clearly above "weak", and a held-out one in which
    "weak" is relied on and "id" covers zero: the disagreement warning's case."""
    from sapwood import importance

    names = ["signal", "weak", "id", "noise"]
    rng = np.random.default_rng(0)
    mdi = importance.ImportanceResult.from_draws(
        np.array([[0.5], [0.1], [0.3], [0.1]]) + 0.01 * rng.normal(size=(4, 50)),
        feature_names=names, method="mdi")
    rows = (np.array([0.2, 0.05, 0.0, 0.0])[:, None]
            + np.array([0.05, 0.05, 0.05, 0.0])[:, None] * rng.normal(size=(4, 500)))
    held = importance.ImportanceResult.from_draws(
        [[0.2] * 5, [0.05] * 5, [0.0, 0.01, -0.01, 0.0, 0.0], [0.0] * 5],
        feature_names=names, method="permutation", rank_draws=rows)
    return mdi, held


class Scored(_verdict.TrainingScore):
    """A training score whose value is given, counting the reads."""

    def __init__(self, value, rows):
        self.reads, self._given, self._rows = 0, value, rows

    @property
    def rows(self):
        return self._rows

    @property
    def value(self):
        self.reads += 1
        return self._given


def test_the_disagreement_warning_reads_the_training_score_only_when_raised():
    mdi, held = _parted()
    standings = _verdict.standing(held)
    score = Scored(0.99, "a sample of 100 of its 400 training rows")
    found = _verdict.disagreement(mdi, held, standings, n_distinct={}, correlated=set(),
                                  train_score=score, test_score=0.5)
    assert found.features == ("id",) and score.reads == 1
    assert ("the model scores 0.990 on a sample of 100 of its 400 training rows against "
            "0.500 held out") in found.message
    assert found.details["causes"] == ["training-data overfit"]
    # Not raised ("id" in a correlated group): not read.
    score = Scored(0.99, "its training rows")
    assert _verdict.disagreement(mdi, held, standings, n_distinct={}, correlated={"id"},
                                 train_score=score, test_score=0.5) is None
    assert score.reads == 0
    # A number, as before.
    found = _verdict.disagreement(mdi, held, standings, n_distinct={}, correlated=set(),
                                  train_score=0.99, test_score=0.5)
    assert "0.990 on its training rows" in found.message


def test_distinct_values_are_counted_only_for_the_features_named():
    X = pd.DataFrame({"a": [1, 2, 3, 3], "b": [0, 0, 0, 1], 3: [1, 1, 1, 1]})
    counts = _verdict._DistinctCounts(X)
    assert counts.get("a") == 3 and counts.counts == {"a": 3}
    assert counts.get("3") == 1 and counts.get("missing", 0) == 0
    assert set(counts.counts) == {"a", "3"}


def test_a_first_prediction_after_the_score_draws_no_bar_of_its_own(monkeypatch, capsys):
    """An anomaly detector is scored by its decision function: the first prediction of
    the held-out rows is the leakage check's, under the warnings' step and its bar."""
    from sklearn.ensemble import IsolationForest

    monkeypatch.setattr(_models, "COUNTED_PREDICTION_ROWS", 50)
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    outlier = rng.uniform(size=400) < 0.1
    X.loc[outlier, "a"] = 4.0
    y = pd.Series(np.where(outlier, -1, 1), name="y")
    model = sapwood.from_model(IsolationForest(n_estimators=20, random_state=0).fit(X))
    report = sapwood.explain(X, y, model=model, test_size=0.5, progress=True)
    assert report.score_name == "ROC AUC" and report.n_test == 200
    err = capsys.readouterr().err
    assert "Checking for identifiers, leakage and correlated features" in err
    assert "held-out rows predicted" not in err
