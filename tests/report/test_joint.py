"""The correlated groups' joint importance: every group in one permutation call gives
each group what a call of its own gives; above JOINT_ROWS held-out rows, a seeded
sample of that many, said in a note."""

import dataclasses

import numpy as np
import pytest

import sapwood
from sapwood.diagnostics import Finding
from sapwood.importance import permutation_importance
from sapwood.report import _joint


@pytest.fixture(scope="module")
def report(table):
    X, y = table
    return sapwood.explain(X, y, model=sapwood.RandomForestRegressor(n_estimators=10),
                           methods="permutation")


def _groups():
    return [Finding("correlated", ("a", "b"), "a and b.", {}),
            Finding("correlated", ("c", "d"), "c and d.", {})]


def _alone(report, X, y, features):
    result = permutation_importance(report.model, X, y, n_repeats=_joint.JOINT_REPEATS,
                                    random_state=report.seed, groups={"g": list(features)})
    return float(result.importances_mean[0])


def test_one_call_gives_each_group_its_own_answer(report, table):
    X, y = table
    run = dataclasses.replace(report, notes=[])
    found = _joint.with_joint(_groups(), report.model, X, y, run)
    for finding in found:
        assert finding.details["joint_importance"] == pytest.approx(
            _alone(report, X, y, finding.features), abs=1e-12)
        assert "Shuffled together on the held-out rows" in finding.message
    assert found[0].details["joint_ci_low"] > 0  # a and b drive the target
    assert run.notes == []


def test_many_held_out_rows_are_sampled_and_said(report, table, monkeypatch):
    X, y = table
    monkeypatch.setattr(_joint, "JOINT_ROWS", 150)
    run = dataclasses.replace(report, notes=[])
    found = _joint.with_joint(_groups(), report.model, X, y, run)
    rows = np.sort(np.random.default_rng(report.seed).choice(len(X), 150, replace=False))
    for finding in found:
        assert "a sample of 150 held-out rows" in finding.message
        assert finding.details["joint_importance"] == pytest.approx(
            _alone(report, X.iloc[rows], y.iloc[rows], finding.features), abs=1e-12)
    assert run.notes == ["The correlated groups were shuffled together on a sample of "
                         "150 held-out rows of the 400 (seeded): their intervals rest on "
                         "those rows."]
