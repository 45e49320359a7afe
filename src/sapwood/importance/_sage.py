"""SAGE: Shapley additive global importance, by permutation sampling (Covert et al.).

The game: a coalition S of features is worth the drop in expected loss when the model
knows the features in S and not the others, which are drawn from their marginal
distribution (a background sample B of rows: "marginal imputation")::

    f_S(x) = (1/|B|) sum_{b in B} f(x_S, b_{not S})          v(S) = E[L(y, f_{})] - E[L(y, f_S(x))]

and SAGE_j is feature j's Shapley value in it. The permutation estimator draws a row
(x, y) of the data (with replacement) and an order pi of the features, adds the
features one by one in that order and credits each with the fall in loss it brings::

    phi_pi(k) = L(y, f_{S_k-1}(x)) - L(y, f_{S_k}(x)),   S_k = {pi(1), ..., pi(k)}

SAGE_j is the mean of these draws, with standard error sd_j / sqrt(N). Rows are drawn
in batches, and sampling stops after the batch at which
``max_j se_j / (max_j SAGE_j - min_j SAGE_j) < thresh`` (the sage package's criterion),
or after ``n_permutations`` draws. The random stream is the sage package's (numpy's
``default_rng``: a batch of rows by ``choice``, then one shuffled order per row), so
the same seed and background give its numbers.

The imputed outputs f(x_S, b_{not S}) of every coalition along a row's order come from
walking the trees (:mod:`sapwood._kernels._sage`): a walk follows the row where the
order's first k features decide and the background row elsewhere, carrying the interval
of steps k that reach each node, so one walk per tree finds all p + 1 leaves. When the
outputs are linear in the trees' sums (a forest's mean, a boosted model's identity
link, float64 sums), the background rows walk together as a set of bits and a leaf adds
its value times their number; otherwise each background row walks and the model's link
is applied to each hybrid row's sum, in the model's own order and precision. The walks
are checked against the model's own outputs on the first rows of X; a model they do not
reproduce predicts the stacked hybrid rows instead (as the sage package's
``MarginalImputer`` does).

I. Covert, S. Lundberg, S.-I. Lee, "Understanding Global Feature Contributions With
Additive Importance Measures", NeurIPS 2020. doi:10.48550/arXiv.2004.00668
"""

from __future__ import annotations

import numbers
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import effective_n_jobs
from sklearn.utils import check_array

from .. import _prediction
from .._kernels._sage import (
    background_sets,
    coalition_sums,
    coalition_totals,
    node_directions,
)
from .._sklearn_compat import Interval, StrOptions, validate_params
from ..adapters import as_ensemble
from ..learners._inputs import check_rows
from ._engine._names import feature_names_of
from ._engine._result import ImportanceResult
from ._engine._survival import refuse_survival

__all__ = ["sage"]

