"""Conditional permutation importance against a naive per-tree implementation, the
unconditional out-of-bag importance at threshold 1, the literature's claim on
ground-truth data, errors, and n_jobs / seed invariance."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import ExtraTreesRegressor as SkExtraTreesRegressor
from sklearn.ensemble import RandomForestClassifier as SkRandomForestClassifier
from sklearn.ensemble import RandomForestRegressor as SkRandomForestRegressor
from sklearn.tree import DecisionTreeRegressor as SkDecisionTreeRegressor

import sapwood
from sapwood._kernels._conditional import _renumber
from sapwood.datasets import make_ground_truth
from sapwood.importance import (
    ImportanceResult,
    conditional_permutation_importance,
    oob_permutation_importance,
)
from sapwood.importance._conditional import association_test
from sapwood.importance._engine._bagging import randomforest_summary
from tests.reference.naive_conditional import naive_conditional_importance, naive_conditioning


def _data(task, n=240, seed=0):
    """Correlated columns (so conditioning sets and cells are not trivial), NaN, ties
    and a constant column."""
    if task == "classification":
        X, y = make_classification(n, 6, n_informative=3, n_redundant=1, n_classes=3,
                                   n_clusters_per_class=1, random_state=seed)
    else:
        X, y = make_regression(n, 6, n_informative=3, noise=5.0, random_state=seed)
    rng = np.random.RandomState(seed)
    X[:, 2] = X[:, 0] + 0.5 * rng.standard_normal(n)
    X[::7, 1] = np.nan
    X[3::11, 2] = np.nan
    X[:, 4] = np.round(X[:, 4])
    X[:, 5] = 1.5
    return X, y


def _oob_rows(forest, n_samples):
    return [np.flatnonzero(np.bincount(drawn, minlength=n_samples) == 0)
            for drawn in forest.estimators_samples_]


def _codes(model, y):
    classes = list(model.classes_)
    return np.array([classes.index(label) for label in y], dtype=np.float64)


def _assert_close(actual, expected, y, classification):
    scale = 1.0 if classification else float(np.var(y))
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12 * scale)


def _assert_nontrivial_cells(result, max_rows):
    """Some tree permuted a column within more than one cell but fewer than one per row."""
    cells = result.extra["n_cells"]
    assert ((cells > 1) & (cells < max_rows)).any()


FORESTS = {
    "sapwood-rf": (sapwood.RandomForestClassifier, sapwood.RandomForestRegressor),
    "sapwood-et": (sapwood.ExtraTreesClassifier, sapwood.ExtraTreesRegressor),
    "sklearn-rf": (SkRandomForestClassifier, SkRandomForestRegressor),
}


@pytest.mark.parametrize("kind", list(FORESTS))
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_bagged_forest_equals_naive_on_oob_rows(kind, task):
    X, y = _data(task)
    cls = FORESTS[kind][task == "regression"]
    forest = cls(n_estimators=5, max_depth=5, bootstrap=True, random_state=3).fit(X, y)
    n_repeats = 2 if kind == "sapwood-rf" else 1
    result = conditional_permutation_importance(forest, X, y, threshold=0.5,
                                                n_repeats=n_repeats, random_state=7)
    target = _codes(forest, y) if task == "classification" else y
    expected = naive_conditional_importance(forest, X, target, _oob_rows(forest, len(y)),
                                            threshold=0.5, n_repeats=n_repeats,
                                            random_state=7)
    classification = task == "classification"
    assert isinstance(result, ImportanceResult)
    assert result.method == "conditional_permutation"
    assert result.importances.shape == (X.shape[1], 5)
    _assert_close(result.importances, expected, y, classification)
    mean, std, _ = randomforest_summary(expected)
    _assert_close(result.importances_mean, mean, y, classification)
    np.testing.assert_allclose(result.importances_std, std, rtol=1e-9, atol=1e-12)
    assert result.params["rows"] == "out-of-bag" and result.params["scoring"] == "per tree"
    _assert_nontrivial_cells(result, len(y))
    # The constant column is never conditioned on and never used.
    assert result.importances[5].tolist() == [0.0] * 5
    assert all("x5" not in names for names in result.extra["conditioning"].values())


@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.9])
def test_single_tree_on_held_out_rows_equals_naive(threshold):
    X, y = _data("regression", seed=1)
    X_train, y_train, X_test, y_test = X[:160], y[:160], X[160:], y[160:]
    tree = SkDecisionTreeRegressor(max_depth=6, random_state=0).fit(X_train, y_train)
    result = conditional_permutation_importance(tree, X_test, y_test, threshold=threshold,
                                                n_repeats=3, random_state=1)
    expected = naive_conditional_importance(tree, X_test, y_test, [np.arange(len(y_test))],
                                            threshold=threshold, n_repeats=3, random_state=1)
    _assert_close(result.importances, expected, y_test, False)
    assert result.params["rows"] == "held-out"
    _assert_nontrivial_cells(result, len(y_test))


def test_classifier_tree_and_unbootstrapped_forest_use_all_rows():
    X, y = _data("classification", seed=2)
    tree = sapwood.DecisionTreeClassifier(max_depth=5, random_state=0).fit(X[:150], y[:150])
    result = conditional_permutation_importance(tree, X[150:], y[150:], random_state=4)
    expected = naive_conditional_importance(tree, X[150:], _codes(tree, y[150:]),
                                            [np.arange(90)], threshold=0.2, random_state=4)
    _assert_close(result.importances, expected, y, True)

    X, y = _data("regression", seed=2)
    forest = SkExtraTreesRegressor(n_estimators=4, max_depth=5, random_state=0).fit(
        X[:150], y[:150])
    result = conditional_permutation_importance(forest, X[150:], y[150:], threshold=0.6,
                                                random_state=4)
    expected = naive_conditional_importance(forest, X[150:], y[150:], [np.arange(90)] * 4,
                                            threshold=0.6, random_state=4)
    _assert_close(result.importances, expected, y[150:], False)
    assert result.params["rows"] == "held-out"


def test_xgboost_classifier_equals_naive():
    xgboost = pytest.importorskip("xgboost")
    X, y = _data("classification", seed=3)
    y = (y == 1).astype(int)
    model = xgboost.XGBClassifier(n_estimators=6, max_depth=3, random_state=0).fit(
        X[:150], y[:150])
    result = conditional_permutation_importance(model, X[150:], y[150:], threshold=0.3,
                                                n_repeats=2, random_state=5)
    expected = naive_conditional_importance(model, X[150:], y[150:], None, threshold=0.3,
                                            n_repeats=2, random_state=5)
    assert result.importances.shape == (X.shape[1], 2)
    assert result.params["scoring"] == "model"
    _assert_close(result.importances, expected, y, True)
    np.testing.assert_allclose(result.importances_std, expected.std(axis=1), atol=1e-12)
    _assert_nontrivial_cells(result, 90)


def test_lightgbm_regressor_equals_naive():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _data("regression", seed=4)
    model = lightgbm.LGBMRegressor(n_estimators=5, num_leaves=8, min_child_samples=5,
                                   verbose=-1, random_state=0).fit(X[:150], y[:150])
    result = conditional_permutation_importance(model, X[150:], y[150:], threshold=0.2,
                                                random_state=6)
    expected = naive_conditional_importance(model, X[150:], y[150:], None, threshold=0.2,
                                            random_state=6)
    _assert_close(result.importances, expected, y[150:], False)
    assert np.any(result.importances != 0.0)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_threshold_one_is_the_unconditional_oob_importance(task):
    X, y = _data(task, seed=5)
    cls = FORESTS["sapwood-rf"][task == "regression"]
    forest = cls(n_estimators=6, random_state=0).fit(X, y)
    result = conditional_permutation_importance(forest, X, y, threshold=1.0, n_repeats=2,
                                                random_state=9)
    unconditional = oob_permutation_importance(forest, X, y, n_repeats=2, random_state=9)
    assert all(names == [] for names in result.extra["conditioning"].values())
    _assert_close(result.importances, unconditional.importances, y,
                  task == "classification")
    # Every tree permutes within one cell: the whole out-of-bag set.
    assert set(np.unique(result.extra["n_cells"])) <= {0, 1}


def test_association_test_and_conditioning_sets_match_the_naive_test():
    X, _ = _data("regression", seed=6)
    pvalues, criterion = association_test(X.astype(np.float32))
    assert np.allclose(pvalues, pvalues.T) and np.allclose(pvalues + criterion, 1.0)
    tree = sapwood.DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 3])
    for threshold in (0.0, 0.2, 0.5, 0.95, 1.0):
        result = conditional_permutation_importance(tree, X, X[:, 3], threshold=threshold,
                                                    random_state=0)
        naive = naive_conditioning(X.astype(np.float32), threshold)
        assert result.extra["conditioning"] == {
            f"x{j}": [f"x{z}" for z in zs] for j, zs in naive.items()}
        if threshold < 1.0:
            assert "x2" in result.extra["conditioning"]["x0"]
    assert "chi2(1)" in result.params["test"]
    assert result.params["threshold"] == 1.0


def test_renumbering_keeps_the_partition_of_rows():
    # Used when combined bin keys would overflow int64; too many cuts to reach in a test.
    rng = np.random.RandomState(0)
    key = rng.choice([-5, 3, 2**61, 7, 2**62 - 1], size=200).astype(np.int64)
    dense, n_distinct = _renumber(key)
    assert n_distinct == len(np.unique(key))
    np.testing.assert_array_equal(dense, np.unique(key, return_inverse=True)[1])


def test_one_row_and_feature_names_from_a_data_frame():
    X, y, _ = make_ground_truth(n_samples=200, task="regression", random_state=0)
    tree = sapwood.DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    one = conditional_permutation_importance(tree, X.iloc[:1], y.iloc[:1], random_state=0)
    assert one.importances.tolist() == [[0.0]] * X.shape[1]
    assert one.feature_names == list(X.columns)
    assert all(names == [] for names in one.extra["conditioning"].values())


def test_same_numbers_for_any_n_jobs_and_reproducible():
    X, y = _data("classification", seed=7)
    forest = sapwood.RandomForestClassifier(n_estimators=8, random_state=0).fit(X, y)
    first = conditional_permutation_importance(forest, X, y, random_state=3, n_jobs=1)
    second = conditional_permutation_importance(forest, X, y, random_state=3, n_jobs=2)
    again = conditional_permutation_importance(forest, X, y, random_state=3)
    np.testing.assert_array_equal(first.importances, second.importances)
    np.testing.assert_array_equal(first.importances, again.importances)
    other = conditional_permutation_importance(forest, X, y, random_state=4)
    assert not np.array_equal(first.importances, other.importances)

    booster = sapwood.GradientBoostingRegressor(n_estimators=10, max_depth=3,
                                                random_state=0).fit(X[:150], y[:150])
    first = conditional_permutation_importance(booster, X[150:], y[150:], n_repeats=2,
                                               random_state=np.random.RandomState(1), n_jobs=1)
    second = conditional_permutation_importance(booster, X[150:], y[150:], n_repeats=2,
                                                random_state=np.random.RandomState(1),
                                                n_jobs=2)
    np.testing.assert_array_equal(first.importances, second.importances)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correlated_copy_loses_its_importance_when_conditioned_on(seed):
    # Strobl et al. (2008): permuting inf_4_copy unconditionally breaks its relation
    # with inf_4 too, so it looks important; within inf_4's cells it is nearly
    # worthless. An informative feature associated with neither keeps its importance.
    X, y, truth = make_ground_truth(n_samples=1000, random_state=seed)
    assert truth["inf_4_copy"] == "correlated copy"
    forest = sapwood.RandomForestClassifier(n_estimators=50, min_samples_leaf=20,
                                            random_state=seed).fit(X, y)
    unconditional = oob_permutation_importance(forest, X, y, random_state=0)
    copy, inf_1 = X.columns.get_loc("inf_4_copy"), X.columns.get_loc("inf_1")
    assert unconditional.importances_mean[copy] > 0.015
    for threshold in (0.2, 0.95):
        result = conditional_permutation_importance(forest, X, y, threshold=threshold,
                                                    random_state=0)
        assert "inf_4" in result.extra["conditioning"]["inf_4_copy"]
        assert result.importances_mean[copy] < 0.25 * unconditional.importances_mean[copy]
    assert result.extra["conditioning"]["inf_4_copy"] == ["inf_4"]
    assert result.importances_mean[inf_1] > 0.8 * unconditional.importances_mean[inf_1]


@pytest.mark.parametrize(("arguments", "message"), [
    ({"threshold": -0.1}, r"'threshold' parameter .* range \[0\.0, 1\.0\]\. Got -0\.1"),
    ({"threshold": 1.5}, r"'threshold' parameter .* range \[0\.0, 1\.0\]\. Got 1\.5"),
    ({"threshold": "high"}, r"'threshold' parameter .*Got 'high'"),
    ({"n_repeats": 0}, r"'n_repeats' parameter .* range \[1, inf\)\. Got 0"),
])
def test_bad_parameters_name_parameter_allowed_values_and_value(arguments, message):
    X, y = _data("regression", n=60)
    tree = sapwood.DecisionTreeRegressor(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match=message):
        conditional_permutation_importance(tree, X, y, **arguments)


def test_bad_data():
    X, y = _data("classification", n=60)
    forest = sapwood.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"y must have shape \(60,\)"):
        conditional_permutation_importance(forest, X, y[:-1])
    with pytest.raises(ValueError, match="fit on 60.*out-of-bag"):
        conditional_permutation_importance(forest, X[:-1], y[:-1])
    with pytest.raises(ValueError, match="X has 5 features; the model was fit on 6"):
        conditional_permutation_importance(forest, X[:, :5], y)
    with pytest.raises(ValueError, match="labels the model was not fit on"):
        conditional_permutation_importance(forest, X, np.where(y == 0, 7, y))
    multi = SkDecisionTreeRegressor(max_depth=2).fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="single-output"):
        conditional_permutation_importance(multi, X, y)
