"""Held-out permutation importance on boosted models: the tree-aware evaluator applies
(the converted model reproduces the library's predictions bit for bit) and the
numbers equal scikit-learn's with the library's own predict, exactly."""

import warnings

import numpy as np
import pytest
from sklearn.base import RegressorMixin
from sklearn.inspection import permutation_importance as sklearn_permutation_importance

from sapwood.importance import permutation_importance
from sapwood.importance._engine._tree_evaluator import TreeEvaluator


def _data(seed, n_samples=900, n_features=7, nan_fraction=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    X[:, 5] = np.round(X[:, 5])  # ties
    y = X[:, 0] + 2 * X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3]) + 0.2 * rng.normal(size=n_samples)
    X[rng.random(X.shape) < nan_fraction] = np.nan
    return X[:600], y[:600], X[600:], y[600:]


def _models(n_trees, depth):
    models = []
    xgb = _optional("xgboost")
    if xgb is not None:
        models.append(xgb.XGBRegressor(n_estimators=n_trees, max_depth=depth, n_jobs=1,
                                       random_state=0))
    lgb = _optional("lightgbm")
    if lgb is not None:
        models.append(lgb.LGBMRegressor(n_estimators=n_trees, num_leaves=2**depth - 1,
                                        n_jobs=1, verbose=-1, random_state=0))
    catboost = _optional("catboost")
    if catboost is not None:
        models.append(catboost.CatBoostRegressor(iterations=n_trees, depth=depth,
                                                 thread_count=1, verbose=0, random_seed=0,
                                                 allow_writing_files=False))
    return models


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


@pytest.mark.parametrize("nan_fraction", [0.0, 0.1], ids=["finite", "missing"])
@pytest.mark.parametrize("size", [(5, 2), (80, 6)], ids=["small", "deep"])
@pytest.mark.parametrize("scoring", [None, "neg_mean_absolute_error"])
def test_boosted_regressors_equal_sklearn(size, nan_fraction, scoring):
    X_train, y_train, X_test, y_test = _data(sum(size), nan_fraction=nan_fraction)
    models = _models(*size)
    if not models:
        pytest.skip("no boosting library installed")
    for model in models:
        model.fit(X_train, y_train)
        expected = sklearn_permutation_importance(model, X_test, y_test, n_repeats=3,
                                                  random_state=0, scoring=scoring)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no fallback warning: the conversion is exact
            result = permutation_importance(model, X_test, y_test, n_repeats=3,
                                            random_state=0, scoring=scoring, n_jobs=2)
        # CatBoost's own ``score`` is not scikit-learn's: that scorer stays generic.
        own_score = scoring is None and type(model).score is not RegressorMixin.score
        assert result.params["evaluator"] == ("generic" if own_score else "tree")
        np.testing.assert_array_equal(result.importances, expected.importances)


def _boosting_models():
    from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

    import sapwood

    return {
        "sklearn-gb": (GradientBoostingRegressor(n_estimators=40, max_depth=4,
                                                 random_state=0), 0.0),
        "sklearn-hgb": (HistGradientBoostingRegressor(max_iter=40, random_state=0), 0.1),
        "sapwood-gb": (sapwood.GradientBoostingRegressor(n_estimators=40, max_depth=4,
                                                         random_state=0), 0.0),
    }


