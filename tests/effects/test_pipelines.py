"""Partial dependence and ICE of a Pipeline in its input columns: scikit-learn's brute
partial_dependence on the same pipeline, equal bit for bit (a text column's grid is its
categories; the one-hot block is the transformed grid point)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.inspection import partial_dependence as sklearn_partial_dependence
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures, StandardScaler

from sapwood.effects import partial_dependence


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame({"size": rng.normal(size=n), "colour": rng.choice(list("rgb"), n),
                      "age": rng.normal(size=n)})
    y = 2 * X["size"] + (X["colour"] == "r") + X["size"] * X["age"] + rng.normal(0, .2, n)
    return X, y


def _steps():
    return make_column_transformer((OneHotEncoder(), ["colour"]),
                                   (StandardScaler(), ["size", "age"]))


@pytest.mark.parametrize(("features", "categorical"), [
    ("size", None), ("colour", ["colour"]), (["colour", "age"], ["colour"])])
def test_partial_dependence_is_scikit_learns_on_the_pipeline(table, features, categorical):
    X, y = table
    pipeline = make_pipeline(_steps(), RandomForestRegressor(10, max_depth=5, random_state=0))
    pipeline.fit(X, y)
    ours = partial_dependence(pipeline, X, features, kind="both", grid_resolution=8,
                              categorical_features=categorical)
    theirs = sklearn_partial_dependence(pipeline, X, features, kind="both", grid_resolution=8,
                                        categorical_features=categorical, method="brute")
    np.testing.assert_array_equal(ours.average, theirs.average)
    np.testing.assert_array_equal(ours.individual, theirs.individual)


def test_a_classifier_and_columns_read_together(table):
    X, y = table
    labels = np.where(y > y.median(), "high", "low")
    pipeline = make_pipeline(_steps(), HistGradientBoostingClassifier(max_iter=10))
    pipeline.fit(X, labels)
    ours = partial_dependence(pipeline, X, "age", grid_resolution=6)
    theirs = sklearn_partial_dependence(pipeline, X, "age", grid_resolution=6, method="brute")
    np.testing.assert_allclose(ours.average, theirs.average, atol=1e-12)
    joined = make_pipeline(make_column_transformer((PolynomialFeatures(2), ["size", "age"])),
                           RandomForestRegressor(5, random_state=0)).fit(X, y)
    with pytest.raises(ValueError, match="reads age together with size"):
        partial_dependence(joined, X, "size")
    assert partial_dependence(joined, X, ["size", "age"], grid_resolution=4).average.shape \
        == (1, 4, 4)


def test_ale_of_a_numeric_input_column_is_its_definition_through_the_pipeline(table):
    from sapwood.effects import ale
    from sapwood.effects._ale import _accumulate, _quantiles_type1

    X, y = table
    pipeline = make_pipeline(_steps(), RandomForestRegressor(10, max_depth=5, random_state=0))
    pipeline.fit(X, y)
    ours = ale(pipeline, X, "size", grid_size=6, include_CI=True)
    # The definition with the pipeline's own predict: each row's column set to its bin's
    # two edges.
    x = X["size"].to_numpy()
    edges = np.unique(np.concatenate([[x.min()], _quantiles_type1(x, 6)]))
    bins = np.searchsorted(edges, x, side="left") - 1
    bins[x == edges[0]] = 0
    delta = (pipeline.predict(X.assign(size=edges[bins + 1]))
             - pipeline.predict(X.assign(size=edges[bins])))
    expected = _accumulate(delta, bins, edges, "size", True, 0.95)
    pd.testing.assert_frame_equal(ours, expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="numeric features"):
        ale(pipeline, X, "colour")


def test_h_statistic_of_a_pipeline_is_its_definition_through_the_pipeline():
    from sapwood.effects import h_statistic
    from tests.reference import naive_effects

    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(40, 3))
    y = 2 * X[:, 0] * X[:, 1] + X[:, 2]
    pipeline = make_pipeline(StandardScaler(), RandomForestRegressor(8, max_depth=5,
                                                                     random_state=0))
    pipeline.fit(X, y)
    ours = h_statistic(pipeline, X, pairs=[(0, 1), (1, 2)], features=[0])
    naive_pairs, naive_features = naive_effects.h_statistics(pipeline, X, [(0, 1), (1, 2)],
                                                             [0])
    by_features = {row.features: row.H2 for row in ours.itertuples()}
    for (j, k), h2 in naive_pairs.items():
        assert by_features[(f"x{j}", f"x{k}")] == pytest.approx(h2, rel=1e-9, abs=1e-12)
    assert by_features[("x0",)] == pytest.approx(naive_features[0], rel=1e-9, abs=1e-12)
