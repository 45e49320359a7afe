"""Actual impurity reduction (AIR): impurity importance corrected by shadow columns.

Nembrini, Koenig, Wright (2018), doi:10.1093/bioinformatics/bty373; ranger's
``importance = "impurity_corrected"``. One row permutation pi, shared by all columns,
gives a shadow copy ``X[pi, j]`` of every column j. A forest grown on the 2p columns
sees shadows that look exactly like their originals (same values, same number of split
points) but carry no information about y, so the impurity decrease a shadow collects
estimates the decrease its original collects by chance alone::

    AIR_j = (1/N) sum_trees [ sum_{splits i on j} d_i - sum_{splits i on shadow j} d_i ]
    d_i   = (w_i I_i - w_L I_L - w_R I_R) / w_root

Irrelevant features get values scattered around zero, negative ones included, which
is what Janitza's p-values need. XGBoost and LightGBM trees record no impurities; their
split gain (the reduction in the boosting objective) takes the place of the decrease.
"""

from __future__ import annotations

import inspect
import numbers

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._format import LEAF
from .._impurity import node_decrease
from .._progress import check_progress
from ..adapters import as_ensemble, split_statistic
from ._engine._ranks import TREES_ONLY, covariance_draws
from ._engine._result import ImportanceResult

__all__ = ["air", "infinitesimal_jackknife"]

