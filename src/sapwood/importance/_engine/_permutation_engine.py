"""The permutation engine: a tree model's outputs on every permuted data set, exactly.

:func:`permutation_importance` (the measure, :mod:`._permutation`) asks
:func:`tree_evaluator` for an evaluator; for every (group, repeat) the evaluator gives
the rows whose output changed and their new sums, bit-identical to predicting the
permuted X with the model itself, without copying X or re-predicting. The scorer stays
scikit-learn's. The path, one way down:

- :mod:`._permutation` -- the measure: scikit-learn's random stream, the scores.
- this module -- which evaluator, if any, can stand in for the model.
- :mod:`._chunked_evaluator` -- :class:`ChunkedTreeEvaluator`, a large scikit-learn
  forest a few trees at a time (a :class:`TreeEvaluator` that never holds every tree).
- :mod:`._tree_evaluator` -- :class:`TreeEvaluator`: routes the rows once, re-routes per
  permutation, re-sums the changed rows; under a memory budget (``max_memory``, parsed
  by :func:`memory_budget`) a window of rows at a time.
- :mod:`._permuted_model` -- the scorer's stand-in: the outputs as the model's
  ``predict`` / ``predict_proba``.
- the kernels: :mod:`sapwood._kernels._tree_index` (which rows a group can move),
  :mod:`sapwood._kernels._permutation` (held-out re-routing),
  :mod:`sapwood._kernels._permuted_traversal` (the one permuted traversal, shared with
  the out-of-bag and conditional measures) and :mod:`sapwood._kernels._permuted_sums`
  (bit-exact sums); for boosted models (summed trees, one output, one-column groups)
  :mod:`sapwood._kernels._boosted_masks` instead: every permuted sum of a row in one
  pass of the row through the trees, each tree's leaf found by ANDing leaf bitmasks, in
  the model's own precision and order (:mod:`sapwood._kernels._boosted_permutation`,
  which re-routes the values instead, for trees masks cannot state: more than 64
  leaves, a feature split both as a number and as a category).
"""

from __future__ import annotations

import numbers
import re
import warnings

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, is_outlier_detector

from ...adapters import as_ensemble
from ._chunked_evaluator import ChunkedTreeEvaluator, forest_part, large_forest
from ._tree_evaluator import TreeEvaluator

__all__ = ["DEFAULT_MAX_MEMORY", "memory_budget", "tree_evaluator"]

# The default budget of the evaluation's working memory for the held-out rows: with the
# trees' own index and the measure's per-row arrays on top, a full-depth 20-tree forest
# on a quarter of a million held-out rows of 20 columns stays under half a gigabyte
# above the model (benchmark B15), and held-out sets of tens of thousands of rows fit it
# in one piece, as fast as with no limit.
DEFAULT_MAX_MEMORY = "128MB"

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$", re.IGNORECASE)


def memory_budget(max_memory, name="max_memory"):
    """``max_memory`` in bytes (an int), or None for no limit.

    Accepts None, a positive integer (bytes) or a string: a positive number and a unit,
    decimal (``B``, ``kB``, ``MB``, ``GB``, ``TB``) or binary (``KiB``, ``MiB``, ``GiB``,
    ``TiB``), case ignored, such as ``"512MB"`` or ``"1.5 GiB"``. Anything else raises
    a ValueError naming ``name``, what it accepts and the value.
    """
    if max_memory is None:
        return None
    if isinstance(max_memory, numbers.Integral) and not isinstance(max_memory, bool):
        if max_memory >= 1:
            return int(max_memory)
    elif isinstance(max_memory, str):
        match = _MEMORY.match(max_memory)
        if match and match.group(2).lower() in _UNITS:
            value = float(match.group(1)) * _UNITS[match.group(2).lower()]
            if value >= 1:
                return int(value)
    raise ValueError(
        f"{name} must be None (no limit), a number of bytes (an int >= 1) or a string "
        f"such as '512MB' or '2GiB' (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB) of at "
        f"least one byte; got {max_memory!r}")


def tree_evaluator(model, X, n_jobs, scorer_uses_score, max_memory=None):
    """A :class:`TreeEvaluator` for ``model`` on ``X``, or None when the model is not in
    the tree format or the evaluator cannot reproduce its predictions exactly.

    ``X`` is the data as the user gave it (ndarray or DataFrame), ``scorer_uses_score``
    whether the scorer calls the model's ``score`` method, ``max_memory`` the budget in
    bytes for the evaluation's working memory on the rows (None: no limit).
    """
    estimators = large_forest(model)
    try:
        if estimators is not None:
            # Only the first tree now; the evaluator reads the others a few at a time.
            ensemble = as_ensemble(forest_part(model, estimators[:1]))
        else:
            ensemble = as_ensemble(model)
        if ensemble.task == "survival":
            # The evaluator permutes the risk score, a forest of scalar leaves.
            estimators = None
            ensemble = as_ensemble(model).risk_model()
    except Exception:  # any model sapwood cannot read takes the generic path
        return None
    if not _supported(model, ensemble, scorer_uses_score):
        return None
    try:
        values = ensemble.encode(X)
    except (TypeError, ValueError):
        return None
    if values.ndim != 2 or values.shape[1] != ensemble.n_features:
        return None
    if estimators is not None:
        evaluator = ChunkedTreeEvaluator(model, estimators, ensemble,
                                         np.ascontiguousarray(values), n_jobs, given=X,
                                         max_memory=max_memory)
    else:
        evaluator = TreeEvaluator(model, ensemble, np.ascontiguousarray(values), n_jobs,
                                  given=X, max_memory=max_memory)
    mismatch = evaluator.mismatch
    if mismatch is not None:
        evaluator.close()
        warnings.warn(f"permutation_importance: the model's tree-format conversion does not "
                      f"reproduce its predictions ({mismatch}); using the generic evaluator.",
                      stacklevel=3)
        return None
    return evaluator


def _supported(model, ensemble, scorer_uses_score):
    """Whether the evaluator can stand in for ``model`` (other models go generic)."""
    classifier = ensemble.task == "classification"
    if ensemble.task == "survival":
        return False  # the risk score's regression form only (``tree_evaluator``)
    if ensemble.link != "identity" or is_outlier_detector(model):
        # An anomaly detector's scorers read decision_function or score_samples, which
        # are not the trees' raw output (an IsolationForest's mean path length).
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
