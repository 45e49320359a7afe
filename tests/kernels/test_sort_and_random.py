"""The sort and the random stream must reproduce scikit-learn's exactly (tree parity
depends on both): compared with scikit-learn's own compiled helpers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils._random import _our_rand_r_py
from sklearn.utils._sorting import _py_simultaneous_sort

from sapwood._kernels._random import rand_int, rand_r, rand_uniform
from sapwood._kernels._sort import sort_segment


def _both_sorts(values):
    ours_v = values.copy()
    ours_i = np.arange(values.shape[0])
    sort_segment(ours_v, ours_i, 0, values.shape[0])
    ref_v = values.copy()
    ref_i = np.arange(values.shape[0])
    _py_simultaneous_sort(ref_v, ref_i, values.shape[0], use_three_way_partition=True)
    return ours_v, ours_i, ref_v, ref_i


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 100, 5000])
@pytest.mark.parametrize("kind", ["continuous", "ties", "constant", "sorted", "reversed"])
def test_sort_matches_scikit_learn_order(n, kind):
    rng = np.random.RandomState(n)
    values = {
        "continuous": rng.randn(n),
        "ties": rng.randint(0, 3, n).astype(float),
        "constant": np.ones(n),
        "sorted": np.arange(n, dtype=float),
        "reversed": np.arange(n, dtype=float)[::-1].copy(),
    }[kind].astype(np.float32)
    ours_v, ours_i, ref_v, ref_i = _both_sorts(values)
    np.testing.assert_array_equal(ours_v, np.sort(values))
    np.testing.assert_array_equal(ours_i, ref_i)
    np.testing.assert_array_equal(ours_v, ref_v)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=0, max_size=300))
def test_sort_matches_scikit_learn_on_random_ties(items):
    values = np.array(items, dtype=np.float32)
    ours_v, ours_i, ref_v, ref_i = _both_sorts(values)
    np.testing.assert_array_equal(ours_i, ref_i)


def test_sort_segment_leaves_the_rest_alone():
    values = np.array([5, 4, 3, 2, 1, 0], dtype=np.float32)
    index = np.arange(6)
    sort_segment(values, index, 1, 3)
    np.testing.assert_array_equal(values, [5, 2, 3, 4, 1, 0])
    np.testing.assert_array_equal(index, [0, 3, 2, 1, 4, 5])


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**31 - 2])
def test_xorshift_stream_matches_scikit_learn(seed):
    # scikit-learn's helper returns one draw from a given state; chain it on our state.
    ours = np.array([seed], dtype=np.int64)
    for _ in range(1000):
        previous = int(ours[0])
        assert rand_r(ours) == _our_rand_r_py(previous)
        assert 0 <= ours[0] < 2**32


def test_rand_int_and_uniform_stay_in_range():
    state = np.array([7], dtype=np.int64)
    draws = [rand_int(3, 9, state) for _ in range(2000)]
    assert min(draws) == 3 and max(draws) == 8
    uniform = [rand_uniform(-1.0, 2.0, state) for _ in range(2000)]
    assert min(uniform) >= -1.0 and max(uniform) < 2.0
