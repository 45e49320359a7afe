"""Out-of-bag permutation importance of bagged forests (Breiman 2001; R randomForest's
``importance(type = 1)``, Liaw & Wiener 2002).

For tree t with out-of-bag rows B_t and feature j::

    PI_t(j) = L_t(B_t with column j permuted among B_t) - L_t(B_t)

where L_t is the tree's own 0/1 error (classification: the decrease in accuracy) or
its mean squared error (regression: the increase in MSE). PI_t(j) = 0 when tree t
never splits on j; such trees still count in N. Over the N trees::

    PI(j) = (1/N) sum_t PI_t(j)
    SD(j) = sqrt((mean_t PI_t(j)^2 - PI(j)^2) / N)
    z(j)  = PI(j) / SD(j)      (SD taken as 1 when below machine epsilon)
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.utils import check_array, check_random_state

from .._kernels._oob import oob_tree_permutation_rows
from .._kernels._permuted_traversal import lane_sets
from .._progress import counted, progress_bar
from .._sklearn_compat import Interval, validate_params
from ..learners._parallel import resolve_n_jobs
from ._engine._bagging import bootstrap_of, oob_row_draws, randomforest_summary
from ._engine._names import column_names
from ._engine._ranks import TREES_ONLY, row_blocks
from ._engine._result import ImportanceResult, mean_interval
from ._engine._survival import refuse_survival

__all__ = ["oob_permutation_importance"]

@validate_params(
    {
        "forest": "no_validation",
        "X": ["array-like"],
        "y": ["array-like"],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def oob_permutation_importance(forest, X, y, *, n_repeats=1, random_state=None, n_jobs=None,
                               progress=False):
    """Out-of-bag permutation importance with R randomForest's definitions.

    Every tree is scored on its own out-of-bag (OOB) rows B_t before and after
    permuting one column among those rows [1]_ [2]_::

        PI_t(j) = L_t(B_t, column j permuted among B_t) - L_t(B_t)
        PI(j)   = (1/N) sum_t PI_t(j)
        SD(j)   = sqrt((mean_t PI_t(j)^2 - PI(j)^2) / N)
        z(j)    = PI(j) / SD(j)

    L_t is tree t's own error: the fraction of B_t it misclassifies (so PI_t is the
    decrease in accuracy, randomForest's ``MeanDecreaseAccuracy``) or its mean squared
    error (the increase in MSE, ``%IncMSE`` before scaling). PI_t(j) = 0 when tree t
    never splits on j, and such trees still count in N; so does a tree without OOB
    rows. SD is randomForest's standard error (a slightly negative radicand from
    rounding counts as 0); in z it is replaced by 1 when below machine epsilon
    (``importance(scale = TRUE)``).

    Only rows whose path meets a split on j are re-routed, from the first such split,
    reading the permuted value only at splits on j; trees that never use j are skipped.
    The numbers equal permuting the column and predicting every OOB row again.

    Definition: docs/measures.md, section 'Out-of-bag permutation importance'.

    Parameters
    ----------
    forest : fitted bagged forest, or a TreeEnsemble / model file with a bootstrap
        Any model whose tree format records its bootstrap draws
        (``TreeEnsemble.bootstrap``): ``sapwood.RandomForestClassifier`` /
        ``RandomForestRegressor`` / ``ExtraTrees*`` and scikit-learn's
        ``RandomForest*`` / ``ExtraTrees*`` fitted with ``bootstrap=True`` (in-bag
        rows regenerated from each tree's stored ``random_state`` as scikit-learn 1.9
        draws them), and sapwood model files saved from them. Single output only.
    X : array-like of shape (n_samples, n_features)
        The data the forest was fit on (converted to float32 as the forest did; NaN
        marks a missing value). Column names become the feature names.
    y : array-like of shape (n_samples,)
        The targets it was fit on.
    n_repeats : int, default=1
        Permutations per tree and feature. With more than one, PI_t(j), the per-class
        values and the casewise values are averaged over the repeats before anything
        else (randomForest's ``nPerm``).
    random_state : int, RandomState instance or None, default=None
        One seed per tree is drawn up front, ``check_random_state(random_state)
        .randint(2**31 - 1, size=n_trees)``; tree t then draws, from
        ``RandomState(seed_t)``, ``permutation(|B_t|)`` for every repeat and, within it,
        every feature in column order (also for features the tree does not use).
    n_jobs : int or None, default=None
        Threads over trees (joblib); None takes an enclosing ``joblib.parallel_config``'s
        ``n_jobs`` (one thread outside any). The numbers do not depend on it.
    progress : bool, default=False
        A bar on stderr counting the trees as they are scored, with the time left.
        The numbers do not depend on it.

    Returns
    -------
    ImportanceResult
        ``importances_mean`` = PI, ``importances_std`` = SD, ``importances`` = PI_t of
        shape (n_features, n_trees), ``method="oob_permutation"``, and ``extra``:

        - ``"zscore"``: z, shape (n_features,);
        - ``"per_class"`` (classification): DataFrame (features x classes) of the same
          mean with accuracy restricted to the OOB rows of each class (a tree with no
          OOB row of a class contributes 0 for it), and ``"per_class_std"`` its SD;
        - ``"casewise"``: (n_samples, n_features) local importances, randomForest's
          ``localImp`` (``rf.c``). For a classifier, each tree for which row i is OOB
          and whose permuted prediction differs from its own adds -1 when the
          permuted prediction is the true class and +1 otherwise (so with three or
          more classes a wrong class turned into another wrong class counts +1);
          for a regressor it adds the increase of the squared error. The sum is
          divided by the number of trees for which the row was OOB (NaN if none).
          Equal to R's on R's own tree and permutations
          (``tests/importance/test_oob_randomforest.py``). Definition:
          docs/measures.md, section 'Out-of-bag casewise importance (randomForest
          `localImp`)'.
        - ``"n_oob_trees"``: for every row, the number of trees it was OOB for.

        ``rank_draws`` (n_features, n_samples): per-row draws whose mean is PI, each
        loss change counted at the row that read the permuted value and at the row it
        came from; the rank intervals rest on them (the trees share their rows, so the
        spread over trees understates the error). Definition: docs/measures.md,
        section 'Rank intervals'.

    Raises
    ------
    ValueError
        If the forest carries no bagging information (not bootstrapped, or a model
        whose in-bag rows cannot be recovered), or X / y do not match its training set.

    References
    ----------
    .. [1] L. Breiman, "Random Forests", Machine Learning 45(1), 5-32, 2001.
       doi:10.1023/A:1010933404324
    .. [2] A. Liaw and M. Wiener, "Classification and Regression by randomForest",
       R News 2(3), 18-22, 2002.
    """
    ensemble, bootstrap = bootstrap_of(forest)
    refuse_survival(ensemble, "oob_permutation_importance")
    inbag_counts = bootstrap.counts
    n_training_rows = bootstrap.n_samples
    if ensemble.trees[0].n_outputs != 1:
        raise ValueError("oob_permutation_importance supports single-output forests only; "
                         f"got {ensemble.trees[0].n_outputs} outputs")
    feature_names = column_names(X, forest, ensemble.n_features)
    X = np.ascontiguousarray(check_array(X, dtype=np.float32, ensure_all_finite="allow-nan"))
    if X.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {X.shape[1]} features; the forest was fit on "
                         f"{ensemble.n_features}")
    n_samples = X.shape[0]
    # Finite data takes the fast kernel (same numbers); missing values the general one.
    fast = bool(np.isfinite(X).all())
    if n_samples != n_training_rows:
        raise ValueError(f"X has {n_samples} rows; the forest was fit on {n_training_rows}. "
                         "Out-of-bag importance needs the training data.")
    classification = ensemble.task == "classification"
    target, target_class, classes = _encode_targets(ensemble, y, n_samples, classification)
    n_trees = ensemble.n_trees
    seeds = check_random_state(random_state).randint(np.iinfo(np.int32).max, size=n_trees)

    def one_tree(t):
        oob = np.flatnonzero(inbag_counts(t) == 0)
        tree = ensemble.trees[t]
        values = tree.value[:, 0, :]
        node_prediction = (np.argmax(values, axis=1).astype(np.float64) if classification
                           else np.ascontiguousarray(values[:, 0]))
        rng = np.random.RandomState(seeds[t])
        permutations = np.empty((n_repeats, X.shape[1], oob.shape[0]), dtype=np.intp)
        for r in range(n_repeats):
            for j in range(X.shape[1]):
                permutations[r, j] = rng.permutation(oob.shape[0])
        outputs = oob_tree_permutation_rows(
            X, oob, target[oob], target_class[oob], len(classes), classification,
            tree.children_left, tree.children_right, tree.feature, tree.threshold,
            tree.missing_go_to_left, tree.operator, tree.cat_bitsets, node_prediction,
            permutations, fast, lane_sets(tree.cat_bitsets))
        return oob, outputs

    threads = resolve_n_jobs(n_jobs)
    if threads == 1:
        per_tree = (one_tree(t) for t in range(n_trees))
    else:
        per_tree = Parallel(n_jobs=threads, backend="threading", return_as="generator")(
            delayed(one_tree)(t) for t in range(n_trees))

    importances = np.zeros((X.shape[1], n_trees))
    by_class = np.zeros((X.shape[1], len(classes), n_trees))
    casewise = np.zeros((n_samples, X.shape[1]))
    by_row = np.zeros((n_samples, X.shape[1]))
    n_oob_trees = np.zeros(n_samples, dtype=np.intp)
    # Results arrive in tree order whatever n_jobs is, so every sum has the same order.
    with progress_bar(n_trees, "OOB permutation, trees", progress) as steps:
        for t, (oob, (_, increase, increase_by_class, case, changes)) in enumerate(
                counted(per_tree, steps)):
            if oob.shape[0] > 0:
                importances[:, t] = increase / (n_repeats * oob.shape[0])
                by_row[oob] += changes / (n_repeats * oob.shape[0])
            rows_per_class = np.bincount(target_class[oob], minlength=len(classes))
            present = rows_per_class > 0
            by_class[:, present, t] = increase_by_class[:, present] / (
                n_repeats * rows_per_class[present])
            casewise[oob] += case / n_repeats
            n_oob_trees[oob] += 1

    with np.errstate(invalid="ignore", divide="ignore"):
        casewise /= n_oob_trees[:, None]
    mean, std, zscore = randomforest_summary(importances)
    extra = {"zscore": zscore, "casewise": casewise, "n_oob_trees": n_oob_trees,
             "intervals": {"ci": TREES_ONLY, "rank": "the out-of-bag rows and the "
                           "shuffles (one draw per row)"}}
    if classification:
        class_mean, class_std, _ = randomforest_summary(by_class)
        extra["per_class"] = pd.DataFrame(class_mean, index=feature_names,
                                          columns=list(classes))
        extra["per_class_std"] = pd.DataFrame(class_std, index=feature_names,
                                              columns=list(classes))
    params = {"n_repeats": n_repeats, "random_state": random_state, "n_jobs": n_jobs,
              "n_trees": n_trees, "task": ensemble.task}
    ci_low, ci_high = mean_interval(importances)
    return ImportanceResult(importances_mean=mean, importances_std=std,
                            feature_names=feature_names, method="oob_permutation",
                            params=params, importances=importances, ci_low=ci_low,
                            ci_high=ci_high, extra=extra,
                            rank_draws=row_blocks(oob_row_draws(by_row, n_trees)))


def _encode_targets(ensemble, y, n_samples, classification):
    """(target as float64, class code per row, class labels) for the kernel."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must have shape ({n_samples},); got {y.shape}")
    if not classification:
        return y.astype(np.float64), np.zeros(n_samples, dtype=np.intp), (None,)
    classes = np.asarray(ensemble.classes)
    codes = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    unknown = classes[codes] != y
    if unknown.any():
        raise ValueError(f"y contains labels the forest was not fit on, e.g. "
                         f"{y[np.argmax(unknown)]!r}; classes are {classes.tolist()}")
    return codes.astype(np.float64), codes.astype(np.intp), classes.tolist()