def air(estimator, X, y, *, random_state=None, progress=False) -> ImportanceResult:
    """Actual impurity reduction (AIR, Nembrini et al. 2018): impurity importance minus
    that of a permuted shadow copy of each feature.

    Draw one row permutation pi of the n rows and append the shadow columns
    ``X[pi, :]`` to X (the same permutation for every column, as ranger does); grow a
    clone of ``estimator`` on the n x 2p matrix; then for feature j [1]_::

        d_i      = (w_i I_i - w_L I_L - w_R I_R) / w_root      (split node i of a tree)
        AIR_j(t) = sum_{splits i on j} d_i - sum_{splits i on shadow j} d_i
        AIR_j    = (1/N) sum_t AIR_j(t)

    with w the weighted in-bag sample counts, I the node impurity (gini, entropy,
    variance, ...) the trees record and N the number of trees, single-node trees
    included. For XGBoost and LightGBM models, whose trees record no impurities, d_i
    is the split's gain (the reduction of the boosting objective the library reports:
    XGBoost's ``loss_change``, LightGBM's ``split_gain``) divided by the root's cover
    (hessian sum): for squared error that is the decrease in the sum of squares per
    row, the same quantity as above.
    The shadow of j has j's values and split points but no relation to y
    (or to the other columns), so its decrease estimates what j collects by chance;
    unlike :func:`mdi` the result is not biased toward features with many split points,
    and irrelevant features scatter around zero, negative values included, so that
    :func:`janitza_pvalues` applies.

    **Not for prediction**: the forest grown here has seen the shadow columns, which
    take splits away from the real ones; it is used for the importance only and then
    discarded (ranger warns likewise).

    Units: the per-tree sums are divided by the tree's root weight (as
    :func:`ufi` and Altmann's unnormalised MDI do) and are not normalised to
    sum 1. ranger sums the undivided decreases and divides by N, so its
    ``variable.importance`` equals ``importances_mean * n_samples`` when every root
    weight is n_samples (bootstrap draws of n rows, no sample weights). Its decrease is
    the same quantity: the gini decrease for classification and the decrease in the
    sum of squared deviations for regression (``w I`` with I the node variance).

    ``max_features`` follows ranger: the estimator's ``max_features`` is settled
    against the p original features (``"sqrt"``: floor(sqrt(p)), ``"log2"``,
    a fraction f: max(1, floor(f p)), None: p, an int as given, at most p), and that
    many candidate columns are drawn at each split from all 2p columns, shadows
    included. So a split considers as many candidates as the estimator would without
    shadows, about half of them shadows; with ``max_features=None`` a tree is no
    longer deterministic. XGBoost and LightGBM estimators keep their own column
    sampling (``colsample_bynode`` / ``feature_fraction_bynode``, by default every
    column, shadows included, at every split).

    Definition: docs/measures.md, section 'Actual impurity reduction (AIR)'.

    Parameters
    ----------
    estimator : unfitted estimator
        A sapwood or scikit-learn ``DecisionTree*``, ``RandomForest*``,
        ``ExtraTrees*`` or ``GradientBoosting*`` estimator, or an XGBoost
        (``XGBClassifier`` / ``XGBRegressor``, ...) or LightGBM (``LGBMClassifier`` /
        ``LGBMRegressor``, ...) estimator. A clone is fitted (its other
        hyper-parameters unchanged), never ``estimator`` itself.
    X : array-like of shape (n_samples, n_features)
        Numeric training data (NaN allowed where the estimator allows it).
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
    random_state : int, RandomState instance or None, default=None
        ``rng = check_random_state(random_state)`` draws the row permutation
        ``rng.permutation(n_samples)``; then, only if the estimator's own
        ``random_state`` is None, the forest's seed ``rng.randint(2**31 - 1)``. An
        estimator with its own ``random_state`` keeps it.
    progress : bool, default=False
        A bar on stderr counting the trees of the shadow forest as they are grown
        (sapwood's forests and boosting; other estimators fit without one). The
        numbers do not depend on it.

    Returns
    -------
    ImportanceResult
        ``method="air"``; ``importances`` (n_features, n_trees) holds
        AIR_j(t), ``importances_mean`` AIR_j, ``importances_std`` their std over trees
        (ddof=0). ``extra["shadow"]`` is the shadow part, (1/N) sum_t sum_{splits on
        shadow j} d_i, so ``importances_mean + extra["shadow"]`` is the part collected
        by the feature itself; ``extra["row_permutation"]`` is pi. ``trace`` has one
        row per split node: tree, node, feature (the original's name), shadow (True
        for a split on the shadow copy), w and decrease (d_i); per tree, the decreases
        of a feature minus those of its shadow sum to ``importances``. ``params``:
        random_state, forest_random_state, max_features (the settled count),
        n_trees, task. For a bagged forest (bootstrap draws recorded), ``rank_draws``
        holds pseudo-draws whose mean is AIR and whose standard-error covariance is the
        bias-corrected infinitesimal jackknife's over training samples
        (:func:`infinitesimal_jackknife`); the rank intervals rest on them (the trees
        share their training sample: their spread is far too narrow). Otherwise the
        rank intervals rest on the trees, and ``extra["intervals"]`` says so.

    Raises
    ------
    TypeError
        If ``estimator`` is not one of the estimators above.
    ValueError
        If ``estimator`` is already fitted, its ``max_features`` exceeds p, or X and y
        do not have the same number of rows.

    References
    ----------
    .. [1] S. Nembrini, I. R. Koenig, M. N. Wright, "The revival of the Gini
       importance?", Bioinformatics 34(21), 3711-3718, 2018.
       doi:10.1093/bioinformatics/bty373

    Examples
    --------
    >>> from sapwood import RandomForestClassifier
    >>> from sapwood.datasets import make_ground_truth
    >>> X, y, truth = make_ground_truth(300, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=20, random_state=0)
    >>> result = air(forest, X, y, random_state=0)
    >>> result.params["max_features"]
    3
    """
    statistic = split_statistic(estimator)
    boosting_library = statistic == "gain"
    check_progress(progress)
    if statistic is None:
        raise TypeError(
            "The 'estimator' parameter of air must be an unfitted sapwood "
            "or scikit-learn DecisionTree*, RandomForest*, ExtraTrees* or "
            "GradientBoosting* estimator, or an XGBoost or LightGBM estimator. Got "
            f"{type(estimator).__name__} instead.")
    if _is_fitted(estimator):
        raise ValueError(
            "The 'estimator' parameter of air must be unfitted: AIR grows "
            "its own forest on X plus shadow columns and does not explain an already "
            f"fitted model. Got a fitted {type(estimator).__name__}; pass "
            "sklearn.base.clone(estimator).")
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    X = check_array(X, dtype=np.float32, ensure_all_finite="allow-nan",
                    input_name="X")
    n_samples, n_features = X.shape
    n_targets = np.shape(y)[0] if np.ndim(y) else 0
    if n_targets != n_samples:
        raise ValueError(f"The 'y' parameter of air must have one entry per "
                         f"row of X ({n_samples}). Got {n_targets} instead.")
    names = names or [f"x{j}" for j in range(n_features)]
    settings = {}
    if not boosting_library:
        settings["max_features"] = _settle_max_features(
            estimator.get_params()["max_features"], n_features)

    rng = check_random_state(random_state)
    permutation = rng.permutation(n_samples)
    seed = estimator.get_params()["random_state"]
    if seed is None:
        seed = int(rng.randint(np.iinfo(np.int32).max))
    model = clone(estimator).set_params(random_state=seed, **settings)
    # sapwood's learners count their trees; other estimators' fit takes no such option.
    counts_trees = progress and "progress" in inspect.signature(model.fit).parameters
    model.fit(shadow_matrix(X, permutation), y, **({"progress": True} if counts_trees
                                                    else {}))

    ensemble = as_ensemble(model)
    importances = np.zeros((n_features, ensemble.n_trees))
    shadow = np.zeros((n_features, ensemble.n_trees))
    traces = []
    for t, tree in enumerate(ensemble.trees):
        split, feature, decrease, root = _tree_decreases(tree, boosting_library)
        totals = np.zeros(2 * n_features)
        for f, value in zip(feature, decrease, strict=True):
            totals[f] += value  # in node order, as scikit-learn sums its importances
        if root > 0:  # a tree that saw no weight (possible in LightGBM) adds nothing
            totals /= root
        importances[:, t] = totals[:n_features] - totals[n_features:]
        shadow[:, t] = totals[n_features:]
        traces.append(pd.DataFrame({
            "tree": t, "node": split,
            "feature": np.asarray(names, dtype=object)[feature % n_features],
            "shadow": feature >= n_features,
            "w": tree.weighted_n_node_samples[split], "decrease": decrease / root}))
    params = {
        "random_state": random_state if isinstance(random_state, numbers.Integral) else None,
        "forest_random_state": seed if isinstance(seed, numbers.Integral) else None,
        "max_features": settings.get("max_features"), "n_trees": ensemble.n_trees,
        "task": ensemble.task,
        "decrease": "split gain / root cover" if boosting_library else "impurity decrease",
    }
    result = ImportanceResult.from_draws(
        importances, feature_names=names, method="air", params=params,
        trace=pd.concat(traces, ignore_index=True),
        extra={"shadow": shadow.mean(axis=1), "row_permutation": permutation})
    if ensemble.bootstrap is None or ensemble.n_trees < 2:
        # No record of the rows each tree drew: the trees are the only draws.
        intervals = {"ci": TREES_ONLY, "rank": TREES_ONLY}
        return result.replace(extra={**result.extra, "intervals": intervals})
    counts = np.stack([ensemble.bootstrap.counts(t) for t in range(ensemble.n_trees)])
    covariance = infinitesimal_jackknife(counts, importances)
    intervals = {"ci": TREES_ONLY, "rank": "new training samples (the bias-corrected "
                 "infinitesimal jackknife over the trees' bootstrap draws)"}
    return result.replace(rank_draws=covariance_draws(result.importances_mean, covariance),
                          extra={**result.extra, "intervals": intervals})


