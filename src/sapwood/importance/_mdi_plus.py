"""MDI+: each tree's partial linear model on its local decision stumps (Agarwal et al.).

MDI is the R^2 of a tree read as a linear model: every split node s on feature k gives
a *local decision stump*, zero outside the node and, inside it::

    phi_s(x) = -sqrt(w_R / w_L)  if x goes left,   +sqrt(w_L / w_R)  if x goes right

(w_L, w_R: the children's weighted sample counts, which make the stumps of one tree
orthogonal on its training rows), and the in-bag MDI of k is the share of the
variance of y that the least-squares fit on k's stumps explains. MDI+ generalises it
(Agarwal, Kenney, Tan, Tang & Yu): per tree t, the block of feature k is its stumps
plus the raw feature (rescaled to the largest stump's standard deviation); one ridge
regression is fit on all blocks with an intercept, the penalty chosen by leave-one-out
error from ``alphas``; the partial prediction of block k keeps k's columns and sets
every other block to its mean (zero: the columns are centred)::

    yhat_k,i = b^(-i) + sum_{c in block k} z_ic beta_c^(-i)        MDI+_k = mean_t R^2_t(y, yhat_k)

with the leave-one-out coefficients beta^(-i), b^(-i) of the fit without row i
(``sample_split="loo"``, exact for ridge: beta^(-i) = beta - J^-1 z1_i r_i / (1 - h_ii)).
A feature the tree does not split on has an empty block: its prediction is the
intercept (R^2 = 0 with leave-one-out). Trees with no split take no part.

``sample_split="oob"`` fits each tree's ridge on its in-bag rows (with their
repeats) and scores the out-of-bag rows; ``"inbag"`` scores the in-bag rows (the rows
MDI itself reads). For classifiers the response is the one-hot class indicator (the
MDI of a Gini tree is the R^2 of that regression) and R^2 is averaged over classes.

These are the defaults of the imodels implementation (``RandomForestPlusRegressor``
with ``RidgeRegressorPPM``: ``MDIPlusDefaultTransformer`` blocks, centred, rescale
"max", features without stumps dropped; alphas ``logspace(-5, 5, 100)`` chosen by
leave-one-out error; R^2 scoring, ``sample_split="loo"``). imodels' default for
classification is a logistic model scored by log-loss, which this module does not
reproduce.

A. Agarwal, A. M. Kenney, Y. S. Tan, T. M. Tang, B. Yu, "MDI+: A Flexible Random
Forest-Based Feature Importance Framework", Journal of the American Statistical
Association, 2024. doi:10.1080/01621459.2024.2398847
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import check_array
from threadpoolctl import threadpool_limits

from .._sklearn_compat import StrOptions, validate_params
from ..adapters import as_ensemble
from ..learners._inputs import check_rows
from ._engine._names import feature_names_of
from ._engine._result import ImportanceResult, mean_interval
from ._engine._survival import refuse_survival

__all__ = ["mdi_plus"]

SAMPLE_SPLITS = ("loo", "oob", "inbag")
# imodels' RidgeRegressorPPM grid.
DEFAULT_ALPHAS = np.logspace(-5, 5, 100)
# imodels caps a leverage of exactly 1 here (a row the fit passes through).
MAX_LEVERAGE = 1 - 1e-4


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "y": ["array-like"],
        "sample_split": [StrOptions(set(SAMPLE_SPLITS))],
        "alphas": ["array-like", None],
        "feature_names": [list, None],
    },
    prefer_skip_nested_validation=True,
)
def mdi_plus(model, X, y, *, sample_split="loo", alphas=None,
             feature_names=None) -> ImportanceResult:
    """MDI+ of a fitted forest (or tree): each tree's ridge fit on its local decision
    stumps plus the raw features, scored by R^2 of each feature's partial prediction.

    Definition: docs/measures.md, section 'MDI+'.

    Parameters
    ----------
    model : fitted forest or tree in any format sapwood reads (scikit-learn, sapwood,
        a TreeEnsemble)
    X, y : the training rows the model was fit on (``"oob"`` and ``"inbag"`` regenerate
        each tree's bootstrap rows from them).
    sample_split : {"loo", "oob", "inbag"}, default "loo"
        Which rows fit each tree's ridge and which score it: all rows with
        leave-one-out predictions (imodels' default), in-bag rows fit and out-of-bag
        rows score, or in-bag rows for both. "oob" and "inbag" need a bagged forest.
    alphas : array-like, optional
        Ridge penalties to choose from by leave-one-out squared error; default
        ``logspace(-5, 5, 100)`` as imodels.
    feature_names : list of str, optional

    Returns
    -------
    ImportanceResult
        ``importances_mean``: MDI+ per feature; ``importances`` its per-tree R^2 values
        (n_features, trees with a split) with ``ci_low``/``ci_high`` the 95% t interval
        of their mean; ``trace`` one row per stump: tree, node, feature, threshold,
        w_left, w_right, value_left, value_right and coefficient (of the full ridge
        fit, on the centred stump); ``extra["alpha"]`` the penalty chosen per tree and
        ``extra["r2_full"]`` each tree's R^2 with all blocks.

    Notes
    -----
    Cost per tree: the Gram matrix of the (rows x columns) design, where the columns
    are the tree's split nodes plus the features it uses, and its eigendecomposition:
    O(n m^2 + m^3), on one BLAS thread. Deep trees on many rows are expensive (as in
    imodels).

    References
    ----------
    .. [1] A. Agarwal, A. M. Kenney, Y. S. Tan, T. M. Tang, B. Yu, "MDI+: A Flexible
       Random Forest-Based Feature Importance Framework", JASA, 2024.
       doi:10.1080/01621459.2024.2398847
    """
    ensemble = as_ensemble(model)
    refuse_survival(ensemble, "mdi_plus")
    check_rows(X, y)
    names = feature_names_of(ensemble, feature_names, X)
    X = check_array(X, dtype=np.float64)
    if X.shape[1] != ensemble.n_features:
        raise ValueError(f"X has {X.shape[1]} columns; the model has "
                         f"{ensemble.n_features} features")
    Y = _response(ensemble, np.asarray(y))
    alphas = DEFAULT_ALPHAS if alphas is None else np.asarray(alphas, dtype=np.float64).ravel()
    if alphas.size == 0 or not np.all(alphas > 0):
        raise ValueError(f"alphas of mdi_plus must be positive penalties; got {alphas}")
    bootstrap = ensemble.bootstrap
    if sample_split != "loo" and (bootstrap is None or bootstrap.n_samples != X.shape[0]):
        raise ValueError(f"sample_split={sample_split!r} needs a bagged forest fit on these "
                         f"{X.shape[0]} rows (its bootstrap draws); use sample_split='loo'")
    routed = X.astype(ensemble.input_dtype)
    draws, chosen, full, traces = [], [], [], []
    # Each tree's matrices are small (rows x its splits): BLAS on one thread for the
    # call. OpenBLAS's threads spin-wait for each other, and on a busy 2-core machine
    # its two threads took many times one thread's time.
    with threadpool_limits(limits=1, user_api="blas"):
        for t, tree in enumerate(ensemble.trees):
            Z, block, stumps, column, factor = _design(tree, X, routed)
            if Z.shape[1] == 0:
                continue
            fit_rows = score_rows = None
            if sample_split != "loo":
                fit_rows = bootstrap.indices(t)
                score_rows = (np.flatnonzero(bootstrap.counts(t) == 0)
                              if sample_split == "oob" else fit_rows)
            r2, r2_full, alpha, coefficients = _tree_scores(Z, block, Y, alphas, fit_rows,
                                                            score_rows, ensemble.n_features,
                                                            factor)
            draws.append(r2)
            chosen.append(alpha)
            full.append(r2_full)
            stumps["coefficient"] = np.where(column >= 0, coefficients[column], np.nan)
            stumps.insert(0, "tree", t)
            traces.append(stumps)
    if not draws:
        raise ValueError("mdi_plus needs a tree with at least one split; every tree of "
                         "this model is a single leaf")
    draws = np.column_stack(draws)
    ci_low, ci_high = mean_interval(draws)
    trace = pd.concat(traces, ignore_index=True)
    trace["feature"] = np.asarray(names, dtype=object)[trace["feature"].to_numpy()]
    return ImportanceResult(
        importances_mean=draws.mean(axis=1),
        importances_std=draws.std(axis=1),
        feature_names=names,
        method="mdi_plus",
        params={"sample_split": sample_split, "n_trees": draws.shape[1],
                "n_alphas": alphas.size},
        importances=draws,
        ci_low=ci_low,
        ci_high=ci_high,
        trace=trace,
        extra={"alpha": np.array(chosen), "r2_full": np.array(full)},
    )



def _response(ensemble, y):
    """(n, q): y itself for a regression, the one-hot class indicators for a classifier."""
    if ensemble.task == "regression":
        return y.astype(np.float64).reshape(len(y), -1)
    classes = ensemble.classes
    if classes is None or (classes and isinstance(classes[0], tuple)):
        raise ValueError("mdi_plus handles single-output classifiers with known classes")
    return (y.reshape(-1, 1) == np.asarray(classes, dtype=y.dtype)[None, :]).astype(np.float64)


def _design(tree, X, routed):
    """The tree's MDI+ design on all rows of X: centred columns, each column's block
    (feature index), and the stump table.

    Stump s (split node, children L, R) is -sqrt(w_R / w_L) on rows that pass through L
    and sqrt(w_L / w_R) on rows through R: which rows do is read from the tree's own
    routing (missing values and operators included). Per feature: its stumps, then the
    raw feature scaled to the largest stump standard deviation; a feature whose stumps
    are all constant on X gets no block, a constant raw feature is left out."""
    split = np.flatnonzero(tree.children_left >= 0)
    left, right = tree.children_left[split], tree.children_right[split]
    w = tree.weighted_n_node_samples
    value_left = -np.sqrt(w[right] / w[left])
    value_right = np.sqrt(w[left] / w[right])
    # A row's stump values depend only on its leaf: the paths of one row per leaf.
    _, first_row, leaf_of_row = np.unique(tree.apply(routed), return_index=True,
                                          return_inverse=True)
    path = tree.decision_path(routed[first_row]).tocsc()
    through_left = path[:, left].toarray() > 0
    through_right = path[:, right].toarray() > 0
    phi_leaf = through_left * value_left + through_right * value_right
    phi = phi_leaf[leaf_of_row]
    features = tree.feature[split]
    columns, block, source, leaf_columns, raw = [], [], [], [], []
    for k in np.unique(features):
        stumps = phi[:, features == k]
        scale = stumps.std(axis=0).max()
        if scale == 0:
            continue
        columns.append(stumps)
        leaf_columns.append(phi_leaf[:, features == k])
        block.extend([k] * stumps.shape[1])
        source.extend(np.flatnonzero(features == k))
        raw_scale = X[:, k].std()
        if raw_scale > 0:
            columns.append(X[:, [k]] * (scale / raw_scale))
            leaf_columns.append(np.zeros((phi_leaf.shape[0], 1)))
            raw.append(len(block))
            block.append(k)
            source.append(-1)
    Z = np.hstack(columns) if columns else np.empty((X.shape[0], 0))
    # The same design as leaf values plus raw columns: Z = A[leaf] + R in columns rc.
    factor = (leaf_of_row, np.hstack(leaf_columns) if leaf_columns else None,
              Z[:, raw], np.asarray(raw, dtype=np.intp))
    stumps = pd.DataFrame({"node": split, "feature": features, "threshold": tree.threshold[split],
                           "w_left": w[left], "w_right": w[right],
                           "value_left": value_left, "value_right": value_right})
    # Where each stump sits among the design's columns (-1: its feature has no block).
    column = np.full(len(split), -1, dtype=np.intp)
    source = np.asarray(source, dtype=np.intp)
    column[source[source >= 0]] = np.flatnonzero(source >= 0)
    return Z - Z.mean(axis=0), np.asarray(block, dtype=np.intp), stumps, column, factor


def _tree_scores(Z, block, Y, alphas, fit_rows, score_rows, n_features, factor):
    """Per-feature R^2 of one tree's partial predictions (averaged over Y's columns),
    the full R^2, the penalty (of Y's first column) and the stump coefficients.

    The ridge fits come from one eigendecomposition of the centred design's Gram
    matrix, Zc'Zc = V diag(lam) V', and the projections P = Zc V (P = U diag(s) of
    Zc's SVD, lam = s^2): M^-1 = V diag(1 / (lam + alpha)) V' with M = Zc'Zc + alpha I,
    no division by s. The design is leaf values plus a few raw columns (``factor``:
    Zc = (A - a)[leaf] + (R - r) in the raw columns, a and r the fit rows' means), so
    the Gram matrix, P and M^-1 z_i are products with the leaves' rows (L x m) and the
    raw columns, gathered per row: O(L m^2 + m^3) where the SVD of the n x m design
    cost several n m^2 (90% of the measure's time)."""
    loo = fit_rows is None
    Zf, Yf = (Z, Y) if loo else (Z[fit_rows], Y[fit_rows])
    Zs, Ys = (Z, Y) if loo else (Z[score_rows], Y[score_rows])
    n = Zf.shape[0]
    mean_z = Zf.mean(axis=0)
    leaf_of_row, A, R, rc = factor
    leaf = leaf_of_row if loo else leaf_of_row[fit_rows]
    R = R if loo else R[fit_rows]
    weight = np.bincount(leaf, minlength=A.shape[0]).astype(np.float64)
    A = A - (weight @ A) / n                       # centred on the fit rows
    R = R - R.mean(axis=0)
    leaf_sums = np.zeros((A.shape[0], R.shape[1]))
    np.add.at(leaf_sums, leaf, R)
    cross = A.T @ leaf_sums                        # (m, r): sum_i (A - a)[leaf_i] (R - r)_i'
    gram = (A * weight[:, None]).T @ A
    gram[:, rc] += cross
    gram[rc, :] += cross.T
    gram[np.ix_(rc, rc)] += R.T @ R
    lam, V = np.linalg.eigh(gram)
    lam = np.maximum(lam, 0.0)  # round-off below zero in the null space
    AV, RV = A @ V, R @ V[rc]
    P = AV[leaf] + RV
    leverages = {}  # per penalty grid use: (n, len(alphas)), the same for every column
    indicator = np.zeros((Z.shape[1], n_features))
    indicator[np.arange(Z.shape[1]), block] = 1.0
    no_block = ~indicator.any(axis=0)
    r2 = np.zeros((n_features, Y.shape[1]))
    r2_full = np.zeros(Y.shape[1])
    fits = []
    # Per penalty (a classifier's class columns often choose the same one): the rows'
    # leverages and M^-1 z_i.
    per_alpha = {}
    for q in range(Y.shape[1]):
        y = Yf[:, q]
        mean_y = y.mean()
        Pty = P.T @ (y - mean_y)
        alpha = _loo_alpha(P, AV, R, V[rc], leaf, lam, Pty, y - mean_y, alphas, leverages)
        inverse = 1.0 / (lam + alpha)
        beta = V @ (inverse * Pty)
        intercept = mean_y - mean_z @ beta
        target = Ys[:, q]
        fitted = Zs @ beta
        if loo:
            # Row i's leave-one-out fit: beta - c_i M^-1 zc_i, b - c_i (1/n - zbar M^-1
            # zc_i), with c_i = r_i / (1 - h_i) and M^-1 zc_i = V diag(1 / (lam +
            # alpha)) P_i (zc_i lies in Zc's row space).
            if alpha not in per_alpha:
                h = np.minimum(1.0 / n + (P ** 2) @ inverse, MAX_LEVERAGE)
                M_inv_z = ((AV * inverse) @ V.T)[leaf] + R @ ((V[rc] * inverse) @ V.T)
                moved = Zs * M_inv_z
                per_alpha[alpha] = (h, moved @ indicator, moved.sum(axis=1),
                                    M_inv_z @ mean_z)
            h, moved, moved_full, toward_mean = per_alpha[alpha]
            c = (y - intercept - fitted) / (1 - h)
            offset = intercept - c * (1.0 / n - toward_mean)
            partial = (Zs * beta) @ indicator - c[:, None] * moved + offset[:, None]
            full_prediction = fitted - c * moved_full + offset
        else:
            offset = np.full(len(target), intercept)
            partial = (Zs * beta) @ indicator + offset[:, None]
            full_prediction = fitted + offset
        # A feature without a block predicts the full fit's intercept (imodels).
        partial[:, no_block] = intercept
        total = ((target - target.mean()) ** 2).sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            r2[:, q] = 1 - ((target[:, None] - partial) ** 2).sum(axis=0) / total
            r2_full[q] = 1 - ((target - full_prediction) ** 2).sum() / total
        fits.append((alpha, beta))
    return r2.mean(axis=1), r2_full.mean(), *fits[0]


def _loo_alpha(P, AV, R, V_raw, leaf, lam, Pty, yc, alphas, leverages):
    """The penalty of ``alphas`` with the least leave-one-out squared error (the first
    on ties), for ridge with an unpenalised intercept on the centred design whose Gram
    matrix is V diag(lam) V', P = Zc V = AV[leaf] + R V_raw. ``leverages`` keeps the
    rows' leverages for every penalty (they do not depend on y)."""
    n = P.shape[0]
    inverse = 1.0 / (lam[:, None] + alphas[None, :])                     # (m, A)
    weights = inverse * Pty[:, None]
    fitted = (AV @ weights)[leaf] + R @ (V_raw @ weights)                # (n, A)
    if "all" not in leverages:
        leverages["all"] = 1.0 / n + (P ** 2) @ inverse
    errors = (((yc[:, None] - fitted) / (1 - leverages["all"])) ** 2).mean(axis=0)
    return float(alphas[int(np.argmin(errors))])
