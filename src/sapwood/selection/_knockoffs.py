"""Model-X knockoffs: feature selection with a controlled false discovery rate.

Each feature x_j gets a knockoff x~_j, drawn from X alone so that swapping any
features with their knockoffs leaves the joint law of [X, X~] unchanged (second-order
Gaussian knockoffs, :class:`~sapwood.importance.GaussianKnockoffs`). A model fitted on
[X, X~] gives importances Z_1..Z_2p and the statistics::

    W_j = Z_j - Z_{j+p}

A null feature (x_j independent of y given the others) is as likely to beat its
knockoff as to lose to it, so the signs of the null W_j are fair coins. With target
FDR q and offset 1 (knockoff+) or 0 (knockoff)::

    T = min{ t in {|W_j| > 0} : (offset + #{j : W_j <= -t}) / max(1, #{j : W_j >= t}) <= q }

and the selection is {j : W_j >= T} (empty when no t qualifies). Knockoff+ controls
E[#false / max(1, #selected)] <= q; the plain knockoff controls a modified FDR.

Derandomised (``n_draws > 1``, Ren & Barber 2024): draw m gives the knockoff+ threshold
T_m at level alpha_kn (q/2 by default) and the e-values::

    e_j^m = p 1{W_j^m >= T_m} / (1 + #{k : W_k^m <= -T_m})

Their means e_j over the draws go into the e-BH procedure at level q: with e_(1) >=
... >= e_(p), k^ = max{k : e_(k) >= p / (q k)} and the k^ largest are selected.

E. Candès, Y. Fan, L. Janson, J. Lv, "Panning for gold: 'model-X' knockoffs for high
dimensional controlled variable selection", JRSS-B 80(3), 551-577, 2018,
doi:10.1111/rssb.12265. Z. Ren, R. F. Barber, "Derandomised knockoffs: leveraging
e-values for false discovery rate control", JRSS-B 86(1), 122-154, 2024,
doi:10.1093/jrsssb/qkad085.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import check_random_state

from .._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _num_samples,
    validate_params,
)
from ..importance import MEASURES, GaussianKnockoffs, ImportanceResult, MeasureInputs
from ..importance._engine._knockoff_sampler import as_sampler, numeric_matrix, seed
from ._boruta import _default_estimator

__all__ = ["KnockoffResult", "knockoff_threshold", "knockoffs", "minimum_selection",
           "statistics"]

def statistics() -> dict:
    """The statistic names ``knockoffs`` accepts: ``name -> (measure, options)`` for
    every measure in :data:`sapwood.importance.MEASURES` that needs no refit, by its
    ``names`` (held-out measures score the rows the model was fitted on: [X, X~]
    has no held-out rows)."""
    return {name: (measure, options) for measure in MEASURES.values()
            if not measure.refits
            for name, options in measure.names.items()}


def _importances(statistic, model, X, y, *, random_state, n_jobs):
    """Z: one importance per column of X = [features, knockoffs], from the model fitted
    to it. The one place a statistic name becomes a measure."""
    if callable(statistic):
        values = statistic(model, X, y)
    else:
        measure, options = statistics()[statistic]
        inputs = MeasureInputs(X_train=X, y_train=y, random_state=random_state,
                               n_jobs=n_jobs)
        reason = measure.why_not(model, inputs, **options)
        if reason is not None:
            raise ValueError(f"the statistic {statistic!r} of knockoffs does not apply: "
                             f"{reason}")
        values = measure.run(model, inputs, **options)
    if isinstance(values, ImportanceResult):
        values = values.importances_mean
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (X.shape[1],) or not np.isfinite(values).all():
        raise ValueError(f"the statistic of knockoffs must give one finite importance per "
                         f"column of [X, X~] ({X.shape[1]} columns); got shape "
                         f"{values.shape}")
    return values


def knockoff_threshold(W, fdr, offset=1):
    """T = min{t in {|W_j| > 0} : (offset + #{W_j <= -t}) / max(1, #{W_j >= t}) <= fdr},
    or ``inf`` when no t qualifies (nothing is selected)."""
    W = np.asarray(W, dtype=np.float64)
    candidates = np.unique(np.abs(W[W != 0]))
    ordered = np.sort(W)
    negatives = np.searchsorted(ordered, -candidates, side="right")         # W <= -t
    positives = W.shape[0] - np.searchsorted(ordered, candidates, side="left")  # W >= t
    passing = np.flatnonzero((offset + negatives) / np.maximum(1, positives) <= fdr)
    return float(candidates[passing[0]]) if passing.size else float("inf")


def minimum_selection(fdr, offset=1):
    """The fewest features knockoff(+) can select at level ``fdr``: the smallest m with
    offset / m <= fdr, i.e. ceil(offset / fdr) (1 for ``offset=0``).

    A threshold t qualifies only when (offset + #{W_j <= -t}) / #{W_j >= t} <= fdr; the
    numerator is at least ``offset``, so #{W_j >= t}, the number selected, is at least
    offset / fdr, and more for every W_j <= -t: at least (offset + #{W_j <= -t}) / fdr.
    With fewer than m features having W_j > 0 nothing can be selected.
    """
    m = 1
    while offset / m > fdr:  # the threshold's own comparison, so rounding agrees
        m += 1
    return m


def smallest_level(W, offset=1):
    """The smallest level at which knockoff(+) selects something from these W: the
    minimum over t in {|W_j| > 0} of (offset + #{W_j <= -t}) / max(1, #{W_j >= t})
    (``inf`` when every W_j is 0)."""
    W = np.asarray(W, dtype=np.float64)
    candidates = np.unique(np.abs(W[W != 0]))
    if candidates.size == 0:
        return float("inf")
    ordered = np.sort(W)
    negatives = np.searchsorted(ordered, -candidates, side="right")
    positives = W.shape[0] - np.searchsorted(ordered, candidates, side="left")
    return float(np.min((offset + negatives) / np.maximum(1, positives)))


def _why_nothing(W, thresholds, fdr, level, offset, n_draws):
    """Why nothing was selected, what the rule needs and what to do instead."""
    p = W.shape[1]
    rule = "knockoff+" if offset == 1 else "the knockoff filter"
    need = minimum_selection(level, offset)
    positive = int((W > 0).sum(axis=1).max())
    if n_draws > 1 and np.isfinite(thresholds).any():
        return ("e-BH selects nothing: no feature's mean e-value over the draws reaches "
                f"p / (fdr k) for any k (p = {p}, fdr = {fdr:g}); the draws disagree on "
                "which features beat their knockoffs. Raise fdr, use more draws or more "
                "rows.")
    at = f"FDR {level:g}" if n_draws == 1 else f"draw_fdr {level:g}"
    lowest = min(smallest_level(w, offset) for w in W)
    text = (f"{rule} at {at} selects at least {need} features or none (the smallest m "
            f"with {offset}/m <= {level:g}): its estimate of the false discovery "
            f"proportion, ({offset} + #{{W_j <= -t}}) / #{{W_j >= t}}, reaches the level "
            f"only with {need} or more features at W_j >= t")
    if positive < need:
        text += (f", and only {positive} of the {p} features have W_j > 0"
                 + (" in any draw" if n_draws > 1 else ""))
    else:
        text += (f"; {positive} of the {p} features have W_j > 0, but too many W_j <= -t "
                 "come with them")
    text += "."
    advice = []
    if np.isfinite(lowest) and lowest < 1:
        advice.append(f"raise {'fdr' if n_draws == 1 else 'draw_fdr (up to fdr) or fdr'} "
                      f"to at least {lowest:.3g}, the smallest level at which it selects "
                      "here")
    else:
        advice.append("raise the FDR")
    if offset == 1 and n_draws == 1:
        advice.append("use offset=0 (the knockoff filter selects from one feature on and "
                      "controls a modified FDR, E[V / (R + 1/q)])")
    if need > p:
        advice.append(f"give it more features (from {p} it can never select at this "
                      f"level: it needs {need} to beat their knockoffs)")
    else:
        advice.append(f"give it more features or rows (it selects only when at least "
                      f"{need} of the {p} beat their knockoffs)")
    return text + " Instead: " + "; or ".join(advice) + "."


def knockoff_evalues(W, threshold):
    """e_j = p 1{W_j >= T} / (1 + #{W_k <= -T}) (Ren & Barber 2024); zeros when T is
    infinite."""
    W = np.asarray(W, dtype=np.float64)
    if not np.isfinite(threshold):
        return np.zeros(W.shape[0])
    return W.shape[0] * (W >= threshold) / (1.0 + np.sum(W <= -threshold))


def ebh(evalues, fdr):
    """Indices selected by the e-BH procedure at level fdr: the k^ largest e-values,
    k^ = max{k : e_(k) >= p / (fdr k)} (R. Wang, A. Ramdas, "False discovery rate
    control with e-values", JRSS-B 84(3), 2022, doi:10.1111/rssb.12489)."""
    p = evalues.shape[0]
    order = np.argsort(-evalues, kind="stable")
    passing = np.flatnonzero(evalues[order] >= p / (fdr * np.arange(1, p + 1)))
    if passing.size == 0:
        return np.array([], dtype=np.int64)
    return np.sort(order[:passing[-1] + 1])


@dataclass(eq=False)
class KnockoffResult:
    """What :func:`knockoffs` selected and the statistics behind it.

    Attributes
    ----------
    feature_names : list of str
    selected_indices : ndarray of int
        Column positions of the selected features, in column order.
    W : ndarray of shape (n_draws, n_features)
        The statistics W_j = Z_j - Z~_j, one row per knockoff draw.
    threshold : ndarray of shape (n_draws,)
        Each draw's knockoff(+) threshold T (``inf``: that draw selects nothing). With
        one draw it is the selection threshold at ``fdr``; with several, each is the
        knockoff+ threshold at ``draw_fdr`` behind that draw's e-values.
    Z : ndarray of shape (n_draws, 2 * n_features)
        The importances of the features, then of their knockoffs.
    evalues : ndarray of shape (n_features,) or None
        With several draws, the averaged e-values the e-BH selection is made on.
    params : dict
    reason : str or None
        When nothing is selected, why: the fewest features the rule can select at this
        level (:func:`minimum_selection`), how many had W_j > 0, the smallest level at
        which it would select here, and what to do instead (raise the FDR, offset=0,
        more features). None when something is selected.
    """

    feature_names: list
    selected_indices: np.ndarray
    W: np.ndarray
    threshold: np.ndarray
    Z: np.ndarray
    evalues: np.ndarray | None = None
    params: dict = field(default_factory=dict)
    reason: str | None = None

    @property
    def selected(self) -> list:
        """Names of the selected features, in column order."""
        return [self.feature_names[j] for j in self.selected_indices]

    @property
    def support(self) -> np.ndarray:
        """Boolean mask over the features: True where selected."""
        mask = np.zeros(len(self.feature_names), dtype=bool)
        mask[self.selected_indices] = True
        return mask

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: feature, W (mean over draws), selection frequency over
        the draws (W >= that draw's threshold), [evalue], selected."""
        frame = pd.DataFrame({
            "feature": self.feature_names,
            "W": self.W.mean(axis=0),
            "frequency": (self.W >= self.threshold[:, None]).mean(axis=0),
        })
        if self.evalues is not None:
            frame["evalue"] = self.evalues
        frame["selected"] = self.support
        return frame

    def __repr__(self) -> str:
        threshold = (f"threshold {self.threshold[0]:.4g}" if self.threshold.shape[0] == 1
                     else f"{self.threshold.shape[0]} draws, e-BH")
        reason = "" if self.reason is None else f"\n{self.reason}"
        return (f"KnockoffResult({len(self.selected_indices)} selected at FDR "
                f"{self.params.get('fdr')}, {threshold}){reason}\n"
                f"{self.to_frame().to_string(index=False)}")


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "fdr": [Interval(Real, 0, 1, closed="neither")],
        "statistic": [str, callable],
        "estimator": [HasMethods(["fit"]), None],
        "knockoff_sampler": [StrOptions({"gaussian", "gaussian_sdp"}), GaussianKnockoffs],
        "offset": [Interval(Integral, 0, 1, closed="both")],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "draw_fdr": [Interval(Real, 0, 1, closed="neither"), None],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def knockoffs(X, y, *, fdr=0.1, statistic="permutation", estimator=None,
              knockoff_sampler="gaussian", offset=1, n_draws=1, draw_fdr=None,
              random_state=None, n_jobs=None):
    """Model-X knockoff selection: the features relevant to y, at a false discovery rate.

    For each draw [1]_: sample knockoffs X~ of X, fit a clone of ``estimator`` on
    [X, X~], compute one importance Z per column, W_j = Z_j - Z_{j+p}, and the
    threshold::

        T = min{ t in {|W_j| > 0} : (offset + #{W_j <= -t}) / max(1, #{W_j >= t}) <= fdr }

    One draw selects {j : W_j >= T}; with ``offset=1`` (knockoff+) the expected share
    of null features among those selected is at most ``fdr`` when the knockoffs are
    exact. Several draws are combined by averaging the e-values
    e_j = p 1{W_j >= T} / (1 + #{W_k <= -T}) (T at ``draw_fdr``) and selecting with
    e-BH at ``fdr`` [2]_, which keeps the FDR guarantee and makes the selection far
    less dependent on the draw.

    The guarantee assumes the knockoffs are exchangeable with X. Gaussian second-order
    knockoffs match the mean and covariance (estimated from X: the sample covariance,
    or Ledoit-Wolf shrinkage where that is not positive definite), which is exact for
    Gaussian X with a known covariance and an approximation otherwise.
    Binary or count columns are modelled as Gaussian too: their knockoffs are
    continuous, so a tree can tell them apart by their values alone; check such data
    by simulation. Non-numeric columns are refused: one-hot encode them first.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Numeric columns. Column names become the feature names (``x0, x1, ...`` for
        arrays); the model sees a DataFrame of the features and then their knockoffs,
        named ``knockoff_<name>``.
    y : array-like of shape (n_samples,)
    fdr : float in (0, 1), default=0.1
        Target false discovery rate q.
    statistic : str or callable, default="permutation"
        The importance Z on the model fitted to [X, X~], by name any measure of
        :data:`sapwood.importance.MEASURES` that needs no refit (:func:`statistics`):
        ``"permutation"`` is :func:`~sapwood.importance.permutation_importance` with 5
        repeats on the same rows [X, X~] (the rows are exchangeable between a feature
        and its knockoff, which is all W needs); ``"oob_permutation"`` is
        :func:`~sapwood.importance.oob_permutation_importance` (a bagged forest);
        ``"mdi"`` is :func:`~sapwood.importance.mdi`. A callable
        ``statistic(fitted_model, X_and_knockoffs, y)`` returns an
        ``ImportanceResult`` or an array with one value per column.
    estimator : unfitted estimator or None, default=None
        Cloned every draw (``random_state`` set to a seed drawn for it). None: a
        100-tree :class:`~sapwood.RandomForestClassifier` or
        :class:`~sapwood.RandomForestRegressor` by ``type_of_target(y)``.
    knockoff_sampler : {"gaussian", "gaussian_sdp"} or GaussianKnockoffs, \
default="gaussian"
        ``"gaussian"``: equicorrelated construction, closed form; ``"gaussian_sdp"``:
        the SDP construction (more power with correlated features; needs cvxpy, the
        ``sapwood[knockoffs]`` extra). A
        :class:`~sapwood.importance.GaussianKnockoffs` gives the construction and,
        optionally, the known mean and covariance.
    offset : {0, 1}, default=1
        1: knockoff+ (controls the FDR); 0: the knockoff filter (controls a modified
        FDR, E[V / (R + 1 / q)], and selects a little more). Several draws need 1.
    n_draws : int, default=1
        Knockoff draws; above 1 the derandomised e-value procedure.
    draw_fdr : float in (0, 1) or None, default=None
        With several draws, the level of each draw's knockoff+ threshold behind its
        e-values (Ren & Barber's alpha_kn; any value keeps the FDR at ``fdr``). None:
        ``fdr / 2``, their recommendation. Knockoff+ at level a selects nothing unless
        it can select at least 1 / a features, so with few relevant features a larger
        value (up to ``fdr``) gives more power.
    random_state : int, RandomState instance or None, default=None
        ``rng = check_random_state(random_state)``; each draw takes, in order, a seed
        for the knockoffs, one for the estimator and one for the statistic
        (``rng.randint(2**31 - 1)`` each), then ``rng.rand(n_features)`` for the coins
        that decide which features trade places with their knockoffs in the columns
        the estimator sees (so that column order cannot favour either).
    n_jobs : int or None, default=None
        Threads for the default estimator and the named statistics.

    Returns
    -------
    KnockoffResult
        ``selected`` (names), ``selected_indices``, ``W``, ``threshold``, ``Z``,
        ``evalues`` (several draws), ``reason`` (why nothing was selected: knockoff+
        at level q selects at least ceil(1/q) features or none, see
        :func:`minimum_selection`). Definition: docs/measures.md, section 'Model-X
        knockoffs'.

    References
    ----------
    .. [1] E. Candès, Y. Fan, L. Janson, J. Lv, "Panning for gold: 'model-X' knockoffs
       for high dimensional controlled variable selection", Journal of the Royal
       Statistical Society Series B 80(3), 551-577, 2018. doi:10.1111/rssb.12265
    .. [2] Z. Ren, R. F. Barber, "Derandomised knockoffs: leveraging e-values for false
       discovery rate control", Journal of the Royal Statistical Society Series B
       86(1), 122-154, 2024. doi:10.1093/jrsssb/qkad085

    Examples
    --------
    >>> import numpy as np
    >>> from sapwood import RandomForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 20))
    >>> y = X[:, :8].sum(axis=1) + 0.5 * rng.standard_normal(300)
    >>> result = knockoffs(X, y, fdr=0.2, statistic="mdi", random_state=0,
    ...                    estimator=RandomForestRegressor(n_estimators=50))
    >>> len(set(result.selected) & {f"x{j}" for j in range(8)}) >= 6
    True
    """
    if isinstance(statistic, str) and statistic not in statistics():
        raise ValueError(f"statistic must be one of {sorted(statistics())} or a callable; "
                         f"got {statistic!r}")
    if offset == 0 and n_draws > 1:
        raise ValueError("knockoffs with n_draws > 1 needs offset=1: the derandomised "
                         "e-values are valid for knockoff+ only; got offset=0")
    names = ([str(c) for c in X.columns] if hasattr(X, "columns")
             else [f"x{j}" for j in range(np.shape(X)[1])])
    matrix = numeric_matrix(X, "knockoffs")
    if _num_samples(y) != matrix.shape[0]:
        raise ValueError(f"X and y passed to knockoffs must have the same number of rows; "
                         f"got X with {matrix.shape[0]} and y with {_num_samples(y)}")
    if len(set(names)) != len(names):
        raise ValueError(f"knockoffs needs distinct column names in X; got {names}")
    if estimator is None:
        estimator = _default_estimator(y, n_jobs)
    sampler = as_sampler(knockoff_sampler, "knockoffs").fit(pd.DataFrame(matrix, columns=names))
    rng = check_random_state(random_state)
    columns = names + [f"knockoff_{name}" for name in names]
    p = len(names)
    level = fdr if n_draws == 1 else (fdr / 2 if draw_fdr is None else draw_fdr)
    if offset > level * p:
        # The threshold needs (offset + #{W <= -t}) / #{W >= t} <= level, and #{W >= t}
        # is at most p.
        warnings.warn(f"knockoff+ selects nothing here: with offset={offset} its estimate "
                      f"of the false discovery proportion is at least {offset}/{p} = "
                      f"{offset / p:.3g} > {level:g}, the level it must reach; raise fdr "
                      f"to at least {offset / p:.3g}, add features, or use offset=0",
                      UserWarning, stacklevel=3)  # past validate_params' wrapper

    Z, W, thresholds = [], [], []
    for _ in range(n_draws):
        tilde = sampler.sample(matrix, seed(rng))
        model_seed, statistic_seed = seed(rng), seed(rng)
        # Each feature trades places with its knockoff on a fair coin (and the Z are
        # traded back), so that nothing in the estimator that depends on column order
        # (ties broken by the lower index) can favour the features over the knockoffs.
        swap = np.concatenate([rng.rand(p) < 0.5] * 2)
        order = np.where(swap, (np.arange(2 * p) + p) % (2 * p), np.arange(2 * p))
        both = pd.DataFrame(np.hstack([matrix, tilde])[:, order], columns=columns)
        model = clone(estimator)
        if "random_state" in model.get_params(deep=False):
            model.set_params(random_state=model_seed)
        model.fit(both, y)
        z = np.empty(2 * p)
        z[order] = _importances(statistic, model, both, y, random_state=statistic_seed,
                                n_jobs=n_jobs)
        Z.append(z)
        W.append(z[:p] - z[p:])
        thresholds.append(knockoff_threshold(W[-1], level, offset))
    W, thresholds = np.array(W), np.array(thresholds)

    if n_draws == 1:
        selected, evalues = np.flatnonzero(W[0] >= thresholds[0]), None
    else:
        evalues = np.mean([knockoff_evalues(w, t) for w, t in zip(W, thresholds,
                                                                   strict=True)], axis=0)
        selected = ebh(evalues, fdr)
    params = {"fdr": fdr, "statistic": statistic if isinstance(statistic, str)
              else repr(statistic), "estimator": repr(estimator),
              "knockoff_sampler": sampler.construction, "offset": offset,
              "n_draws": n_draws, "draw_fdr": level if n_draws > 1 else None,
              "random_state": random_state
              if isinstance(random_state, Integral) else None, "n_jobs": n_jobs}
    reason = (None if selected.size else
              _why_nothing(W, thresholds, fdr, level, offset, n_draws))
    return KnockoffResult(feature_names=names, selected_indices=selected.astype(np.int64),
                          W=W, threshold=thresholds, Z=np.array(Z), evalues=evalues,
                          params=params, reason=reason)
