"""Permutation importance of a Dask DataFrame or array, block by block on Dask's workers.

The measure is :func:`~sapwood.importance.permutation_importance`'s; this module gives
its baseline and permuted scores when the rows need not fit in memory. Two things make
that possible.

**Scores that add up over blocks.** Each scorer below is a function of sums over the
rows (confusion counts, sums of weighted losses), so every block reduces to a short
vector of sums on its worker and only those vectors travel::

    accuracy               sum w [y = f(x)] / sum w
    balanced_accuracy      mean over classes c with sum_{y=c} w > 0 of
                           sum_{y=c} w [f(x) = c] / sum_{y=c} w
    r2                     1 - sum w (y - f(x))^2 / sum w (y - ybar)^2
    neg_mean_squared_error, neg_root_mean_squared_error, neg_mean_absolute_error
    neg_brier_score        -sum w loss(p(x), y) / sum w, with the per-row Brier score
    neg_log_loss           and log loss of the probabilities p(x) (``predict_proba``)
                           that the per-row draws use (:class:`ProbabilityLoss`)

``scoring=None`` is accuracy for a model whose ``score`` is scikit-learn's classifier
score and R^2 for scikit-learn's regressor score. Other scorers (callables, AUC,
anything ranking or quantile based) do not decompose and are refused with the list
above. Counts are exact in float64 (below 2**53 rows), so the unweighted accuracy and
balanced accuracy, and the default classifier score, equal the in-memory scores bit for
bit; the scores built from sums of floats (R^2, the errors, the Brier score and log
loss, any weighted score) equal them up to the order of a float sum (relative 1e-12 in
the tests).

**The in-memory permutation, gathered across blocks.** The permutations are
scikit-learn's (the stream in :mod:`._permutation`: one ``RandomState(seed)``, each
repeat shuffles ``arange(n)`` in place and composes it with the previous ones), so the
permuted table is the in-memory one row for row. The row permutation of a repeat is one
array of n integers (4 bytes a row below 2**31 rows; never the table), advanced from the
previous repeat's by one task on a worker and kept there (``dask.persist``) while the
groups use it. A permuted column is realised by index-based take across partitions
(Dask's ``x[index]`` with a Dask integer index): output block b of the column gathers,
from every input block, the values its rows point to. Each block of the table is then
scored with its permuted columns in place. A worker holds a few blocks of the table, one
column being permuted and the permutation, so memory grows with the rows as 8 bytes per
row per permuted column plus 8 to 16 for the permutation (the worker advancing it holds
two repeats), not with the table's width.

``max_samples`` below 1 draws a row subset that reorders the table; it is refused.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin, RegressorMixin

from ._dask import dask_rows
from ._permutation_rows import ProbabilityLoss

__all__ = ["EXACT_SCORERS", "PROBABILITY_SCORERS", "dask_scores"]


# -- scorers that decompose over blocks -------------------------------------------

def _sums(values, weight):
    """sum(values) and the weight total, unweighted or weighted."""
    if weight is None:
        return [float(np.sum(values)), float(values.shape[0])]
    return [float(np.sum(values * weight)), float(np.sum(weight))]


def _accuracy_stats(y, predicted, weight, context):
    # A sum of 0/1 values in float64 is the exact count of correct rows.
    return _sums(np.asarray(y == predicted, dtype=np.float64), weight)


def _accuracy(totals, context):
    return float(totals[0] / totals[1])


def _confusion_stats(y, predicted, weight, context):
    classes = context["classes"]
    y_code = _label_codes(classes, y, "balanced_accuracy")
    p_code, _ = _codes(classes, predicted)
    w = np.ones(y_code.shape[0]) if weight is None else np.asarray(weight, np.float64)
    n = classes.shape[0]
    hits = np.bincount(y_code, weights=w * (y_code == p_code), minlength=n)
    support = np.bincount(y_code, weights=w, minlength=n)
    return np.concatenate([hits, support])


def _codes(classes, labels):
    labels = np.asarray(labels)
    code = np.clip(np.searchsorted(classes, labels), 0, classes.shape[0] - 1)
    return code, classes[code] == labels


def _label_codes(classes, y, scorer):
    """Each label's position among the model's (sorted) classes; a label the model does
    not know is an error, as the scorer in memory would make it."""
    code, known = _codes(classes, y)
    if not known.all():
        raise ValueError(f"{scorer} out of core reads the model's classes {list(classes)}; "
                         f"y holds other labels: "
                         f"{sorted(set(np.asarray(y)[~known].tolist()))[:5]}")
    return code


def _balanced_accuracy(totals, context):
    hits, support = np.split(np.asarray(totals), 2)
    present = support > 0  # scikit-learn drops classes absent from y (and warns)
    return float(np.mean(hits[present] / support[present]))


def _squared_stats(y, predicted, weight, context):
    y = np.asarray(y, dtype=np.float64)
    residual = y - np.asarray(predicted, dtype=np.float64)
    total = _sums(residual**2, weight)
    spread = _sums((y - context["y_mean"]) ** 2, weight)
    return total + spread[:1]


def _r2(totals, context):
    residual, _, spread = totals
    if spread != 0:
        return float(1 - residual / spread)
    return 1.0 if residual == 0 else 0.0  # scikit-learn's force_finite values


def _absolute_stats(y, predicted, weight, context):
    residual = np.asarray(y, dtype=np.float64) - np.asarray(predicted, dtype=np.float64)
    return _sums(np.abs(residual), weight)


def _probability_stats(kind):
    """The weighted sum of a classifier's per-row Brier score or log loss on a block."""
    def stats(y, proba, weight, context):
        column = _label_codes(context["classes"], y, kind)
        losses = ProbabilityLoss(kind, column, 1.0)(proba, None, np.arange(column.shape[0]))
        return _sums(losses, weight)
    return stats