@pytest.mark.parametrize("name", ["sklearn-gb", "sklearn-hgb", "sapwood-gb"])
@pytest.mark.parametrize("max_samples", [1.0, 0.7])
def test_one_pass_equals_the_rerouting_engine(name, max_samples, monkeypatch):
    """The one-pass boosted kernel gives the numbers of the entry-node re-routing
    engine it replaces for summed models (float64 sums: scikit-learn and sapwood)."""
    model, nan_fraction = _boosting_models()[name]
    X_train, y_train, X_test, y_test = _data(3, nan_fraction=nan_fraction)
    model.fit(X_train, y_train)
    taken = []
    original = TreeEvaluator._boosted_path

    def spy(self):
        taken.append(original(self))
        return taken[-1]

    monkeypatch.setattr(TreeEvaluator, "_boosted_path", spy)
    one_pass = permutation_importance(model, X_test, y_test, n_repeats=3, random_state=0,
                                      max_samples=max_samples, n_jobs=2)
    monkeypatch.setattr(TreeEvaluator, "_boosted_path", lambda self: False)
    rerouted = permutation_importance(model, X_test, y_test, n_repeats=3, random_state=0,
                                      max_samples=max_samples, n_jobs=2)
    assert taken == [True]
    assert one_pass.params["evaluator"] == rerouted.params["evaluator"] == "tree"
    np.testing.assert_array_equal(one_pass.importances, rerouted.importances)
    expected = sklearn_permutation_importance(model, X_test, y_test, n_repeats=3,
                                              random_state=0, max_samples=max_samples)
    np.testing.assert_array_equal(one_pass.importances, expected.importances)


@pytest.mark.parametrize("nan_fraction", [0.0, 0.1], ids=["finite", "missing"])
def test_xgboost_groups_equal_the_generic_evaluator(nan_fraction):
    """Several-column groups take the re-routing engine, whose sums follow XGBoost's
    float32 arithmetic too: equal to permuting the data and calling XGBoost."""
    xgb = pytest.importorskip("xgboost")
    from tests.reference.naive_permutation import as_opaque_model

    X_train, y_train, X_test, y_test = _data(5, nan_fraction=nan_fraction)
    model = xgb.XGBRegressor(n_estimators=60, max_depth=5, n_jobs=1,
                             random_state=0).fit(X_train, y_train)
    groups = {"pair": [1, 2], "one": [0], "rest": [3, 4, 5, 6]}
    expected = permutation_importance(as_opaque_model(model), X_test, y_test, n_repeats=3,
                                      random_state=0, feature_groups=groups)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = permutation_importance(model, X_test, y_test, n_repeats=3, random_state=0,
                                        feature_groups=groups, n_jobs=2)
    assert expected.params["evaluator"] == "generic"
    assert result.params["evaluator"] == "tree"
    np.testing.assert_array_equal(result.importances, expected.importances)


@pytest.mark.parametrize("nan_fraction", [0.0, 0.1], ids=["finite", "missing"])
def test_baseline_from_the_mask_kernel_equals_the_model(nan_fraction):
    """Given the sources, a boosted model's evaluator takes its baseline sums from the
    mask kernel's pass (no second routing of every row): equal bit for bit to the sums
    of the routed leaves and to the library's own predictions."""
    from sapwood.importance._engine._permutation_engine import tree_evaluator

    X_train, y_train, X_test, y_test = _data(7, n_samples=1500, nan_fraction=nan_fraction)
    models = _models(30, 5)
    if not models:
        pytest.skip("no boosting library installed")
    groups = [np.array([j]) for j in range(X_test.shape[1])]
    sources = np.stack([np.random.default_rng(r).permutation(X_test.shape[0])
                        for r in range(2)])
    for model in models:
        model.fit(X_train, y_train)
        evaluator = tree_evaluator(model, X_test, 2, scorer_uses_score=False)
        evaluator.prepare(None, groups, sources)
        assert evaluator._leaves is None  # not routed: the kernel gave the sums
        taken = evaluator.baseline_total.copy()
        predicted = evaluator.responses(evaluator.baseline_raw).predict(None)
        changes = list(evaluator.permuted_changes(sources))
        evaluator._baseline_total = None
        evaluator._route_all()  # the routed leaves' sums, as before
        assert evaluator._leaves is not None
        assert taken.dtype == evaluator.baseline_total.dtype
        np.testing.assert_array_equal(taken, evaluator.baseline_total)
        np.testing.assert_array_equal(predicted, model.predict(X_test))
        assert len(changes) == 2 * X_test.shape[1]
        evaluator.close()
