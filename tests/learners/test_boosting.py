"""Gradient boosting against scikit-learn 1.9 (squared_error, log_loss; subsample=1.0)."""

import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.datasets import make_classification, make_regression

from sapwood.importance import mdi
from sapwood.learners import GradientBoostingClassifier, GradientBoostingRegressor
from tests.reference.sklearn_parity import tree_differences

OPTIONS = [{}, {"max_features": 2}, {"max_leaf_nodes": 6, "max_depth": None}]


@pytest.mark.parametrize("params", OPTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_regressor_equals_scikit_learn_tree_by_tree(params, weighted):
    X, y = make_regression(300, 6, noise=5.0, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y)) if weighted else None
    a = GradientBoostingRegressor(n_estimators=30, random_state=1, **params).fit(X, y, w)
    b = ske.GradientBoostingRegressor(n_estimators=30, random_state=1, **params).fit(X, y, w)
    for ta, tb in zip(a.estimators_.ravel(), b.estimators_.ravel(), strict=True):
        assert tree_differences(ta.tree_, tb.tree_) == []
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    np.testing.assert_array_equal(a.train_score_, b.train_score_)
    for pa, pb in zip(a.staged_predict(X), b.staged_predict(X), strict=True):
        np.testing.assert_array_equal(pa, pb)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_predictions_equal_scikit_learn(n_classes):
    # Gradients go through exp(); numpy's exp and the C library's differ in the last
    # bit, so deep near-tie splits can differ: predictions agree to rounding, trees
    # mostly node for node (see the report; bit parity needs a libm-exp kernel).
    X, y = make_classification(300, 6, n_informative=4, n_classes=n_classes, random_state=0)
    a = GradientBoostingClassifier(n_estimators=30, random_state=1).fit(X, y)
    b = ske.GradientBoostingClassifier(n_estimators=30, random_state=1).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-10)
    np.testing.assert_allclose(a.train_score_, b.train_score_, rtol=1e-12)
    first = a.estimators_[0, 0].tree_, b.estimators_[0, 0].tree_
    assert [d for d in tree_differences(*first) if not d.endswith("~")] == []


@pytest.mark.parametrize("model", ["regressor", "classifier"])
def test_mdi_and_to_ensemble_read_the_same_model(model):
    if model == "regressor":
        X, y = make_regression(200, 5, random_state=2)
        est = GradientBoostingRegressor(n_estimators=15, random_state=2).fit(X, y)
        expected = est.predict(X)
    else:
        X, y = make_classification(200, 5, n_classes=3, n_informative=3, random_state=2)
        est = GradientBoostingClassifier(n_estimators=15, random_state=2).fit(X, y)
        expected = est.decision_function(X)
    ensemble = est.to_ensemble()
    assert ensemble.combine == "sum"
    raw = ensemble.raw_predict(X)
    np.testing.assert_allclose(raw[:, 0] if raw.shape[1] == 1 else raw, expected, rtol=1e-12)
    np.testing.assert_allclose(mdi(est).importances_mean, est.feature_importances_,
                               rtol=1e-12)
