"""Boruta all-relevant feature selection (Kursa & Rudnicki 2010).

Each round, every feature still in the model competes with shuffled copies of the
undecided ones (shadows, which carry no information about y by construction). With
h_j hits (rounds where imp_j > max shadow importance) in n rounds and m features in
all (R's Boruta adjusts over every attribute, decided ones included)::

    confirm j  when  min(1, m * P(X >= h_j)) < alpha
    reject  j  when  min(1, m * P(X <= h_j)) < alpha,      X ~ Binomial(n, 1/2)

M. B. Kursa, W. R. Rudnicki, "Feature Selection with the Boruta Package", Journal of
Statistical Software 36(11), 2010, doi:10.18637/jss.v036.i11.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.stats import binom
from sklearn.base import clone
from sklearn.utils import check_array, check_random_state
from sklearn.utils.multiclass import type_of_target

from .._progress import progress_bar
from .._sklearn_compat import (
    HasMethods,
    Interval,
    _num_samples,
    validate_params,
)
from ..importance import MEASURES, ImportanceResult, MeasureInputs

__all__ = ["BorutaResult", "boruta"]

CONFIRMED = "confirmed"
REJECTED = "rejected"
TENTATIVE = "tentative"

# R's Boruta: "There must be at least 5 random attributes."
MIN_SHADOWS = 5


def _named_importances() -> dict:
    """The names ``importance`` accepts: ``name -> (measure, options, z-score or not)``.

    Every measure in :data:`sapwood.importance.MEASURES` that reads only the rows the
    model was fit on (training or out-of-bag rows, no refit; a measure that reads the
    out-of-bag rows of a bagged forest and held-out rows of another model applies to a
    bagged forest only, as Boruta has no held-out rows), by its ``names``;
    one that reports a z-score (out-of-bag permutation importance) is ranked by it, as
    R's Boruta does by default (``getImpRfZ``), and by its mean under ``name_raw``
    (``getImpRfRaw``)."""
    named = {}
    for measure in MEASURES.values():
        if measure.rows not in ("train", "oob", "oob-or-held-out") or measure.refits:
            continue
        zscore = "zscore" in measure.gives
        for name, options in measure.names.items():
            named[name] = (measure, options, zscore)
            if zscore:
                named[f"{name}_raw"] = (measure, options, False)
    return named


def _importances(name, model, X, y, *, random_state, n_jobs):
    """One importance per column of X from the registered measure ``name``."""
    measure, options, zscore = _named_importances()[name]
    inputs = MeasureInputs(X_train=X, y_train=y, random_state=random_state, n_jobs=n_jobs)
    reason = measure.why_not(model, inputs, **options)
    if reason is not None:
        raise ValueError(f"boruta's importance {name!r} does not apply: {reason}")
    result = measure.run(model, inputs, **options)
    return result.extra["zscore"] if zscore else result.importances_mean


@dataclass(eq=False)
class BorutaResult:
    """What :func:`boruta` decided about each feature, and the rounds behind it.

    Attributes
    ----------
    feature_names : list of str
    decision : ndarray of str, shape (n_features,)
        ``"confirmed"``, ``"rejected"`` or ``"tentative"`` (undecided after the last
        round).
    hits : ndarray of int, shape (n_features,)
        Rounds in which the feature's importance exceeded the largest shadow
        importance, counted over every round it took part in (a confirmed feature
        stays in the model and keeps being counted, as in R's ``hitReg``; a rejected
        one leaves the model).
    decided_round : ndarray of int, shape (n_features,)
        The round after which the feature was confirmed or rejected; 0 for tentative.
    n_rounds : int
        Rounds run (fewer than ``max_rounds`` when every feature was decided).
    history : pandas.DataFrame
        One row per round and feature in the model that round: ``round``,
        ``feature``, ``importance``, ``shadow_max`` (the largest shadow importance
        of the round), ``n_shadows`` and ``hit`` (``importance > shadow_max``).
        ``history.pivot(index="round", columns="feature", values="importance")``
        gives R's ``ImpHistory`` layout (NaN where R writes -Inf for rejected).
    params : dict
        The arguments that determine the result.
    """

    feature_names: list
    decision: np.ndarray
    hits: np.ndarray
    decided_round: np.ndarray
    n_rounds: int
    history: pd.DataFrame
    params: dict = field(default_factory=dict)

    def _named(self, decision):
        return [name for name, d in zip(self.feature_names, self.decision, strict=True)
                if d == decision]

    @property
    def confirmed(self) -> list:
        """Names of the confirmed features, in column order."""
        return self._named(CONFIRMED)

    @property
    def rejected(self) -> list:
        """Names of the rejected features, in column order."""
        return self._named(REJECTED)

    @property
    def tentative(self) -> list:
        """Names of the features left undecided, in column order."""
        return self._named(TENTATIVE)

    def to_frame(self) -> pd.DataFrame:
        """One row per feature, in column order: feature, decision, hits, n_rounds
        (rounds it took part in), decided_round (<NA> for tentative) and
        median_importance over those rounds (R's ``attStats`` ``medianImp``)."""
        by_feature = self.history.groupby("feature", sort=False)["importance"]
        rounds = by_feature.size().reindex(self.feature_names, fill_value=0)
        median = by_feature.median().reindex(self.feature_names)
        decided = pd.array(self.decided_round, dtype="Int64")
        decided[self.decided_round == 0] = pd.NA
        return pd.DataFrame({
            "feature": self.feature_names,
            "decision": self.decision,
            "hits": self.hits,
            "n_rounds": rounds.to_numpy(dtype=np.int64),
            "decided_round": decided,
            "median_importance": median.to_numpy(dtype=np.float64),
        })

    def __repr__(self) -> str:
        counts = ", ".join(f"{len(self._named(d))} {d}"
                           for d in (CONFIRMED, REJECTED, TENTATIVE))
        return (f"BorutaResult({counts} after {self.n_rounds} rounds)\n"
                f"{self.to_frame().to_string(index=False)}")


def decide(hits, n_rounds, alpha, m):
    """Confirm / reject masks for the features whose ``hits`` are given, after
    ``n_rounds`` rounds, Bonferroni-adjusted over ``m`` tests: ``min(1, m p) < alpha``.

    ``m`` is the number of features, decided ones included: R's ``doTests`` adjusts
    the p-values of every attribute with ``p.adjust``. Where both tails pass (only
    possible for alpha > 1/2) rejection wins, as there.
    """
    hits = np.asarray(hits)
    upper = np.minimum(1.0, m * binom.sf(hits - 1, n_rounds, 0.5))  # P(X >= h)
    lower = np.minimum(1.0, m * binom.cdf(hits, n_rounds, 0.5))     # P(X <= h)
    reject = lower < alpha
    confirm = (upper < alpha) & ~reject
    return confirm, reject


def _default_estimator(y, n_jobs):
    from ..learners import RandomForestClassifier, RandomForestRegressor

    target = type_of_target(y, input_name="y")
    if target in ("binary", "multiclass"):
        return RandomForestClassifier(n_estimators=100, n_jobs=n_jobs)
    if target == "continuous":
        return RandomForestRegressor(n_estimators=100, n_jobs=n_jobs)
    raise ValueError(f"boruta's default estimator needs y to be binary, multiclass or "
                     f"continuous (a single output); got a {target!r} target. Pass an "
                     f"estimator that handles it.")


def _as_frame(X):
    """(DataFrame with str column names, feature names) for any 2-D X."""
    if hasattr(X, "iloc"):
        names = [str(c) for c in X.columns]
        frame = X.set_axis(names, axis=1)
    else:
        array = check_array(X, dtype=None, ensure_all_finite="allow-nan", input_name="X")
        names = [f"x{j}" for j in range(array.shape[1])]
        frame = pd.DataFrame(array, columns=names)
    if len(set(names)) != len(names):
        duplicated = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"boruta needs distinct column names in X; got duplicates "
                         f"{duplicated}")
    return frame, names


