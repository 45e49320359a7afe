"""The tree-aware evaluator for large scikit-learn forests, a few trees at a time.

A 100-tree forest grown to full depth on 80,000 rows holds 10 million nodes; indexing
all of them at once (packed records, pre-order ranks, per-tree sample orders) would
cost over a gigabyte. :class:`ChunkedTreeEvaluator` converts, indexes, uses and drops a
piece of trees at a time instead, with the same outputs bit for bit. Part of the
permutation engine (map: :mod:`._permutation_engine`).
"""

from __future__ import annotations

import copy

import numpy as np
from joblib import delayed

from ..._kernels._permutation import QUEUE_ITEMS, reroute_packed
from ..._kernels._permuted_sums import add_leaf_values, add_new_leaf_values
from ..._kernels._permuted_traversal import apply_lanes, lane_sets, make_fast, pack_nodes
from ..._kernels._traverse import apply_packed
from ..._kernels._tree_index import entry_nodes, preorder_spans, sort_by_leaf
from ...adapters import as_ensemble, forest_estimators
from ._tree_evaluator import _NO_DELTA, _NO_SKIP, TreeEvaluator

__all__ = ["ChunkedTreeEvaluator", "forest_part", "large_forest"]

# Forests with more nodes than this are read a few trees at a time.
_CHUNK_NODES = 2_000_000
# Bytes of running totals (slots x rows x outputs) and of one round's recorded new
# leaves.
_TOTALS_BUDGET = 64 * 2**20
_ROUND_BUDGET = 16 * 2**20
# Nodes per piece of trees (at least one tree): each costs ~150 bytes while its piece
# is converted and indexed.
_PIECE_NODES = 250_000


def large_forest(model):
    """The fitted trees of a scikit-learn forest with more than ``_CHUNK_NODES`` nodes,
    else None."""
    estimators = forest_estimators(model)
    if estimators is None:
        return None
    try:
        n_nodes = sum(int(e.tree_.node_count) for e in estimators)
    except AttributeError:
        return None
    return estimators if estimators and n_nodes > _CHUNK_NODES else None


def forest_part(model, estimators):
    """A shallow copy of the forest ``model`` holding only ``estimators``."""
    part = copy.copy(model)
    part.estimators_ = list(estimators)
    return part


class _Piece:
    """A few consecutive trees of a chunked forest in the evaluator's layout."""

    def __init__(self, evaluator, lo, hi):
        ensemble = as_ensemble(forest_part(evaluator.model, evaluator.estimators[lo:hi]))
        (children_left, children_right, feature, self.threshold, missing_go_to_left,
         self.operator, self.cat_bitsets, self.roots) = ensemble.packed()
        self.max_tree_nodes = max(tree.node_count for tree in ensemble.trees)
        self.node_values, self.tree_column, _ = ensemble.node_outputs()
        del ensemble
        self.nodes = pack_nodes(children_left, children_right, feature, missing_go_to_left,
                                self.operator)
        self.routing = None
        if evaluator.fast:
            make_fast(self.nodes, self.threshold, self.operator)
        else:
            self.routing = (children_left, children_right, feature, self.threshold,
                            missing_go_to_left, self.operator, self.cat_bitsets)

    def apply(self, X):
        """Global (piece) leaf ids, shape (n_trees, n_samples)."""
        if self.routing is None:
            return apply_lanes(X, self.nodes, self.threshold, self.roots)
        return np.ascontiguousarray(apply_packed(X, *self.routing, self.roots).T)


