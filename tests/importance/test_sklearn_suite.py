"""scikit-learn's own permutation-importance tests, run against sapwood's
``permutation_importance``: a fresh copy of scikit-learn's test module is loaded with
its name ``permutation_importance`` bound to sapwood's, and its tests are collected
here, so each calls sapwood with scikit-learn's data and assertions (results answer
both as attributes and as ``result["importances_mean"]``, as scikit-learn's Bunch
does). They run twice: with scikit-learn's forests, and with sapwood's forests in their
place."""

import importlib.util

import pytest

import sapwood
from sapwood.importance import permutation_importance

SUITE = "sklearn.inspection.tests.test_permutation_importance"


def _suite_with(prefix, **names):
    """A fresh copy of scikit-learn's test module with ``names`` rebound, its tests
    renamed ``test_<prefix>_...``."""
    spec = importlib.util.find_spec(SUITE)
    if spec is None:
        pytest.skip("scikit-learn's tests are not installed", allow_module_level=True)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    vars(module).update(names)
    return {f"test_{prefix}_{name[5:]}": test for name, test in vars(module).items()
            if name.startswith("test_") and callable(test)}


globals().update(_suite_with("sklearn_forests", permutation_importance=permutation_importance))
globals().update(_suite_with(
    "sapwood_forests", permutation_importance=permutation_importance,
    RandomForestClassifier=sapwood.RandomForestClassifier,
    RandomForestRegressor=sapwood.RandomForestRegressor))


def test_the_suite_is_collected_in_full():
    # A scikit-learn release that renames or drops its tests shows here, not as
    # silently fewer tests.
    ours = [test for name, test in globals().items()
            if name.startswith("test_sapwood_forests_")]
    assert len(ours) >= 12
    assert ours[0].__globals__["RandomForestRegressor"] is sapwood.RandomForestRegressor
    assert ours[0].__globals__["permutation_importance"] is permutation_importance
