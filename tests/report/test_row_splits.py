"""explain(groups=, order_by=, cv=, refits=, adjust=): the split and the intervals follow
the units and the time order; cross-fitting holds every row out once; the verdict says
how stable it is. Data built here with known structure, small forests."""

import json

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood._splits import RowPlan, folds
from sapwood.importance import adjust_pvalues


def _forest(seed=0):
    return sapwood.RandomForestRegressor(n_estimators=15, min_samples_leaf=2,
                                         random_state=seed)


def _panel(unit_effects: bool, seed=0, n_units=40, per=6):
    """Units measured ``per`` times: x matters; with unit effects, so does the unit."""
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(n_units), per)
    x = rng.normal(size=len(unit))
    effect = rng.normal(0, 3, n_units)[unit] if unit_effects else 0.0
    return pd.DataFrame({"person": unit, "x": x, "noise": rng.normal(size=len(unit)),
                         "y": effect + x + 0.3 * rng.normal(size=len(unit))})


@pytest.fixture(scope="module")
def panel():
    return _panel(True)


@pytest.fixture(scope="module")
def at_random(panel):
    return sapwood.explain(panel, "y", model=_forest(), source="panel.csv")


def test_a_random_split_of_a_panel_warns_and_relies_on_the_unit(at_random):
    report = at_random
    (finding,) = [w for w in report.warnings if w.kind == "repeated units"]
    assert finding.features == ("person",)
    assert "sapwood explain panel.csv --target y --groups person" in finding.message
    assert "person" in report.verdict.relies_on


def test_groups_keep_units_whole_and_say_how_many(panel, at_random):
    report = sapwood.explain(panel, "y", model=_forest(), groups="person")
    assert "person" not in report.data.X.columns
    assert not [w for w in report.warnings if w.kind == "repeated units"]
    held = set(panel["person"].iloc[report.held_out_index])
    assert len(held) == 10 and report.n_test == 60
    assert report.split == {"kind": "groups", "groups": "person", "order_by": None,
                            "n_groups_train": 30, "n_groups_test": 10}
    text = report.to_text(width=120)
    assert "Split by groups of 'person': 30 groups trained on, 10 held out" in text
    document = json.loads(report.to_json())
    assert document["split"]["n_groups_test"] == 10
    intervals = document["intervals"]["permutation"]["rank"]
    assert intervals.startswith("new groups (10 held-out groups")
    # Scored on new units, the unit effects are noise: far below the random split's score.
    assert report.score < at_random.score - 0.3


def test_groups_without_unit_effects_keep_the_signal():
    report = sapwood.explain(_panel(False), "y", model=_forest(), groups="person")
    assert report.verdict.relies_on == ["x"] and report.score > 0.5


