"""The sort and the random stream must reproduce scikit-learn's exactly (tree parity
depends on both): compared with scikit-learn's own compiled helpers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils._random import _our_rand_r_py
from sklearn.utils._sorting import _py_simultaneous_sort

from sapwood._kernels._random import rand_int, rand_r, rand_uniform
from sapwood._kernels._sort import (
    radix_sort_segment,
    sort_segment,
    sort_segment_packed,
    sort_segment_radix_ties,
)


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


def _packed_matches_scikit_learn(values, lo, n):
    column = values.copy()
    ids = np.random.RandomState(n).permutation(column.shape[0])
    ours_v, ours_i = column[ids], ids.copy()
    sort_segment_packed(column, ours_v, ours_i, lo, n, np.empty(max(n, 1), np.uint64))
    ref_v, ref_i = column[ids], ids.copy()
    _py_simultaneous_sort(ref_v[lo:lo + n], ref_i[lo:lo + n], n, use_three_way_partition=True)
    np.testing.assert_array_equal(ours_i, ref_i)
    np.testing.assert_array_equal(ours_v.view(np.uint32), ref_v.view(np.uint32))


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 100, 5000, 70000])
@pytest.mark.parametrize("kind", ["continuous", "ties", "few", "constant", "sorted", "reversed",
                                  "zeros", "organ"])
def test_packed_sort_matches_scikit_learn_order(n, kind):
    rng = np.random.RandomState(n + 1)
    values = {
        "continuous": rng.randn(n),
        "ties": np.round(rng.randn(n), 2),
        "few": rng.randint(0, 3, n).astype(float),
        "constant": np.ones(n),
        "sorted": np.arange(n, dtype=float),
        "reversed": np.arange(n, dtype=float)[::-1].copy(),
        "zeros": rng.choice([-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf], n),
        # median-of-three killer: drives introsort into its heapsort fallback
        "organ": np.concatenate((np.arange(n // 2), np.arange(n - n // 2)[::-1])).astype(float),
    }[kind].astype(np.float32)
    extra = 3
    padded = np.concatenate((rng.randn(extra), values, rng.randn(extra))).astype(np.float32)
    _packed_matches_scikit_learn(padded, extra, n)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=0, max_size=300))
def test_packed_sort_matches_scikit_learn_on_random_ties(items):
    values = np.array(items, dtype=np.float32)
    _packed_matches_scikit_learn(values, 0, values.shape[0])


def _radix_ties_matches_scikit_learn(values, lo, n):
    column = values.copy()
    ids = np.random.RandomState(n).permutation(column.shape[0])
    ours_v, ours_i = column[ids], ids.copy()
    sort_segment_radix_ties(column, ours_v, ours_i, lo, n)
    ref_v, ref_i = column[ids], ids.copy()
    _py_simultaneous_sort(ref_v[lo:lo + n], ref_i[lo:lo + n], n, use_three_way_partition=True)
    np.testing.assert_array_equal(ours_i, ref_i)
    np.testing.assert_array_equal(ours_v.view(np.uint32), ref_v.view(np.uint32))


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 100, 5000, 70000])
@pytest.mark.parametrize("kind", ["continuous", "sparse", "ties", "few", "constant", "zeros",
                                  "organ"])
def test_radix_then_introsort_on_ties_matches_scikit_learn_order(n, kind):
    # Introsort runs only on the parts of the segment that hold a tie; tied values
    # must still end in scikit-learn's order (and the others sorted).
    rng = np.random.RandomState(n + 2)
    values = {
        "continuous": rng.randn(n),
        "sparse": rng.randn(n),
        "ties": np.round(rng.randn(n), 2),
        "few": rng.randint(0, 3, n).astype(float),
        "constant": np.ones(n),
        "zeros": rng.choice([-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf], n),
        "organ": np.concatenate((np.arange(n // 2), np.arange(n - n // 2)[::-1])).astype(float),
    }[kind].astype(np.float32)
    if kind == "sparse" and n > 1:  # a few tied pairs, as in float32 data
        k = max(n // 1000, 1)
        values[rng.randint(0, n, k)] = values[rng.randint(0, n, k)]
    extra = 3
    padded = np.concatenate((rng.randn(extra), values, rng.randn(extra))).astype(np.float32)
    _radix_ties_matches_scikit_learn(padded, extra, n)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-300, 300), min_size=0, max_size=400))
def test_radix_then_introsort_on_ties_matches_scikit_learn_on_random_ties(items):
    values = np.array(items, dtype=np.float32)
    _radix_ties_matches_scikit_learn(values, 0, values.shape[0])


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


@pytest.mark.parametrize("n", [1, 2, 255, 256, 3000])
def test_radix_sort_gives_introsort_order_on_tie_free_values(n):
    rng = np.random.RandomState(n)
    values = rng.permutation(np.linspace(-5, 5, n)).astype(np.float32)
    values[: min(n, 3)] = np.array([-0.0, 1e-30, -1e-30], dtype=np.float32)[: min(n, 3)]
    values = np.unique(values)  # sorted, distinct (-0.0 kept once)
    values = rng.permutation(values)
    m = values.shape[0]
    radix_v, radix_i = values.copy(), np.arange(m)
    radix_sort_segment(radix_v, radix_i, 0, m, np.empty(m, np.uint32), np.empty(m, np.uint32),
                       np.empty(m, np.intp))
    intro_v, intro_i = values.copy(), np.arange(m)
    sort_segment(intro_v, intro_i, 0, m)
    np.testing.assert_array_equal(radix_i, intro_i)
    np.testing.assert_array_equal(radix_v, intro_v)