LOSSES = ("squared_error", "log_loss")
# The sage package clips probabilities here before the logarithm.
PROBABILITY_FLOOR = 1e-12
# The smallest value range the criterion divides by (as the sage package).
MIN_GAP = 1e-12


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "y": ["array-like"],
        "background": ["array-like", None],
        "n_background": [Interval(Integral, 1, None, closed="left")],
        "loss": [StrOptions(set(LOSSES)), None],
        "thresh": [Interval(Real, 0, 1, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_permutations": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "feature_names": [list, None],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def sage(model, X, y, *, background=None, n_background=128, loss=None, thresh=0.025,
         batch_size=512, n_permutations=None, random_state=None,
         feature_names=None, n_jobs=None) -> ImportanceResult:
    """SAGE values of a tree model's features, by permutation sampling until converged.

    Definition: docs/measures.md, section 'SAGE'.

    Parameters
    ----------
    model : fitted tree model in any format sapwood reads (its own ``predict`` /
        ``predict_proba`` are used when it has them)
    X, y : rows to explain (held-out rows: SAGE is the loss the features save there)
    background : array-like, optional
        Rows whose values stand in for the features left out (marginal imputation).
        Default: ``n_background`` rows of X drawn without replacement.
    n_background : int, default 128
    loss : {"squared_error", "log_loss"}, optional
        Default: squared error for regressions, log loss (probabilities clipped at
        1e-12) for classifiers.
    thresh : float in (0, 1), default 0.025
        Stop once the largest standard error is below ``thresh`` times the range of
        the values (the sage package's default).
    batch_size : int, default 512
        Rows (each with its own feature order) drawn between convergence checks.
    n_permutations : int, optional
        Stop after this many draws instead (at the end of a batch).
    random_state : int, Generator or None
        ``numpy.random.default_rng(random_state)`` draws the background, rows and
        orders.
    feature_names : list of str, optional
    n_jobs : int, optional
        Threads for the tree walks (scikit-learn's convention: None is an enclosing
        ``joblib.parallel_config``'s, else 1; -1 every core). The numbers do not
        depend on it.

    Returns
    -------
    ImportanceResult
        ``importances_mean``: SAGE values (in loss units; they sum to the loss the
        model saves over the mean prediction); ``importances`` the draws (n_features,
        N); ``ci_low``/``ci_high`` the 95% t interval of the mean; ``extra``:
        ``std_error`` (sd / sqrt(N)), ``ratio`` (the criterion at the stop),
        ``converged``, ``total`` (v of all features, estimated by the same draws) and
        ``evaluator``: ``"trees"`` when the imputed outputs came from walking the trees
        (:mod:`sapwood._kernels._sage`), ``"predict"`` when from the model's own
        predictions of the stacked hybrid rows (a model whose tree-format conversion
        does not reproduce its outputs).

    References
    ----------
    .. [1] I. Covert, S. Lundberg, S.-I. Lee, "Understanding Global Feature
       Contributions With Additive Importance Measures", NeurIPS 2020.
       doi:10.48550/arXiv.2004.00668
    """
    ensemble = as_ensemble(model)
    refuse_survival(ensemble, "sage")
    check_rows(X, y)
    names = feature_names_of(ensemble, feature_names, X)
    X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    y = np.asarray(y)
    if X.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {X.shape[1]} columns; the model has "
                         f"{ensemble.n_features} features")
    classify = ensemble.task == "classification"
    loss = ("log_loss" if classify else "squared_error") if loss is None else loss
    if loss == "log_loss" and not classify:
        raise ValueError("loss='log_loss' needs a classifier; this model is a regression")
    target = _targets(ensemble, y) if loss == "log_loss" else y.astype(np.float64)
    rng = np.random.default_rng(random_state)
    if background is None:
        size = min(n_background, X.shape[0])
        background = X[rng.choice(X.shape[0], size, replace=False)]
    else:
        background = check_array(background, dtype=np.float64, ensure_all_finite="allow-nan")
        if background.shape[1] != X.shape[1]:
            raise ValueError(f"background has {background.shape[1]} columns; X has "
                             f"{X.shape[1]}")
    imputer = _imputer(model, ensemble, X, background, loss, max(1, int(effective_n_jobs(n_jobs))))
    limit = np.inf if n_permutations is None else n_permutations
    draws, n, ratio = [], 0, np.inf
    try:
        while n < limit:
            size = int(min(batch_size, limit - n))
            rows = rng.choice(X.shape[0], size)
            draws.append(_batch(imputer, loss, X[rows], target[rows], rng))
            n += size
            scores = np.concatenate(draws)
            values = scores.mean(axis=0)
            std_error = scores.std(axis=0) / np.sqrt(n)
            ratio = std_error.max() / max(values.max() - values.min(), MIN_GAP)
            if n_permutations is None and ratio < thresh:
                break
    finally:
        imputer.close()
    result = ImportanceResult.from_draws(
        scores.T, feature_names=names, method="sage",
        params={"loss": loss, "thresh": thresh, "batch_size": batch_size,
                "n_permutations": n, "n_background": background.shape[0],
                "random_state": random_state if isinstance(random_state, numbers.Integral)
                else None})
    result.extra.update(std_error=std_error, ratio=float(ratio),
                        converged=bool(ratio < thresh), total=float(values.sum()),
                        evaluator=imputer.kind)
    return result



