"""A fitted sapwood model holds no more memory than scikit-learn's (issue 44, item 1).

The format's arrays of every tree (all node arrays, the category sets, the optional
statistics, counted at the size of the buffers they keep alive) against scikit-learn's
``tree_.__getstate__()`` node and value arrays, for the same trees: same data, same
parameters, same seed, so the same node counts. Small fits, seconds.
"""

import numpy as np
import pytest
import sklearn.ensemble as ske
import sklearn.tree as skt
from sklearn.datasets import make_classification, make_regression

from sapwood import learners

# (sapwood, scikit-learn, classification)
PAIRS = {
    "rf_regressor": (learners.RandomForestRegressor, ske.RandomForestRegressor, False),
    "rf_classifier": (learners.RandomForestClassifier, ske.RandomForestClassifier, True),
    "et_regressor": (learners.ExtraTreesRegressor, ske.ExtraTreesRegressor, False),
    "tree_regressor": (learners.DecisionTreeRegressor, skt.DecisionTreeRegressor, False),
    "gb_regressor": (learners.GradientBoostingRegressor, ske.GradientBoostingRegressor,
                     False),
}


def _kept_bytes(array):
    """The bytes ``array`` keeps alive: its own, or those of the buffer it views."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.nbytes


def sapwood_bytes(ensemble):
    """Bytes of every array of the format's trees in ``ensemble``."""
    total = 0
    for tree in ensemble.trees:
        for array in vars(tree).values():
            if isinstance(array, np.ndarray):
                total += _kept_bytes(array)
    return total


def sklearn_bytes(model):
    """Bytes of the node and value arrays of scikit-learn's trees."""
    estimators = getattr(model, "estimators_", None)
    trees = [model] if estimators is None else np.ravel(estimators)
    total = 0
    for tree in trees:
        state = tree.tree_.__getstate__()
        total += state["nodes"].nbytes + state["values"].nbytes
    return total


def _data(classification):
    if classification:
        return make_classification(n_samples=3000, n_features=8, n_informative=5,
                                   n_classes=3, random_state=0)
    return make_regression(n_samples=3000, n_features=8, noise=5.0, random_state=0)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_format_arrays_take_no_more_than_sklearn(name):
    ours, theirs, classification = PAIRS[name]
    X, y = _data(classification)
    params = {"random_state": 0}
    if name.startswith(("rf", "et")):
        params["n_estimators"] = 5
    elif name.startswith("gb"):
        params.update(n_estimators=10, max_depth=6)
    model = ours(**params).fit(X, y)
    reference = theirs(**params).fit(X, y)
    ensemble = model.to_ensemble()
    sk_trees = ([reference] if not hasattr(reference, "estimators_")
                else list(np.ravel(reference.estimators_)))
    assert [t.node_count for t in ensemble.trees] == [t.tree_.node_count for t in sk_trees]
    ratio = sapwood_bytes(ensemble) / sklearn_bytes(reference)
    assert ratio <= 1.0, f"{name}: the format's arrays take {ratio:.3f}x scikit-learn's"


def test_grown_arrays_hold_no_spare_capacity():
    """Every array of a grown tree is exactly one entry per node: the grower's spare
    capacity is not kept alive behind a view."""
    X, y = _data(False)
    forest = learners.RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    for estimator in forest.estimators_:
        tree = estimator.tree_
        for array in vars(tree).values():
            if isinstance(array, np.ndarray) and array.ndim and array.shape[0]:
                assert array.shape[0] == tree.node_count
                assert _kept_bytes(array) == array.nbytes


def test_fit_returns_freed_buffers_to_the_system():
    """The fit's freed buffers are handed back (glibc's ``malloc_trim``) without touching
    the model: calling it again changes no array of a fitted forest."""
    import platform

    from sapwood.learners._grow import _malloc_trim, release_free_memory

    if platform.libc_ver()[0] == "glibc":
        assert _malloc_trim() is not None
    X, y = _data(False)
    forest = learners.RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    before = [tree.tree_.threshold.copy() for tree in forest.estimators_]
    release_free_memory()
    for tree, threshold in zip(forest.estimators_, before, strict=True):
        np.testing.assert_array_equal(tree.tree_.threshold, threshold)