def _mean_loss(totals, context):
    return -float(totals[0] / totals[1])


EXACT_SCORERS = {
    "accuracy": (_accuracy_stats, _accuracy),
    "balanced_accuracy": (_confusion_stats, _balanced_accuracy),
    "r2": (_squared_stats, _r2),
    "neg_mean_squared_error": (_squared_stats, lambda t, c: -float(t[0] / t[1])),
    "neg_root_mean_squared_error": (_squared_stats,
                                    lambda t, c: -float(np.sqrt(t[0] / t[1]))),
    "neg_mean_absolute_error": (_absolute_stats, lambda t, c: -float(t[0] / t[1])),
    "neg_brier_score": (_probability_stats("neg_brier_score"), _mean_loss),
    "neg_log_loss": (_probability_stats("neg_log_loss"), _mean_loss),
}
# The scorers that read the model's predict_proba; the others read its predict.
PROBABILITY_SCORERS = frozenset(ProbabilityLoss.KINDS)


def scorer_names(model, scoring):
    """The decomposable scorers ``scoring`` names (a list), or a ValueError."""
    allowed = sorted(EXACT_SCORERS)
    if scoring is None:
        score = getattr(type(model), "score", None)
        if score is ClassifierMixin.score:
            return ["accuracy"]
        if score is RegressorMixin.score:
            return ["r2"]
        raise ValueError(f"scoring=None uses the model's own score, which is not "
                         f"scikit-learn's accuracy or R^2 here, so it cannot be summed "
                         f"over Dask blocks; pass scoring= one of {allowed}")
    names = [scoring] if isinstance(scoring, str) else scoring
    if not isinstance(names, (list, tuple)) or not all(isinstance(s, str) for s in names):
        raise ValueError(f"scoring for Dask input must be None, a scorer name or a list "
                         f"of names out of {allowed} (scores that add up over blocks); "
                         f"got {scoring!r}")
    refused = [s for s in names if s not in EXACT_SCORERS]
    if refused:
        raise ValueError(f"scoring {refused} does not decompose over Dask blocks; the "
                         f"scorers computed out of core are {allowed}")
    return list(names)


# -- blocks ------------------------------------------------------------------------

def as_blocks(X, y, sample_weight):
    """X as a 2-D Dask array of whole rows, with y and the weights in the same blocks."""
    # Dask is optional and heavy: imported only for Dask input.
    import dask.array as da

    blocks = dask_rows(X)
    rows = blocks.chunks[0]

    def aligned(values, name):
        if values is None:
            return None
        if hasattr(values, "to_dask_array"):
            with warnings.catch_warnings():
                # Text labels (Dask stores them as pandas' string dtype) become objects,
                # as in memory; Dask warns about the conversion it is asked for.
                warnings.filterwarnings("ignore", "Dask currently has limited support for "
                                        "converting pandas extension dtypes")
                values = values.to_dask_array(lengths=True)
        elif not isinstance(values, da.Array):
            values = da.from_array(np.asarray(values), chunks=(rows,))
        if values.ndim != 1 or values.shape[0] != blocks.shape[0]:
            raise ValueError(f"{name} must hold one value per row of X "
                             f"({blocks.shape[0]}); got shape {values.shape}")
        return values.rechunk((rows,))

    if y is None:
        raise ValueError("y is required for permutation importance of Dask input")
    return blocks, aligned(y, "y"), aligned(sample_weight, "sample_weight")


def _block_stats(model, rows, permuted, columns, y, weight, names, stats, context):
    """The scorers' sums on one block, with ``columns`` replaced by ``permuted``;
    ``stats`` pairs each scorer's sums with the output it reads."""
    if permuted is not None:
        rows = rows.copy()
        rows[:, columns] = permuted
    if names is not None:  # the model saw a DataFrame in memory; give it one
        rows = pd.DataFrame(rows, columns=names)
    outputs = {method: getattr(model, method)(rows) for method in {m for _, m in stats}}
    weight = None if weight is None else np.asarray(weight, dtype=np.float64)
    return [np.asarray(block_stats(y, outputs[method], weight, context), np.float64)
            for block_stats, method in stats]