def _targets(ensemble, y):
    """Each label's column in ``predict_proba``."""
    classes = np.asarray(ensemble.classes)
    position = (y.reshape(-1, 1) == classes[None, :])
    if not position.any(axis=1).all():
        raise ValueError(f"y has labels the model does not know; its classes are "
                         f"{list(classes)}")
    return position.argmax(axis=1)


def _loss(loss, prediction, target):
    if loss == "squared_error":
        residual = prediction.reshape(len(target), -1) - target.reshape(len(target), -1)
        return (residual ** 2).sum(axis=1)
    picked = prediction[np.arange(len(target)), target]
    return -np.log(np.clip(picked, PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR))


def _batch(imputer, loss, x, target, rng):
    """One draw per row of ``x``: each row gets its own order of the features, which
    join one at a time; a feature's draw is the fall in loss it brings. Features left
    out take every background row's values and the predictions are averaged."""
    m, p = x.shape
    order = rng.permuted(np.tile(np.arange(p), (m, 1)), axis=1)
    rank = np.empty_like(order)
    rows = np.arange(m)
    rank[rows[:, None], order] = np.arange(p)[None, :]
    losses = imputer.losses(x, target, rank)  # (m, p + 1): coalitions of 0 .. p features
    scores = np.zeros((m, p))
    scores[rows[:, None], order] = losses[:, :-1] - losses[:, 1:]
    return scores


def _imputer(model, ensemble, X, background, loss, n_jobs):
    """The tree walks when they give the model's own outputs, else its predictions of
    the stacked hybrid rows.

    The model's own ``predict`` / ``predict_proba`` define the outputs when it is a
    fitted estimator (else the tree format's, for a model file or a TreeEnsemble): the
    walks' sums are checked against them on the first rows of X and, when they differ
    beyond round-off, the model predicts instead."""
    source = model if hasattr(model, "predict_proba" if loss == "log_loss" else "predict") \
        else ensemble
    method = source.predict_proba if loss == "log_loss" else source.predict
    names = getattr(model, "feature_names_in_", None)

    def predict(rows):
        # The columns named as the model was fitted (no "X does not have valid feature
        # names" warning at each call).
        if names is not None and len(names) == rows.shape[1]:
            rows = pd.DataFrame(rows, columns=names)
        return np.asarray(method(rows), dtype=np.float64)

    walks = _TreeImputer(ensemble, background, loss, source is ensemble, n_jobs)
    head = X[:min(_CHECK_ROWS, X.shape[0])]
    theirs = predict(head).reshape(head.shape[0], -1)
    ours = walks.own(head).reshape(head.shape[0], -1)
    if ours.shape == theirs.shape and np.allclose(ours, theirs, rtol=_CHECK_RTOL,
                                                  atol=_CHECK_ATOL):
        return walks
    walks.close()
    return _StackedImputer(predict, background, loss)


# Rows and tolerance of the check that the tree walks give the model's outputs (float32
# libraries' last bits may differ in the link; anything more means another model).
_CHECK_ROWS = 256
_CHECK_RTOL = 1e-9
_CHECK_ATOL = 1e-12
# Bytes of hybrid-row sums held at once (rows of a batch are taken in slices that fit).
_SUMS_BUDGET = 64 * 2**20


