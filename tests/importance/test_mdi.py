"""MDI and its per-node trace against scikit-learn and a naive recomputation."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    RandomForestClassifier,
)

import sapwood
from sapwood import TreeEnsemble
from sapwood.importance import ImportanceResult, mdi, side_by_side
from tests.reference.sklearn_trees import ensemble_from_sklearn, tree_arrays_from_sklearn


def naive_tree_mdi(tree):
    """Seed 000's recomputation: dI = n_t/n (I_t - n_tl/n_t I_tl - n_tr/n_t I_tr)."""
    w, imp = tree.weighted_n_node_samples, tree.impurity
    out = np.zeros(tree.n_features)
    for node in range(tree.node_count):
        left, right = tree.children_left[node], tree.children_right[node]
        if left == -1:
            continue
        n_t = w[node]
        out[tree.feature[node]] += n_t / w[0] * (
            imp[node] - w[left] / n_t * imp[left] - w[right] / n_t * imp[right])
    return out / out.sum() if out.sum() > 0 else out


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_tree_mdi_equals_scikit_learn_and_seed_recomputation(criterion):
    X, y = make_classification(400, 6, n_informative=3, random_state=0)
    model = sapwood.DecisionTreeClassifier(criterion=criterion, max_depth=6, random_state=0)
    model.fit(X, y)
    result = mdi(model)
    np.testing.assert_array_equal(result.importances_mean, model.feature_importances_)
    np.testing.assert_allclose(result.importances_mean, naive_tree_mdi(model.tree_),
                               rtol=1e-12)
    import sklearn.tree as sk

    reference = sk.DecisionTreeClassifier(criterion=criterion, max_depth=6, random_state=0)
    np.testing.assert_array_equal(result.importances_mean,
                                  reference.fit(X, y).feature_importances_)


def test_trace_explains_every_number():
    X, y = make_regression(300, 5, n_informative=3, random_state=1)
    model = sapwood.DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    result = mdi(model, feature_names=list("abcde"))
    trace = result.trace
    tree = model.tree_
    assert len(trace) == int(np.sum(tree.children_left != -1))
    expected = (trace.w * trace.impurity - trace.w_left * trace.impurity_left
                - trace.w_right * trace.impurity_right) / tree.weighted_n_node_samples[0]
    np.testing.assert_allclose(trace.decrease, expected, rtol=1e-12)
    by_feature = trace.groupby("feature").contribution.sum().reindex(list("abcde"), fill_value=0)
    np.testing.assert_allclose(by_feature.to_numpy(), result.importances_mean, atol=1e-12)
    assert list(result.to_frame().columns) == ["feature", "importance", "std", "ci_low",
                                               "ci_high", "rank", "rank_low", "rank_high"]


@pytest.mark.parametrize("forest", [RandomForestClassifier(n_estimators=15, random_state=0),
                                    ExtraTreesRegressor(n_estimators=10, max_depth=3,
                                                        random_state=0)])
def test_forest_mdi_uses_the_normalised_average(forest):
    if hasattr(forest, "predict_proba"):
        X, y = make_classification(300, 6, random_state=2)
    else:
        X, y = make_regression(300, 6, random_state=2)
    forest.fit(X, y)
    result = mdi(ensemble_from_sklearn(forest))
    np.testing.assert_allclose(result.importances_mean, forest.feature_importances_,
                               rtol=1e-12, atol=1e-15)
    # seed 000: forest MDI recomputed from the tree arrays
    per_tree = np.mean([naive_tree_mdi(tree_arrays_from_sklearn(t)) for t in forest.estimators_],
                       axis=0)
    np.testing.assert_allclose(result.importances_mean, per_tree / per_tree.sum(), rtol=1e-10)
    trace_total = result.trace.groupby("feature").contribution.sum()
    np.testing.assert_allclose(trace_total.sort_index().to_numpy(),
                               pd.Series(result.importances_mean,
                                         index=result.feature_names).sort_index().to_numpy(),
                               atol=1e-12)
    assert result.importances.shape == (6, forest.n_estimators)


