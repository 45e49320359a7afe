"""Gradient boosting against scikit-learn 1.9: tree by tree and bit for bit.

Every loss, subsample with its out-of-bag scores, init, early stopping, warm start and
max_features reproduce scikit-learn's trees exactly (same random draws, gradients from
the C library's exp/log as scikit-learn's compiled losses evaluate them).
"""

import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from sapwood._kernels import _losses
from sapwood.importance import mdi
from sapwood.learners import GradientBoostingClassifier, GradientBoostingRegressor
from sapwood.learners._losses import (
    CLASSIFICATION_LOSSES,
    REGRESSION_LOSSES,
    AbsoluteError,
    BinomialLogLoss,
    ExponentialLoss,
    Huber,
    MultinomialLogLoss,
    Quantile,
    SquaredError,
    make_loss,
)
from tests.reference.sklearn_parity import tree_differences

SAMPLE_WEIGHT_EQUIVALENCE = {
    name: "sample_weight is not equivalent to removing/repeating samples (as sklearn)"
    for name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")}


def assert_same_model(a, b, X):
    assert a.estimators_.shape == b.estimators_.shape
    assert a.n_estimators_ == b.n_estimators_
    for ta, tb in zip(a.estimators_.ravel(), b.estimators_.ravel(), strict=True):
        assert tree_differences(ta.tree_, tb.tree_) == []
    np.testing.assert_array_equal(a.train_score_, b.train_score_)
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    if hasattr(b, "oob_improvement_"):
        np.testing.assert_array_equal(a.oob_improvement_, b.oob_improvement_)
        np.testing.assert_array_equal(a.oob_scores_, b.oob_scores_)
        assert a.oob_score_ == b.oob_score_
    else:
        assert not hasattr(a, "oob_improvement_")
    if hasattr(b, "predict_proba"):
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
        for pa, pb in zip(a.staged_predict_proba(X), b.staged_predict_proba(X), strict=True):
            np.testing.assert_array_equal(pa, pb)
    for pa, pb in zip(a.staged_predict(X), b.staged_predict(X), strict=True):
        np.testing.assert_array_equal(pa, pb)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.apply(X), b.apply(X))


def fit_both(ours, theirs, params, X, y, w=None):
    return ours(**params).fit(X, y, w), theirs(**params).fit(X, y, w)


REGRESSION = [
    {"loss": "squared_error"},
    {"loss": "squared_error", "max_features": 2, "subsample": 0.7},
    {"loss": "squared_error", "max_leaf_nodes": 6, "max_depth": None},
    {"loss": "absolute_error"},
    {"loss": "absolute_error", "subsample": 0.6},
    {"loss": "huber", "alpha": 0.8},
    {"loss": "huber", "subsample": 0.5},
    {"loss": "quantile", "alpha": 0.25},
    {"loss": "quantile", "alpha": 0.9, "subsample": 0.8},
    {"loss": "huber", "n_iter_no_change": 2, "n_estimators": 40, "learning_rate": 0.5},
    {"loss": "squared_error", "init": "zero", "min_samples_leaf": 5},
]


@pytest.mark.parametrize("case", range(len(REGRESSION)))
def test_regressor_equals_scikit_learn_tree_by_tree(case):
    X, y = make_regression(200, 6, noise=5.0, random_state=case)
    w = np.random.default_rng(case).uniform(0.5, 2.0, len(y)) if case % 2 else None
    params = {"n_estimators": 8, "random_state": case, **REGRESSION[case]}
    a, b = fit_both(GradientBoostingRegressor, ske.GradientBoostingRegressor, params,
                    X, y, w)
    assert_same_model(a, b, X)


CLASSIFICATION = [
    {},
    {"max_features": 3, "init": "zero"},
    {"max_leaf_nodes": 5, "max_depth": None, "subsample": 0.6, "max_features": 0.5},
    {"n_iter_no_change": 2, "n_estimators": 30, "learning_rate": 0.5,
     "validation_fraction": 0.2},
]


@pytest.mark.parametrize("params", CLASSIFICATION)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_equals_scikit_learn_tree_by_tree(params, n_classes):
    X, y = make_classification(200, 6, n_informative=4, n_classes=n_classes, random_state=0)
    params = {"n_estimators": 6, "random_state": 1, **params}
    a, b = fit_both(GradientBoostingClassifier, ske.GradientBoostingClassifier, params,
                    X, y)
    assert_same_model(a, b, X)


