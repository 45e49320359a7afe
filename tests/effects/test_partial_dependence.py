"""partial_dependence: scikit-learn's numbers, bit for bit, from the tree format."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.inspection import partial_dependence as sklearn_partial_dependence
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import sapwood
from sapwood.adapters import as_ensemble
from sapwood.effects import partial_dependence
from tests.reference import naive_effects


def _data(n=240, seed=0, missing=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[:, 3] = rng.integers(0, 4, size=n)  # ties
    y = X[:, 0] * X[:, 1] + X[:, 2] + 0.5 * X[:, 3] + 0.3 * rng.normal(size=n)
    if missing:
        X[rng.random(size=X.shape) < 0.1] = np.nan
    return X, y


def _fitted(kind, X, y):
    labels = {"binary": (y > np.median(y)).astype(int), "multiclass": np.digitize(y, [-1, 1]),
              "regression": y}
    models = {
        "forest": (RandomForestRegressor(25, max_depth=7, random_state=0), "regression"),
        "forest-binary": (RandomForestClassifier(25, max_depth=6, random_state=0), "binary"),
        "forest-multiclass": (RandomForestClassifier(20, random_state=0, min_samples_leaf=3),
                              "multiclass"),
        "extra-trees": (ExtraTreesClassifier(15, max_depth=5, random_state=0), "multiclass"),
        "tree-classifier": (DecisionTreeClassifier(min_samples_leaf=5, random_state=0),
                            "multiclass"),
        "tree-regressor": (DecisionTreeRegressor(max_depth=6, random_state=0), "regression"),
        "gb-binary": (GradientBoostingClassifier(n_estimators=25, random_state=0), "binary"),
        "gb-multiclass": (GradientBoostingClassifier(n_estimators=15, random_state=0),
                          "multiclass"),
        "gb-regression": (GradientBoostingRegressor(n_estimators=25, random_state=0),
                          "regression"),
        "hgb-regression": (HistGradientBoostingRegressor(max_iter=25, random_state=0),
                           "regression"),
        "hgb-binary": (HistGradientBoostingClassifier(max_iter=20, random_state=0), "binary"),
    }
    model, target = models[kind]
    return model.fit(X, labels[target])


BRUTE = ["forest", "forest-binary", "forest-multiclass", "extra-trees", "tree-classifier",
         "tree-regressor", "gb-binary", "gb-multiclass", "gb-regression", "hgb-regression",
         "hgb-binary"]


@pytest.mark.parametrize("kind", BRUTE)
@pytest.mark.parametrize("features", [[0], [3], [0, 1]])
def test_brute_equals_scikit_learn_bit_for_bit(kind, features):
    X, y = _data()
    model = _fitted(kind, X, y)
    theirs = sklearn_partial_dependence(model, X, features, method="brute", kind="both",
                                        grid_resolution=12)
    ours = partial_dependence(model, X, features, method="brute", kind="both",
                              grid_resolution=12)
    for a, b in zip(theirs.grid_values, ours.grid_values, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours.average, theirs.average)
    np.testing.assert_array_equal(ours.individual, theirs.individual)


@pytest.mark.parametrize("kind", ["hgb-regression", "hgb-binary", "forest"])
def test_brute_with_missing_values_and_weights_equals_scikit_learn(kind):
    X, y = _data(missing=kind.startswith("hgb"))
    model = _fitted(kind, X, y)
    weights = np.random.default_rng(1).random(X.shape[0])
    theirs = sklearn_partial_dependence(model, X, [1, 2], method="brute", kind="both",
                                        grid_resolution=7, sample_weight=weights,
                                        percentiles=(0.1, 0.8))
    ours = partial_dependence(model, X, [1, 2], method="brute", kind="both",
                              grid_resolution=7, sample_weight=weights,
                              percentiles=(0.1, 0.8), n_jobs=2)
    np.testing.assert_array_equal(ours.average, theirs.average)
    np.testing.assert_array_equal(ours.individual, theirs.individual)


@pytest.mark.parametrize("kind", ["forest", "tree-regressor", "gb-binary", "gb-multiclass",
                                  "gb-regression", "hgb-regression", "hgb-binary"])
@pytest.mark.parametrize("features", [[0], [0, 1]])
def test_recursion_equals_scikit_learn(kind, features):
    X, y = _data()
    model = _fitted(kind, X, y)
    theirs = sklearn_partial_dependence(model, X, features, grid_resolution=9)
    ours = partial_dependence(model, X, features, grid_resolution=9)  # auto: recursion
    np.testing.assert_array_equal(ours.average, theirs.average)
    assert "individual" not in ours


def test_auto_takes_brute_where_scikit_learn_does():
    X, y = _data()
    model = _fitted("forest-binary", X, y)
    theirs = sklearn_partial_dependence(model, X, [2])
    ours = partial_dependence(model, X, [2])
    np.testing.assert_array_equal(ours.average, theirs.average)


@pytest.mark.parametrize("kind", ["forest-multiclass", "gb-multiclass", "forest"])
def test_recursion_on_any_model_follows_the_definition(kind):
    X, y = _data()
    model = _fitted(kind, X, y)
    grid = np.linspace(-1, 1, 5)
    ours = partial_dependence(model, X, [0, 2], method="recursion",
                              custom_values={0: grid, 2: grid[:3]})
    ensemble = as_ensemble(model)
    points = [(a, b) for a in np.float32(grid) for b in np.float32(grid[:3])]
    naive = naive_effects.recursion(ensemble, [0, 2], points).T
    if kind == "forest-multiclass":
        naive = naive[:3]
    np.testing.assert_allclose(ours.average.reshape(naive.shape), naive, rtol=1e-12,
                               atol=1e-12)


def test_brute_matches_the_naive_definition_on_sapwoods_own_forest():
    X, y = _data(n=150)
    model = sapwood.RandomForestRegressor(n_estimators=10, max_depth=5,
                                          random_state=0).fit(X, y)
    ours = partial_dependence(model, X, [0, 4], kind="both", grid_resolution=6)
    points = [(a, b) for a in ours.grid_values[0] for b in ours.grid_values[1]]
    naive = naive_effects.ice(model, X, [0, 4], points)  # (n_points, n_rows)
    np.testing.assert_allclose(ours.individual.reshape(X.shape[0], -1), naive.T,
                               rtol=1e-12)
    np.testing.assert_allclose(ours.average.ravel(), naive.mean(axis=1), rtol=1e-12)


def test_categorical_dataframe_column_equals_scikit_learn():
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"a": rng.normal(size=n),
                          "colour": pd.Categorical(rng.choice(["red", "green", "blue", "grey"],
                                                              size=n)),
                          "b": rng.normal(size=n)})
    y = frame["a"] + (frame["colour"] == "red") * 2.0 + rng.normal(size=n) * 0.1
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype",
                                          random_state=0).fit(frame, y)
    theirs = sklearn_partial_dependence(model, frame, ["colour"], method="brute",
                                        categorical_features=["colour"], kind="both")
    ours = partial_dependence(model, frame, ["colour"], method="brute",
                              categorical_features=["colour"], kind="both")
    assert list(ours.grid_values[0]) == list(theirs.grid_values[0])
    np.testing.assert_array_equal(ours.average, theirs.average)
    np.testing.assert_array_equal(ours.individual, theirs.individual)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_boosting_libraries_equal_scikit_learns_brute_on_them(library):
    X, y = _data()
    labels = (y > np.median(y)).astype(int)
    if library == "xgboost":
        xgboost = pytest.importorskip("xgboost")
        model = xgboost.XGBClassifier(n_estimators=20, max_depth=4, n_jobs=1).fit(X, labels)
    else:
        lightgbm = pytest.importorskip("lightgbm")
        model = lightgbm.LGBMClassifier(n_estimators=20, verbose=-1, n_jobs=1).fit(X, labels)
    theirs = sklearn_partial_dependence(model, X, [0, 1], method="brute", kind="both",
                                        grid_resolution=6)
    ours = partial_dependence(model, X, [0, 1], method="brute", kind="both",
                              grid_resolution=6)
    np.testing.assert_allclose(ours.individual, theirs.individual, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours.average, theirs.average, rtol=1e-6, atol=1e-7)
    recursion = partial_dependence(model, X, [0], method="recursion", grid_resolution=6)
    assert recursion.average.shape == (1, 6)


def test_feature_names_and_integer_columns():
    X, y = _data()
    frame = pd.DataFrame(X, columns=list("abcde"))
    frame["d"] = frame["d"].astype(int)
    model = RandomForestRegressor(10, max_depth=4, random_state=0).fit(frame, y)
    by_name = partial_dependence(model, frame, ["d", "a"], method="brute", grid_resolution=5)
    by_index = partial_dependence(model, frame, [3, 0], method="brute", grid_resolution=5)
    np.testing.assert_array_equal(by_name.average, by_index.average)
    assert by_name.average.shape == (1, 4, 5)  # d: four unique values


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kind": "mean"}, "'kind' parameter of partial_dependence"),
    ({"method": "fast"}, "'method' parameter of partial_dependence"),
    ({"grid_resolution": 1}, "'grid_resolution' parameter of partial_dependence"),
    ({"features": [7]}, r"features must be column indices in \[0, 4\]; got 7"),
    ({"features": ["zz"]}, "features must be column names"),
    ({"features": [0, 0]}, "must not repeat"),
    ({"percentiles": (0.9, 0.1)}, "percentiles must be two increasing numbers"),
    ({"method": "recursion", "kind": "both"}, "recursion' gives only kind='average'"),
    ({"response_method": "decision_function", "method": "brute"},
     "needs a boosted classifier"),
    ({"response_method": "predict"}, "'predict' is for regression models"),
])
def test_errors_name_the_parameter(kwargs, message):
    X, y = _data(n=60)
    model = _fitted("forest-binary", X, y)
    arguments = {"features": [0], **kwargs}
    with pytest.raises((ValueError, TypeError), match=message):
        partial_dependence(model, X, **arguments)


def test_a_model_sapwood_cannot_read_is_refused():
    from sklearn.linear_model import LinearRegression

    X, y = _data(n=30)
    with pytest.raises(TypeError, match="partial_dependence: the model must be a tree model"):
        partial_dependence(LinearRegression().fit(X, y), X, [0])
