"""The per-feature facts the grower is given (``learners._grow.column_facts``): which
columns hold NaN, and how many ties each has (zero lets the split search radix sort)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sapwood.learners import DecisionTreeClassifier, DecisionTreeRegressor
from sapwood.learners import _grow as grow_module
from sapwood.learners._grow import column_facts, count_tied_pairs


def _distinct_reference(column):
    # Python's equality: -0.0 == 0.0 (one value, as for the comparison sort), NaN never
    # equal to anything (left out).
    present = [float(value) for value in column if not np.isnan(value)]
    return len(present) - len(set(present))


def test_tied_pairs_count_ties_and_signed_zeros():
    X_columns = np.array([[1, 2, 3, np.nan], [1, 1, 1, 3], [0.0, -0.0, 1, 2],
                          [np.nan] * 4, [-0.0, 0.0, -0.0, 0.0]], dtype=np.float32)
    np.testing.assert_array_equal(count_tied_pairs(X_columns), [0, 2, 1, 0, 3])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3000), st.integers(1, 200))
def test_tied_pairs_are_values_less_distinct_values(seed, n, n_distinct):
    rng = np.random.default_rng(seed)
    pool = np.concatenate([rng.normal(size=n_distinct) * 10.0 ** rng.integers(-30, 30),
                           [0.0, -0.0, np.nan, np.inf, -np.inf]]).astype(np.float32)
    X_columns = rng.choice(pool, size=(3, n))
    np.testing.assert_array_equal(count_tied_pairs(X_columns),
                                  [_distinct_reference(column) for column in X_columns])


def test_column_facts_read_the_columns_of_X():
    X = np.array([[1.0, np.nan], [1.0, 2.0], [3.0, 2.0]], dtype=np.float32)
    has_missing, tied = column_facts(X)
    np.testing.assert_array_equal(has_missing, [False, True])
    np.testing.assert_array_equal(tied, [1, 1])


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_trees_on_more_rows_than_packed_sorts_hold_are_the_same(kind, monkeypatch):
    """Data with more than 2^32 rows sorts values and ids side by side (the unpacked
    sorts, compiled only for such data): pretending every data set is that large grows
    the same trees, ties and missing values included. Columns 0-3 have many ties
    (introsort); column 4 three tied pairs, so that regression trees radix sort it and
    then, in the segments holding a pair, take the unpacked tie fallback."""
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(1500, 5)), 1)
    X[:, 4] = rng.normal(size=1500)
    X[[1, 3, 5], 4] = X[[0, 2, 4], 4]
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 4]) + rng.normal(scale=0.5, size=1500)
    if kind == "classification":
        y = (y > 0).astype(int)
    cls = DecisionTreeClassifier if kind == "classification" else DecisionTreeRegressor
    usual = cls(random_state=0).fit(X, y)
    monkeypatch.setattr(grow_module, "PACKED_MAX_ROWS", 0)
    huge = cls(random_state=0).fit(X, y)
    for name in ("children_left", "children_right", "feature", "threshold", "impurity",
                 "value", "missing_go_to_left"):
        np.testing.assert_array_equal(getattr(huge.tree_, name), getattr(usual.tree_, name))
