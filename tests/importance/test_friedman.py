"""Friedman's (2001) importance against naive recomputations from the trees."""

import numpy as np
import pytest
import sklearn.ensemble as ske
from scipy.special import expit
from sklearn.datasets import make_classification, make_regression

from sapwood.importance import friedman_importance
from sapwood.learners import GradientBoostingClassifier, GradientBoostingRegressor


def naive_J2_from_means(estimators):
    """(1/M) sum over trees of w_L w_R / (w_L + w_R) (mean_L - mean_R)^2, from the
    children's stored values (residual means in squared-error boosting)."""
    trees = [est.tree_ for est in np.ravel(estimators)]
    J2 = np.zeros(trees[0].n_features)
    for tree in trees:
        for node in range(tree.node_count):
            left, right = tree.children_left[node], tree.children_right[node]
            if left == -1:
                continue
            wl, wr = tree.weighted_n_node_samples[left], tree.weighted_n_node_samples[right]
            diff = tree.value[left, 0, 0] - tree.value[right, 0, 0]
            J2[tree.feature[node]] += wl * wr / (wl + wr) * diff**2
    return J2 / len(trees)


@pytest.mark.parametrize("weighted", [False, True])
def test_squared_error_equals_naive_means_and_scikit_learn_relation(weighted):
    X, y = make_regression(200, 5, noise=5.0, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y)) if weighted else None
    ours = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y, w)
    theirs = ske.GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y, w)
    result = friedman_importance(ours)
    J2 = result.extra["J2"]
    np.testing.assert_allclose(J2, naive_J2_from_means(ours.estimators_), rtol=1e-9)
    np.testing.assert_allclose(result.importances_mean, np.sqrt(J2), rtol=1e-12)
    # squared error: i_t^2 = w * impurity decrease, so J2 = mean over trees of
    # w_root * scikit-learn's unnormalised per-tree importances ...
    unnormalised = np.mean([t.tree_.weighted_n_node_samples[0]
                            * t.tree_.compute_feature_importances(normalize=False)
                            for t in theirs.estimators_.ravel()], axis=0)
    np.testing.assert_allclose(J2, unnormalised, rtol=1e-12)
    # ... and, all roots having the same weight, J2 normalised is feature_importances_
    np.testing.assert_allclose(J2 / J2.sum(), theirs.feature_importances_, rtol=1e-12)
    # the adapted scikit-learn model gives the same numbers as sapwood's (same trees)
    np.testing.assert_array_equal(friedman_importance(theirs).importances_mean,
                                  result.importances_mean)
    assert result.method == "friedman"
    assert len(result.trace) == sum(t.tree_.node_count // 2 for t in ours.estimators_.ravel())


def test_log_loss_uses_residual_means_not_leaf_values():
    # Log-loss leaves hold Newton steps; the improvement must come from the children's
    # means of the pseudo-residuals each tree was fitted to, recomputed here naively.
    X, y = make_classification(200, 5, n_informative=3, random_state=1)
    model = GradientBoostingClassifier(n_estimators=6, random_state=1).fit(X, y)
    X32 = X.astype(np.float32)
    raw = np.full(len(y), model._base_score[0])
    J2 = np.zeros(X.shape[1])
    for stage, dec in zip(model.estimators_[:, 0], model.staged_decision_function(X),
                          strict=True):
        residual = y - expit(raw)
        tree = stage.tree_
        paths = tree.decision_path(X32).toarray().astype(bool)
        for node in np.flatnonzero(tree.children_left != -1):
            left, right = tree.children_left[node], tree.children_right[node]
            rl, rr = residual[paths[:, left]], residual[paths[:, right]]
            J2[tree.feature[node]] += (len(rl) * len(rr) / (len(rl) + len(rr))
                                       * (rl.mean() - rr.mean()) ** 2)
        raw = dec
    J2 /= model.estimators_.shape[0]
    result = friedman_importance(model)
    np.testing.assert_allclose(result.extra["J2"], J2, rtol=1e-9)
    leaf = result.trace["mean_left"].isna() | result.trace["mean_right"].isna()
    assert leaf.any()
    sk = ske.GradientBoostingClassifier(n_estimators=6, random_state=1).fit(X, y)
    np.testing.assert_array_equal(friedman_importance(sk).extra["J2"], result.extra["J2"])


def test_relative_influence_and_per_class_average():
    X, y = make_classification(200, 6, n_informative=4, n_classes=3, random_state=2)
    model = GradientBoostingClassifier(n_estimators=5, random_state=2).fit(X, y)
    sqrt = friedman_importance(model)
    ri = friedman_importance(model, scale="relative_influence")
    assert ri.method == "relative_influence"
    np.testing.assert_allclose(ri.importances_mean.sum(), 100.0)
    influence = sqrt.importances.sum(axis=1)
    np.testing.assert_allclose(ri.extra["relative_influence"], influence, rtol=1e-12)
    np.testing.assert_allclose(ri.importances_mean, 100 * influence / influence.sum(),
                               rtol=1e-12)
    # Friedman's multiclass J_j^2: the average over classes of the per-class J_jk^2
    per_class = sqrt.extra["J2_per_output"]
    assert per_class.shape == (6, 3)
    np.testing.assert_allclose(per_class.mean(axis=1), sqrt.extra["J2"], rtol=1e-12)
    np.testing.assert_allclose(sqrt.importances_mean ** 2, sqrt.extra["J2"], rtol=1e-12)
    assert sqrt.importances.shape == (6, 15)
    np.testing.assert_array_equal(sqrt.ranks(), ri.ranks())


def test_rejects_forests_and_unknown_scales():
    X, y = make_regression(60, 3, random_state=0)
    forest = ske.RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="combine='sum'"):
        friedman_importance(forest)
    model = GradientBoostingRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="scale must be"):
        friedman_importance(model, scale="percent")
    result = friedman_importance(model, feature_names=["a", "b", "c"])
    assert result.feature_names == ["a", "b", "c"]
