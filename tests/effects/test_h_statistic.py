"""h_statistic: Friedman & Popescu's definition, against a naive implementation."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from sapwood.effects import h_statistic
from tests.reference import naive_effects


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    y = 2 * X[:, 0] * X[:, 1] + X[:, 2] + 0.05 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("kind", ["forest", "gb-binary", "forest-multiclass", "gb-multiclass"])
def test_equals_the_naive_definition(kind):
    X, y = _data()
    model = {
        "forest": RandomForestRegressor(15, max_depth=5, random_state=0),
        "gb-binary": GradientBoostingClassifier(n_estimators=15, random_state=0),
        "forest-multiclass": RandomForestClassifier(10, max_depth=4, random_state=0),
        "gb-multiclass": GradientBoostingClassifier(n_estimators=8, random_state=0),
    }[kind]
    target = {"forest": y, "gb-binary": y > 0}.get(kind, np.digitize(y, [-0.3, 0.3]))
    model.fit(X, target)
    pairs = [(0, 1), (0, 2), (1, 3)]
    ours = h_statistic(model, X, pairs=pairs, features=[0, 2])
    naive_pairs, naive_features = naive_effects.h_statistics(model, X, pairs, [0, 2])
    by_features = {row.features: row.H2 for row in ours.itertuples()}
    for (j, k), h2 in naive_pairs.items():
        assert by_features[(f"x{j}", f"x{k}")] == pytest.approx(h2, rel=1e-9, abs=1e-12)
    for j, h2 in naive_features.items():
        assert by_features[(f"x{j}",)] == pytest.approx(h2, rel=1e-9, abs=1e-12)
    assert list(ours.columns) == ["features", "kind", "H2", "H"]
    np.testing.assert_allclose(ours["H"], np.sqrt(ours["H2"]))


def test_finds_the_interaction_that_is_there_and_not_the_one_that_is_not():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(600, 4))
    y = 2 * X[:, 0] * X[:, 1] + X[:, 2] + X[:, 3]
    frame = pd.DataFrame(X, columns=list("abcd"))
    model = GradientBoostingRegressor(n_estimators=150, max_depth=3,
                                      random_state=0).fit(frame, y)
    table = h_statistic(model, frame.iloc[:150])
    pairs = table[table["kind"] == "pair"]
    assert pairs.iloc[0]["features"] == ("a", "b")  # the strongest, first
    assert pairs.iloc[0]["H2"] > 0.5
    additive = pairs[pairs["features"] == ("c", "d")]["H2"].iloc[0]
    assert additive < 0.05
    assert len(pairs) == 6  # every pair of the top 5 (all four features)
    overall = table[table["kind"] == "overall"].set_index("features")["H2"]
    assert overall[("a",)] > 0.1 and overall[("d",)] < 0.05


def test_bootstrap_intervals_are_seeded_and_hold_the_estimate():
    X, y = _data(n=60)
    model = RandomForestRegressor(10, max_depth=5, random_state=0).fit(X, y)
    first = h_statistic(model, X, pairs=[(0, 1)], features=[0], n_bootstrap=30,
                        random_state=3)
    again = h_statistic(model, X, pairs=[(0, 1)], features=[0], n_bootstrap=30,
                        random_state=3, n_jobs=2)
    pd.testing.assert_frame_equal(first, again)
    assert list(first.columns) == ["features", "kind", "H2", "H", "H2_low", "H2_high",
                                   "H_low", "H_high"]
    assert (first["H2_low"] <= first["H2_high"]).all()
    plain = h_statistic(model, X, pairs=[(0, 1)], features=[0])
    np.testing.assert_allclose(plain["H2"], first["H2"], rtol=1e-12)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"pairs": [(0,)]}, "pairs must hold pairs of features"),
    ({"pairs": [(0, 9)]}, r"pairs must be column indices in \[0, 3\]"),
    ({"top": 1}, "'top' parameter of h_statistic"),
    ({"n_bootstrap": -1}, "'n_bootstrap' parameter of h_statistic"),
    ({"confidence": 0}, "'confidence' parameter of h_statistic"),
])
def test_errors_name_the_parameter(kwargs, message):
    X, y = _data(n=20)
    model = RandomForestRegressor(3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=message):
        h_statistic(model, X, **kwargs)
