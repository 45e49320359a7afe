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

Sample weights: a weighted score is sum_i w_i l_i / sum_i w_i, the same mean with each
row's loss multiplied by n w_i / sum_i w_i (R²'s total sum of squares weighted too).

A row subset (``max_samples = m < n``): the permuted scores are on the m rows, the
baseline on all n, so importance_j = (baseline - score on the m rows) + (mean over the
m rows of the loss changes). The first term is the same for every feature: it is added
to every draw (the rank intervals read only differences), and the draws are the m
rows'.

ROC AUC (binary; ``scoring="roc_auc"`` of a classifier, or the ``score`` of
:class:`AucScoreMixin`; unweighted) is no mean over rows but a
two-sample U-statistic, whose first-order projection on the rows is DeLong's: a
positive row i contributes (V_i - AUC) / pi, V_i its share of negatives scored below it
(ties one half) and pi the share of positive rows; a negative row likewise with the
positives above it and 1 - pi. The loss change of a row is then::

    delta_kji = AUC + IF_i(baseline scores) - AUC_kj - IF_i(scores with x_j shuffled)

(its mean over rows is the drop AUC - AUC_kj, the influences having mean zero), counted
at the row that receives the value and the row that gives it as above.

The Brier score and log loss of a classifier (``neg_brier_score``, ``neg_log_loss``) are
means over rows of a loss of the predicted probabilities: sum_c (p_ic - [y_i = c])^2
(halved for two classes, as scikit-learn's binary Brier score is (p_i - [y_i = 1])^2),
and -log p_{i, y_i} with p clipped to [eps, 1 - eps] as ``log_loss`` clips it.
"""

from __future__ import annotations

from functools import wraps

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, is_outlier_detector
from sklearn.metrics import roc_auc_score
from sklearn.utils import get_tags

from ._survival_scores import survival_scorer

__all__ = ["AucLoss", "AucScoreMixin", "ProbabilityLoss", "Recorder", "RowDraws",
           "interval_notes", "read_response", "row_loss"]

# Named scores that are the mean over rows of a loss (with the sign that makes higher
# better), and the loss.
_NAMED = {
    "accuracy": "error",
    "r2": "r2",
    "neg_mean_squared_error": "squared",
    "neg_mean_absolute_error": "absolute",
}


def interval_notes(n_repeats, rows):
    """What the result's intervals cover (``extra["intervals"]``), ``rows``: whether the
    rank intervals rest on per-row draws."""
    shuffles = (f"the spread of the {n_repeats} shuffles only, not the choice of held-out "
                "rows")
    return {"ci": shuffles,
            "rank": "the held-out rows and the shuffles (one draw per row)" if rows else
            shuffles + " (this score has no per-row draws)"}


class AucScoreMixin:
    """A model whose ``score`` is binary ROC AUC of its ``decision_function`` against
    y's two labels, the greater one positive: scikit-learn's ``roc_auc`` scorer on an
    anomaly detector, whose ``decision_function`` grows with normality (1 inliers, -1
    outliers). Permutation importance with ``scoring=None`` recognises it, as it does
    scikit-learn's ``ClassifierMixin.score``, and gives it DeLong's per-row draws."""

    def score(self, X, y, sample_weight=None):
        return float(roc_auc_score(y, self.decision_function(X),
                                   sample_weight=sample_weight))


def row_weights(y, sample_weight):
    """Each row's share of the weighted mean, times n: 1.0 without weights, None when
    the weights do not fit y or sum to nothing."""
    if sample_weight is None:
        return 1.0
    sample_weight = np.asarray(sample_weight, dtype=np.float64)
    if sample_weight.shape != np.shape(y) or not sample_weight.sum() > 0:
        return None
    return sample_weight * (sample_weight.shape[0] / sample_weight.sum())


def row_loss(model, scoring, y, is_classifier, sample_weight=None):
    """The per-row loss whose mean change is the drop in the score, as a function
    ``loss(predicted, truth, index)`` of the predictions and labels of the rows
    ``index`` (of the rows y lists; :class:`ProbabilityLoss` for the Brier score and log
    loss, on the probabilities), or :class:`AucLoss` for ``scoring="roc_auc"`` and
    :class:`AucScoreMixin`'s score, or None where the score is none of these."""
    survival = survival_scorer(scoring)
    if survival is not None:
        return survival.row_loss(model, y, sample_weight)
    score = getattr(type(model), "score", None)
    if scoring == "roc_auc" or scoring is None and score is AucScoreMixin.score:
        return AucLoss.make(model, y, is_classifier, sample_weight)
    if scoring in ProbabilityLoss.KINDS:
        return ProbabilityLoss.make(model, scoring, y, is_classifier, sample_weight)
    kind = _NAMED.get(scoring) if isinstance(scoring, str) else None
    if scoring is None:
        kind = ("error" if score is ClassifierMixin.score and is_classifier else
                "r2" if score is RegressorMixin.score and not is_classifier else None)
    if kind is None or kind == "error" and not is_classifier \
            or kind != "error" and is_classifier:
        return None
    y = np.asarray(y)
    if y.ndim != 1 or y.dtype == object and kind != "error":
        return None
    weight = row_weights(y, sample_weight)
    if weight is None:
        return None
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)

    def at(index):
        return weight if np.ndim(weight) == 0 else weight[index]

    if kind == "error":
        return lambda predicted, truth, index: at(index) * np.asarray(predicted != truth,
                                                                      dtype=np.float64)
    if kind == "absolute":
        return lambda predicted, truth, index: at(index) * np.abs(truth - predicted)
    scale = 1.0
    if kind == "r2":
        # R^2 = 1 - SSE / SST: its drop is the rise in SSE over SST, a mean over rows of
        # n (y - f)^2 / SST (weighted: sum w (y - f)^2 / sum w (y - mean_w y)^2). A
        # constant target has no R^2 to decompose.
        if sample_weight is None:
            total, mass = float(np.sum((y - y.mean()) ** 2)), y.shape[0]
        else:
            mass = float(np.sum(sample_weight))
            total = float(np.sum(sample_weight * (y - np.average(y, weights=sample_weight))
                                 ** 2))
        if not total > 0:
            return None
        scale = mass / total
    return lambda predicted, truth, index: at(index) * (scale * (truth - predicted) ** 2)


