"""The tree-aware evaluator: the model's outputs on every permuted data set, exactly.

:class:`TreeEvaluator` routes the evaluation rows through the trees once, then for
every (group, repeat) produces the raw outputs that predicting the permuted X with the
model itself would give, bit for bit, without copying X or re-predicting: the kernels
of :mod:`sapwood._kernels._permutation` re-route only the samples whose path meets a
split on the group, and only changed samples are summed again (a boosted model, whose
rows nearly all change, has every sum redone in one pass instead:
:mod:`sapwood._kernels._boosted_masks`, or :mod:`sapwood._kernels._boosted_permutation`
for trees leaf masks cannot state). The scorer reads the
outputs through :func:`~sapwood.importance._engine._permuted_model.permuted_model`. Part of
the permutation engine (map: :mod:`._permutation_engine`).

Under a memory budget the rows are indexed and re-routed a window at a time (a
:class:`_Window`: the rows sorted by leaf in every tree, their leaves' values), each
batch of (group, repeat) slots passing over the windows and collecting every changed
row; the trees' index (pre-order ranks, entry nodes) and each window's are made a range
of trees per thread.
"""

from __future__ import annotations

import queue
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from joblib import delayed
from sklearn.utils.validation import validate_data

from ..._kernels._boosted_masks import mask_layout, masked_permuted_totals, value_codes
from ..._kernels._boosted_permutation import boosted_layout, boosted_permuted_totals
from ..._kernels._permutation import (
    QUEUE_ITEMS,
    flip_potential,
    permuted_values,
    reroute_packed,
)
from ..._kernels._permuted_sums import collect_changed, collect_exact, sum_leaf_values
from ..._kernels._permuted_traversal import (
    apply_lanes,
    apply_rows,
    fast_layout,
    lane_sets,
    make_fast,
    pack_nodes,
)
from ..._kernels._traverse import LEAF
from ..._kernels._tree_index import entry_nodes_of, preorder_spans_of, sort_by_leaf_into
from ...adapters import own_trees
from ...learners._grow import release_free_memory
from ._permuted_model import permuted_model

__all__ = ["TreeEvaluator"]

# Bytes of recorded leaf changes held at once; batches of (group, repeat) slots fit it.
_CHANGE_BUDGET = 64 * 2**20
# Bytes of the leaf-mask kernel's rank tables (one per tree and feature, a byte per
# distinct cut of the feature in the model): a model needing more takes the re-routing
# kernel (XGBoost's and LightGBM's binned cuts need ~2 MB for 500 trees of 20 features).
_RANK_BUDGET = 256 * 2**20
# Placeholders for the buffer the current mode of ``reroute_packed`` does not use.
_NO_LEAVES = np.full((1, 1, 1), -1, dtype=np.int32)
_NO_DELTA = np.zeros((1, 1, 1))
# ``reroute_packed``'s skip mask when every (group, sample) is re-routed.
_NO_SKIP = np.zeros((0, 0), dtype=np.uint8)
# Rows on which the converted model's predictions are checked against the model's own,
# and (fewer: each tree is checked on its own) against each scikit-learn tree's.
_CHECK_ROWS = 512
_CHECK_TREE_ROWS = 128
# Windows of evaluation rows under a memory budget: never fewer rows than this,
# whatever the budget.
_MIN_WINDOW = 16


class _Window:
    """The index of evaluation rows ``lo .. hi`` that re-routing reads: per tree the
    rows sorted by leaf (``order``, ``sorted_rank``, ``sorted_leaf``, uint32), the
    baseline leaves' values (``leaf_values``; None for exact sums), the first running
    total of each row (``checkpoints``), which rows' baseline leaves are all exact
    (``exact_sample``), their baseline sums (``base_totals``) and the (group, row) pairs
    left out (``skip``). Sample ``i`` of the window is evaluation row ``lo + i``."""

    def __init__(self, lo, hi, order, sorted_rank, sorted_leaf, leaf_values, checkpoints,
                 exact_sample, base_totals):
        self.lo, self.hi = lo, hi
        self.order, self.sorted_rank, self.sorted_leaf = order, sorted_rank, sorted_leaf
        self.leaf_values = leaf_values
        self.checkpoints = checkpoints
        self.exact_sample = exact_sample
        self.base_totals = base_totals
        self.skip = _NO_SKIP