# -- the permutation stream, one repeat at a time -----------------------------------

def _first_state(seed, n_rows):
    # 4-byte row numbers where they suffice: half the memory, and the same shuffles, as
    # RandomState.shuffle draws the same numbers for any item size.
    dtype = _row_dtype(n_rows)
    rng = np.random.RandomState(seed)
    return rng.get_state(), np.arange(n_rows, dtype=dtype), np.arange(n_rows, dtype=dtype)


def _row_dtype(n_rows):
    return np.int32 if n_rows <= np.iinfo(np.int32).max else np.int64


def _next_state(state):
    """The stream of ``_permutation._random_stream`` advanced by one repeat: shuffle
    ``arange(n)`` in place and compose it with the permutations so far."""
    rng_state, shuffling, current = state
    rng = np.random.RandomState()
    rng.set_state(rng_state)
    shuffling = shuffling.copy()  # a task must not change its input
    rng.shuffle(shuffling)
    return rng.get_state(), shuffling, current[shuffling]


def _sources(state, start, stop):
    return state[2][start:stop]


# -- the scores --------------------------------------------------------------------

def dask_scores(model, X, y, sample_weight, scoring, seed, n_repeats, columns, steps):
    """Baseline and permuted scores of the permuted ``columns`` (one array of positions
    per group), as ``_permutation._generic_scores`` gives them: ``(baseline,
    scores[group][repeat])``, floats, or dicts of floats for a list of scorers."""
    import dask
    import dask.array as da

    names = scorer_names(model, scoring)
    blocks, y_blocks, w_blocks = as_blocks(X, y, sample_weight)
    n_rows = int(blocks.shape[0])
    # A model fitted on a DataFrame checks the column names: give it its own.
    feature_names = None
    if hasattr(X, "columns") and getattr(model, "feature_names_in_", None) is not None:
        feature_names = list(X.columns)
    scorers = [EXACT_SCORERS[name] for name in names]
    context = {"classes": None, "y_mean": 0.0}
    if any(stats is _confusion_stats for stats, _ in scorers) or \
            PROBABILITY_SCORERS.intersection(names):
        context["classes"] = np.asarray(model.classes_)
    if any(stats is _squared_stats for stats, _ in scorers):
        total, weight = da.compute(*_y_sums(y_blocks, w_blocks))
        context["y_mean"] = float(total / weight)
    # The model and constants once in the cluster, referenced by every task.
    (model_ref,) = dask.persist(dask.delayed(model))
    x_parts = blocks.to_delayed().ravel()
    y_parts = y_blocks.to_delayed().ravel()
    w_parts = ([None] * len(x_parts) if w_blocks is None
               else list(w_blocks.to_delayed().ravel()))
    stats = dask.delayed(_block_stats, pure=True)
    block_stats = [(block, "predict_proba" if name in PROBABILITY_SCORERS else "predict")
                   for name, (block, _) in zip(names, scorers, strict=True)]

    def score(permuted_parts, group):
        parts = [stats(model_ref, x, p, group, yb, wb, feature_names, block_stats, context)
                 for x, p, yb, wb in zip(x_parts, permuted_parts, y_parts, w_parts,
                                         strict=True)]
        per_block = dask.compute(*parts)
        values = {name: finish(np.sum([sums[i] for sums in per_block], axis=0), context)
                  for i, (name, (_, finish)) in enumerate(zip(names, scorers, strict=True))}
        return values[names[0]] if isinstance(scoring, str) or scoring is None else values

    baseline = score([None] * len(x_parts), None)
    bounds = np.cumsum((0, *blocks.chunks[0]))
    state = dask.delayed(_first_state, pure=True)(seed, n_rows)
    scores = [[None] * n_repeats for _ in columns]
    for k in range(n_repeats):
        (state,) = dask.persist(dask.delayed(_next_state, pure=True)(state))
        sources = da.concatenate([
            da.from_delayed(dask.delayed(_sources, pure=True)(state, a, b),
                            shape=(b - a,), dtype=_row_dtype(n_rows))
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
        for g, group in enumerate(columns):
            # The permuted columns first (a take across the partitions), kept on the
            # workers; then the table's blocks, each scored and let go. In one graph the
            # take would keep every block alive until its own score ran.
            with warnings.catch_warnings():
                # The take's pieces are input block x output block by design; Dask warns
                # that they multiply the chunks.
                warnings.simplefilter("ignore", da.PerformanceWarning)
                taken = blocks[:, group][sources]
            (permuted,) = dask.persist(taken)
            scores[g][k] = score(list(permuted.to_delayed().ravel()), group)
            del permuted
            steps.advance()
    return baseline, scores


def _y_sums(y_blocks, w_blocks):
    y = y_blocks.astype(np.float64)
    if w_blocks is None:
        return y.sum(), y.shape[0]
    w = w_blocks.astype(np.float64)
    return (y * w).sum(), w.sum()