@pytest.mark.parametrize("params", [{}, {"subsample": 0.7}])
def test_exponential_loss_and_weighted_classifier_equal_scikit_learn(params):
    X, y = make_classification(200, 6, n_informative=4, random_state=3)
    w = np.random.default_rng(3).uniform(0.2, 3.0, len(y))
    for loss in ("exponential", "log_loss"):
        p = {"n_estimators": 8, "random_state": 2, "loss": loss, **params}
        a, b = fit_both(GradientBoostingClassifier, ske.GradientBoostingClassifier, p,
                        X, y, w)
        assert_same_model(a, b, X)
    with pytest.raises(ValueError, match="only suitable for a binary"):
        GradientBoostingClassifier(loss="exponential").fit(X, np.arange(len(y)) % 3)


def test_string_labels_zero_weights_and_random_state_instances():
    X, y = make_classification(200, 9, n_informative=5, n_classes=3, random_state=6)
    labels = np.array(["ant", "bee", "cat"])[y]
    w = np.random.default_rng(6).uniform(0.0, 2.0, len(y))
    w[:20] = 0.0
    params = {"n_estimators": 6, "max_features": "sqrt", "subsample": 0.5,
              "min_weight_fraction_leaf": 0.1}
    a = GradientBoostingClassifier(**params, random_state=np.random.RandomState(3))
    b = ske.GradientBoostingClassifier(**params, random_state=np.random.RandomState(3))
    assert_same_model(a.fit(X, labels, w), b.fit(X, labels, w), X)
    assert set(a.predict(X)) <= set(labels)


def test_init_estimator_equals_scikit_learn():
    X, y = make_regression(200, 5, noise=3.0, random_state=4)
    params = {"n_estimators": 5, "random_state": 0, "init": LinearRegression()}
    assert_same_model(*fit_both(GradientBoostingRegressor, ske.GradientBoostingRegressor,
                                params, X, y), X)
    X, y = make_classification(200, 5, n_informative=3, n_classes=3, random_state=4)
    params = {"n_estimators": 5, "random_state": 0, "init": LogisticRegression()}
    a, b = fit_both(GradientBoostingClassifier, ske.GradientBoostingClassifier, params, X, y)
    assert_same_model(a, b, X)
    with pytest.raises(ValueError, match="constant initial"):
        a.to_ensemble()


@pytest.mark.parametrize("model", ["regressor", "classifier"])
def test_warm_start_equals_scikit_learn_and_a_single_fit(model):
    if model == "regressor":
        X, y = make_regression(200, 5, noise=3.0, random_state=5)
        ours, theirs = GradientBoostingRegressor, ske.GradientBoostingRegressor
    else:
        X, y = make_classification(200, 5, n_informative=3, n_classes=3, random_state=5)
        ours, theirs = GradientBoostingClassifier, ske.GradientBoostingClassifier
    params = {"n_estimators": 4, "random_state": 0, "subsample": 0.8, "warm_start": True}
    a, b = fit_both(ours, theirs, params, X, y)
    a.set_params(n_estimators=7).fit(X, y)
    b.set_params(n_estimators=7).fit(X, y)
    assert_same_model(a, b, X)
    one_go = ours(**{**params, "n_estimators": 7, "warm_start": False}).fit(X, y)
    for ta, tb in zip(a.estimators_.ravel(), one_go.estimators_.ravel(), strict=True):
        assert tree_differences(ta.tree_, tb.tree_) == []
    with pytest.raises(ValueError, match="larger or equal"):
        a.set_params(n_estimators=5).fit(X, y)