class _StackedImputer:
    """The model predicts the stacked hybrid rows (n_rows x n_background per
    coalition), as the sage package's ``MarginalImputer`` does."""

    kind = "predict"

    def __init__(self, predict, background, loss):
        self.predict = predict
        self.background = background
        self.loss = loss

    def losses(self, x, target, rank):
        m, p = x.shape
        n_background = self.background.shape[0]
        tiled = np.tile(self.background, (m, 1))
        repeated = np.repeat(x, n_background, axis=0)
        out = np.empty((m, p + 1))
        for k in range(p + 1):
            known = np.repeat(rank < k, n_background, axis=0)
            prediction = self.predict(np.where(known, repeated, tiled))
            prediction = prediction.reshape(m, n_background, -1).mean(axis=1)
            out[:, k] = _loss(self.loss, prediction, target)
        return out

    def close(self):
        pass


class _TreeImputer:
    """Every hybrid row's output from :func:`coalition_sums` (one walk per row,
    background row and tree for all the coalitions of an order), the link applied as
    the model applies it."""

    kind = "trees"

    def __init__(self, ensemble, background, loss, normalise, n_jobs):
        self.ensemble = ensemble
        self.loss = loss
        # A forest's class probabilities are its trees' mean, as scikit-learn's and
        # sapwood's forests give them; a TreeEnsemble's own predict_proba divides by
        # their sum again.
        self.normalise = normalise
        self.n_jobs = n_jobs
        self._pool = None
        (children_left, children_right, self.feature, threshold, missing_go_to_left,
         operator, cat_bitsets, self.roots) = ensemble.packed()
        self.routing = (children_left, self.feature, threshold, missing_go_to_left, operator,
                        cat_bitsets)
        self.children = np.ascontiguousarray(np.column_stack([children_left,
                                                              children_right]))
        node_values, self.tree_column, init = ensemble.node_outputs(native=True)
        accumulation = ensemble.accumulation_dtype
        self.node_values = np.ascontiguousarray(node_values.astype(accumulation))
        self.init = init.astype(accumulation)
        if ensemble.base_last:
            self.init = np.zeros_like(self.init)  # ``_raw`` adds it
        self.base = init
        # The mean over the background can be taken of the sums themselves when the
        # outputs are linear in them (a forest's mean, a boosted model's identity link)
        # and the sums are in float64: the background rows then walk together.
        # (A classifier's labels, under squared error, are not.)
        self.linear = (accumulation == np.float64
                       and (ensemble.combine == "mean" or ensemble.link == "identity")
                       and (ensemble.task == "regression" or loss == "log_loss"))
        self.n_background = background.shape[0]
        self.background = self._directions(background)
        if self.linear:
            n_words = (self.n_background + 63) // 64
            self.left_sets = background_sets(np.ascontiguousarray(self.background.T),
                                             n_words)
            self.everyone = self._everyone(self.n_background)
            self.capacity = 2 * _max_depth(children_left, children_right, self.roots) + 2

    @staticmethod
    def _everyone(n):
        """The set of background rows 0 .. n - 1, as :func:`background_sets` writes it."""
        words = np.zeros((n + 63) // 64, dtype=np.uint64)
        for w in range(words.shape[0]):
            bits = min(64, n - 64 * w)
            words[w] = np.uint64(2**bits - 1)
        return words

    def _directions(self, rows):
        """Each row's direction at every node (:func:`node_directions`), for the values
        the trees compare as the model reads them (float32 for scikit-learn)."""
        rows = np.ascontiguousarray(rows.astype(self.ensemble.input_dtype).astype(np.float64))
        out = np.empty((rows.shape[0], self.children.shape[0]), dtype=np.uint8)
        self._parallel(node_directions, (rows, *self.routing), rows.shape[0], (out,))
        return out

    def own(self, x):
        """The outputs on the rows ``x`` themselves (every feature known), through the
        walks ``losses`` takes."""
        p = x.shape[1]
        rank = np.zeros(x.shape, dtype=np.intp)
        x_left = self._directions(x)
        if self.linear:
            # The first background row alone (a set of one).
            one = self._everyone(1)
            left_sets = np.ascontiguousarray(self.left_sets[:, :1] & one[None, :])
            sums = self._totals(x_left, rank, left_sets, one)[p] + self.init
        else:
            sums = self._sums(x_left, rank, np.ascontiguousarray(self.background[:1]))[p]
        return self._outputs(sums.reshape(x.shape[0], -1))

    def losses(self, x, target, rank):
        m, p = x.shape
        rank = np.ascontiguousarray(rank, dtype=np.intp)
        out = np.empty((m, p + 1))
        if self.linear:
            totals = self._totals(self._directions(x), rank, self.left_sets, self.everyone)
            for k in range(p + 1):
                prediction = self._outputs(totals[k] / self.n_background + self.init)
                out[:, k] = _loss(self.loss, prediction, target)
            return out
        n_background = self.n_background
        per_row = (p + 1) * n_background * self.init.shape[0] * self.init.itemsize
        step = max(1, _SUMS_BUDGET // per_row)
        for lo in range(0, m, step):
            hi = min(m, lo + step)
            sums = self._sums(self._directions(x[lo:hi]), rank[lo:hi], self.background)
            for k in range(p + 1):
                prediction = self._outputs(sums[k].reshape((hi - lo) * n_background, -1))
                prediction = prediction.reshape(hi - lo, n_background, -1).mean(axis=1)
                out[lo:hi, k] = _loss(self.loss, prediction, target[lo:hi])
        return out

    def _totals(self, x_left, rank, left_sets, everyone):
        m, p = rank.shape
        totals = np.empty((p + 1, m, self.init.shape[0]))
        self._parallel(coalition_totals,
                       (x_left, rank, left_sets, everyone, self.children, self.feature,
                        self.roots, self.node_values, self.tree_column, self.capacity), m,
                       (totals,))
        return totals

    def _sums(self, x_left, rank, background_left):
        m, p = rank.shape
        sums = np.empty((p + 1, m, background_left.shape[0], self.init.shape[0]),
                        dtype=self.init.dtype)
        self._parallel(coalition_sums,
                       (x_left, rank, background_left, self.children, self.feature,
                        self.roots, self.node_values, self.tree_column, self.init), m,
                       (sums,))
        return sums

    def _parallel(self, function, head, m, tail):
        """``function(*head, lo, hi, *tail)`` for ranges of rows [lo, hi) of ``m``, on
        the imputer's threads (several ranges per thread: a thread slowed by other work
        takes fewer)."""
        n_chunks = 1 if self.n_jobs == 1 else min(m, 4 * self.n_jobs)
        bounds = np.linspace(0, m, n_chunks + 1).astype(np.intp)
        ranges = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
                  if b > a]
        if len(ranges) == 1:
            function(*head, *ranges[0], *tail)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.n_jobs)
        futures = [self._pool.submit(function, *head, a, b, *tail) for a, b in ranges]
        for future in futures:
            future.result()

    def _outputs(self, sums):
        """The model's predictions (``predict_proba`` for log loss, else ``predict``)
        from the sums of the trees' values, (n, len(init))."""
        ensemble = self.ensemble
        if ensemble.combine == "mean":
            raw = sums / ensemble.n_trees + ensemble.base_score[0]
            raw = raw.reshape(sums.shape[0], ensemble.trees[0].n_outputs, -1)
        else:
            raw = sums.astype(np.float64) + (self.base if ensemble.base_last else 0.0)
        stand_in = _prediction.RawOutputs(ensemble, raw)
        if self.loss == "log_loss":
            if ensemble.combine == "mean" and not self.normalise:
                return raw[:, 0, :len(ensemble.classes)]
            return _prediction.predict_proba(stand_in, None)
        return np.asarray(_prediction.predict(stand_in, None), dtype=np.float64)

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


def _max_depth(children_left, children_right, roots):
    """The depth of the deepest of the packed trees (a lone leaf: 0)."""
    frontier, depth = np.asarray(roots), 0
    while True:
        split = frontier[children_left[frontier] >= 0]
        if split.size == 0:
            return depth
        frontier = np.concatenate([children_left[split], children_right[split]])
        depth += 1