class AucLoss:
    """Binary ROC AUC's per-row influence (module docstring), on the score of the
    positive class (``predict_proba``'s column of ``classes_[1]``, or
    ``decision_function``, whichever the scorer read; for :class:`AucScoreMixin` and
    scikit-learn's anomaly detectors, the ``decision_function`` with the greater of y's
    two labels positive, as ``roc_auc_score`` takes them)."""

    def __init__(self, positive):
        self.positive = positive
        self.pi = positive.mean()

    @classmethod
    def make(cls, model, y, is_classifier, sample_weight):
        y = np.asarray(y)
        if sample_weight is not None or y.ndim != 1:
            return None
        if not is_classifier and (isinstance(model, AucScoreMixin)
                                  or is_outlier_detector(model)):
            # scikit-learn's roc_auc scorer reads an anomaly detector's decision_function
            # against y's two labels, the greater positive, as AucScoreMixin does.
            classes = np.unique(y)
        elif is_classifier:
            classes = getattr(model, "classes_", None)
        else:
            return None
        if classes is None or len(classes) != 2:
            return None
        positive = np.asarray(y == classes[1], dtype=bool)
        if positive.all() or not positive.any():
            return None
        return cls(positive)

    def influence(self, score):
        """AUC of ``score`` and every row's influence on it."""
        positive = self.positive
        pos, neg = score[positive], score[~positive]
        below_neg, above_neg = np.sort(neg), np.sort(pos)
        v = np.empty(score.shape[0])
        # Positive rows: the share of negatives below (ties 1/2); negatives: of
        # positives above.
        v[positive] = (np.searchsorted(below_neg, pos, side="left")
                       + np.searchsorted(below_neg, pos, side="right")) / (2 * neg.shape[0])
        v[~positive] = (2 * pos.shape[0] - np.searchsorted(above_neg, neg, side="left")
                        - np.searchsorted(above_neg, neg, side="right")) / (2 * pos.shape[0])
        auc = v[positive].mean()
        return auc, np.where(positive, (v - auc) / self.pi, (v - auc) / (1 - self.pi))

    def read(self, outputs):
        """The positive class's score from a model's recorded outputs (None if the
        scorer read neither)."""
        if "decision_function" in outputs:
            return np.asarray(outputs["decision_function"], dtype=np.float64)
        if "predict_proba" in outputs:
            return np.asarray(outputs["predict_proba"], dtype=np.float64)[:, 1]
        return None


