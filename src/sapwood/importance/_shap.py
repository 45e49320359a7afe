"""TreeSHAP: exact Shapley values of a tree model's output, and their mean magnitude.

Lundberg, Erion & Lee (2018), "Consistent individualized feature attribution for tree
ensembles", arXiv:1802.03888 (Algorithm 2); Lundberg et al. (2020), "From local
explanations to global understanding with explainable AI for trees", Nature Machine
Intelligence 2, 56-67, doi:10.1038/s42256-019-0138-9.

Path-dependent TreeSHAP: for a row x the value of a feature set S is the tree's expected
output when the features in S take x's values and the others follow the training data
down the tree (each split sends them left and right in proportion to the children's
cover: the weighted training rows of scikit-learn and sapwood trees, the hessian sums
of XGBoost trees and the row counts of LightGBM trees, as the ``shap`` package reads
them). phi_i is the Shapley value of feature i in that game; summed over the trees
(averaged for a forest) the values add up to the model's raw output:
``expected_value + sum_i phi_i = raw(x)`` (probabilities for a forest classifier, the
margin for boosting). Interaction values split each phi_i into phi_ii + sum_{j != i}
phi_ij with phi_ij = phi_ji (Lundberg et al. 2020).

The global importance of feature i is mean_x |phi_i(x)| (averaged over the output
columns when there are several), as the ``shap`` package's bar plot shows it. Values
equal the ``shap`` package's ``TreeExplainer`` on the same model.

How it is computed: a leaf's share of phi_i depends on the row only through which of
the leaf's path features the row satisfies, so for many rows each leaf's shares are
tabulated once per mask of its d path features (d 2^(d-1) numbers; the idea of Fast
TreeSHAP v2, Yang 2021, arXiv:2109.09847) and a row costs one walk over the tree and d
reads per leaf; trees whose leaves meet too many distinct features, and few rows, use
Algorithm 2 itself (see :mod:`sapwood._kernels._shap`). Interaction values are
tabulated the same way, per leaf and per feature j the tables of the game without j
(the ``shap`` package conditions Algorithm 2 on each feature instead).

A Dask DataFrame or array (rows that need not fit in memory) is explained block by
block on Dask's workers, with whatever scheduler is active, and only the per-feature
summaries come back: mean ``|SHAP|`` and its standard deviation over all rows, the same
numbers as on the rows in memory up to the order of the final sums. The values
themselves stay a lazy Dask array to store or reduce further.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from .._kernels._shap import leaf_tables, shap_interactions, shap_tables, shap_values
from .._progress import check_progress, counted, progress_bar
from ..adapters import as_ensemble, catboost_ctr_columns, fitted_frame
from ..learners._parallel import resolve_n_jobs
from ._engine._catboost_shap import catboost_shap
from ._engine._dask import dask_rows, is_dask_collection
from ._engine._names import column_names
from ._engine._pipelines import group_view, pipeline_view, regrouped
from ._engine._result import ImportanceResult, t_interval
from ._engine._shap_interventional import MODEL_OUTPUTS, interventional_tree_shap
from ._engine._shap_output import explanation_extra, survival_output
from ._engine._shap_trees import explained_rows, shap_trees, tree_walks

__all__ = ["tree_shap"]


def tree_shap(model, X, *, data=None, feature_perturbation="auto", model_output="raw", y=None,
              interactions=False, n_jobs=None, progress=False,
              feature_groups=None, transformed=False) -> ImportanceResult:
    """SHAP values of every row of ``X`` and the mean absolute SHAP value per feature.

    Path-dependent TreeSHAP (Lundberg et al. 2018, doi:10.1038/s42256-019-0138-9 for
    the 2020 paper): exact Shapley values of the model's raw output, where a feature
    left out follows the training data down each tree in proportion to the nodes'
    cover. With background ``data``, interventional TreeSHAP (Lundberg et al. 2020): a
    feature left out takes the background rows' values, and the values are the mean
    over the background rows (see :mod:`sapwood.importance._engine._shap_interventional`), of
    the raw output, the probability or the loss. The values equal the ``shap``
    package's ``TreeExplainer`` with the same arguments on the same model.

    Definition: docs/measures.md, section 'TreeSHAP'.

    Parameters
    ----------
    model : fitted tree model or TreeEnsemble
        Anything :func:`sapwood.adapters.as_ensemble` reads: sapwood and scikit-learn
        trees, forests and boosting, scikit-learn's IsolationForest (its mean path
        length, as the ``shap`` package explains it), XGBoost (vector leaves too),
        LightGBM and CatBoost models. Or a fitted scikit-learn ``Pipeline`` whose last
        step is one of these: X is transformed by its steps once, the last step
        explained, and each input column's values are the sums of its derived columns'
        (row by row, so they still add up to the prediction; docs/measures.md,
        section 'Pipelines in their input columns').
    X : array-like or DataFrame of shape (n_rows, n_features)
        The rows to explain. A Dask DataFrame or array is explained block by block on
        Dask's workers (rows that need not fit in memory): the result then holds the
        mean and standard deviation of ``|SHAP|`` over all rows, no per-row
        ``importances``, and lazy Dask arrays of the values in ``extra``
        (path-dependent only).
    data : array-like or DataFrame of shape (n_background, n_features), default=None
        The background rows of interventional SHAP (time and memory linear in their
        number; the ``shap`` package suggests about 100 to 1,000).
    feature_perturbation : {"auto", "interventional", "tree_path_dependent"}
        ``"auto"``: interventional when ``data`` is given, else path-dependent.
    model_output : {"raw", "probability", "log_loss", "survival", \
"cumulative_hazard"}, default="raw"
        What is explained. A survival model's ``"raw"`` output is its risk score (what
        its ``predict`` gives); ``"survival"`` and ``"cumulative_hazard"`` (a survival
        forest or tree whose leaves hold the functions) explain its survival function or
        cumulative hazard at each of its times: time-dependent SHAP values
        (SurvSHAP(t)), exact through the vector leaves, of shape (n_rows, n_features,
        n_times), adding up at every time to the function the model predicts, the
        times in ``extra["times"]``. For other models
        (``"probability"`` and ``"log_loss"`` interventional only, as in
        the ``shap`` package): the raw output (a forest's mean, boosting's margin); the
        probability (a forest classifier's raw output, or binary boosting's margin
        through the logistic link); or the loss of each row against ``y``: log loss of
        logistic boosting, squared error of squared-error boosting, and for a forest or
        tree classifier what the ``shap`` package computes, the logistic loss
        ``log(1 + e^p) - y p`` of each class probability p (one column per class, y the
        label's class index in every column; not the log loss ``-log p_y``).
    y : array-like of shape (n_rows,), default=None
        The labels of the rows of ``X``, for ``model_output="log_loss"`` only: a
        classifier's classes (read as their index, 0 .. k-1, so 1 for the positive class
        of a binary one), a regression's targets.
    interactions : bool, default=False
        Also compute SHAP interaction values (about d times the cost of the plain
        values, d the number of distinct features on a leaf's path); path-dependent
        only.
    n_jobs : int or None, default=None
        Threads (joblib; the rows are split among them; per block for Dask input). The
        values do not depend on it.
    progress : bool, default=False
        A bar on stderr counting the trees as each block of rows is explained, with
        the time left (in-memory input; a Dask collection reports through Dask's own
        tools). The values do not depend on it.
    feature_groups : dict of str to list, default=None
        Named sets of columns (names for a DataFrame, else positions; a Pipeline's input
        columns) reported as one feature each, in order: a group's SHAP value is the sum
        of its columns' values, row by row (so they still add up to the prediction with
        the columns outside every group left out of the result), interaction values
        summed both ways.
    transformed : bool, default=False
        For a Pipeline: the values of the columns its last step reads (the derived
        columns) instead of its input columns.

    Returns
    -------
    ImportanceResult
        ``method="tree_shap"``; ``importances_mean`` is mean ``|SHAP|`` over the rows,
        ``importances_std`` its standard deviation over the rows, ``importances`` the
        per-row ``|SHAP|`` (n_features, n_rows). ``extra`` holds ``"shap_values"`` (signed,
        (n_rows, n_features), with a last axis of output columns when the raw output
        has several, e.g. a forest classifier's class probabilities),
        ``"expected_value"`` (scalar, or one per column; for the loss one per row, or
        per row and column) and, with ``interactions=True``, ``"interaction_values"``
        (n_rows, n_features, n_features[, n_columns]). For the plots
        (:mod:`sapwood.plotting`) it also holds ``"data"`` (``X`` as given),
        ``"output"`` (what the values add up to, e.g. ``"log-odds"``,
        ``"probability"``, ``"log loss"``) and ``"output_names"`` (each output column's
        class, or None).

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sapwood import RandomForestRegressor
    >>> X, y = make_regression(n_samples=300, n_features=4, random_state=0)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> result = tree_shap(forest, X[:50])
    >>> phi = result.extra["shap_values"]
    >>> bool(abs(result.extra["expected_value"] + phi.sum(axis=1)
    ...          - forest.predict(X[:50])).max() < 1e-8)
    True
    """
    if not isinstance(interactions, bool | np.bool_):
        raise TypeError(f"interactions must be True or False; got {interactions!r}")
    check_progress(progress)
    if feature_groups is not None and is_dask_collection(X):
        raise ValueError("feature_groups takes X in memory; a Dask collection is explained "
                         "per column")
    view = None if is_dask_collection(X) else pipeline_view(
        model, X, None if transformed else feature_groups)
    if view is None and feature_groups is not None:
        result = tree_shap(model, X, data=data, feature_perturbation=feature_perturbation,
                           model_output=model_output, y=y, interactions=interactions,
                           n_jobs=n_jobs, progress=progress)
        return regrouped(result, group_view(X, model, feature_groups))
    if view is not None:
        derived = view.transform(X)
        if transformed and not hasattr(derived, "columns"):
            import pandas as pd

            derived = pd.DataFrame(derived, columns=view.derived_names)
        result = tree_shap(view.final, derived,
                           data=None if data is None else view.transform(data),
                           feature_perturbation=feature_perturbation,
                           model_output=model_output, y=y, interactions=interactions,
                           n_jobs=n_jobs, progress=progress,
                           feature_groups=feature_groups if transformed else None)
        if transformed:
            return result
        result = regrouped(result, view)
        result.extra["data"] = X
        return result
    try:
        ensemble = as_ensemble(model)
    except ValueError:
        # CatBoost's CTRs are not in the tree format: CatBoost's own exact values.
        library_model, frame = fitted_frame(model, X)
        if catboost_ctr_columns(library_model) is None:
            raise
        if data is not None or interactions:
            raise ValueError("a CatBoost model with CTRs is explained by CatBoost's own "
                             "path-dependent SHAP values only (no background data, no "
                             "interactions)") from None
        return catboost_shap(library_model, frame, column_names(X, library_model,
                                                                frame.shape[1]))
    ensemble, model_output, explained = survival_output(ensemble, model_output)
    if explained:
        model = ensemble
    perturbation = _check_perturbation(data, feature_perturbation, model_output, y,
                                       interactions)
    if is_dask_collection(X):
        if perturbation == "interventional":
            raise ValueError("interventional TreeSHAP takes X in memory; a Dask collection "
                             "is explained path-dependent only (data=None)")
        return _explained(dask_tree_shap(model, X, interactions, resolve_n_jobs(n_jobs)),
                          explained)
    if perturbation == "interventional":
        return _explained(interventional_tree_shap(model, ensemble, X, data, model_output, y,
                                                   resolve_n_jobs(n_jobs), progress),
                          explained)
    feature_names = column_names(X, model, ensemble.n_features)
    rows = explained_rows(X, ensemble, "X")
    tree_arrays = _tree_arrays(ensemble)
    n_threads = max(1, min(resolve_n_jobs(n_jobs), rows.shape[0]))
    n_blocks = -(-rows.shape[0] // _block_rows(tree_arrays, rows.shape[1], interactions))
    with progress_bar(n_blocks * len(ensemble.trees), "TreeSHAP, trees x row blocks",
                      progress) as steps:
        values = _shap_values(rows, tree_arrays, n_threads, interactions, steps)
    phi = values.sum(axis=2) if interactions else values
    magnitude = np.abs(phi).mean(axis=2).T  # (n_features, n_rows)
    extra = _extra(ensemble, X, tree_arrays, phi, values if interactions else None)
    return _explained(ImportanceResult.from_draws(
        magnitude, feature_names=feature_names, method="tree_shap",
        params={"interactions": interactions, "n_rows": int(rows.shape[0]),
                "feature_perturbation": "tree_path_dependent"}, extra=extra), explained)


def _explained(result, explained):
    """``result`` with what a survival model's values explain recorded in it."""
    if explained:
        result.params["model_output"] = explained.pop("model_output")
        result.extra.update(explained)
    return result


def _check_perturbation(data, feature_perturbation, model_output, y, interactions) -> str:
    """The variant to run, "interventional" or "tree_path_dependent", from the
    arguments (the ``shap`` package's rules)."""
    variants = ("auto", "interventional", "tree_path_dependent")
    if feature_perturbation not in variants:
        raise ValueError(f"feature_perturbation must be one of {variants}; got "
                         f"{feature_perturbation!r}")
    if model_output not in MODEL_OUTPUTS:
        raise ValueError(f"model_output must be one of {MODEL_OUTPUTS}; got {model_output!r}")
    if feature_perturbation == "auto":
        feature_perturbation = "tree_path_dependent" if data is None else "interventional"
    if feature_perturbation == "interventional":
        if data is None:
            raise ValueError("feature_perturbation='interventional' needs background data "
                             "(data=...); got data=None")
        if interactions:
            raise ValueError("interactions=True is computed for feature_perturbation="
                             "'tree_path_dependent' only (the shap package computes no "
                             "interventional interaction values either); got "
                             "feature_perturbation='interventional'")
        return feature_perturbation
    if data is not None:
        raise ValueError("data (background rows) is used by feature_perturbation="
                         "'interventional' only; got feature_perturbation="
                         "'tree_path_dependent' with data")
    if model_output != "raw":
        raise ValueError("feature_perturbation='tree_path_dependent' explains the raw output "
                         f"only (model_output='raw'); got model_output={model_output!r}")
    if y is not None:
        raise ValueError("y is used only with model_output='log_loss'")
    return feature_perturbation


# Fixed pieces of trees (their sums added in piece order, so the values do not depend
# on the number of threads), rows taken a block at a time so that the pieces' partial
# sums stay within _PARTIALS_BUDGET bytes, and at most _TABLE_BUDGET table entries per
# tree (8 bytes each) for the tabulated path (``leaf_tables``).
_N_PIECES = 8
_PARTIALS_BUDGET = 64 * 2**20
_TABLE_BUDGET = 4 * 2**20
# Leaves with more distinct path features than this are left to Algorithm 2 (a table
# builds 2^d polynomials).
_TABLE_DEPTH = 16
# Placeholders for the interaction tables and output when only values are wanted.
_NO_STARTS = np.zeros(1, dtype=np.intp)
_NO_TABLE = np.zeros(1)
_NO_PAIRS = np.zeros((1, 1, 1, 1))


def _block_rows(tree_arrays, n_features, interactions) -> int:
    """Rows taken at a time, so that the pieces' partial sums fit _PARTIALS_BUDGET."""
    trees = tree_arrays[0]
    n_pieces = min(_N_PIECES, trees.roots.shape[0])
    per_row = 8 * n_pieces * n_features * trees.n_columns * (n_features + 1 if interactions
                                                             else 1)
    return max(1, _PARTIALS_BUDGET // per_row)


def _shap_values(rows, tree_arrays, n_threads, interactions, steps=None):
    """SHAP values (n_rows, n_features, n_columns), or with ``interactions`` the
    interaction values (n_rows, n_features, n_features, n_columns): each piece of trees
    on one thread, every tree tabulated (``leaf_tables``) when that is cheaper for these
    rows, else Algorithm 2 (``shap_values`` / ``shap_interactions``). ``steps`` (a
    progress bar's) advances once per tree and block of rows."""
    n_trees = tree_arrays[0].roots.shape[0]
    n_rows, n_features = rows.shape
    pieces = np.linspace(0, n_trees, min(_N_PIECES, n_trees) + 1).astype(np.intp)
    block = _block_rows(tree_arrays, n_features, interactions)
    shape = (n_features,) * (2 if interactions else 1) + (tree_arrays[0].n_columns,)
    out = np.empty((n_rows, *shape))
    with Parallel(n_jobs=n_threads, prefer="threads") as parallel:
        for lo in range(0, n_rows, block):
            block_rows = rows[lo:lo + block]
            parts = parallel(delayed(_piece_values)(block_rows, tree_arrays, a, b,
                                                    interactions, steps)
                             for a, b in zip(pieces[:-1], pieces[1:], strict=True))
            phi = np.sum([part[0] for part in parts], axis=0)
            if not interactions:
                out[lo:lo + block] = phi
                continue
            # Off the diagonal the pieces' sums; on it what is left of each feature's
            # SHAP value (each row of the matrix sums to the feature's value).
            pairs = np.sum([part[1] for part in parts], axis=0)
            diagonal = np.arange(n_features)
            pairs[:, diagonal, diagonal] = 0.0
            pairs[:, diagonal, diagonal] = phi - pairs.sum(axis=1)
            out[lo:lo + block] = pairs
    return out


def _piece_values(rows, tree_arrays, tree_lo, tree_hi, interactions, steps=None):
    """The SHAP values of trees ``tree_lo .. tree_hi`` and, with ``interactions``, their
    off-diagonal interaction values (the diagonal is left at zero)."""
    trees, cover, walks = tree_arrays
    (children_left, children_right, feature, threshold, operator, missing_go_to_left,
     cat_bitsets, values, roots, _, tree_column, max_depth, n_columns) = trees
    n_rows, n_features = rows.shape
    phi = np.zeros((n_rows, n_features, n_columns))
    pairs = np.zeros((n_rows, n_features, n_features, n_columns)) if interactions else None
    for t in counted(range(tree_lo, tree_hi), steps):
        leaf_start, leaf_zero = walks[t][3], walks[t][5]
        d = np.diff(leaf_start)
        table_size = int(np.sum(d << np.maximum(d - 1, 0)))
        # Algorithm 2 costs about d^2 per leaf and row, the tables d 2^d per leaf once
        # and d per leaf and row (interaction values: d^2 per leaf and row; Algorithm 2
        # runs again for every feature of the tree).
        tabulate = (table_size <= _TABLE_BUDGET and d.max(initial=0) <= _TABLE_DEPTH
                    and n_rows * np.sum(d * d) > 2 * table_size + n_rows * d.sum())
        if interactions and tabulate:
            tabulate = int(np.sum(d * np.maximum(d - 1, 0) << np.maximum(d - 2, 0))) <= (
                _TABLE_BUDGET)
        if not tabulate:
            arrays = (rows, children_left, children_right, feature, threshold, operator,
                      missing_go_to_left, cat_bitsets, cover, values, roots[t:t + 1],
                      tree_column[t:t + 1], max_depth, n_columns)
            if interactions:
                tree_pairs = shap_interactions(*arrays)
                phi += tree_pairs.sum(axis=2)
                diagonal = np.arange(n_features)
                tree_pairs[:, diagonal, diagonal] = 0.0
                pairs += tree_pairs
            else:
                phi += shap_values(*arrays)
            continue
        pair_tables = (leaf_tables(leaf_start, leaf_zero, True) if interactions
                       else (_NO_STARTS, _NO_TABLE))
        shap_tables(rows, children_left, feature, threshold, operator, missing_go_to_left,
                    cat_bitsets, values, roots[t], tree_column[t], *walks[t],
                    *leaf_tables(leaf_start, leaf_zero, False), *pair_tables, max_depth,
                    interactions, phi, _NO_PAIRS if pairs is None else pairs)
    return phi, pairs


def _tree_arrays(ensemble):
    """What the kernels read: the trees (:func:`shap_trees`), each node's cover and
    each tree's walk with its leaves' zero fractions (:func:`tree_walks`)."""
    for t, tree in enumerate(ensemble.trees):
        if not tree.weighted_n_node_samples[0] > 0:
            # XGBoost 2.x writes no hessian sums for its vector-leaf trees.
            raise ValueError(f"tree {t} records no cover (training weight) at its root, "
                             "which path-dependent TreeSHAP needs; pass background data "
                             "(data=...) for interventional TreeSHAP")
    # The shap package's covers: scikit-learn's weighted rows, XGBoost's hessian sums
    # and LightGBM's row counts, which is what each adapter puts in this field.
    cover = np.concatenate([tree.weighted_n_node_samples for tree in ensemble.trees])
    trees = shap_trees(ensemble)
    return trees, cover, tree_walks(trees, cover)


def _expected_value(ensemble, tree_arrays):
    """``base_score`` plus each tree's cover-weighted mean leaf value."""
    trees, cover, _ = tree_arrays
    children_left, values = trees.children_left, trees.values
    expected = np.zeros(trees.n_columns) + (ensemble.base_score if ensemble.combine == "sum"
                                            else ensemble.base_score[0])
    width = values.shape[1]
    for root, end, column in zip(trees.roots, trees.ends, trees.tree_column, strict=True):
        leaf = children_left[root:end] == -1
        share = cover[root:end][leaf] / cover[root]
        expected[column:column + width] += share @ values[root:end][leaf]
    return expected


def _extra(ensemble, X, tree_arrays, phi, interaction_values):
    """The result's ``extra``: the values (in memory or lazy), the expected value and
    what they explain; one output column is squeezed away."""
    expected = _expected_value(ensemble, tree_arrays)
    n_columns = tree_arrays[0].n_columns
    squeeze = n_columns == 1
    extra = {"shap_values": phi[..., 0] if squeeze else phi,
             "expected_value": float(expected[0]) if squeeze else expected,
             **explanation_extra(ensemble, X, n_columns)}
    if interaction_values is not None:
        extra["interaction_values"] = (interaction_values[..., 0] if squeeze
                                       else interaction_values)
    return extra


# -- Dask input ---------------------------------------------------------------------

def dask_tree_shap(model, X, interactions, n_jobs) -> ImportanceResult:
    """:func:`~sapwood.importance.tree_shap` for a Dask DataFrame or 2-D Dask array."""
    # Dask is optional and heavy: imported only for Dask input.
    import dask

    ensemble = as_ensemble(model)
    blocks = dask_rows(X)
    feature_names = column_names(X, model, ensemble.n_features)
    if blocks.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {blocks.shape[1]} features; the model was fit on "
                         f"{ensemble.n_features}")
    tree_arrays = _tree_arrays(ensemble)
    n_columns = tree_arrays[0].n_columns
    n_features = ensemble.n_features
    shape = (n_features,) * (2 if interactions else 1) + (n_columns,)

    def explain(block):
        rows = np.asarray(block, dtype=ensemble.input_dtype)
        if np.isinf(rows).any():
            raise ValueError("X holds infinite values")
        rows = np.ascontiguousarray(rows, dtype=np.float64)
        n_threads = max(1, min(n_jobs, rows.shape[0]))
        return _shap_values(rows, tree_arrays, n_threads, interactions)

    values = blocks.map_blocks(explain, dtype=np.float64,
                               chunks=(blocks.chunks[0], *((size,) for size in shape)),
                               new_axis=list(range(2, 1 + len(shape))))
    phi = values.sum(axis=2) if interactions else values
    magnitude = abs(phi).mean(axis=2)  # (n_rows, n_features)
    n_rows = int(blocks.shape[0])
    mean, std, sample_std = dask.compute(magnitude.mean(axis=0), magnitude.std(axis=0),
                                         magnitude.std(axis=0, ddof=1 if n_rows > 1 else 0))
    ci_low, ci_high = (t_interval(mean, sample_std, n_rows) if n_rows > 1
                       else (np.full(n_features, np.nan), np.full(n_features, np.nan)))
    extra = _extra(ensemble, X, tree_arrays, phi, values if interactions else None)
    return ImportanceResult(
        importances_mean=np.asarray(mean, dtype=np.float64),
        importances_std=np.asarray(std, dtype=np.float64),
        feature_names=feature_names, method="tree_shap",
        params={"interactions": interactions, "n_rows": n_rows,
                "feature_perturbation": "tree_path_dependent", "dask": True},
        importances=None, ci_low=np.asarray(ci_low, dtype=np.float64),
        ci_high=np.asarray(ci_high, dtype=np.float64), extra=extra)