class ChunkedTreeEvaluator(TreeEvaluator):
    """:class:`TreeEvaluator` for a large scikit-learn forest, reading it a few trees at
    a time: each piece of trees is converted, packed, indexed, used and dropped, so the
    evaluator never holds more than a few trees' nodes (``_CHUNK_NODES``).

    The baseline adds the pieces' leaf values into running totals in tree order; the
    permuted outputs keep one running total per (slot, row) and add each tree's new or
    baseline leaf to it in tree order (``add_new_leaf_values``): the additions of
    ``sum_leaf_values``, so the outputs are bit for bit those of :class:`TreeEvaluator`
    (and of the model). Only every tree's leaf per row (4 bytes) is kept throughout;
    ``max_memory`` (bytes, None for no limit) narrows the running totals and the rounds'
    buffers, not those leaves.
    """

    def __init__(self, model, estimators, ensemble, X, n_jobs, fast=None, piece_trees=None,
                 given=None, max_memory=None):
        self.model = model
        self.ensemble = ensemble  # the first tree only: task, link, init
        self.estimators = list(estimators)
        self.n_jobs = n_jobs
        self.max_memory = max_memory
        self._totals_budget, self._round_budget = _TOTALS_BUDGET, _ROUND_BUDGET
        if max_memory is not None:
            self._totals_budget = max(1, min(_TOTALS_BUDGET, max_memory // 2))
            self._round_budget = max(1, min(_ROUND_BUDGET, max_memory // 8))
        self._pool = None
        self.X = X = np.ascontiguousarray(X)
        self.is_classifier = ensemble.task == "classification"
        self.n_classes = len(model.classes_) if self.is_classifier else 0
        self.n_trees = len(self.estimators)
        _, _, self.init = ensemble.node_outputs()
        self.exact = False
        self.fast = bool(np.isfinite(X).all()) if fast is None else bool(fast)
        self.piece_trees = piece_trees
        self.largest_tree = max(int(e.tree_.node_count) for e in self.estimators)
        # Every tree's leaf per row, local to its tree (int32: 4 bytes a row and tree).
        self.leaves = np.empty((self.n_trees, X.shape[0]), dtype=np.int32)
        totals = np.zeros((X.shape[0], self.init.shape[0]))
        totals += self.init
        for pieces in self._rounds(self._piece_size(X.shape[0] * 8)):
            parts = self._parallel(delayed(self._baseline_piece)(lo, hi) for lo, hi in pieces)
            for (lo, hi), (leaves, node_values, tree_column, roots) in zip(pieces, parts,
                                                                           strict=True):
                add_leaf_values(leaves, node_values, tree_column, totals)
                self.leaves[lo:hi] = leaves - roots[:, None]
        self.baseline_raw = self.finalize(totals)
        self.mismatch = self._differences(*self._their_outputs(X if given is None else given))

    def _trees_to_check(self):
        return None  # no node values held: the model's own predictions are checked

    def only_class_changes(self):
        pass  # every row is re-routed: the bound needs every tree's nodes at once

    def _piece_size(self, bytes_per_tree):
        """Trees per piece: a round (one piece per thread) holds about ``_ROUND_BUDGET``
        bytes of per-tree buffers, at least one tree per piece."""
        if self.piece_trees is not None:
            return self.piece_trees
        by_nodes = _PIECE_NODES // max(1, self.largest_tree)
        by_buffers = self._round_budget // max(1, bytes_per_tree) // max(1, self.n_jobs)
        return max(1, min(by_nodes, by_buffers))

    def _rounds(self, piece_trees):
        """Tree ranges in tree order, ``n_jobs`` pieces of ``piece_trees`` per round."""
        pieces = [(lo, min(lo + piece_trees, self.n_trees))
                  for lo in range(0, self.n_trees, piece_trees)]
        step = max(1, self.n_jobs)
        return [pieces[k:k + step] for k in range(0, len(pieces), step)]

    def _baseline_piece(self, lo, hi):
        piece = _Piece(self, lo, hi)
        return piece.apply(self.X), piece.node_values, piece.tree_column, piece.roots

    def prepare(self, rows, groups, sources=None):
        # Entry nodes and orders are found piece by piece, in ``_reroute_piece``.
        self._select(rows, groups)

    def permuted_changes(self, sources):
        n_repeats, m = sources.shape
        n_columns = self.init.shape[0]
        slots = [(g, r) for g in range(self.n_groups) for r in range(n_repeats)]
        batch_size = max(1, min(len(slots),
                                self._totals_budget // (m * (8 * n_columns + 1))))
        sources = np.ascontiguousarray(sources, dtype=np.intp)
        for start in range(0, len(slots), batch_size):
            batch = slots[start:start + batch_size]
            changed, totals, used = self._evaluate_chunked(batch, sources)
            for s, (g, r) in enumerate(batch):
                if not used[g]:
                    continue
                rows = np.flatnonzero(changed[:, s])
                yield g, r, rows, totals[s, rows]

    def _evaluate_chunked(self, batch, sources):
        n_slots = len(batch)
        m = sources.shape[1]
        permuted, slot_repeat, batch_groups, batch_slot_ptr = self._batch_layout(batch,
                                                                                 sources)
        context = (permuted, sources, slot_repeat, batch_groups, batch_slot_ptr)
        changed = np.zeros((m, n_slots), dtype=np.uint8)
        totals = np.zeros((n_slots, m, self.init.shape[0]))
        totals += self.init
        used = np.zeros(self.n_groups, dtype=bool)
        n_chunks = 1 if self.n_jobs == 1 else min(n_slots, 2 * self.n_jobs)
        bounds = np.linspace(0, n_slots, n_chunks + 1).astype(np.intp)
        slot_ranges = [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:],
                                                             strict=True) if hi > lo]
        piece_trees = self._piece_size(n_slots * m * 4)
        # One new-leaf buffer per piece of a round, reused (consumed entries go back to -1).
        buffers = [np.full((n_slots, piece_trees, m), -1, dtype=np.int32)
                   for _ in range(max(1, self.n_jobs))]
        for pieces in self._rounds(piece_trees):
            parts = self._parallel(delayed(self._reroute_piece)(lo, hi, context, changed,
                                                                buffers[k])
                                   for k, (lo, hi) in enumerate(pieces))
            for leaves, new_leaves, node_values, tree_column, piece_used in parts:
                used |= piece_used
                self._parallel(
                    delayed(add_new_leaf_values)(leaves, new_leaves, node_values,
                                                 tree_column, lo, hi, totals)
                    for lo, hi in slot_ranges)
        return changed, totals, used

    def _reroute_piece(self, lo, hi, context, changed, buffer):
        permuted, sources, slot_repeat, batch_groups, batch_slot_ptr = context
        piece = _Piece(self, lo, hi)
        n_trees = hi - lo
        leaves = self.leaves_eval[lo:hi] + piece.roots[:, None]
        nodes = piece.nodes
        rank, span_end = preorder_spans(nodes[:, 0], nodes[:, 1], piece.roots)
        order, sorted_rank, sorted_leaf = sort_by_leaf(leaves, rank)
        entry_ptr, entry_node = entry_nodes(nodes[:, 0], nodes[:, 1], nodes[:, 2], piece.roots,
                                            self.feature_group_ptr, self.feature_groups,
                                            self.n_groups)
        used = np.diff(entry_ptr).reshape(n_trees, self.n_groups).sum(axis=0) > 0
        # The buffer's first n_trees trees (a C-contiguous block when it holds more).
        new_leaves = buffer.reshape(-1)[:buffer.shape[0] * n_trees * buffer.shape[2]].reshape(
            buffer.shape[0], n_trees, buffer.shape[2]) if n_trees < buffer.shape[1] else buffer
        reroute_packed(self.X_eval, 0, permuted, sources, slot_repeat, batch_groups,
                       batch_slot_ptr, self.group_ptr, self.group_columns, entry_ptr,
                       entry_node.astype(np.int32), span_end[entry_node], self.n_groups, nodes,
                       piece.threshold, piece.operator, piece.cat_bitsets, piece.roots, rank,
                       order, sorted_rank, sorted_leaf, 0, n_trees,
                       piece.max_tree_nodes, False, piece.node_values, piece.tree_column,
                       new_leaves, _NO_DELTA, changed, self.fast, _NO_SKIP, QUEUE_ITEMS,
                       lane_sets(piece.cat_bitsets))
        return leaves, new_leaves, piece.node_values, piece.tree_column, used
