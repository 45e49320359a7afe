"""Held-out permutation importance under a memory budget (``max_memory``).

The rows are indexed and re-routed a window at a time and the (column, repeat) slots go
in batches; the numbers must be those of the one-piece computation bit for bit, for
every kind of model and score. The budget's parser, the plan that fits it, the kernels
that make windows possible, and (slow) the peak memory of a run measured in a fresh
process.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.inspection import permutation_importance as sklearn_permutation_importance

import sapwood
from sapwood._kernels._tree_index import (
    entry_nodes,
    entry_nodes_of,
    preorder_spans,
    preorder_spans_of,
    sort_by_leaf,
    sort_by_leaf_into,
)
from sapwood.importance import permutation_importance
from sapwood.importance._engine import _tree_evaluator
from sapwood.importance._engine._permutation_engine import (
    DEFAULT_MAX_MEMORY,
    memory_budget,
    tree_evaluator,
)
from sapwood.importance._engine._tree_evaluator import TreeEvaluator


def _count_windows(monkeypatch):
    """Count the windows the evaluators make (one window of every row included)."""
    made = []
    window = TreeEvaluator._window

    def counted(self, lo, hi):
        made.append((lo, hi))
        return window(self, lo, hi)

    monkeypatch.setattr(TreeEvaluator, "_window", counted)
    return made


def _same(a, b):
    """Two permutation_importance results are equal bit for bit."""
    assert a.params["evaluator"] == b.params["evaluator"] == "tree"
    np.testing.assert_array_equal(a.importances, b.importances)
    np.testing.assert_array_equal(a.extra["scores"], b.extra["scores"])
    np.testing.assert_array_equal(a.extra["baseline_score"], b.extra["baseline_score"])
    assert (a.rank_draws is None) == (b.rank_draws is None)
    if a.rank_draws is not None:
        np.testing.assert_array_equal(a.rank_draws, b.rank_draws)


def _regression(n=700, nan=False):
    X, y = make_regression(n_samples=n, n_features=6, n_informative=4, noise=1.0,
                           random_state=0)
    X[:, 3] = np.round(X[:, 3])  # ties
    if nan:  # missing values take the general (not the lanes') re-routing
        X[np.random.RandomState(1).rand(*X.shape) < 0.05] = np.nan
    return X[:350], y[:350], X[350:], y[350:]


def _classification(n_classes, n=700):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=3, n_redundant=1,
                               n_classes=n_classes, random_state=2)
    X[:, 4] = np.round(X[:, 4])
    return X[:350], y[:350], X[350:], y[350:]


def _cases():
    """(name, fitted model, held-out X, y, keyword arguments)."""
    X, y, X_test, y_test = _regression()
    Xn, yn, Xn_test, yn_test = _regression(nan=True)
    Xb, yb, Xb_test, yb_test = _classification(2)
    Xm, ym, Xm_test, ym_test = _classification(3)
    cases = [
        ("regression", RandomForestRegressor(12, random_state=0).fit(X, y), X_test, y_test,
         {}),
        ("regression, subset and groups", sapwood.RandomForestRegressor(
            10, max_depth=8, random_state=0).fit(X, y), X_test, y_test,
         {"max_samples": 0.8, "groups": {"a": [0, 1], "b": [2], "c": [3, 4, 5]}}),
        ("regression, missing values", RandomForestRegressor(
            8, random_state=0).fit(np.nan_to_num(Xn), yn), Xn_test, yn_test, {}),
        ("regression, mean absolute error", RandomForestRegressor(
            8, min_samples_leaf=3, random_state=0).fit(X, y), X_test, y_test,
         {"scoring": "neg_mean_absolute_error"}),
        ("boosting", GradientBoostingRegressor(n_estimators=30, random_state=0).fit(X, y),
         X_test, y_test, {}),
        # Pure leaves: exact sums; the default accuracy leaves out rows whose class no
        # shuffle can change.
        ("binary, accuracy", RandomForestClassifier(12, random_state=0).fit(Xb, yb),
         Xb_test, yb_test, {}),
        ("binary, roc_auc", sapwood.RandomForestClassifier(
            10, min_samples_leaf=3, random_state=0).fit(Xb, yb), Xb_test, yb_test,
         {"scoring": "roc_auc"}),
        ("multiclass, accuracy, mixed leaves", RandomForestClassifier(
            12, min_samples_leaf=3, random_state=0).fit(Xm, ym), Xm_test, ym_test, {}),
        ("multiclass, log loss", RandomForestClassifier(10, random_state=0).fit(Xm, ym),
         Xm_test, ym_test, {"scoring": "neg_log_loss", "groups": {
             "ab": [0, 1], "c": [2], "rest": [3, 4, 5]}}),
    ]
    return cases


_CASES = _cases()


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_windows_give_the_one_piece_numbers_bit_for_bit(monkeypatch, case, n_jobs):
    _, model, X, y, options = case
    whole = permutation_importance(model, X, y, n_repeats=3, random_state=0, n_jobs=n_jobs,
                                   max_memory=None, **options)
    made = _count_windows(monkeypatch)
    # A budget far below one window of every row: windows of a few rows, one slot per
    # batch (every batch passes over every window).
    tiny = permutation_importance(model, X, y, n_repeats=3, random_state=0, n_jobs=n_jobs,
                                  max_memory=1, **options)
    _same(whole, tiny)
    if "boosting" not in case[0]:  # summed trees of one output take no windows
        assert len(made) > 20
        assert max(hi - lo for lo, hi in made) < 50
    made.clear()
    # A budget that takes a few windows and several slots per batch.
    some = permutation_importance(model, X, y, n_repeats=3, random_state=0, n_jobs=n_jobs,
                                  max_memory="250kB", **options)
    _same(whole, some)
    default = permutation_importance(model, X, y, n_repeats=3, random_state=0,
                                     n_jobs=n_jobs, **options)
    _same(whole, default)
    if case[0] == "regression":
        theirs = sklearn_permutation_importance(model, X, y, n_repeats=3, random_state=0)
        np.testing.assert_array_equal(tiny.importances, theirs.importances)


def test_the_default_budget_takes_small_data_in_one_piece(monkeypatch):
    _, model, X, y, _ = _CASES[0]
    made = _count_windows(monkeypatch)
    permutation_importance(model, X, y, n_repeats=3, random_state=0)
    assert made == [(0, X.shape[0])]


def test_a_full_reroute_queue_is_routed_and_emptied(monkeypatch):
    """The re-routing queue holds a bounded number of items and is routed whenever it
    fills: a queue of a few items gives the same numbers as one of every row."""
    for name, model, X, y, options in _CASES:
        if "boosting" in name:
            continue
        expected = permutation_importance(model, X, y, n_repeats=3, random_state=0,
                                          n_jobs=2, **options)
        monkeypatch.setattr(TreeEvaluator, "queue_items", 5)
        got = permutation_importance(model, X, y, n_repeats=3, random_state=0, n_jobs=2,
                                     **options)
        monkeypatch.undo()
        _same(expected, got)


def test_a_large_forest_read_a_few_trees_at_a_time_honours_the_budget(monkeypatch):
    from sapwood.importance._engine import _chunked_evaluator

    _, model, X, y, _ = _CASES[0]
    expected = permutation_importance(model, X, y, n_repeats=3, random_state=0,
                                      max_memory=None)
    monkeypatch.setattr(_chunked_evaluator, "_CHUNK_NODES", 0)
    for budget in (None, 1, "100kB"):
        got = permutation_importance(model, X, y, n_repeats=3, random_state=0, n_jobs=2,
                                     max_memory=budget)
        _same(expected, got)


# -- the budget --------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "expected"), [
    (None, None), (1, 1), (1024, 1024), ("512MB", 512 * 10**6), ("512mb", 512 * 10**6),
    ("2GiB", 2 * 2**30), (" 1.5 GB ", 1_500_000_000), ("64 KiB", 65536), ("100", 100),
    ("100B", 100), (".5kB", 500), ("3TB", 3 * 10**12), (np.int64(4096), 4096),
])
def test_memory_budget_reads_bytes_and_units(value, expected):
    assert memory_budget(value) == expected


def test_the_default_budget_is_documented_and_read():
    assert memory_budget(DEFAULT_MAX_MEMORY) == 128 * 10**6
    assert permutation_importance.__doc__.count('max_memory : int, str or None, '
                                                'default="128MB"') == 1


@pytest.mark.parametrize("value", [0, -5, "lots", "12 parsecs", "0MB", "0.1B", "", "MB",
                                   "-1GB", "1e9", True, 2.5, [1]])
def test_a_bad_budget_is_refused_naming_the_parameter_what_it_takes_and_the_value(value):
    _, model, X, y, _ = _CASES[0]
    with pytest.raises((ValueError, TypeError)) as raised:
        permutation_importance(model, X, y, n_repeats=1, max_memory=value)
    message = str(raised.value)
    assert "max_memory" in message
    assert repr(value) in message or str(value) in message
    assert "str" in message or "string" in message  # what it accepts
    if isinstance(value, str):
        with pytest.raises(ValueError, match=r"max_memory must be None \(no limit\), a "
                                             r"number of bytes \(an int >= 1\) or a string"):
            memory_budget(value)


# -- the plan ----------------------------------------------------------------------------
@pytest.mark.parametrize("case", [_CASES[0], _CASES[5], _CASES[7]],
                         ids=["regression", "binary", "multiclass"])
def test_the_plan_fits_the_budget(case):
    _, model, X, y, _ = case
    rng = np.random.RandomState(0)
    sources = np.stack([rng.permutation(X.shape[0]) for _ in range(3)])
    kinds = set()
    for budget in (5_000, 20_000, 60_000, 150_000, 400_000, 4_000_000):
        evaluator = tree_evaluator(model, X, 2, True, budget)
        evaluator.prepare(None, [np.array([j]) for j in range(X.shape[1])], sources)
        n_slots = 3 * int(evaluator.group_used.sum())
        batch, window = evaluator._plan(n_slots, 3, X.shape[0])
        assert 1 <= batch <= n_slots
        if evaluator._whole is not None:
            kinds.add("whole")
            assert window == X.shape[0]
            assert evaluator._cost(X.shape[0], batch) <= budget
        else:
            kinds.add("windows")
            assert _tree_evaluator._MIN_WINDOW <= window < X.shape[0]
            if window > _tree_evaluator._MIN_WINDOW:
                assert evaluator._cost(X.shape[0], batch, window) <= budget
            if batch > 3:
                assert batch % 3 == 0  # whole groups
        evaluator.close()
    assert kinds == {"whole", "windows"}


# -- kernels -----------------------------------------------------------------------------
def test_radix_and_counting_sorts_by_leaf_agree():
    """Few rows in large trees are radix-sorted, many by counting: both stable, the
    same order as NumPy's stable sort of the ranks."""
    rng = np.random.RandomState(0)
    for n_nodes, n_rows in [(5000, 100), (5000, 4000), (3_000_000, 700), (2**22 + 9, 40)]:
        rank = rng.permutation(n_nodes).astype(np.uint32)
        leaves = rng.randint(0, n_nodes, size=(3, n_rows)).astype(np.int32)
        leaves[:, ::3] = leaves[:, :1]  # ties keep the row order
        keys = rank[leaves]
        order = np.argsort(keys, axis=1, kind="stable")
        got = [np.empty((3, n_rows), dtype=np.uint32) for _ in range(3)]
        sort_by_leaf_into(leaves, rank, *got)
        np.testing.assert_array_equal(got[0], order)
        np.testing.assert_array_equal(got[1], np.take_along_axis(keys, order, axis=1))
        np.testing.assert_array_equal(got[2], np.take_along_axis(leaves, order, axis=1))
        for whole, part in zip(sort_by_leaf(leaves, rank), got, strict=True):
            np.testing.assert_array_equal(whole, part)


