"""Per-row draws of held-out permutation importance, for its rank intervals.

The repeats of held-out permutation differ only in their shuffles: their spread says
nothing about which rows happened to be held out, and rank intervals resting on them
miss the main source of error (with 20 repeats they held the population ranks in about
half the runs: docs/measures.md, 'Rank intervals'). Where the score is a mean over the
rows of a loss l (accuracy, R², mean squared or absolute error), the importance is a
mean over rows as well::

    importance_j = (1/K) sum_k (1/n) sum_i delta_kji,
    delta_kji    = l(y_i, f(x_i with x_ij replaced by x_sj)) - l(y_i, f(x_i)),  s = sources[k, i]

Each term involves two rows: row i, which receives a value, and row s, which gives it.
The first-order (Hajek) projection of the estimate on the rows gives each row both
roles, so row i's draw is::

    D_ji = (1/K) sum_k (delta_kji + delta_kjr) - importance_j,   r: the row given i's value

with mean_i D_ji = importance_j and sd_i(D_ji) / sqrt(n) the standard error over new
held-out rows and new shuffles together (the receiving role alone would miss the
giving one, about half the variance for a feature with a monotone effect). The draws
are paired across features (every feature sees the same shuffles), as the rank
intervals need.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils import get_tags

__all__ = ["Recorder", "RowDraws", "row_loss"]

# Named scores that are the mean over rows of a loss (with the sign that makes higher
# better), and the loss.
_NAMED = {
    "accuracy": "error",
    "r2": "r2",
    "neg_mean_squared_error": "squared",
    "neg_mean_absolute_error": "absolute",
}


def row_loss(model, scoring, y, is_classifier):
    """The per-row loss whose mean change is the drop in the score (a function of the
    predictions and the rows' labels), or None where the score is not such a mean."""
    kind = _NAMED.get(scoring) if isinstance(scoring, str) else None
    if scoring is None:
        score = getattr(type(model), "score", None)
        kind = ("error" if score is ClassifierMixin.score and is_classifier else
                "r2" if score is RegressorMixin.score and not is_classifier else None)
    if kind is None or kind == "error" and not is_classifier \
            or kind != "error" and is_classifier:
        return None
    y = np.asarray(y)
    if y.ndim != 1 or y.dtype == object and kind != "error":
        return None
    if kind == "error":
        return lambda predicted, truth: np.asarray(predicted != truth, dtype=np.float64)
    if kind == "absolute":
        return lambda predicted, truth: np.abs(truth - predicted)
    scale = 1.0
    if kind == "r2":
        # R^2 = 1 - SSE / SST: its drop is the rise in SSE over SST, a mean over rows of
        # n (y - f)^2 / SST. A constant target has no R^2 to decompose.
        total = float(np.sum((y - y.mean()) ** 2))
        if not total > 0:
            return None
        scale = y.shape[0] / total
    return lambda predicted, truth: scale * (truth - predicted) ** 2


class RowDraws:
    """Accumulates the per-row draws D (n_groups, n_rows) from the rows each shuffle
    changed."""

    def __init__(self, loss, predicted, y, sources, n_groups):
        self.loss = loss
        self.y = np.asarray(y)
        self.unchanged = loss(np.asarray(predicted), self.y)
        self.sources = sources
        self.sums = np.zeros((n_groups, self.y.shape[0]))

    def add(self, g, k, rows, predicted):
        """Shuffle k of group g changed the predictions of ``rows`` to ``predicted``."""
        delta = self.loss(np.asarray(predicted), self.y[rows]) - self.unchanged[rows]
        self.sums[g, rows] += delta  # as receivers
        self.sums[g, self.sources[k, rows]] += delta  # as givers (sources is a permutation)

    def draws(self):
        per_row = self.sums / self.sources.shape[0]
        # Every term was counted twice, so the importance is half the mean.
        return per_row - per_row.mean(axis=1, keepdims=True) / 2


class Recorder:
    """The model inside a scorer, keeping its last predictions: the generic evaluator's
    per-row draws come from the predictions its scores already made, not from extra
    calls. Everything else is the model's: its fitted attributes, tags and ``score``
    (bound to the recorder, so that the score's ``predict`` is recorded)."""

    def __init__(self, model):
        self._model = model
        self.predicted = None

    def predict(self, X):
        self.predicted = self._model.predict(X)
        return self.predicted

    def score(self, X, y, sample_weight=None):
        return type(self._model).score(self, X, y, sample_weight=sample_weight)

    def __getattr__(self, name):
        return getattr(self._model, name)

    def __sklearn_tags__(self):
        return get_tags(self._model)