def test_boosting_mdi_uses_the_unnormalised_average():
    X, y = make_classification(300, 5, n_classes=3, n_informative=3, random_state=0)
    booster = GradientBoostingClassifier(n_estimators=8, max_depth=2, random_state=0).fit(X, y)
    trees = [tree_arrays_from_sklearn(t) for t in booster.estimators_.ravel()]
    ensemble = TreeEnsemble(trees=trees, task="classification", n_features=5, combine="sum",
                            tree_output=np.tile(np.arange(3), 8))
    result = mdi(ensemble)
    np.testing.assert_allclose(result.importances_mean, booster.feature_importances_,
                               rtol=1e-12)
    # The draws are the trees' unnormalised vectors over the total of their mean, so
    # their mean is the importance (the rank intervals order features as it does).
    raw = np.column_stack([_unnormalised(t) for t in trees])
    np.testing.assert_allclose(result.importances, raw / raw.mean(axis=1).sum(), rtol=1e-12)
    np.testing.assert_allclose(result.importances.mean(axis=1), result.importances_mean,
                               rtol=1e-12)
    assert result.ci_low is None


def _unnormalised(tree):
    """A tree's decreases over its root weight, not normalised (naive loop)."""
    w, imp = tree.weighted_n_node_samples, tree.impurity
    out = np.zeros(tree.n_features)
    for node in range(tree.node_count):
        left, right = tree.children_left[node], tree.children_right[node]
        if left != -1:
            out[tree.feature[node]] += (w[node] * imp[node] - w[left] * imp[left]
                                        - w[right] * imp[right]) / w[0]
    return out


def test_a_forest_draws_leave_out_its_stumps_and_average_to_the_importance():
    # Tiny bootstrap samples make some trees single nodes; scikit-learn's average leaves
    # them out, and so do the draws, their spread and the interval.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    y = (X[:, 0] > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=40, max_samples=3, random_state=0).fit(X, y)
    stumps = sum(t.tree_.node_count == 1 for t in forest.estimators_)
    assert 0 < stumps < 40
    result = mdi(ensemble_from_sklearn(forest))
    np.testing.assert_allclose(result.importances_mean, forest.feature_importances_,
                               rtol=1e-12)
    assert result.importances.shape == (3, 40 - stumps)
    np.testing.assert_allclose(result.importances.mean(axis=1), result.importances_mean,
                               rtol=1e-12)
    np.testing.assert_allclose(result.importances_std, result.importances.std(axis=1))
    assert (result.ci_low <= result.importances_mean).all()


def test_result_type_tables_and_side_by_side():
    result = ImportanceResult(importances_mean=[0.2, 0.5, 0.3], importances_std=[0, 0.1, 0],
                              feature_names=["a", "b", "c"], method="test")
    frame = result.to_frame()
    assert list(frame.feature) == ["b", "c", "a"]
    assert list(frame["rank"]) == [1, 2, 3]
    other = ImportanceResult(importances_mean=[0.6, 0.1, 0.3], importances_std=[0, 0, 0],
                             feature_names=["a", "b", "c"], method="other")
    table = side_by_side(result, other, names=["one", "two"])
    assert table.shape == (6, 5) and list(table.columns) == ["feature", "method",
                                                             "importance", "std", "rank"]
    assert list(table.method) == ["one"] * 3 + ["two"] * 3
    assert list(table.feature) == ["a", "b", "c"] * 2
    assert list(table.importance) == [0.2, 0.5, 0.3, 0.6, 0.1, 0.3]
    assert list(table["rank"]) == [3, 1, 2, 1, 3, 2]
    with pytest.raises(ValueError, match="same length"):
        ImportanceResult(importances_mean=[1.0], importances_std=[0.0, 1.0],
                         feature_names=["a"], method="bad")


def test_models_without_impurities_are_refused():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = make_regression(200, 4, random_state=0)
    model = HistGradientBoostingRegressor(max_iter=3).fit(X, y)
    with pytest.raises(ValueError, match="native_importance"):
        mdi(model)