def test_tree_ranges_of_the_index_put_end_to_end_give_the_whole():
    from tests.reference.naive_permutation import as_format_model

    _, model, _, _, _ = _CASES[0]
    ensemble = as_format_model(model).to_ensemble()
    left, right, feature, *_, roots = ensemble.packed()
    groups = [[0], [1, 2], [3], [2, 5], [4]]
    membership = [[g for g, cols in enumerate(groups) if f in cols] for f in range(6)]
    ptr = np.concatenate([[0], np.cumsum([len(m) for m in membership])]).astype(np.intp)
    flat = np.array([g for m in membership for g in m], dtype=np.intp)
    whole_ptr, whole_nodes = entry_nodes(left, right, feature, roots, ptr, flat, len(groups))
    rank, span_end = preorder_spans(left, right, roots)
    assert rank.dtype == span_end.dtype == np.uint32
    ranges = [(0, 5), (5, 6), (6, 12)]
    got_rank = np.zeros_like(rank)
    got_end = np.zeros_like(span_end)
    nodes, offset, pointers = [], 0, [np.zeros(1, dtype=np.intp)]
    for lo, hi in ranges:
        preorder_spans_of(left, right, roots, lo, hi, got_rank, got_end)
        part_ptr, part_nodes = entry_nodes_of(left, right, feature, roots, lo, hi, ptr, flat,
                                              len(groups))
        assert part_ptr.shape[0] == (hi - lo) * len(groups) + 1
        pointers.append(part_ptr[1:] + offset)
        offset += part_ptr[-1]
        nodes.append(part_nodes)
    np.testing.assert_array_equal(got_rank, rank)
    np.testing.assert_array_equal(got_end, span_end)
    np.testing.assert_array_equal(np.concatenate(pointers), whole_ptr)
    np.testing.assert_array_equal(np.concatenate(nodes), whole_nodes)


