"""sapwood against R's randomForest on randomForest's own forests (fixtures from
``tests/reference/r/make_fixtures.R``; R is not needed to run these tests).

docs/measures.md says ``oob_permutation_importance`` is randomForest's
``importance(type = 1)`` (``scale = FALSE``: PI, per class too; ``scale = TRUE``: z)
and that MDI before normalisation is its ``type = 2`` per root weight. Both are checked
here number for number: the forest's trees (getTree) and in-bag counts are read into
sapwood's tree format, and the permutations are R's own, replayed from the state of R's
Mersenne-Twister where each tree's permutations start.
"""

import types

import numpy as np
import pytest

from sapwood.importance import _oob, oob_permutation_importance
from sapwood.importance._registry import unnormalised_mdi
from tests.reference.r import r_uniforms, randomforest_forest, randomforest_permutation, read

CASES = [("randomforest_classification", True), ("randomforest_regression", False)]


class _ReplayedPermutations:
    """Stands in for ``np.random.RandomState`` inside ``_oob``: tree t's generator
    (known by its seed) hands out R's permutations of its OOB rows, feature by feature
    in column order, as sapwood's documented random stream asks for them."""

    def __init__(self, by_seed):
        self.by_seed = by_seed
        self.handed_out = {}

    def __call__(self, seed):
        orders = self.by_seed[int(seed)]
        self.handed_out[int(seed)] = 0
        replay = self

        class Tree:
            def permutation(self, m):
                order = orders[replay.handed_out[int(seed)]]
                replay.handed_out[int(seed)] += 1
                assert len(order) == m
                return order
        return Tree()


def _r_permutations(ensemble, name):
    """Per tree, R's permutation of its OOB rows for every feature (identity for the
    features the tree does not split on: randomForest draws none for them)."""
    states = read(f"{name}_rngstate.csv").to_numpy()
    per_tree = []
    for t, tree in enumerate(ensemble.trees):
        m = int(np.count_nonzero(ensemble.bootstrap.counts(t) == 0))
        uniforms = r_uniforms(states[:, t])
        used = set(tree.feature[tree.feature >= 0].tolist())
        per_tree.append([randomforest_permutation(uniforms, m) if j in used else np.arange(m)
                         for j in range(ensemble.n_features)])
    return per_tree


@pytest.mark.parametrize("name, classification", CASES)
def test_oob_permutation_equals_randomforest_type1(name, classification, monkeypatch):
    ensemble, X, y = randomforest_forest(name, classification)
    expected = read(f"{name}_importance.csv")
    seeds = np.random.RandomState(0).randint(np.iinfo(np.int32).max, size=ensemble.n_trees)
    replay = _ReplayedPermutations(dict(zip(seeds.tolist(),
                                            _r_permutations(ensemble, name), strict=True)))
    random = types.SimpleNamespace(**{**vars(np.random), "RandomState": replay})
    monkeypatch.setattr(_oob, "np", types.SimpleNamespace(**{**vars(np), "random": random}))

    result = oob_permutation_importance(ensemble, X, y, random_state=0, n_jobs=1)

    # Every tree drew one permutation per feature, from R's stream.
    assert replay.handed_out == {int(s): X.shape[1] for s in seeds}
    overall = "MeanDecreaseAccuracy" if classification else "%IncMSE"
    # Classification: counts over counts, equal but for the order of the sum over trees;
    # regression: R sums squared errors row by row, sapwood in its kernel's order.
    rtol = 1e-13 if classification else 1e-12
    np.testing.assert_allclose(result.importances_mean, expected[overall], rtol=rtol)
    np.testing.assert_allclose(result.importances_std, expected[f"SD {overall}"], rtol=1e-12)
    np.testing.assert_allclose(result.extra["zscore"], expected[f"scaled {overall}"],
                               rtol=1e-12)
    if classification:
        for label in ensemble.classes:
            np.testing.assert_allclose(result.extra["per_class"][label],
                                       expected[str(label)], rtol=rtol)
            np.testing.assert_allclose(result.extra["per_class_std"][label],
                                       expected[f"SD {label}"], rtol=1e-12)
            np.testing.assert_allclose(result.extra["per_class"][label]
                                       / result.extra["per_class_std"][label],
                                       expected[f"scaled {label}"], rtol=1e-12)


@pytest.mark.parametrize("name, classification", CASES)
def test_unnormalised_mdi_equals_randomforest_type2(name, classification):
    """``MeanDecreaseGini`` / ``IncNodePurity``: randomForest sums the decreases of
    every split on j (bootstrap counts as weights) and divides by the number of trees;
    sapwood's MDI before normalisation divides each tree's sum by its root weight, here
    n (each tree draws n rows)."""
    ensemble, X, y = randomforest_forest(name, classification)
    expected = read(f"{name}_importance.csv")
    assert all(tree.weighted_n_node_samples[0] == len(y) for tree in ensemble.trees)
    result = unnormalised_mdi(ensemble, X, y)
    column = "MeanDecreaseGini" if classification else "IncNodePurity"
    np.testing.assert_allclose(result.importances_mean * len(y), expected[column],
                               rtol=1e-12)
    # importance(type = 2) is the same whatever scale says.
    np.testing.assert_array_equal(expected[column], expected[f"scaled {column}"])