class TreeEvaluator:
    """Precomputed routing of the evaluation rows and the permuted-output generator.

    ``leaves``, ``baseline_total`` and ``baseline_raw`` are made on first use for a
    boosted model: its mask kernel finds every row's own leaves while it sums the
    permuted data sets, so ``prepare`` given the ``sources`` takes the baseline sums
    from that pass instead of routing every row through every tree once more.

    Memory: ``max_memory`` (bytes, None for no limit) bounds what the evaluator holds
    for the evaluation rows at once. The rows are indexed and re-routed a window at a
    time, each batch of (group, repeat) slots collecting its changed rows over the
    windows (``permuted_changes``); a row's output depends only on its own leaves and
    the values it reads, so the outputs are those of one window of every row, bit for
    bit. The trees' own index (packed nodes, thresholds, values, pre-order ranks, entry
    nodes: about 32 bytes a node and 8 per output value) is needed whole once and comes
    on top.
    """

    _leaves = _baseline_total = _baseline_raw = None
    _head_leaves = _whole = _rows = None
    _class_only = False
    # Items a re-routing queue holds before it is routed (tests make it small).
    queue_items = QUEUE_ITEMS

    def __init__(self, model, ensemble, X, n_jobs, fast=None, given=None, max_memory=None):
        """``X``: the evaluation data as float64 or float32; ``given``: the same data as
        the caller gave it (a DataFrame keeps its column names for the model's own input
        checks; default ``X``); ``max_memory``: the budget in bytes for the rows'
        working memory (None: no limit, every row at once). ``mismatch`` is then None
        when the model's own outputs on the first rows equal the evaluator's, else why
        they differ."""
        self.model = model
        self.ensemble = ensemble
        self.n_jobs = n_jobs
        self.max_memory = max_memory
        self._pool = None
        self._layout = None  # the boosted kernel's node layout, made on first use
        self.X = X = np.ascontiguousarray(X)
        self.is_classifier = ensemble.task == "classification"
        self.n_classes = len(model.classes_) if self.is_classifier else 0
        (children_left, children_right, feature, self.threshold, missing_go_to_left,
         self.operator, self.cat_bitsets, self.roots) = ensemble.packed()
        self.n_trees = ensemble.n_trees
        sizes = np.array([tree.node_count for tree in ensemble.trees], dtype=np.intp)
        self.max_tree_nodes = int(sizes.max())
        # From here on the nodes are read from the packed records only (16 bytes a node
        # instead of 34 in the separate arrays, which are dropped).
        self.nodes = pack_nodes(children_left, children_right, feature, missing_go_to_left,
                                self.operator)
        theirs = []

        def node_outputs():
            self.node_values, self.tree_column, self.init = ensemble.node_outputs(native=True)
            # The sums' terms and start in the model's own precision (XGBoost: float32).
            accumulation = ensemble.accumulation_dtype
            self.sum_values = self.node_values.astype(accumulation, copy=False)
            self.sum_init = self.init.astype(accumulation, copy=False)
            if ensemble.base_last:
                self.sum_init = np.zeros_like(self.sum_init)  # ``finalize`` adds it
            self.exact_node = _exact_nodes(self.node_values, self.init, self.n_trees)
            if accumulation != np.float64:
                self.exact_node[:] = 0  # float32 sums round: redo them in order
            self.any_exact = bool(self.exact_node.any())
            # Every leaf exact: sums are order-free and a changed leaf is a difference.
            self.exact = bool(self.exact_node[self.nodes[:, 0] == LEAF].all())
            if not self.any_exact:
                # Read only for rows whose leaves are exact: there are none.
                self.exact_node = np.zeros(1, dtype=np.uint8)

        # A boosted model of one output may take the mask kernel, which sums the
        # baseline itself: only the rows of the check are routed now (``_route_all``
        # routes the rest if they are needed after all).
        deferred = ensemble.combine == "sum"
        if deferred:
            node_outputs()
            deferred = self.init.shape[0] == 1 and self.node_values.shape[1] == 1

        def meanwhile():
            # While the threads route the rows: the model's own outputs for the check,
            # and the node values.
            theirs.append(self._their_outputs(X if given is None else given))
            if not hasattr(self, "node_values"):
                node_outputs()

        # Finite data (no missing values) takes the fast path, whose layout replaces the
        # packed one in place (``fast=False`` keeps the general path, for tests); trees
        # with a category set reaching past category 63 take the general one. Either
        # way the packed records are all that routes rows from here on.
        self.fast = ((bool(np.isfinite(X).all()) if fast is None else bool(fast))
                     and fast_layout(children_left, self.operator, self.threshold,
                                     self.cat_bitsets))
        del children_left, children_right, feature, missing_go_to_left
        if self.fast:
            make_fast(self.nodes, self.threshold, self.operator)
        if deferred:
            head = X[:min(_CHECK_ROWS, X.shape[0])]
            leaves = self._route(head, meanwhile)
            raw = self.finalize(sum_leaf_values(leaves, self.sum_values, self.tree_column,
                                                self.sum_init))
            self.mismatch = self._differences(*theirs[0], leaves, raw)
        else:
            self._route_all(meanwhile)
            self.mismatch = self._differences(*theirs[0], self._head_leaves)
        # The separate node arrays and the routing's temporaries are freed; glibc would
        # keep much of that memory in its arenas, above the rows' budget.
        release_free_memory()

    def _route(self, X, meanwhile=None):
        """Every tree's leaf of each row of ``X``: (n_trees, n_rows)."""
        if self.fast:
            return self._apply_fast(X, meanwhile)
        return self._apply(X, meanwhile)

    def _keeps_leaves(self, n_rows):
        """Whether every row's leaves (int32) are kept after the baseline: when they fit
        a quarter of the budget. Windows then read them instead of routing their rows
        again for every batch of slots."""
        return self.max_memory is None or 4 * self.n_trees * n_rows <= self.max_memory // 4

    def _route_all(self, meanwhile=None):
        """Route every row, a window at a time (``meanwhile`` runs during the first):
        the baseline sums unless already known, the first rows' leaves for the check
        (``_head_leaves``) and, when ``_keeps_leaves``, every row's (``leaves``)."""
        n = self.X.shape[0]
        step = n
        if self.max_memory is not None:
            # A window's leaves, as routed (intp) and kept (int32), and its sums.
            step = max(_CHECK_ROWS, self.max_memory // (16 * max(1, self.n_trees)))
        kept = np.empty((self.n_trees, n), dtype=np.int32) if self._keeps_leaves(n) else None
        total = None
        if n == 0 and meanwhile is not None:
            meanwhile()
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            leaves = self._route(self.X[lo:hi], meanwhile if lo == 0 else None)
            if lo == 0:
                self._head_leaves = leaves[:, :_CHECK_ROWS].copy()
            if kept is not None:
                kept[:, lo:hi] = leaves
            if self._baseline_total is None:
                # Each row's sum of its trees' values, before the mean (``prepare``
                # reuses it).
                part = sum_leaf_values(leaves, self.sum_values, self.tree_column,
                                       self.sum_init)
                if total is None:
                    total = np.empty((n, part.shape[1]), dtype=part.dtype)
                total[lo:hi] = part
            del leaves
        self._leaves = kept
        if self._baseline_total is None:
            self._baseline_total = total
            self._baseline_raw = self.finalize(total)

    @property
    def leaves(self):
        """Every row's leaf in every tree (int32, (n_trees, n_rows)), or None when they
        did not fit the budget (windows route their rows again)."""
        if self._leaves is None and self._head_leaves is None:
            self._route_all()
        return self._leaves

    @leaves.setter
    def leaves(self, value):
        self._leaves = value

    @property
    def baseline_total(self):
        if self._baseline_total is None:
            self._route_all()
        return self._baseline_total

    @property
    def baseline_raw(self):
        if self._baseline_raw is None:
            self._route_all()
        return self._baseline_raw

    @baseline_raw.setter
    def baseline_raw(self, value):
        self._baseline_raw = value

    # -- set-up ----------------------------------------------------------------------
    def _parallel(self, tasks, meanwhile=None):
        """Run ``delayed`` kernel calls on the evaluator's threads; results in order.
        ``meanwhile`` (no arguments) runs on the calling thread while they work.

        One pool for the evaluator's life: starting a joblib pool per call, and
        joblib's polling for results, both cost more than a kernel call.
        """
        tasks = list(tasks)
        if self.n_jobs == 1 or (len(tasks) == 1 and meanwhile is None):
            results = [function(*args, **kwargs) for function, args, kwargs in tasks]
            if meanwhile is not None:
                meanwhile()
            return results
        futures = [self._executor().submit(function, *args, **kwargs)
                   for function, args, kwargs in tasks]
        try:
            if meanwhile is not None:
                meanwhile()
        finally:
            results = [future.result() for future in futures]
        return results

    def _executor(self):
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.n_jobs)
        return self._pool

    def close(self):
        """Stop the evaluator's threads (also done when it is garbage collected)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def _tree_chunks(self, per_thread=4):
        # Several chunks per thread: a thread slowed by other work gets fewer of them.
        n_chunks = 1 if self.n_jobs == 1 else min(self.n_trees, per_thread * self.n_jobs)
        bounds = np.linspace(0, self.n_trees, n_chunks + 1).astype(np.intp)
        return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]

    def _apply_fast(self, X, meanwhile=None):
        # The lanes with the categorical test only for trees with category sets.
        sets = (self.cat_bitsets,) if self.cat_bitsets.shape[0] else ()
        parts = self._parallel((delayed(apply_lanes)(X, self.nodes, self.threshold,
                                                     self.roots[lo:hi], *sets)
                                for lo, hi in self._tree_chunks()), meanwhile)
        return np.concatenate(parts, axis=0)

    def _apply(self, X, meanwhile=None):
        parts = self._parallel((delayed(apply_rows)(X, self.nodes, self.threshold,
                                                    self.roots[lo:hi], self.cat_bitsets)
                                for lo, hi in self._tree_chunks()), meanwhile)
        return np.concatenate(parts, axis=0)

    def finalize(self, total):
        """Raw outputs from per-row sums of the trees' values (the model's mean or sum)."""
        if self.ensemble.combine == "mean":
            return total / self.n_trees + self.ensemble.base_score[0]
        if self.ensemble.base_last:
            return total + self.init
        return total

    def responses(self, raw):
        return permuted_model(self.model, raw, self.is_classifier, self.n_classes)

    def _their_outputs(self, given):
        """``(kind, outputs)``: the model's own outputs on the first rows of ``given``.

        A scikit-learn tree or forest of scikit-learn's own class (not a subclass) has
        each tree's ``tree_.predict`` taken instead ("trees", on fewer rows): the
        forest's average is the same sum as ours (tests compare it bit for bit), and its
        ``predict_proba`` pays for scikit-learn's parallel machinery on every tree (a
        large share of a small call; tree by tree on 128 rows costs far less).
        Other models give ``predict_proba`` ("proba") or ``predict`` ("predict").
        """
        trees = self._trees_to_check()
        if trees is not None and len(trees) != self.n_trees:
            trees = None
        k = min(_CHECK_ROWS if trees is None else _CHECK_TREE_ROWS, self.X.shape[0])
        head = given.iloc[:k] if hasattr(given, "iloc") else given[:k]
        if trees is not None:
            # scikit-learn's own input checks (feature names, dtype) as its predict runs
            # them.
            rows = validate_data(self.model, head, reset=False, dtype=np.float32,
                                 ensure_all_finite=False)
            return "trees", np.stack([tree.predict(rows).reshape(k, -1) for tree in trees])
        if self.is_classifier:
            return "proba", np.asarray(self.model.predict_proba(head))
        return "predict", np.asarray(self.model.predict(head))

    def _differences(self, kind, theirs, leaves=None, raw=None):
        """None when ``_their_outputs`` equal the evaluator's outputs, else why not.
        ``leaves`` and ``raw``: the evaluator's for the first rows (default: all)."""
        if kind == "trees":
            leaves = self._head_leaves if leaves is None else leaves
            k = theirs.shape[1]
            theirs = theirs * self.ensemble.tree_weights[:, None, None]
            differs = (theirs != self.node_values[leaves[:, :k]]).any(axis=(1, 2))
            if differs.any():
                return f"tree {int(np.argmax(differs))} differs on the first {k} rows"
            return None
        raw = self.baseline_raw if raw is None else raw
        ours = self.responses(raw[:theirs.shape[0]])
        mine = ours.predict_proba(None) if kind == "proba" else ours.predict(None)
        if theirs.shape != mine.shape:
            return f"output shape {theirs.shape} != {mine.shape}"
        # Probabilities must match bit for bit: ranking scorers see ties between rows and
        # predict sees ties between classes. Regression outputs only need to be close.
        same = (np.array_equal(theirs, mine) if self.is_classifier
                else np.allclose(theirs, mine, rtol=1e-12, atol=0.0))
        if not same:
            return f"largest difference {np.max(np.abs(theirs - mine)):.3g}"
        return None

    def _trees_to_check(self):
        return _own_sklearn_trees(self.model)

    # -- permuted outputs ---------------------------------------------------------------
    def _select(self, rows, groups):
        """Restrict to evaluation ``rows`` (None: all) and lay out the ``groups`` (a list
        of column-index arrays) and the groups each column belongs to, as CSR."""
        self._select_groups(groups)
        self._select_rows(rows)

    def _select_rows(self, rows, leaves=True):
        """``X_eval``, ``baseline_eval`` and (with ``leaves``) ``leaves_eval``."""
        if rows is None:
            self.X_eval = self.X
            self.baseline_eval = self.baseline_raw
            if leaves:
                self.leaves_eval = self.leaves
        else:
            self.X_eval = np.ascontiguousarray(self.X[rows])
            self.baseline_eval = self.baseline_raw[rows]
            if leaves:
                self.leaves_eval = np.ascontiguousarray(self.leaves[:, rows])

    def _select_groups(self, groups):
        self.skip = _NO_SKIP
        self.n_groups = len(groups)
        self.group_ptr = np.concatenate([[0], np.cumsum([len(c) for c in groups])]).astype(np.intp)
        self.group_columns = np.concatenate(groups).astype(np.intp)
        membership = [[] for _ in range(self.X.shape[1])]
        for g, columns in enumerate(groups):
            for column in columns:
                membership[column].append(g)
        self.feature_group_ptr = np.concatenate(
            [[0], np.cumsum([len(m) for m in membership])]).astype(np.intp)
        self.feature_groups = np.array([g for m in membership for g in m], dtype=np.intp)

    def prepare(self, rows, groups, sources=None):
        """Restrict to evaluation ``rows`` (None: all) and index the ``groups``' entry nodes
        (a list of column-index arrays). Given the ``sources`` of ``permuted_changes``, a
        boosted model's first batch of permuted sums is taken now, and with it the
        baseline sums (call before reading ``baseline_raw``).

        When every row's index fits the budget (or there is none) it is made now, as
        one window (``order``, ``sorted_rank``, ``sorted_leaf`` then hold it); else
        ``permuted_changes`` makes a window at a time."""
        self._select_groups(groups)
        self.boosted = self._boosted_path()
        self._first_batch = None
        self._class_only = False
        self._skips = {}
        if self.boosted:
            # Every slot of a row is answered in one walk of the row through the trees
            # (``_boosted_changes``): no entry nodes or leaf order needed.
            splits = self.nodes[:, 0] != LEAF
            used = np.zeros(self.X.shape[1], dtype=bool)
            used[self.nodes[splits, 2]] = True
            self.group_used = used[self.group_columns[self.group_ptr[:-1]]]
            self.X_eval = self.X if rows is None else np.ascontiguousarray(self.X[rows])
            if rows is None and sources is not None and self._baseline_total is None:
                self._first_batch = self._boosted_first(sources)
            self._select_rows(rows, leaves=False)
            self.base_totals = (self.baseline_total if rows is None
                                else self.baseline_total[rows])
            return
        self._select_rows(rows, leaves=False)
        self._rows = rows
        # A row's sum does not depend on the other rows.
        self.base_totals = (self.baseline_total if rows is None
                            else self.baseline_total[rows])
        # Re-sums start from the initial value (one checkpoint): as many additions as
        # the model's own sum, read tree-major (``collect_changed``).
        self.stride = self.n_trees
        self._index_nodes()
        per_group = np.diff(self.entry_ptr).reshape(self.n_trees, self.n_groups)
        self.group_used = per_group.sum(axis=0) > 0
        self._whole = None
        release_free_memory()  # the entry nodes' work arrays
        m = self.X_eval.shape[0]
        if self.max_memory is None or self._cost(m, 1) <= self.max_memory:
            self._whole = self._window(0, m)
            self.order = self._whole.order
            self.sorted_rank = self._whole.sorted_rank
            self.sorted_leaf = self._whole.sorted_leaf

    def _index_nodes(self):
        """The trees' index, a range of trees per task: every node's pre-order rank
        (``rank``, uint32, which orders a window's rows by leaf) and the entry nodes of
        every (tree, group) as CSR (``entry_ptr``, ``entry_node``) with the end of each
        one's subtree's ranks (``entry_span``: all the re-routing reads of the subtree
        spans, which are then dropped)."""
        n_nodes = self.nodes.shape[0]
        children_left, children_right, feature = (self.nodes[:, 0], self.nodes[:, 1],
                                                  self.nodes[:, 2])
        rank = np.empty(n_nodes, dtype=np.uint32)
        span_end = np.empty(n_nodes, dtype=np.uint32)
        chunks = self._tree_chunks()
        results = self._parallel(
            [delayed(preorder_spans_of)(children_left, children_right, self.roots, lo, hi,
                                        rank, span_end) for lo, hi in chunks]
            + [delayed(entry_nodes_of)(children_left, children_right, feature, self.roots,
                                       lo, hi, self.feature_group_ptr, self.feature_groups,
                                       self.n_groups) for lo, hi in chunks])
        parts = results[len(chunks):]
        # The ranges' CSRs end to end (each counts from its first tree).
        offsets = np.cumsum([0] + [int(ptr[-1]) for ptr, _ in parts])
        self.entry_ptr = np.concatenate(
            [[0]] + [ptr[1:] + offset for (ptr, _), offset in zip(parts, offsets,
                                                                  strict=False)]
        ).astype(np.intp)
        # int32, as every node id of the packed records.
        self.entry_node = np.concatenate([nodes for _, nodes in parts]).astype(np.int32)
        self.entry_span = span_end[self.entry_node]
        self.rank = rank

    def _window(self, lo, hi):
        """The :class:`_Window` of evaluation rows ``lo .. hi``, a range of trees per
        task: the rows' leaves (kept, or routed again), sorted by leaf, their values
        gathered; with ``only_class_changes``, the pairs left out."""
        n = hi - lo
        n_trees = self.n_trees
        order = np.empty((n_trees, n), dtype=np.uint32)
        sorted_rank = np.empty((n_trees, n), dtype=np.uint32)
        sorted_leaf = np.empty((n_trees, n), dtype=np.uint32)
        leaf_values = None
        if not self.exact:
            # Tree-major, as the new leaves are stored (``collect_changed``).
            leaf_values = np.empty((n_trees, n, self.sum_values.shape[1]),
                                   dtype=self.sum_values.dtype)

        def index(t_lo, t_hi):
            leaves = self._window_leaves(lo, hi, t_lo, t_hi)
            sort_by_leaf_into(leaves, self.rank, order[t_lo:t_hi], sorted_rank[t_lo:t_hi],
                              sorted_leaf[t_lo:t_hi])
            if leaf_values is None:
                return None
            # ("clip": the leaves are valid ids, and no buffer is made for ``out``.)
            np.take(self.sum_values, leaves, axis=0, out=leaf_values[t_lo:t_hi], mode="clip")
            if not self.any_exact:
                return None
            # Whether every baseline leaf of a row in these trees is exact.
            return np.logical_and.reduce(self.exact_node[leaves], axis=0)

        parts = self._parallel(delayed(index)(t_lo, t_hi)
                               for t_lo, t_hi in self._tree_chunks())
        exact_sample = np.full(n, leaf_values is None or self.any_exact)
        for part in parts:
            if part is not None:
                exact_sample &= part
        checkpoints = np.empty((n, 1, self.sum_init.shape[0]), dtype=self.sum_init.dtype)
        checkpoints[:] = self.sum_init
        window = _Window(lo, hi, order, sorted_rank, sorted_leaf, leaf_values, checkpoints,
                         exact_sample.astype(np.uint8), self.base_totals[lo:hi])
        if self._class_only:
            window.skip = self._window_skip(window)
        return window

    def _window_leaves(self, lo, hi, t_lo, t_hi):
        """Leaves (int32, C order) of trees ``t_lo .. t_hi`` for evaluation rows
        ``lo .. hi``: read from the kept ones, else routed."""
        if self._leaves is not None:
            kept = self._leaves[t_lo:t_hi]
            if self._rows is None:
                return np.ascontiguousarray(kept[:, lo:hi])
            return kept[:, self._rows[lo:hi]]
        rows = self.X_eval[lo:hi]
        if self.fast:
            sets = (self.cat_bitsets,) if self.cat_bitsets.shape[0] else ()
            leaves = apply_lanes(rows, self.nodes, self.threshold, self.roots[t_lo:t_hi], *sets)
        else:
            leaves = apply_rows(rows, self.nodes, self.threshold, self.roots[t_lo:t_hi],
                                self.cat_bitsets)
        return leaves.astype(np.int32)

    # -- memory ---------------------------------------------------------------------------
    def _row_bytes(self):
        """Bytes the evaluation holds per row of a window, and per slot and row of a
        window, and per slot and evaluation row (a batch's changed rows and sums,
        collected over the windows)."""
        n_trees = self.n_trees
        n_parts = min(self.n_jobs, len(self._tree_chunks()))
        n_columns = self.init.shape[0]
        sum_size = self.sum_values.dtype.itemsize
        # The index (three uint32 per tree), the leaves being sorted (int32), the sort's
        # work arrays, the checkpoint and the exact flags; the leaves' values.
        per_row = n_trees * 16 + n_parts * 16 + n_columns * sum_size + 2
        if not self.exact:
            per_row += n_trees * self.sum_values.shape[1] * sum_size
        if self.is_classifier:
            # ``only_class_changes``: each part's potentials, their sum, the leads, the
            # groups' potentials and the window's skip mask.
            per_row += ((n_parts + 2) * self.X.shape[1] + 4 * n_columns + self.n_groups) * 8 \
                + self.n_groups
        # The permuted values, the changed flags, the window's changed rows and sums,
        # and its new leaves (or, for exact sums, each part's differences).
        per_slot = self.X.dtype.itemsize + 1 + 8 + n_columns * sum_size
        per_slot += n_parts * (8 * n_columns + 1) if self.exact else 4 * n_trees
        return per_row, per_slot, 8 + n_columns * sum_size

    def _fixed_bytes(self, whole):
        """Bytes held whatever the windows: the kept leaves and, with windows (not
        ``whole``), the skip masks of every window (made once)."""
        fixed = 0 if self._leaves is None else self._leaves.nbytes
        if self.is_classifier and not whole:
            fixed += self.n_groups * self.X_eval.shape[0]
        return fixed

    def _cost(self, m, n_slots, window=None):
        """Bytes held evaluating batches of ``n_slots`` slots on windows of ``window``
        rows (None: every one of the ``m`` rows at once)."""
        per_row, per_slot, per_result = self._row_bytes()
        rows = m if window is None else window
        # The re-routing's queues, one per thread: 52 bytes an item, at most
        # ``queue_items`` of them.
        n_parts = min(self.n_jobs, len(self._tree_chunks()))
        held = n_parts * 52 * (min(self.queue_items, n_slots * rows) + 1)
        held += rows * (per_row + n_slots * per_slot)
        if window is None:
            return self._fixed_bytes(True) + held
        return self._fixed_bytes(False) + n_slots * m * per_result + held

    def _plan(self, n_slots, n_repeats, m):
        """``(slots per batch, rows per window)`` within the budget.

        Every row at once (``_whole``): as many slots as the recorded changes' budget
        takes, fewer when the memory budget asks. With windows, what a batch costs
        beyond one window of every row is a pass indexing every row again, and what a
        window costs is a walk of the trees below each group's entry nodes for each
        group of the batch (the leaves' intervals): the batch size (whole groups where
        one fits) that fits the budget with the least of both, the windows as large as
        the rest of the budget allows."""
        if self._whole is not None:
            if self.exact:
                n_parts = min(self.n_jobs, len(self._tree_chunks()))
                per_slot = n_parts * m * (8 * self.init.shape[0] + 1)
            else:
                per_slot = self.n_trees * m * np.dtype(np.int32).itemsize
            batch = max(1, min(n_slots, _CHANGE_BUDGET // max(1, per_slot)))
            if self.max_memory is not None:
                while batch > 1 and self._cost(m, batch) > self.max_memory:
                    batch = max(1, batch * 3 // 4)
            return batch, m
        per_row, per_slot, _ = self._row_bytes()
        queue_per_item = min(self.n_jobs, len(self._tree_chunks())) * 52
        n_groups = max(1, -(-n_slots // n_repeats))
        # A pass indexing every row against one group's walk of the trees: the rows
        # against the nodes of a tree.
        index_pass = 4.5 * m * self.n_trees / max(1, self.nodes.shape[0])
        best = None
        for batch in range(1, n_slots + 1):
            if batch > n_repeats and batch % n_repeats:
                continue  # whole groups: a group's walks are made once per window
            room = self.max_memory - self._cost(m, batch, 0)
            if room <= 0 and best is not None:
                break
            # The queues grow with the window up to their size, then no more.
            per_window_row = per_row + batch * (per_slot + queue_per_item)
            window = room // per_window_row
            if batch * window > self.queue_items:
                window = (room - queue_per_item * self.queue_items) // (per_row
                                                                       + batch * per_slot)
            window = int(min(m, max(_MIN_WINDOW, window)))
            walks = n_groups * (-(-n_repeats // batch) if batch < n_repeats else 1)
            time = -(-m // window) * walks + -(-n_slots // batch) * index_pass
            if best is None or time < best[0]:
                best = (time, batch, window)
        return best[1], best[2]

    def only_class_changes(self):
        """Let the re-routing leave out the (group, row) pairs whose predicted class no
        permutation of the group can change: their outputs may still change, so only a
        consumer that reads the predicted class alone may ask (the accuracy shortcut).

        A pair is left out when its row's lead of its class over every other class is
        larger than all the trees whose path splits on the group could take from it
        (``flip_potential``), with room for rounding: a float sum of n terms is within
        n * 2**-53 of their absolute sum from the exact one, and the lead compares two
        sums before and two after (exact sums, as of pure leaves, do not round at all).
        For class values added into one row per class and a zero base score. Call after
        ``prepare``; the pairs of each window are found as it is made (``skip`` holds
        them for one window of every row).
        """
        if not (self.is_classifier and not self.ensemble.base_score.any()
                and not self.tree_column.any()
                and self.node_values.shape[1] == self.n_classes):
            return
        # Every sum (and every potential, at most 4 n_trees max|value|) is below scale.
        scale = np.abs(self.init).max() + 4 * self.n_trees * np.abs(self.node_values).max()
        self._rounding = 16 * (self.n_trees + 1) * scale * 2.0**-53
        self._class_only = True
        if self._whole is not None:
            self._whole.skip = self.skip = self._window_skip(self._whole)

    def _window_skip(self, window):
        """``only_class_changes``' pairs left out, for the rows of ``window`` (groups x
        rows, uint8); made once per window and kept when the windows are made again."""
        key = (window.lo, window.hi)
        if key in self._skips:
            return self._skips[key]
        width = self.n_classes
        totals = window.base_totals
        rows = np.arange(totals.shape[0])
        best = np.argmax(self.baseline_eval[window.lo:window.hi, :width], axis=1)
        others = totals.copy()
        others[rows, best] = -np.inf
        lead = totals[rows, best] - others.max(axis=1)
        parts = self._parallel(
            delayed(flip_potential)(self.nodes[:, 0], self.nodes[:, 1], self.nodes[:, 2],
                                    self.roots, lo, hi, window.order, window.sorted_leaf,
                                    self.node_values, best, self.X.shape[1])
            for lo, hi in self._tree_chunks(per_thread=1))  # one potential array each
        potential = np.add.reduce(parts)
        # A group's potential: its columns' summed (a tree meeting two of them counts
        # twice: still a bound).
        by_group = np.add.reduceat(potential[:, self.group_columns], self.group_ptr[:-1],
                                   axis=1)
        skip = np.ascontiguousarray((lead[:, None] - by_group > self._rounding).T,
                                    dtype=np.uint8)
        if self._whole is None:
            self._skips[key] = skip
        return skip

    def permuted_outputs(self, sources):
        """Yield ``(group, repeat, raw)`` for every used group and every repeat, where row
        ``i`` reads the group's columns from row ``sources[repeat, i]``; ``raw`` is None
        when no prediction changed."""
        for g, r, rows, totals in self.permuted_changes(sources):
            if rows.shape[0] == 0:
                yield g, r, None
                continue
            raw = self.baseline_eval.copy()
            raw[rows] = self.finalize(totals)
            yield g, r, raw

    def permuted_changes(self, sources):
        """Yield ``(group, repeat, rows, totals)`` for every used group and every
        repeat: the evaluation rows whose raw output changed and their new sums of the
        trees' values (``finalize`` makes them raw outputs; every other row keeps
        ``baseline_eval``).

        Under a budget the slots go in batches and, when every row's index does not fit,
        each batch passes over windows of rows, collecting each slot's changed rows in
        row order: the same rows and sums as one window of every row."""
        n_repeats, m = sources.shape
        slots = [(g, r) for g in np.flatnonzero(self.group_used) for r in range(n_repeats)]
        if not slots:
            return
        if self.boosted:
            yield from self._boosted_changes(slots, sources)
            return
        batch_size, window = self._plan(len(slots), n_repeats, m)
        n_columns = self.init.shape[0]
        # Exact sums: one buffer of differences per thread (a task takes a free one).
        n_parts = min(self.n_jobs, len(self._tree_chunks()))
        if self.exact:
            buffers = (np.zeros(n_parts * window * batch_size * n_columns),
                       np.zeros(n_parts * window * batch_size, dtype=np.uint8), n_parts)
        else:
            # Tree-major: the leaves one tree's re-routing writes stay close together.
            buffers = (np.full((batch_size, self.n_trees, window), -1, dtype=np.int32),)
        sources = np.ascontiguousarray(sources, dtype=np.intp)
        for start in range(0, len(slots), batch_size):
            batch = slots[start:start + batch_size]
            if self._whole is not None:
                counts, rows, totals = self._evaluate(batch, sources, self._whole, buffers)
            else:
                counts, rows, totals = self._evaluate_windows(batch, sources, window,
                                                              buffers)
            for s, (g, r) in enumerate(batch):
                n = counts[s]
                found_rows, found_totals = rows[s][:n], totals[s][:n]
                if self._whole is None:
                    rows[s] = totals[s] = None  # only the consumer holds them now
                yield g, r, found_rows, found_totals
            del found_rows, found_totals

    def _evaluate_windows(self, batch, sources, window, buffers):
        """``_evaluate`` of a batch on every row, a window of rows at a time: each slot's
        changed rows (in increasing order) and their sums, put end to end."""
        m = sources.shape[1]
        n_slots = len(batch)
        counts = np.zeros(n_slots, dtype=np.intp)
        # One array per slot: a consumer holding the last slot's rows keeps only those
        # alive while the next batch is evaluated.
        rows = [np.empty(m, dtype=np.intp) for _ in range(n_slots)]
        totals = [np.empty((m, self.init.shape[0]), dtype=self.sum_init.dtype)
                  for _ in range(n_slots)]
        for lo in range(0, m, window):
            hi = min(m, lo + window)
            part = self._window(lo, hi)
            # The window's rows read their sources from any row.
            window_sources = np.ascontiguousarray(sources[:, lo:hi])
            found, found_rows, found_totals = self._evaluate(batch, window_sources, part,
                                                             buffers)
            for s in range(n_slots):
                n, at = found[s], counts[s]
                rows[s][at:at + n] = found_rows[s, :n] + lo
                totals[s][at:at + n] = found_totals[s, :n]
                counts[s] = at + n
            del part, found_rows, found_totals
            release_free_memory()
        return counts, rows, totals

    def _boosted_path(self):
        """Whether ``_boosted_changes`` serves this model and these groups: summed trees
        adding one value each into one output column, one column per group."""
        return (self.ensemble.combine == "sum" and self.init.shape[0] == 1
                and self.node_values.shape[1] == 1
                and bool(np.all(np.diff(self.group_ptr) == 1)))

    def _boosted_slots(self, sources):
        """``permuted_changes``' slots and how many of them a batch takes."""
        slots = [(g, r) for g in np.flatnonzero(self.group_used)
                 for r in range(sources.shape[0])]
        per_slot = sources.shape[1] * self.sum_values.dtype.itemsize
        batch = max(1, min(len(slots), _CHANGE_BUDGET // per_slot))
        if self.max_memory is not None:
            # Per slot and row: the permuted value (a code or the data's value), the sums
            # and their two copies by slot (``_boosted_batch``).
            held = sources.shape[1] * (max(4, self.X.dtype.itemsize)
                                       + 3 * self.sum_values.dtype.itemsize)
            batch = max(1, min(batch, self.max_memory // held))
        return slots, batch

    def _boosted_first(self, sources):
        """``prepare``'s first batch: ``(sources, batch, by_slot)``, setting the baseline
        sums when the kernel gives them; None without slots."""
        sources = np.ascontiguousarray(sources, dtype=np.intp)
        slots, batch_size = self._boosted_slots(sources)
        if not slots:
            return None
        batch = slots[:batch_size]
        by_slot, baseline = self._boosted_batch(batch, sources, own=True)
        if baseline is not None:
            self._baseline_total = baseline.reshape(-1, 1)
            self._baseline_raw = self.finalize(self._baseline_total)
        return sources, batch, by_slot

    def _boosted_batch(self, batch, sources, own=False):
        """The permuted sums of a batch of slots, ``by_slot[s]`` slot ``s``'s per row, and
        (with ``own``, when the kernel gives them) every row's own sum, else None."""
        m = sources.shape[1]
        node_value = np.ascontiguousarray(self.sum_values[:, 0])
        start = np.ascontiguousarray(self.sum_init[:1])
        row_ranges = self._row_ranges(m)
        if self._layout is None:
            self._layout = self._boosted_layout(node_value)
        kernel, X_kernel, tables = self._layout
        slot_repeat = np.array([r for _, r in batch], dtype=np.intp)
        slot_column = self.group_columns[self.group_ptr[[g for g, _ in batch]]]
        # The kernels take each feature's slots side by side.
        order = np.argsort(slot_column, kind="stable")
        permuted = permuted_values(X_kernel, sources, slot_repeat[order], slot_column[order])
        feature_slot_ptr = np.searchsorted(slot_column[order],
                                           np.arange(self.X.shape[1] + 1)).astype(np.intp)
        totals = np.empty((m, len(batch)), dtype=node_value.dtype)
        # The mask kernel writes each row's own sum too (always: one add per tree).
        gives_own = kernel is masked_permuted_totals
        baseline = (np.empty(m, dtype=node_value.dtype),) if gives_own else ()
        self._parallel(
            delayed(kernel)(X_kernel, permuted, feature_slot_ptr, *tables, start, lo, hi,
                            totals, *baseline)
            for lo, hi in row_ranges)
        by_slot = np.ascontiguousarray(totals.T)  # a slot's totals side by side
        position = np.empty_like(order)
        position[order] = np.arange(order.shape[0])
        return by_slot[position], (baseline[0] if own and gives_own else None)

    def _boosted_changes(self, slots, sources):
        """``permuted_changes`` for a boosted model: each row passes once through the
        trees for a batch of slots (``masked_permuted_totals``, or
        ``boosted_permuted_totals`` for trees leaf masks cannot state), the rows split
        among the threads; a slot's changed rows are those whose total differs."""
        sources = np.ascontiguousarray(sources, dtype=np.intp)
        baseline = self.base_totals[:, 0]
        _, batch_size = self._boosted_slots(sources)
        first, self._first_batch = self._first_batch, None
        for begin in range(0, len(slots), batch_size):
            batch = slots[begin:begin + batch_size]
            if (begin == 0 and first is not None and first[1] == batch
                    and np.array_equal(first[0], sources)):
                by_slot = first[2]  # taken by ``prepare``
            else:
                by_slot, _ = self._boosted_batch(batch, sources)
            for s, (g, r) in enumerate(batch):
                column = by_slot[s]
                rows = np.flatnonzero(column != baseline)
                yield g, r, rows, column[rows].reshape(-1, 1)

    def _boosted_layout(self, node_value):
        """The boosted kernel, the data it reads (the evaluation rows' values, or their
        codes for leaf masks) and its tables: made once per evaluator."""
        records, cut, root_code, max_depth = boosted_layout(self.nodes, self.threshold,
                                                            self.operator, self.roots)
        n_features = self.X.shape[1]
        ok, codes, tables = mask_layout(records, cut, self.operator, self.threshold,
                                        self.cat_bitsets, root_code, node_value, n_features,
                                        _RANK_BUDGET)
        if not ok:
            return (boosted_permuted_totals, self.X_eval,
                    (records, cut, self.threshold, self.operator, self.cat_bitsets,
                     root_code, max_depth, node_value))
        X_code = np.empty(self.X_eval.shape, dtype=np.uint32)
        # Row ranges on the threads (C-contiguous views: the same compiled version).
        self._parallel(delayed(value_codes)(self.X_eval[lo:hi], np.arange(n_features), codes,
                                            X_code[lo:hi])
                       for lo, hi in self._row_ranges(self.X_eval.shape[0]))
        return masked_permuted_totals, X_code, tables

    def _row_ranges(self, m):
        # Several ranges per thread: a thread slowed by other work gets fewer of them.
        n_chunks = 1 if self.n_jobs == 1 else 4 * self.n_jobs
        bounds = np.linspace(0, m, n_chunks + 1).astype(np.intp)
        return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
                if b > a]

    def _batch_layout(self, batch, sources):
        """For a batch of (group, repeat) slots, each group's slots consecutive:
        ``reroute_packed``'s permuted values, slot repeats, groups and slot pointers."""
        slot_group = np.array([g for g, _ in batch], dtype=np.intp)
        slot_repeat = np.array([r for _, r in batch], dtype=np.intp)
        starts = np.flatnonzero(np.r_[True, slot_group[1:] != slot_group[:-1]])
        batch_slot_ptr = np.r_[starts, len(batch)].astype(np.intp)
        single = np.diff(self.group_ptr)[slot_group] == 1
        slot_column = np.where(single, self.group_columns[self.group_ptr[slot_group]], -1)
        permuted = permuted_values(self.X_eval, sources, slot_repeat, slot_column)
        return permuted, slot_repeat, slot_group[starts], batch_slot_ptr

    def _evaluate(self, batch, sources, window, buffers):
        """Each slot's changed rows of ``window`` (window positions) and their sums;
        ``sources``: the window's rows' sources (any evaluation row)."""
        n_slots = len(batch)
        m = window.hi - window.lo
        permuted, slot_repeat, batch_groups, batch_slot_ptr = self._batch_layout(batch,
                                                                                 sources)
        common = (self.X_eval, window.lo, permuted, sources, slot_repeat, batch_groups,
                  batch_slot_ptr, self.group_ptr, self.group_columns, self.entry_ptr,
                  self.entry_node, self.entry_span, self.n_groups, self.nodes,
                  self.threshold, self.operator, self.cat_bitsets, self.roots, self.rank,
                  window.order, window.sorted_rank, window.sorted_leaf)
        tail = (self.max_tree_nodes, self.exact, self.node_values, self.tree_column)
        counts = np.zeros(n_slots, dtype=np.intp)
        rows = np.empty((n_slots, m), dtype=np.intp)
        totals = np.empty((n_slots, m, self.init.shape[0]), dtype=self.sum_init.dtype)
        n_chunks = 1 if self.n_jobs == 1 else min(n_slots, 2 * self.n_jobs)
        bounds = np.linspace(0, n_slots, n_chunks + 1).astype(np.intp)
        slot_ranges = [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:],
                                                             strict=True) if hi > lo]
        if self.exact:
            # Sample-major views of the flat buffers (all zero between batches).
            flat_deltas, flat_changes, n_parts = buffers
            n_columns = self.init.shape[0]
            deltas = flat_deltas[:n_parts * m * n_slots * n_columns].reshape(
                n_parts, m, n_slots, n_columns)
            changes = flat_changes[:n_parts * m * n_slots].reshape(n_parts, m, n_slots)
            free = queue.SimpleQueue()
            for k in range(n_parts):
                free.put(k)

            def reroute(lo, hi):
                # At most n_jobs tasks run at once, so a buffer is always free.
                k = free.get()
                try:
                    reroute_packed(*common, lo, hi, *tail, _NO_LEAVES, deltas[k], changes[k],
                                   self.fast, window.skip, self.queue_items,
                                   lane_sets(self.cat_bitsets))
                finally:
                    free.put(k)

            self._parallel(delayed(reroute)(lo, hi) for lo, hi in self._tree_chunks())
            self._parallel(
                delayed(collect_exact)(window.base_totals, deltas, changes, lo, hi, counts,
                                       rows, totals)
                for lo, hi in slot_ranges)
            return counts, rows, totals
        buffer = buffers[0][:n_slots]
        changed = np.zeros((m, n_slots), dtype=np.uint8)
        self._parallel(
            delayed(reroute_packed)(*common, lo, hi, *tail, buffer, _NO_DELTA, changed,
                                    self.fast, window.skip, self.queue_items,
                                    lane_sets(self.cat_bitsets))
            for lo, hi in self._tree_chunks())
        self._parallel(
            delayed(collect_changed)(window.leaf_values, buffer, changed,
                                     self.sum_values, self.tree_column, window.checkpoints,
                                     self.stride, self.exact_node, window.exact_sample,
                                     window.base_totals, lo, hi, counts, rows, totals)
            for lo, hi in slot_ranges)
        return counts, rows, totals


def _own_sklearn_trees(model):
    """The ``tree_`` of each tree of a scikit-learn tree or forest whose class is
    scikit-learn's own, in order; else None."""
    return own_trees(model)


# Exact sums: node values that are whole multiples of 2**-_EXACT_BITS.
_EXACT_BITS = 24


def _exact_nodes(node_values, init, n_trees):
    """Per node 1 when its values are whole multiples of ``2**-_EXACT_BITS``, so that a
    sum of ``init`` and one such node per tree never rounds (every partial sum is a
    multiple too, below ``2**53`` of them) and its order does not matter; else 0. All 0
    when ``init`` is not such a multiple or the sums could grow too large."""
    # Scaling by a power of two is exact (an overflow gives inf, which is not whole).
    scaled = node_values * 2.0**_EXACT_BITS
    whole_value = np.isfinite(scaled) & (scaled == np.floor(scaled))
    # Column by column: NumPy's all(axis=1) over a few columns is much slower.
    whole = whole_value[:, 0].copy()
    for column in range(1, whole_value.shape[1]):
        whole &= whole_value[:, column]
    init_scaled = init * 2.0**_EXACT_BITS
    bound = 4 * (n_trees + 2) * np.max(np.abs(scaled), initial=0.0, where=np.isfinite(scaled)) \
        + np.max(np.abs(init_scaled), initial=0.0)
    if not (np.all(init_scaled == np.floor(init_scaled)) and bound < 2.0**52):
        whole[:] = False
    return whole.astype(np.uint8)