def _shadow_prefix(names):
    prefix = "shadow_"
    while any(name.startswith(prefix) for name in names):
        prefix = "_" + prefix
    return prefix


def _with_shadows(frame, in_model, sources, permutations, prefix):
    real = frame.iloc[:, in_model]
    shadows = pd.DataFrame(
        {f"{prefix}{k + 1}": frame.iloc[:, j].to_numpy()[order]
         for k, (j, order) in enumerate(zip(sources, permutations, strict=True))},
        index=frame.index)
    return pd.concat([real, shadows], axis=1)


def _column_importances(values, n_columns):
    if isinstance(values, ImportanceResult):
        values = values.importances_mean
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (n_columns,):
        raise ValueError(f"The 'importance' callable of boruta must return an "
                         f"ImportanceResult or an array of shape ({n_columns},), one value "
                         f"per column of the X it is given (features, then shadows); got "
                         f"shape {values.shape}")
    if np.isnan(values).any():
        # R's Boruta does the same, with the same warning.
        warnings.warn("the importance returned NaN for some columns; counting them as 0",
                      RuntimeWarning, stacklevel=3)
        values = np.where(np.isnan(values), 0.0, values)
    return values


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "estimator": [HasMethods(["fit"]), None],
        "importance": [str, callable],
        "max_rounds": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def boruta(X, y, *, estimator=None, importance="oob_permutation", max_rounds=100,
           alpha=0.01, random_state=None, n_jobs=None, progress=False):
    """Boruta: which features are relevant at all, tested against shuffled copies.

    Each round [1]_:

    1. add shadow columns, independently shuffled copies of the features still
       undecided; while there are fewer than 5, the set is doubled (R's
       ``cbind(xSha, xSha)``), so one undecided feature gets 8 shadows;
    2. fit a clone of ``estimator`` on the features not rejected plus the shadows,
       and compute one importance per column;
    3. a feature scores a hit when its importance exceeds the largest shadow
       importance of the round;
    4. with h_j hits in n rounds and m features in all, test every undecided
       feature with the Bonferroni-adjusted binomial tails, X ~ Binomial(n, 1/2)::

           confirm j  when  min(1, m * P(X >= h_j)) < alpha
           reject  j  when  min(1, m * P(X <= h_j)) < alpha

       Rejected features leave the model; confirmed ones stay in it.

    The rounds stop when no feature is undecided or after ``max_rounds``; what is
    left is tentative.

    Conventions. Beyond the paper this follows R's ``Boruta`` package
    (``Boruta.default``): shadows are renamed and shuffled column by column, the
    hit is a strict ``>``, rejected features are dropped from the model and
    confirmed ones kept, NaN importances count as 0 (with a warning), and rejection
    wins when both tails pass (only possible for alpha > 1/2); the Bonferroni factor
    m counts every feature, decided or not (R's ``p.adjust`` over all attributes).
    In two places it differs from R: shadows are made of the *undecided*
    features only (R shadows every non-rejected feature, confirmed ones too); and
    ``max_rounds`` rounds are run (R's ``maxRuns`` runs ``maxRuns - 1`` and must be
    at least 11).

    Definition: docs/measures.md, section 'Boruta'.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Column names become the feature names (``x0, x1, ...`` for arrays). Every
        round the estimator and the importance receive a DataFrame: the
        non-rejected features in column order, then the shadows, named
        ``shadow_1, shadow_2, ...`` (with extra leading underscores if a feature
        name already starts with ``shadow_``).
    y : array-like of shape (n_samples,)
    estimator : unfitted estimator or None, default=None
        Cloned (``sklearn.base.clone``) every round; if it has a ``random_state``
        parameter it is set to a seed drawn for that round. None:
        :class:`~sapwood.RandomForestClassifier` when ``type_of_target(y)`` is
        binary or multiclass, :class:`~sapwood.RandomForestRegressor` when it is
        continuous, with ``n_estimators=100`` and ``n_jobs``.
    importance : str or callable, default="oob_permutation"
        By name, any measure in :data:`sapwood.importance.MEASURES` that reads only
        the training or out-of-bag rows (see ``Measure.names``; ``"ufi"`` and
        ``"conditional"`` on a bagged forest), among them:

        - ``"oob_permutation"``: the z-score ``PI / SD`` of
          :func:`~sapwood.importance.oob_permutation_importance`, as R's default
          ``getImpRfZ`` (ranger's scaled permutation importance); needs a bagged
          forest (``bootstrap=True``), which the default estimator is;
        - ``"oob_permutation_raw"``: its mean PI (R's ``getImpRfRaw``);
        - ``"mdi"``: :func:`~sapwood.importance.mdi` (R's ``getImpRfGini``), for any
          tree model; biased toward features with many split points.

        A callable ``importance(fitted_model, X, y)`` returns an
        :class:`~sapwood.importance.ImportanceResult` (its ``importances_mean`` is
        used) or an array with one value per column of X; it handles its own
        randomness.
    max_rounds : int, default=100
    alpha : float in (0, 1), default=0.01
        Level of the adjusted binomial tests (R's ``pValue``).
    random_state : int, RandomState instance or None, default=None
        The one source of randomness: ``rng = check_random_state(random_state)``
        draws, each round, ``rng.permutation(n_samples)`` for every shadow column in
        order, then the estimator's seed and the named importance's seed, each
        ``rng.randint(2**31 - 1)``.
    n_jobs : int or None, default=None
        Threads for the default estimator and the named importances. The result
        does not depend on it.
    progress : bool, default=False
        Show a bar on stderr counting the rounds.

    Returns
    -------
    BorutaResult

    References
    ----------
    .. [1] M. B. Kursa, W. R. Rudnicki, "Feature Selection with the Boruta Package",
       Journal of Statistical Software 36(11), 1-13, 2010. doi:10.18637/jss.v036.i11

    Examples
    --------
    >>> from sapwood import RandomForestClassifier
    >>> from sapwood.datasets import make_ground_truth
    >>> X, y, truth = make_ground_truth(n_samples=300, random_state=0)
    >>> result = boruta(X, y, estimator=RandomForestClassifier(n_estimators=30),
    ...                 max_rounds=20, random_state=0)
    >>> "noise_id" in result.confirmed
    False
    """
    frame, names = _as_frame(X)
    n_samples = frame.shape[0]
    if _num_samples(y) != n_samples:
        raise ValueError(f"X and y passed to boruta must have the same number of rows; "
                         f"got X with {n_samples} and y with {_num_samples(y)}")
    if estimator is None:
        estimator = _default_estimator(y, n_jobs)
    named = isinstance(importance, str)
    if named and importance not in _named_importances():
        raise ValueError(f"The 'importance' parameter of boruta must be a str among "
                         f"{sorted(_named_importances())} or a callable. Got {importance!r} "
                         "instead.")
    rng = check_random_state(random_state)
    prefix = _shadow_prefix(names)
    seed_bound = np.iinfo(np.int32).max

    n_features = len(names)
    decision = np.full(n_features, TENTATIVE, dtype=object)
    hits = np.zeros(n_features, dtype=np.int64)
    decided_round = np.zeros(n_features, dtype=np.int64)
    history = []
    n_rounds = 0
    with progress_bar(max_rounds, "Boruta rounds", progress) as steps:
        while n_rounds < max_rounds and (decision == TENTATIVE).any():
            n_rounds += 1
            undecided = np.flatnonzero(decision == TENTATIVE)
            in_model = np.flatnonzero(decision != REJECTED)
            sources = undecided
            while sources.shape[0] < MIN_SHADOWS:
                sources = np.concatenate([sources, sources])
            permutations = [rng.permutation(n_samples) for _ in sources]
            model_seed = int(rng.randint(seed_bound))
            importance_seed = int(rng.randint(seed_bound))

            X_round = _with_shadows(frame, in_model, sources, permutations, prefix)
            model = clone(estimator)
            if "random_state" in model.get_params(deep=False):
                model.set_params(random_state=model_seed)
            model.fit(X_round, y)
            if named:
                values = _importances(importance, model, X_round, y,
                                      random_state=importance_seed, n_jobs=n_jobs)
            else:
                values = importance(model, X_round, y)
            values = _column_importances(values, X_round.shape[1])

            real = values[:in_model.shape[0]]
            shadow_max = values[in_model.shape[0]:].max()
            hit = real > shadow_max
            hits[in_model] += hit
            history.append(pd.DataFrame({
                "round": n_rounds, "feature": [names[j] for j in in_model], "importance": real,
                "shadow_max": shadow_max, "n_shadows": sources.shape[0], "hit": hit}))

            confirm, reject = decide(hits[undecided], n_rounds, alpha, len(names))
            decision[undecided[confirm]] = CONFIRMED
            decision[undecided[reject]] = REJECTED
            decided_round[undecided[confirm | reject]] = n_rounds
            steps.advance()
        if n_rounds < max_rounds:
            steps.finish_early(f"Boruta: every feature decided after {n_rounds} rounds")

    params = {"estimator": repr(estimator), "importance": importance if named
              else repr(importance), "max_rounds": max_rounds, "alpha": alpha,
              "random_state": random_state if isinstance(random_state, Integral) else None,
              "n_jobs": n_jobs}
    return BorutaResult(feature_names=names, decision=decision.astype(str), hits=hits,
                        decided_round=decided_round, n_rounds=n_rounds,
                        history=pd.concat(history, ignore_index=True), params=params)