# -- peak memory in a fresh process ------------------------------------------------------
_MEMORY_SCRIPT = textwrap.dedent('''
    import gc, json, sys
    import numpy as np
    from sklearn.datasets import make_regression
    import sapwood
    from sapwood.adapters import as_ensemble
    from sapwood.importance import permutation_importance

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024

    budget = None if sys.argv[1] == "None" else sys.argv[1]
    X, y = make_regression(n_samples=160_000, n_features=10, n_informative=6, noise=1.0,
                           random_state=0)
    X = X.astype(np.float32)
    model = sapwood.RandomForestRegressor(n_estimators=6, max_depth=16, random_state=0,
                                          n_jobs=1).fit(X[:40_000], y[:40_000])
    X, y = X[40_000:], y[40_000:]
    # The kernels from the cache (or compiled) before the measured call.
    permutation_importance(model, X[:300], y[:300], n_repeats=1, random_state=0,
                           max_memory=budget)
    gc.collect()
    before = status("VmRSS:")
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # the peak (VmHWM) counts from here
    result = permutation_importance(model, X, y, n_repeats=3, random_state=0, n_jobs=2,
                                    max_memory=budget)
    n_nodes = sum(tree.node_count for tree in as_ensemble(model).trees)
    print(json.dumps({"growth": status("VmHWM:") - before, "n_nodes": n_nodes,
                      "rows": X.shape[0], "importances": result.importances.tolist()}))
''')


def _peak(budget):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, str(budget)], env=env,
                          capture_output=True, text=True, timeout=900, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_peak_memory_above_the_model_stays_within_the_budget():
    """A forest of 6 depth-16 trees on 120,000 held-out rows of 10 columns: with 24 MB the
    run holds the trees' index (about 40 bytes a node), the per-row arrays the measure
    keeps whole (baselines, shuffles, per-row draws: 8 bytes a row each, and per column)
    and at most the budget, with room for the interpreter's own; with no limit it holds
    more, and the numbers are the same."""
    budget = 24 * 10**6
    small = _peak("24MB")
    whole = _peak("None")
    assert small["importances"] == whole["importances"]
    rows, n_nodes = small["rows"], small["n_nodes"]
    index = 48 * n_nodes
    kept_whole = rows * 8 * (10 + 3 + 6)  # per-row draws, shuffles, baselines and scores
    margin = 16 * 2**20
    assert small["growth"] <= index + kept_whole + budget + margin, small
    assert small["growth"] < whole["growth"], (small, whole)
