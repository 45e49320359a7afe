"""shap_interaction_importance: mean |TreeSHAP interaction| per pair, against shap."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier

from sapwood.effects import h_statistic, shap_interaction_importance


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 4)), columns=list("abcd"))
    y = 2 * X["a"] * X["b"] + X["c"] + 0.5 * X["d"]
    return X, y.to_numpy()


def test_equals_the_mean_of_shaps_interaction_values():
    shap = pytest.importorskip("shap")
    X, y = _data()
    model = GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0).fit(X, y)
    ours = shap_interaction_importance(model, X.iloc[:60])
    theirs = shap.TreeExplainer(model).shap_interaction_values(X.iloc[:60])
    by_pair = ours.set_index("features")["mean_abs_interaction"]
    for j, k in [(0, 1), (0, 2), (2, 3)]:
        expected = np.abs(theirs[:, j, k] + theirs[:, k, j]).mean()
        assert by_pair[(X.columns[j], X.columns[k])] == pytest.approx(expected, rel=1e-6,
                                                                      abs=1e-9)


def test_ranks_the_true_interaction_first_and_agrees_with_h_on_it():
    X, y = _data(n=400)
    model = GradientBoostingRegressor(n_estimators=80, max_depth=3, random_state=0).fit(X, y)
    table = shap_interaction_importance(model, X.iloc[:100])
    assert list(table.columns) == ["features", "mean_abs_interaction", "std", "low", "high"]
    assert table.iloc[0]["features"] == ("a", "b")
    assert (table["low"] <= table["mean_abs_interaction"]).all()
    assert (table["mean_abs_interaction"] <= table["high"]).all()
    h = h_statistic(model, X.iloc[:100])
    assert h.iloc[0]["features"] == ("a", "b")
    assert len(table) == 6


def test_multiclass_adds_the_columns():
    X, y = _data(n=150)
    model = RandomForestClassifier(5, max_depth=4, random_state=0).fit(X, np.digitize(y, [-1, 1]))
    table = shap_interaction_importance(model, X.iloc[:30], confidence=0.9)
    assert table.shape == (6, 5)
    assert (table["mean_abs_interaction"] >= 0).all()
