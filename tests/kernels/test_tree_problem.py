"""The one-pass tree validation kernel reports what checking one rule at a time does."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.tree import DecisionTreeClassifier

from sapwood._kernels._traverse import SHAPE_OK, tree_problem
from tests.reference.naive_tree_problem import naive_tree_problem


def _arrays():
    X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    tree = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y).tree_
    return [np.array(tree.children_left, dtype=np.intp),
            np.array(tree.children_right, dtype=np.intp),
            np.array(tree.feature, dtype=np.intp), np.array(tree.threshold),
            np.zeros(tree.node_count, dtype=np.uint8)]


def _damaged(rng, arrays):
    """Copies of the arrays with one to three random entries changed."""
    left, right, feature, threshold, operator = (a.copy() for a in arrays)
    n = left.shape[0]
    for _ in range(rng.integers(1, 4)):
        node = int(rng.integers(n))
        kind = rng.integers(8)
        if kind == 0:
            left[node] = rng.choice([-1, 0, node, n, n + 3, int(rng.integers(n))])
        elif kind == 1:
            right[node] = rng.choice([-1, 0, node, n, int(rng.integers(n))])
        elif kind == 2:
            left[node], right[node] = -1, -1  # a split becomes a leaf: orphans below
        elif kind == 3:
            feature[node] = rng.choice([-2, 6, 10**6])
        elif kind == 4:
            threshold[node] = np.nan
        elif kind == 5:
            operator[node] = rng.choice([1, 2, 255])
        elif kind == 6:
            other = int(rng.integers(n))
            left[node], left[other] = left[other], left[node]
        else:
            right[node] = left[node]  # a shared child
    return left, right, feature, threshold, operator


def test_a_sound_tree_has_no_problem_and_its_depth():
    arrays = _arrays()
    assert tree_problem(*arrays, 6) == naive_tree_problem(*arrays, 6)
    assert tree_problem(*arrays, 6)[:2] == (SHAPE_OK, -1)


@pytest.mark.parametrize("seed", range(4))
def test_damaged_trees_report_the_reference_problem(seed):
    rng = np.random.default_rng(seed)
    arrays = _arrays()
    seen = set()
    for _ in range(300):
        damaged = _damaged(rng, arrays)
        expected = naive_tree_problem(*damaged, 6)
        assert tuple(tree_problem(*damaged, 6)) == expected
        seen.add(expected[0])
    assert len(seen) >= 7  # most kinds of problem were met