class ProbabilityLoss:
    """A classifier's per-row Brier score or log loss (module docstring), on its
    ``predict_proba`` rows; ``column[i]``: the column of row i's label."""

    KINDS = ("neg_brier_score", "neg_log_loss")

    def __init__(self, kind, column, weight):
        self.kind = kind
        self.column = column
        self.weight = weight

    @classmethod
    def make(cls, model, kind, y, is_classifier, sample_weight):
        y = np.asarray(y)
        classes = getattr(model, "classes_", None)
        if not is_classifier or classes is None or y.ndim != 1 or len(classes) < 2:
            return None
        where = {label: position for position, label in enumerate(np.asarray(classes).tolist())}
        try:
            column = np.array([where[label] for label in y.tolist()], dtype=np.intp)
        except (KeyError, TypeError):
            return None  # a label the model does not know: the scorer decides
        weight = row_weights(y, sample_weight)
        return None if weight is None else cls(kind, column, weight)

    def read(self, outputs):
        """The probabilities from a model's recorded outputs (None if not recorded)."""
        if "predict_proba" not in outputs:
            return None
        return np.asarray(outputs["predict_proba"], dtype=np.float64)

    def __call__(self, proba, truth, index):
        proba = np.asarray(proba, dtype=np.float64)
        column = self.column[index]
        weight = self.weight if np.ndim(self.weight) == 0 else self.weight[index]
        if self.kind == "neg_log_loss":
            eps = np.finfo(proba.dtype).eps
            chosen = np.clip(proba[np.arange(proba.shape[0]), column], eps, 1 - eps)
            return weight * -np.log(chosen)
        squared = np.square(proba).sum(axis=1) - 2 * proba[np.arange(proba.shape[0]), column] + 1
        return weight * (squared / 2 if proba.shape[1] == 2 else squared)


class RowDraws:
    """Accumulates the per-row draws D (n_groups, n_rows) from the rows each shuffle
    changed."""

    def __init__(self, loss, predicted, y, sources, n_groups, offset=False):
        self.loss = loss
        # Rows a subset of those of the baseline: the draws take the common term.
        self.offset = offset
        self.y = np.asarray(y)
        # A score that is no mean over rows gives each row its influence (ROC AUC,
        # the concordance index).
        self.auc = hasattr(loss, "influence")
        self.every_row = np.arange(self.y.shape[0])
        if self.auc:
            self.score = predicted
            self.unchanged = loss.influence(predicted)
        else:
            self.unchanged = loss(np.asarray(predicted), self.y, self.every_row)
        self.sources = sources
        self.sums = np.zeros((n_groups, self.y.shape[0]))

    def add(self, g, k, rows, predicted):
        """Shuffle k of group g changed the predictions of ``rows`` to ``predicted``."""
        if self.auc:
            score = self.score.copy()
            score[rows] = predicted
            auc, influence = self.loss.influence(score)
            base_auc, base_influence = self.unchanged
            delta = base_auc + base_influence - auc - influence  # on every row
            rows = self.every_row
        else:
            delta = self.loss(np.asarray(predicted), self.y[rows], rows) - self.unchanged[rows]
        # Through the group's row (a view): one-axis fancy indexing, twice as fast as
        # indexing (g, rows), the same additions.
        sums = self.sums[g]
        sums[rows] += delta  # as receivers
        sums[self.sources[k, rows]] += delta  # as givers (sources is a permutation)

    def draws(self, importances):
        """The draws, whose means are ``importances`` (n_groups,)."""
        per_row = self.sums / self.sources.shape[0]
        # Every term was counted twice, so the importance is half the mean.
        draws = per_row - per_row.mean(axis=1, keepdims=True) / 2
        if self.offset:
            # baseline - (unpermuted score on the subset), the same for every group.
            draws += np.mean(importances - draws.mean(axis=1))
        return draws


def read_response(loss, model):
    """What ``loss`` reads of a model's outputs: the predictions, or the positive class's
    score; from a :class:`Recorder`'s recorded outputs, or by asking a stand-in model
    whose methods ignore X (the tree evaluator's)."""
    reads = hasattr(loss, "read")  # else a plain loss of the predictions
    if isinstance(model, Recorder):
        outputs = model.outputs
    else:
        method = getattr(loss, "method", "predict_proba" if reads else "predict")
        outputs = {method: getattr(model, method)(None)}
    return loss.read(outputs) if reads else outputs.get("predict")


class Recorder:
    """The model inside a scorer, keeping its last outputs (``outputs``, by method): the
    generic evaluator's per-row draws come from the outputs its scores already made, not
    from extra calls. Everything else is the model's: its fitted attributes, tags, its
    other methods and ``score`` (bound to the recorder, so that the score's
    ``predict`` is recorded)."""

    _RECORDED = ("predict_proba", "decision_function", "predict_survival_function")

    def __init__(self, model):
        self._model = model
        self.outputs = {}

    @property
    def predicted(self):
        return self.outputs.get("predict")

    def predict(self, X):
        self.outputs["predict"] = self._model.predict(X)
        return self.outputs["predict"]

    def score(self, X, y, sample_weight=None):
        return type(self._model).score(self, X, y, sample_weight=sample_weight)

    def __getattr__(self, name):
        method = getattr(self._model, name)
        if name not in self._RECORDED:
            return method

        @wraps(method)  # scorers read the method's name to pick its output
        def recorded(X, *args, **kwargs):
            self.outputs[name] = method(X, *args, **kwargs)
            return self.outputs[name]
        return recorded

    def __sklearn_tags__(self):
        return get_tags(self._model)