def _series(drift: bool, n=300, seed=1):
    """A series whose relation to x changes sign halfway (drift) or stays (stationary)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=float)
    x = rng.normal(size=n)
    slope = np.where(t < n * 0.6, 1.0, -1.0) if drift else 1.0
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(t, unit="D")
    return pd.DataFrame({"day": days, "x": x, "y": slope * x + 0.2 * rng.normal(size=n)})


@pytest.mark.parametrize("drift", [True, False])
def test_order_by_judges_the_later_period(drift):
    frame = _series(drift)
    report = sapwood.explain(frame, "y", model=_forest(), order_by="day")
    days = frame["day"].iloc[report.held_out_index]
    assert days.min() == pd.Timestamp("2020-08-13") and len(days) == 75
    text = report.to_text(width=160)
    assert "Split in time order by 'day': trained on rows up to 2020-08-12, judged on " \
           "2020-08-13 to 2020-10-26" in text
    assert "- About the later period: judged on rows from 2020-08-13" in text
    at_random = sapwood.explain(frame, "y", model=_forest())
    if drift:  # the later period's relation was never seen: the time split says so
        assert report.score < 0 < at_random.score
    else:
        assert report.score > 0.8 and at_random.score > 0.8


def test_cross_fitting_holds_every_row_out_once(panel):
    report = sapwood.explain(panel, "y", model=_forest(), cv=3, groups="person")
    assert report.n_test == len(panel)
    assert json.loads(report.to_json())["model"]["n_test"] == len(panel)
    assert report.split["folds"] == 3 and report.split["n_groups_test"] == 40
    result = report.results["permutation"]
    assert result.rank_draws.shape == (2, 40)  # one draw per group
    assert set(report.stability["features"]) == {"x", "noise"}
    assert "Cross-fitted by groups of 'person': 3 folds" in report.to_text(width=120)
    # Every measure asks sapwood._splits: the folds are its folds; the model kept is the
    # first fold's, judged on that fold.
    plan = RowPlan(groups=panel["person"].to_numpy())
    first = folds(len(panel), 3, 0, plan=plan)[0]
    assert list(report.held_out_index) == list(panel.index[first[1]])
    assert any(note.startswith("cross-fitted: 3 models; the one kept") for note in
               report.notes)


def test_forward_chaining_folds_under_order_by():
    frame = _series(False)
    report = sapwood.explain(frame, "y", model=_forest(), cv=3, order_by="day")
    assert report.n_test == 225  # every row after the first of four blocks
    assert report.verdict.relies_on == ["x"]
    assert ("Cross-fitted in time order by 'day': 3 forward-chaining folds, each model "
            "judged on the rows after those it learned from (2020-03-16 to 2020-10-26)"
            in report.to_text(width=200))
    assert "- About the later period: judged on rows from 2020-03-16" in \
        report.to_text(width=200)


def test_refits_say_how_often_each_status_held(panel):
    report = sapwood.explain(_panel(False), "y", model=_forest(), refits=2)
    assert report.stability["refits"] == 3 and report.stability["how"] == "seeds"
    assert report.stability["features"]["x"] == 1.0
    assert any(line.startswith(("- Stable: every feature's status held in all of 3 fits",
                                 "- Stability over 3 fits (this one and 2 on another"))
               for line in report.verdict.lines)


def test_pvalues_are_holm_adjusted_by_default_and_bh_on_request():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(300, 8)), columns=[f"n{j}" for j in range(8)])
    frame["y"] = frame["n0"] + frame["n1"] + 0.5 * rng.normal(size=300)
    for adjust in ("holm", "bh"):
        report = sapwood.explain(frame, "y", model=_forest(), pvalues="janitza",
                                 adjust=adjust, methods="permutation")
        result = report.results["permutation"]
        raw = result.extra["raw_pvalues"]
        assert np.isfinite(raw).all()
        assert np.allclose(result.pvalues, adjust_pvalues(raw, adjust))
        assert (result.pvalues >= raw).all()
    assert any("Benjamini-Hochberg" in note for note in report.notes)


def test_out_of_bag_rows_are_whole_groups_for_a_forest_trained_here(panel):
    from sklearn.ensemble import RandomForestRegressor

    # sapwood's forest draws each tree's bootstrap by group: its OOB rows are new groups.
    report = sapwood.explain(panel, "y", model=_forest(), groups="person",
                             methods="permutation,oob")
    assert "oob" in report.results
    assert not any(note.startswith("oob: out-of-bag rows") for note in report.notes)
    # scikit-learn's draws rows: the OOB measure overstates, and a note says so.
    report = sapwood.explain(panel, "y", groups="person", methods="permutation,oob",
                             model=RandomForestRegressor(n_estimators=15, random_state=0))
    assert any(note.startswith("oob: out-of-bag rows are drawn row by row")
               for note in report.notes)


def _binary(seed, rare: bool, n=1200):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    logit = (-4.0 + X["a"] + 0.8 * X["b"]) if rare else (3.0 * X["a"] + 2.0 * X["b"])
    return X, (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)


@pytest.mark.parametrize("rare", [True, False])
def test_a_verdict_that_changes_with_the_score_is_flagged(rare):
    # 4% positives: no skill by the Brier score, a and b relied on by ROC AUC.
    X, y = _binary(0, rare)
    model = sapwood.RandomForestClassifier(n_estimators=30, min_samples_leaf=5,
                                           random_state=0)
    report = sapwood.explain(X, y, model=model, methods="permutation")
    lines = [line for line in report.verdict.lines if line.startswith("- Depends on")]
    if rare:
        assert report.verdict.relies_on == []
        assert lines == ["- Depends on the score: by ROC AUC instead of the Brier score the "
                         "model relies on a, b (above: nothing); read both before acting "
                         "on either"]
        assert report.stability["scores"]["roc_auc"] == ["a", "b"]
    else:
        assert report.verdict.relies_on == ["a", "b"] and lines == []