def infinitesimal_jackknife(counts, per_tree):
    """The bias-corrected infinitesimal-jackknife covariance (V_IJ-U) of the mean over
    the trees of ``per_tree`` (n_features, n_trees), from how often each training row was
    drawn for each tree, ``counts`` (n_trees, n_samples) (Wager, Hastie & Efron 2014,
    doi:10.48550/arXiv.1311.4555, eq. 7 and 13)::

        U_ij   = cov_t(N_ti, T_jt)
        V_jk   = sum_i U_ij U_ik - (sum_i var_t(N_ti) / B) cov_t(T_jt, T_kt)

    (covariances over the B trees with divisor B). The first term is the covariance of
    the forest's mean over new training samples plus, for B trees, noise of about
    sum_i var(N_ti) / B times the trees' own covariance, which the second removes."""
    counts = np.asarray(counts, dtype=np.float64)
    n_trees = counts.shape[0]
    counts = counts - counts.mean(axis=0)
    centred = per_tree.T - per_tree.mean(axis=1)
    influence = counts.T @ centred / n_trees
    noise = np.sum(counts**2) / n_trees / n_trees
    return influence.T @ influence - noise * (centred.T @ centred / n_trees)


def _tree_decreases(tree, use_gain):
    """(split nodes, their features, their decreases d_i times the root weight, root
    weight) of one tree: impurity decreases, or split gains for the boosting
    libraries."""
    if use_gain:
        split = np.flatnonzero(tree.children_left != LEAF)
        return split, tree.feature[split], tree.gain[split], tree.cover[0]
    split, _, _, decrease = node_decrease(tree)
    return split, tree.feature[split], decrease, tree.weighted_n_node_samples[0]


def shadow_matrix(X, permutation):
    """``[X, X[permutation]]``: the p columns, then their shadows, all rows permuted
    by the same permutation."""
    return np.hstack([X, X[permutation]])


def _settle_max_features(max_features, n_features):
    # Settled against the p real columns (ranger's mtry), not the 2p the forest sees.
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, numbers.Integral):
        if not 1 <= max_features <= n_features:
            raise ValueError(
                "The 'max_features' parameter of the estimator must be in the range [1, "
                f"{n_features}] (the number of features of X) for air, "
                "which draws that many candidates from the features and their shadows. "
                f"Got {max_features} instead.")
        return int(max_features)
    if isinstance(max_features, numbers.Real) and 0.0 < max_features <= 1.0:
        return max(1, int(max_features * n_features))
    raise ValueError("The 'max_features' parameter of the estimator must be an int, a float "
                     "in (0, 1], 'sqrt', 'log2' or None for air. Got "
                     f"{max_features!r} instead.")


def _is_fitted(estimator):
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True
