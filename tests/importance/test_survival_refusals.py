"""Measures that score a class or a number say so to a survival model."""

import numpy as np
import pytest

from sapwood import importance
from sapwood._format import TreeArrays, TreeEnsemble


@pytest.fixture(scope="module")
def survival():
    value = np.stack([[[0.1, 0.3], [0.0, 0.2], [0.3, 0.9]],
                      np.exp(-np.array([[0.1, 0.3], [0.0, 0.2], [0.3, 0.9]]))], axis=-1)
    tree = TreeArrays(children_left=[1, -1, -1], children_right=[2, -1, -1],
                      feature=[0, -2, -2], threshold=[0.5, -2.0, -2.0], impurity=np.zeros(3),
                      n_node_samples=[4, 2, 2], weighted_n_node_samples=[4.0, 2.0, 2.0],
                      value=value, missing_go_to_left=np.zeros(3), operator=np.zeros(3),
                      n_features=1)
    return TreeEnsemble(trees=[tree], task="survival", n_features=1, times=[1.0, 2.0])


@pytest.mark.parametrize("measure", ["sage", "mdi_plus", "ufi",
                                     "conditional_permutation_importance"])
def test_refused(survival, measure):
    X = np.array([[0.0], [1.0]])
    y = np.array([(True, 1.0), (False, 2.0)], dtype=[("event", "?"), ("time", "<f8")])
    with pytest.raises(ValueError, match="this is a survival model"):
        getattr(importance, measure)(survival, X, y)
