"""The tree-aware evaluator behind :func:`permutation_importance` for tree-format models.

It produces, for every (group, repeat), the model's raw output on the permuted rows,
bit-identical to predicting the permuted X with the model itself, without copying X
or re-predicting (see :mod:`sapwood._kernels._permutation`). The scorer stays
scikit-learn's: :class:`PermutedModel` stands in for the model, and its ``predict`` /
``predict_proba`` return the precomputed outputs, so any scorer works unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils import get_tags

from .._kernels._permutation import (
    entry_nodes,
    preorder_spans,
    reroute_permuted,
    resum_changed,
    sort_by_leaf,
    sum_leaf_values,
)
from .._kernels._traverse import apply_packed
from ..adapters import as_ensemble

__all__ = ["PermutedModel", "TreeEvaluator", "tree_evaluator"]

# Bytes of recorded leaf changes held at once; batches of (group, repeat) slots fit it.
_CHANGE_BUDGET = 64 * 2**20
# Rows on which the converted model's predictions are checked against the model's own.
_CHECK_ROWS = 512


class PermutedModel:
    """Stand-in for a fitted model inside scikit-learn scorers.

    ``predict``, ``predict_proba`` and ``predict_log_proba`` ignore their ``X`` and
    return the model's outputs on one permuted data set, computed beforehand;
    ``score`` runs the model's own (scikit-learn mixin) ``score`` on them;
    ``responses_used`` records which outputs a scorer read. Fitted
    attributes (``classes_``, ``n_outputs_``, ...) and tags are the model's, so a
    scorer picks the same response method and positive class as for the model itself.
    """

    def __init__(self, model, raw, is_classifier, n_classes):
        self._model = model
        self._raw = raw
        self._is_classifier = is_classifier
        self._n_classes = n_classes
        # Response methods the scorer asked for (``score`` asks for ``predict``).
        self.responses_used = set()

    def __getattr__(self, name):
        # Only fitted attributes: any method not defined here must not reach the model.
        if name.endswith("_") and not name.startswith("__"):
            return getattr(self._model, name)
        raise AttributeError(name)

    def __sklearn_tags__(self):
        return get_tags(self._model)

    def predict(self, X):
        self.responses_used.add("predict")
        if self._is_classifier:
            return self._model.classes_.take(np.argmax(self.predict_proba(X), axis=1), axis=0)
        return self._raw[:, 0] if self._raw.shape[1] == 1 else self._raw

    def score(self, X, y, sample_weight=None):
        mixin = ClassifierMixin if self._is_classifier else RegressorMixin
        return mixin.score(self, X, y, sample_weight=sample_weight)


class _PermutedClassifier(PermutedModel):
    def predict_proba(self, X):
        self.responses_used.add("predict_proba")
        return self._raw[:, : self._n_classes]

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


def tree_evaluator(model, X, n_jobs, scorer_uses_score):
    """A :class:`TreeEvaluator` for ``model`` on ``X``, or None when the model is not in
    the tree format or the evaluator cannot reproduce its predictions exactly.

    ``X`` is the data as the user gave it (ndarray or DataFrame), ``scorer_uses_score``
    whether the scorer calls the model's ``score`` method.
    """
    try:
        ensemble = as_ensemble(model)
    except Exception:  # any model sapwood cannot read takes the generic path
        return None
    if not _supported(model, ensemble, scorer_uses_score):
        return None
    try:
        values = np.asarray(X, dtype=ensemble.input_dtype)
    except (TypeError, ValueError):
        return None
    if values.ndim != 2 or values.shape[1] != ensemble.n_features:
        return None
    evaluator = TreeEvaluator(model, ensemble, np.ascontiguousarray(values), n_jobs)
    mismatch = evaluator.check_against_model(X)
    if mismatch is not None:
        warnings.warn(f"permutation_importance: the model's tree-format conversion does not "
                      f"reproduce its predictions ({mismatch}); using the generic evaluator.",
                      stacklevel=3)
        return None
    return evaluator


def _supported(model, ensemble, scorer_uses_score):
    """Whether the evaluator can stand in for ``model`` (other models go generic)."""
    classifier = ensemble.task == "classification"
    if ensemble.link != "identity":
        return False
    if classifier and (ensemble.combine != "mean" or ensemble.trees[0].n_outputs != 1
                       or not hasattr(model, "predict_proba")
                       or not hasattr(model, "classes_")
                       or hasattr(model, "decision_function")):
        return False
    if scorer_uses_score:
        mixin = ClassifierMixin if classifier else RegressorMixin
        return getattr(type(model), "score", None) is mixin.score
    return True


class TreeEvaluator:
    """Precomputed routing of the evaluation rows and the permuted-output generator."""

    def __init__(self, model, ensemble, X, n_jobs):
        self.model = model
        self.ensemble = ensemble
        self.n_jobs = n_jobs
        self.X = X
        self.is_classifier = ensemble.task == "classification"
        self.n_classes = len(model.classes_) if self.is_classifier else 0
        (self.children_left, self.children_right, self.feature, self.threshold,
         self.missing_go_to_left, self.operator, self.roots) = ensemble.packed()
        self.n_trees = ensemble.n_trees
        sizes = np.array([tree.node_count for tree in ensemble.trees], dtype=np.intp)
        self.max_tree_nodes = int(sizes.max())
        self.node_values, self.tree_column, self.init = _node_values(ensemble)
        self.leaves = self._apply(X)
        self.baseline_raw = self._finalize(
            sum_leaf_values(self.leaves, self.node_values, self.tree_column, self.init))

    # -- set-up ----------------------------------------------------------------------
    def _parallel(self, tasks):
        tasks = list(tasks)
        if self.n_jobs == 1 or len(tasks) == 1:
            return [function(*args) for function, args, _ in tasks]
        return Parallel(n_jobs=self.n_jobs, backend="threading")(tasks)

    def _tree_chunks(self):
        n_chunks = 1 if self.n_jobs == 1 else min(self.n_trees, 4 * self.n_jobs)
        bounds = np.linspace(0, self.n_trees, n_chunks + 1).astype(np.intp)
        return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]

    def _apply(self, X):
        routing = (self.children_left, self.children_right, self.feature, self.threshold,
                   self.missing_go_to_left, self.operator)
        parts = self._parallel(delayed(apply_packed)(X, *routing, self.roots[lo:hi])
                               for lo, hi in self._tree_chunks())
        return np.ascontiguousarray(np.concatenate(parts, axis=1).T)

    def _finalize(self, total):
        if self.ensemble.combine == "mean":
            return total / self.n_trees + self.ensemble.base_score[0]
        return total

    def responses(self, raw):
        cls = _PermutedClassifier if self.is_classifier else PermutedModel
        return cls(self.model, raw, self.is_classifier, self.n_classes)

    def check_against_model(self, X):
        """None when the model's own predictions on the first rows equal ours, else why."""
        k = min(_CHECK_ROWS, self.X.shape[0])
        head = X.iloc[:k] if hasattr(X, "iloc") else X[:k]
        ours = self.responses(self.baseline_raw[:k])
        if self.is_classifier:
            theirs, mine = np.asarray(self.model.predict_proba(head)), ours.predict_proba(None)
        else:
            theirs, mine = np.asarray(self.model.predict(head)), ours.predict(None)
        if theirs.shape != mine.shape:
            return f"output shape {theirs.shape} != {mine.shape}"
        # Probabilities must match bit for bit: ranking scorers see ties between rows and
        # predict sees ties between classes. Regression outputs only need to be close.
        same = (np.array_equal(theirs, mine) if self.is_classifier
                else np.allclose(theirs, mine, rtol=1e-12, atol=0.0))
        if not same:
            return f"largest difference {np.max(np.abs(theirs - mine)):.3g}"
        return None

    # -- permuted outputs ---------------------------------------------------------------
    def prepare(self, rows, groups):
        """Restrict to evaluation ``rows`` (None: all) and index the ``groups``' entry nodes
        (a list of column-index arrays)."""
        if rows is None:
            self.leaves_eval, self.X_eval = self.leaves, self.X
            self.baseline_eval = self.baseline_raw
        else:
            self.leaves_eval = np.ascontiguousarray(self.leaves[:, rows])
            self.X_eval = np.ascontiguousarray(self.X[rows])
            self.baseline_eval = self.baseline_raw[rows]
        self.rank, self.span_end = preorder_spans(self.children_left, self.children_right,
                                                  self.roots)
        parts = self._parallel(delayed(sort_by_leaf)(self.leaves_eval[lo:hi], self.rank)
                               for lo, hi in self._tree_chunks())
        self.order = np.concatenate([p[0] for p in parts])
        self.sorted_rank = np.concatenate([p[1] for p in parts])
        self.n_groups = len(groups)
        self.group_ptr = np.concatenate([[0], np.cumsum([len(c) for c in groups])]).astype(np.intp)
        self.group_columns = np.concatenate(groups).astype(np.intp)
        membership = [[] for _ in range(self.X.shape[1])]
        for g, columns in enumerate(groups):
            for column in columns:
                membership[column].append(g)
        feature_group_ptr = np.concatenate(
            [[0], np.cumsum([len(m) for m in membership])]).astype(np.intp)
        feature_groups = np.array([g for m in membership for g in m], dtype=np.intp)
        self.entry_ptr, self.entry_node = entry_nodes(
            self.children_left, self.children_right, self.feature, self.roots,
            feature_group_ptr, feature_groups, self.n_groups)
        per_group = np.diff(self.entry_ptr).reshape(self.n_trees, self.n_groups)
        self.group_used = per_group.sum(axis=0) > 0

    def permuted_outputs(self, sources):
        """Yield ``(group, repeat, raw)`` for every used group and every repeat, where row
        ``i`` reads the group's columns from row ``sources[repeat, i]``; ``raw`` is None
        when no prediction changed."""
        n_repeats, m = sources.shape
        slots = [(g, r) for g in np.flatnonzero(self.group_used) for r in range(n_repeats)]
        per_slot = self.n_trees * m * np.dtype(np.int32).itemsize
        batch_size = max(1, _CHANGE_BUDGET // per_slot)
        new_leaves = np.full((min(batch_size, max(len(slots), 1)), self.n_trees, m), -1,
                             dtype=np.int32)
        sources = np.ascontiguousarray(sources, dtype=np.intp)
        for start in range(0, len(slots), batch_size):
            batch = slots[start:start + batch_size]
            for (g, r), raw in zip(batch, self._evaluate(batch, sources, new_leaves),
                                   strict=True):
                yield g, r, raw

    def _evaluate(self, batch, sources, new_leaves):
        n_slots = len(batch)
        m = sources.shape[1]
        slot_group = np.array([g for g, _ in batch], dtype=np.intp)
        slot_repeat = np.array([r for _, r in batch], dtype=np.intp)
        starts = np.flatnonzero(np.r_[True, slot_group[1:] != slot_group[:-1]])
        batch_groups = slot_group[starts]
        batch_slot_ptr = np.r_[starts, n_slots].astype(np.intp)
        buffer = new_leaves[:n_slots]
        changed = np.zeros((n_slots, m), dtype=np.uint8)
        self._parallel(
            delayed(reroute_permuted)(
                self.X_eval, sources, slot_repeat, batch_groups, batch_slot_ptr,
                self.group_ptr, self.group_columns, self.entry_ptr, self.entry_node,
                self.n_groups, self.children_left, self.children_right, self.feature,
                self.threshold, self.missing_go_to_left, self.operator, self.roots,
                self.rank, self.span_end, self.order, self.sorted_rank, self.leaves_eval,
                lo, hi, self.max_tree_nodes, buffer, changed)
            for lo, hi in self._tree_chunks())
        total = np.empty((n_slots, m, self.init.shape[0]))
        total[...] = self.init
        n_chunks = 1 if self.n_jobs == 1 else 2 * self.n_jobs
        bounds = np.linspace(0, m, n_chunks + 1).astype(np.intp)
        self._parallel(
            delayed(resum_changed)(self.leaves_eval, buffer, changed, self.node_values,
                                   self.tree_column, int(lo), int(hi), total)
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo)
        raw = self._finalize(total)
        unchanged = changed == 0
        raw[unchanged] = np.broadcast_to(self.baseline_eval, raw.shape)[unchanged]
        return [None if same.all() else out for out, same in zip(raw, unchanged, strict=True)]


def _node_values(ensemble):
    """Per node the numbers its tree adds to the raw output, the output column each tree
    starts at, and the initial raw value (``TreeEnsemble.raw_predict``'s arithmetic)."""
    if ensemble.combine == "mean":
        values = [w * tree.value.reshape(tree.node_count, -1)
                  for tree, w in zip(ensemble.trees, ensemble.tree_weights, strict=True)]
        width = values[0].shape[1]
        tree_column = np.zeros(ensemble.n_trees, dtype=np.intp)
        init = np.zeros(width)
    else:
        values = [w * tree.value[:, 0, :1]
                  for tree, w in zip(ensemble.trees, ensemble.tree_weights, strict=True)]
        tree_column = ensemble.tree_output.astype(np.intp)
        n_columns = max(int(tree_column.max()) + 1, ensemble.base_score.shape[0])
        init = np.zeros(n_columns) + ensemble.base_score
    return np.ascontiguousarray(np.concatenate(values)), tree_column, init
