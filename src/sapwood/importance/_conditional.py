"""Conditional permutation importance (Strobl, Boulesteix, Kneib, Augustin, Zeileis 2008;
party's ``varimp(conditional = TRUE)``).

Permuting X_j unconditionally breaks its relation with every other feature as well as
with y, so a feature correlated with an informative one looks important. Permuting X_j
only within cells of the features associated with it keeps those relations: for tree t
the cells are the grid the tree's own split points on the conditioning features cut::

    Z_j       = {z != j : 1 - p(X_j, X_z) > threshold}
    cells_t,j = cross product of tree t's cuts on every z in Z_j that tree t uses
    CPI_t(j)  = L_t(rows, X_j permuted within cells_t,j) - L_t(rows)
    CPI(j)    = (1/N) sum_t CPI_t(j)

with the rows and losses of the out-of-bag permutation importance.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.special import expit, softmax
from scipy.stats import chi2
from sklearn.utils import check_array, check_random_state

from .._kernels._conditional import conditional_tree_permutation, pairwise_correlation
from .._kernels._permuted_traversal import lane_sets
from .._prediction import classes_per_output, ties_to_positive
from .._progress import counted, progress_bar
from .._sklearn_compat import Interval, validate_params
from ..adapters import as_ensemble
from ..learners._parallel import resolve_n_jobs
from ._engine._bagging import bootstrap_of, oob_row_draws, randomforest_summary
from ._engine._names import column_names
from ._engine._ranks import TREES_ONLY, row_blocks
from ._engine._result import ImportanceResult, mean_interval
from ._engine._survival import refuse_survival

__all__ = ["association_test", "conditional_permutation_importance"]

TEST_NAME = "party ctree quad univariate: (n-1) r^2 ~ chi2(1), pairwise complete rows"
# What a boosted model's intervals cover: its draws are the repeats.
_SHUFFLES = "the spread of the repeats' shuffles only, not the choice of rows"


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "y": ["array-like"],
        "threshold": [Interval(Real, 0, 1, closed="both")],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def conditional_permutation_importance(model, X, y, *, threshold=0.2, n_repeats=1,
                                       random_state=None, n_jobs=None, progress=False):
    """Conditional permutation importance (Strobl et al. 2008), per tree on a grid of
    the tree's own split points.

    For feature j the conditioning set Z_j holds every other feature associated with
    it: 1 - p > ``threshold`` for the test below [1]_ [2]_. For each tree t, every
    feature of Z_j that tree t splits on is cut at all of tree t's split points on it;
    the cells are the cross product of those cuts, and X_j is permuted among the
    evaluation rows within each cell::

        CPI_t(j) = L_t(rows, X_j permuted within tree t's cells) - L_t(rows)
        CPI(j)   = (1/N) sum_t CPI_t(j)
        SD(j)    = sqrt((mean_t CPI_t(j)^2 - CPI(j)^2) / N)

    L_t is tree t's own error: the fraction of rows it misclassifies (CPI_t is the
    decrease in accuracy) or its mean squared error (the increase in MSE), as in
    :func:`oob_permutation_importance`. CPI_t(j) = 0 when tree t never splits on j,
    and such trees still count in N. A tree that splits on no feature of Z_j permutes
    X_j among all rows, exactly as the unconditional out-of-bag importance does (with
    ``threshold=1`` no feature is ever conditioned on and the numbers equal
    :func:`oob_permutation_importance` for the same ``random_state``).

    Rows. A bagged forest (sapwood or scikit-learn ``RandomForest*`` /
    ``ExtraTrees*`` fitted with ``bootstrap=True``) is given its training data and
    every tree is evaluated on its own out-of-bag rows, as party does. Any other model
    (a single tree, a forest without bootstrap, gradient boosting, XGBoost or LightGBM
    through :func:`sapwood.adapters.as_ensemble`) is given held-out data and every tree
    uses all rows.

    Boosted models (trees whose outputs add up) have no per-tree predictions to score.
    There every tree reads X_j permuted within its own cells (its own permutation) at
    the same time, and the model's loss (accuracy or MSE of its predictions) is
    compared once per repeat: ``importances`` are then per repeat and
    ``importances_std`` their standard deviation (ddof=0).

    Association test. Party's ``ctree(teststat = "quad", testtype = "Univariate")``
    for two numeric variables: with r the Pearson correlation of X_j and X_z on the n
    rows where both are present, c = (n - 1) r^2 is compared with a chi-square
    distribution with one degree of freedom, p = P(chi2_1 > c) (the asymptotic
    conditional-inference test; for a 0/1 column it is exactly party's test for a
    two-level factor). Categorical columns must be numerically encoded, as for every
    sapwood model; codes of a nominal feature with more than two levels are tested as
    scores (a linear-by-linear association test), which can miss a non-monotone
    association. A pair with fewer than two complete rows or a column constant on
    them has p = 1 and is never conditioned on.

    Missing values. A NaN in a conditioning feature is a bin of its own (the tree sends
    all missing values the same way at each split), so rows with a missing Z value are
    permuted among themselves. NaN in X_j is permuted like any value; the test uses
    pairwise complete rows.

    Evaluation. Only rows whose path meets a split on j are re-routed, from the first
    such split, reading the permuted value only at splits on j; the numbers equal
    permuting the column and predicting every row again.

    Definition: docs/measures.md, section 'Conditional permutation importance'.

    Parameters
    ----------
    model : fitted tree model
        Anything :func:`sapwood.adapters.as_ensemble` reads, single output.
    X : array-like of shape (n_samples, n_features)
        A bagged forest's training data, else held-out data (converted to the model's
        input dtype, float32 for all current adapters; NaN marks a missing value).
        The conditioning sets are chosen on all rows of X.
    y : array-like of shape (n_samples,)
        Its targets.
    threshold : float in [0, 1], default=0.2
        Z_j = features with 1 - p > threshold (party's default 0.2; 1 conditions on
        nothing, 0 on every feature with a non-zero correlation). With party's default
        on large data nearly every feature passes the test, and in fully grown trees
        the grid then cuts the rows into cells of one or two rows, where permuting
        changes (almost) nothing: every importance comes out near zero. Use shallower
        trees (e.g. ``min_samples_leaf=20``) or a stricter test, e.g.
        ``threshold=0.95`` (the default of Debeer & Strobl's permimp, 2020,
        doi:10.1186/s12859-020-03622-2).
    n_repeats : int, default=1
        Permutations per tree and feature; CPI_t(j) is averaged over them (forests and
        single trees) or each is one column of ``importances`` (boosting).
    random_state : int, RandomState instance or None, default=None
        One seed per tree is drawn up front, ``check_random_state(random_state)
        .randint(2**31 - 1, size=n_trees)``; tree t draws from ``RandomState(seed_t)``
        one permutation pi of its m evaluation rows, ``permutation(m)``, for every
        repeat and, within it, every feature in column order (also features the tree
        does not use). Within every cell the cell's rows, in row order, take X_j from
        the cell's rows in the order pi lists them.
    n_jobs : int or None, default=None
        Threads over trees (joblib); None takes an enclosing ``joblib.parallel_config``'s
        ``n_jobs`` (one thread outside any). The numbers do not depend on it.
    progress : bool, default=False
        Show a bar on stderr counting the trees.

    Returns
    -------
    ImportanceResult
        ``method="conditional_permutation"``. Forests and single trees:
        ``importances`` = CPI_t of shape (n_features, n_trees), ``importances_mean`` =
        CPI, ``importances_std`` = SD (randomForest's standard error). Boosting:
        ``importances`` of shape (n_features, n_repeats). ``params`` has threshold,
        test, n_repeats, random_state, n_jobs, n_trees, task, rows ("out-of-bag" or
        "held-out") and scoring ("per tree" or "model"). ``extra``:

        - ``"conditioning"``: {feature: [names of its conditioning set]};
        - ``"association_pvalues"``: DataFrame (features x features) of the test's p;
        - ``"n_cells"``: (n_features, n_trees) number of non-empty cells X_j was
          permuted within in each tree (0 where the tree does not split on j);
        - ``"intervals"``: what ``ci_low`` / ``ci_high`` (the trees, or a boosted
          model's repeats) and the rank intervals cover.

        Forests and single trees: ``rank_draws`` (n_features, n_samples), per-row draws
        whose mean is CPI, each loss change counted at the row that read the permuted
        value and at the row of its cell it came from, as for
        :func:`oob_permutation_importance`; the rank intervals rest on them (the trees
        share their rows). Definition: docs/measures.md, section 'Rank intervals'.

    Raises
    ------
    ValueError
        For a bad threshold / n_repeats (naming the allowed values), a multi-output
        model, X / y that do not match the model, or labels the model was not fit on.

    References
    ----------
    .. [1] C. Strobl, A.-L. Boulesteix, T. Kneib, T. Augustin, A. Zeileis, "Conditional
       variable importance for random forests", BMC Bioinformatics 9:307, 2008.
       doi:10.1186/1471-2105-9-307
    .. [2] T. Hothorn, K. Hornik, A. Zeileis, "Unbiased Recursive Partitioning: A
       Conditional Inference Framework", Journal of Computational and Graphical
       Statistics 15(3), 651-674, 2006. doi:10.1198/106186006X133933
    """
    ensemble = as_ensemble(model)
    refuse_survival(ensemble, "conditional_permutation_importance")
    if ensemble.trees[0].n_outputs != 1:
        raise ValueError("conditional_permutation_importance supports single-output models "
                         f"only; got {ensemble.trees[0].n_outputs} outputs")
    if ensemble.combine == "sum" and _n_columns(ensemble) > (
            1 if ensemble.task == "regression" else np.inf):
        raise ValueError("conditional_permutation_importance supports single-output models "
                         f"only; got a boosted regressor with {_n_columns(ensemble)} "
                         "output columns")
    if ensemble.combine == "sum" and ensemble.task == "classification" and (
            ensemble.link not in ("logistic", "softmax")):
        raise ValueError("a boosted classifier needs link 'logistic' or 'softmax' to predict "
                         f"classes; got {ensemble.link!r}")
    feature_names = column_names(X, model, ensemble.n_features)
    X = np.ascontiguousarray(check_array(ensemble.encode(X), dtype=ensemble.input_dtype,
                                         ensure_all_finite="allow-nan"))
    n_samples, n_features = X.shape
    if n_features != ensemble.n_features:
        raise ValueError(f"X has {n_features} features; the model was fit on "
                         f"{ensemble.n_features}")
    bagged = ensemble.kind.bagged
    if bagged:
        _, bootstrap = bootstrap_of(ensemble)
        counts = bootstrap.counts
        if n_samples != bootstrap.n_samples:
            raise ValueError(f"X has {n_samples} rows; the forest was fit on "
                             f"{bootstrap.n_samples}. A bootstrapped forest is "
                             "evaluated on each tree's out-of-bag rows of its training data.")
    classification = ensemble.task == "classification"
    classes = classes_per_output(ensemble, 1)[0] if classification else None
    target = _encode_targets(y, n_samples, classes)
    pvalues, criterion = association_test(X)
    conditioning = (criterion > threshold).astype(np.uint8)
    np.fill_diagonal(conditioning, 0)

    n_trees = ensemble.n_trees
    seeds = check_random_state(random_state).randint(np.iinfo(np.int32).max, size=n_trees)
    all_rows = np.arange(n_samples)
    # Finite data takes the fast traversal (same numbers); missing values the general one.
    finite = bool(np.isfinite(X).all())

    def one_tree(t):
        rows = np.flatnonzero(counts(t) == 0) if bagged else all_rows
        tree = ensemble.trees[t]
        rng = np.random.RandomState(seeds[t])
        permutations = np.empty((n_repeats, n_features, rows.shape[0]), dtype=np.intp)
        for r in range(n_repeats):
            for j in range(n_features):
                permutations[r, j] = rng.permutation(rows.shape[0])
        changes = conditional_tree_permutation(
            X, rows, conditioning, permutations, tree.children_left, tree.children_right,
            tree.feature, tree.threshold, tree.missing_go_to_left, tree.operator,
            tree.cat_bitsets, finite, lane_sets(tree.cat_bitsets))
        return rows, changes

    threads = resolve_n_jobs(n_jobs)
    if threads == 1:
        per_tree = (one_tree(t) for t in range(n_trees))
    else:
        per_tree = Parallel(n_jobs=threads, prefer="threads", return_as="generator")(
            delayed(one_tree)(t) for t in range(n_trees))

    with progress_bar(n_trees, "conditional permutation, trees", progress) as steps:
        per_tree = counted(per_tree, steps)
        if ensemble.combine == "mean":
            scoring = "per tree"
            importances, n_cells, rank_draws = _score_per_tree(
                ensemble, per_tree, target, classification, n_repeats, n_features,
                n_samples)
            mean, std, _ = randomforest_summary(importances)
        else:
            scoring = "model"
            rank_draws = None
            importances, n_cells = _score_model(ensemble, per_tree, X, target,
                                                classification, n_repeats, n_features)
            mean, std = importances.mean(axis=1), importances.std(axis=1)
    names = np.asarray(feature_names, dtype=object)
    extra = {
        "conditioning": {feature_names[j]: names[conditioning[j] == 1].tolist()
                         for j in range(n_features)},
        "association_pvalues": pd.DataFrame(pvalues, index=feature_names,
                                            columns=feature_names),
        "n_cells": n_cells,
        "intervals": {"ci": TREES_ONLY, "rank": "the {} rows and the shuffles (one draw "
                      "per row)".format("out-of-bag" if bagged else "held-out")}
        if rank_draws is not None else {"ci": _SHUFFLES, "rank": _SHUFFLES},
    }
    params = {"threshold": threshold, "test": TEST_NAME, "n_repeats": n_repeats,
              "random_state": random_state, "n_jobs": n_jobs, "n_trees": n_trees,
              "task": ensemble.task, "rows": "out-of-bag" if bagged else "held-out",
              "scoring": scoring}
    ci_low, ci_high = mean_interval(importances)
    return ImportanceResult(importances_mean=mean, importances_std=std,
                            feature_names=feature_names, method="conditional_permutation",
                            params=params, importances=importances, ci_low=ci_low,
                            ci_high=ci_high, extra=extra,
                            rank_draws=None if rank_draws is None else row_blocks(rank_draws))


def association_test(X):
    """(p, 1 - p) for every pair of columns of ``X``: party's asymptotic
    conditional-inference test of two numeric variables, c = (n - 1) r^2 against
    chi2(1), on pairwise complete rows. The diagonal is p = 0 (a column is associated
    with itself); pairs without evidence (constant, fewer than two rows) have p = 1."""
    correlation, n_complete = pairwise_correlation(X)
    statistic = np.maximum(n_complete - 1, 0) * correlation**2
    pvalues = chi2.sf(statistic, 1)
    criterion = chi2.cdf(statistic, 1)
    return pvalues, criterion


def _encode_targets(y, n_samples, classes):
    """Class codes as float64 (classification) or float targets, shape (n_samples,)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must have shape ({n_samples},) to match X; got {y.shape}")
    if classes is None:
        return y.astype(np.float64)
    labels = np.asarray(classes)
    codes = np.clip(np.searchsorted(labels, y), 0, len(labels) - 1)
    unknown = labels[codes] != y
    if unknown.any():
        raise ValueError(f"y contains labels the model was not fit on, e.g. "
                         f"{y[np.argmax(unknown)]!r}; classes are {labels.tolist()}")
    return codes.astype(np.float64)


def _score_per_tree(ensemble, per_tree, target, classification, n_repeats, n_features,
                    n_samples):
    """CPI_t(j), shape (n_features, n_trees), the cell counts, and the rank intervals'
    per-row draws (n_features, n_samples): each tree scored on its own predictions
    (class with the largest leaf value, or leaf mean), every loss change also counted
    at both rows it involves, the row that read the permuted value and the row it came
    from, as for the out-of-bag importance (:func:`._engine._bagging.oob_row_draws`)."""
    n_trees = ensemble.n_trees
    importances = np.zeros((n_features, n_trees))
    n_cells = np.zeros((n_features, n_trees), dtype=np.intp)
    by_row = np.zeros((n_samples, n_features))
    # Results arrive in tree order whatever n_jobs is, so every sum has the same order.
    for t, (rows, (leaf, slot, position, new_leaf, cells, source)) in enumerate(per_tree):
        n_cells[:, t] = cells
        m = rows.shape[0]
        if m == 0:
            continue
        tree = ensemble.trees[t]
        values = tree.value[:, 0, :]
        if classification:
            prediction = np.argmax(values, axis=1).astype(np.float64)
        else:
            prediction = ensemble.tree_weights[t] * values[:, 0] + ensemble.base_score[0]
        own = target[rows]
        change = (_loss(classification, own[position], prediction[new_leaf])
                  - _loss(classification, own[position], prediction[leaf[position]]))
        increase = np.bincount(slot, weights=change, minlength=n_repeats * n_features)
        importances[:, t] = increase.reshape(n_repeats, n_features).sum(axis=0) / (
            n_repeats * m)
        feature = slot % n_features
        weight = change / (n_repeats * m)
        np.add.at(by_row, (rows[position], feature), weight)  # as receivers
        np.add.at(by_row, (rows[source], feature), weight)  # as givers
    return importances, n_cells, oob_row_draws(by_row, n_trees)


def _score_model(ensemble, per_tree, X, target, classification, n_repeats, n_features):
    """Loss increase of a boosted model, shape (n_features, n_repeats), with every tree
    reading its own conditionally permuted column at once, and the cell counts."""
    margin = ensemble.raw_predict(X)
    n_slots = n_repeats * n_features
    delta = np.zeros((n_slots,) + margin.shape)
    n_cells = np.zeros((n_features, ensemble.n_trees), dtype=np.intp)
    for t, (_, (leaf, slot, position, new_leaf, cells, _)) in enumerate(per_tree):
        n_cells[:, t] = cells
        values = ensemble.trees[t].value[:, 0, 0] * ensemble.tree_weights[t]
        column = ensemble.tree_output[t]
        np.add.at(delta[:, :, column], (slot, position),
                  values[new_leaf] - values[leaf[position]])
    base = _model_loss(ensemble, margin[None], target, classification)[0]
    permuted = _model_loss(ensemble, margin[None] + delta, target, classification)
    return (permuted - base).reshape(n_repeats, n_features).T, n_cells


def _n_columns(ensemble):
    return max(int(ensemble.tree_output.max()) + 1, ensemble.base_score.shape[0])


def _model_loss(ensemble, margin, target, classification):
    """Mean loss of a boosted model for a stack of margins (n_sets, n_samples, n_columns),
    predicting as :func:`sapwood.adapters.predict` does."""
    if classification:
        if margin.shape[2] == 1:
            if ties_to_positive(ensemble):
                label = (margin[:, :, 0] >= 0.0).astype(np.float64)
            else:
                positive = expit(margin[:, :, 0])
                label = (positive > 1.0 - positive).astype(np.float64)
        else:
            label = np.argmax(softmax(margin, axis=2), axis=2).astype(np.float64)
        return _loss(True, target[None], label).mean(axis=1)
    raw = margin[:, :, 0]
    prediction = {"identity": lambda v: v, "exp": np.exp, "logistic": expit}[ensemble.link](raw)
    return _loss(False, target[None], prediction).mean(axis=1)


def _loss(classification, target, prediction):
    if classification:
        return (target != prediction).astype(np.float64)
    return (target - prediction) ** 2