def test_loss_kernels_are_bit_identical_to_scikit_learn():
    from sklearn._loss.loss import ExponentialLoss, HalfBinomialLoss, HalfMultinomialLoss

    rng = np.random.default_rng(0)
    raw = np.concatenate([rng.normal(0, 8, 20000), rng.uniform(-60, 60, 200)])
    y = (rng.random(raw.size) < 0.4).astype(float)
    binomial = HalfBinomialLoss()
    np.testing.assert_array_equal(_losses.binomial_gradient(y, raw), binomial.gradient(y, raw))
    np.testing.assert_array_equal(_losses.binomial_loss(y, raw), binomial.loss(y, raw))
    # These kernels call the C library's exp, as scikit-learn's Cython does: numpy's own
    # exp differs from it in the last bit on processors where numpy dispatches a SIMD
    # version (not on every host, so that is not asserted here).
    np.testing.assert_array_equal(_losses.exponential_gradient(y, raw / 4),
                                  ExponentialLoss().gradient(y, raw / 4))
    R = rng.normal(0, 5, (20000, 4))
    k = rng.integers(0, 4, 20000).astype(float)
    multinomial = HalfMultinomialLoss(n_classes=4)
    np.testing.assert_array_equal(_losses.multinomial_gradient(k, R), multinomial.gradient(k, R))
    np.testing.assert_array_equal(_losses.multinomial_loss(k, R), multinomial.loss(k, R))


@pytest.mark.parametrize("model", ["regressor", "classifier", "exponential"])
def test_mdi_and_to_ensemble_read_the_same_model(model):
    if model == "regressor":
        X, y = make_regression(200, 5, random_state=2)
        est = GradientBoostingRegressor(n_estimators=8, random_state=2).fit(X, y)
        expected = est.predict(X)
    elif model == "classifier":
        X, y = make_classification(200, 5, n_classes=3, n_informative=3, random_state=2)
        est = GradientBoostingClassifier(n_estimators=8, random_state=2).fit(X, y)
        expected = est.decision_function(X)
    else:
        X, y = make_classification(200, 5, random_state=2)
        est = GradientBoostingClassifier(loss="exponential", n_estimators=8,
                                         random_state=2).fit(X, y)
        expected = 2 * est.decision_function(X)
    ensemble = est.to_ensemble()
    assert ensemble.combine == "sum"
    raw = ensemble.raw_predict(X)
    np.testing.assert_allclose(raw[:, 0] if raw.shape[1] == 1 else raw, expected, rtol=1e-12)
    np.testing.assert_allclose(mdi(est).importances_mean, est.feature_importances_,
                               rtol=1e-12)


def test_loss_names_are_scikit_learns_and_each_loss_object_is_chosen_by_name():
    for ours, theirs, names in (
            (GradientBoostingRegressor, ske.GradientBoostingRegressor, REGRESSION_LOSSES),
            (GradientBoostingClassifier, ske.GradientBoostingClassifier,
             CLASSIFICATION_LOSSES)):
        assert set(names) == theirs._parameter_constraints["loss"][0].options
        assert ours._parameter_constraints["loss"][0].options == set(names)
    X, y = make_classification(60, 5, n_informative=3, n_classes=3, random_state=0)
    kinds = {"squared_error": SquaredError, "absolute_error": AbsoluteError,
             "huber": Huber, "quantile": Quantile, "exponential": ExponentialLoss}
    for name, kind in kinds.items():
        model = (GradientBoostingClassifier(loss=name, n_estimators=2).fit(X, y == 0)
                 if name == "exponential"
                 else GradientBoostingRegressor(loss=name, n_estimators=2).fit(X, y))
        assert type(model._loss) is kind
    assert type(GradientBoostingClassifier(n_estimators=2).fit(X, y == 0)._loss) \
        is BinomialLogLoss
    multinomial = GradientBoostingClassifier(n_estimators=2).fit(X, y)._loss
    assert type(multinomial) is MultinomialLogLoss and multinomial.n_classes == 3
    assert type(make_loss("quantile", alpha=0.3)) is Quantile
    assert make_loss("quantile", alpha=0.3).alpha == 0.3


def test_monitor_stops_the_fit():
    X, y = make_regression(100, 3, random_state=0)
    est = GradientBoostingRegressor(n_estimators=20, subsample=0.5, random_state=0)
    est.fit(X, y, monitor=lambda i, model, local: i == 4)
    assert est.n_estimators_ == 5 == len(est.estimators_) == len(est.oob_scores_)
    assert est.oob_score_ == est.oob_scores_[-1]


@parametrize_with_checks(
    [GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0),
     GradientBoostingRegressor(n_estimators=5, random_state=0)],
    expected_failed_checks=lambda est: SAMPLE_WEIGHT_EQUIVALENCE)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
