"""Partial dependence and individual conditional expectation (ICE), on every tree model.

scikit-learn's ``partial_dependence`` with its defaults, grid and output (a Bunch with
``grid_values``, ``average``, ``individual``), computed from the tree format: the brute
method through :func:`~sapwood.effects._engine.grid_responses` (every (grid point, row)
pair's prediction, equal to the model's own), the recursion method by Friedman's
weighted traversal (:func:`sapwood._kernels._effects.weighted_traversal`) of any tree
model, not only scikit-learn's.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.stats.mstats import mquantiles
from sklearn.utils import Bunch

from .._kernels._effects import weighted_traversal
from .._sklearn_compat import Interval, StrOptions, validate_params
from ._engine import (
    RESPONSE_METHODS,
    Rows,
    grid_responses,
    read_model,
    resolve_features,
    response_of,
)

__all__ = ["partial_dependence"]

_CALLER = "partial_dependence"


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "features": ["array-like", Integral, str],
        "kind": [StrOptions({"average", "individual", "both"})],
        "grid_resolution": [Interval(Integral, 2, None, closed="left")],
        "percentiles": [tuple],
        "method": [StrOptions({"auto", "brute", "recursion"})],
        "categorical_features": ["array-like", None],
        "response_method": [StrOptions(set(RESPONSE_METHODS))],
        "sample_weight": ["array-like", None],
        "custom_values": [dict, None],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def partial_dependence(model, X, features, *, kind="average", grid_resolution=100,
                       percentiles=(0.05, 0.95), method="auto", categorical_features=None,
                       response_method="auto", sample_weight=None, custom_values=None,
                       n_jobs=None):
    """Partial dependence (PD) and individual conditional expectation (ICE) of a tree model.

    For the features ``S`` and a grid point ``z`` (Friedman 2001 [1]_; ICE: Goldstein et
    al. 2015 [2]_)::

        ICE_i(z) = f(z, x_{i,-S})             (row i with the columns S set to z)
        PD(z)    = sum_i w_i ICE_i(z) / sum_i w_i     (w_i = 1 without sample_weight)

    where ``f`` is the model's response: ``predict`` for a regression, ``predict_proba``
    for a classifier (the positive class of a binary one), or its ``decision_function``.
    The grid, the arguments and the result are scikit-learn 1.9's
    (``sklearn.inspection.partial_dependence``): each feature's grid is its
    ``grid_resolution`` equally spaced values between the ``percentiles`` of its column,
    or its unique values when it has fewer, or is categorical; several features take the
    cartesian product of their grids.

    ``method="brute"`` computes every ``ICE_i(z)`` on the rows of ``X``: each tree is
    walked once with blocks of rows and grid points (only the grid points divide at a
    split on ``S``, only the rows elsewhere), its values added in the model's own order
    and precision, so the numbers are the model's own predictions on the modified data,
    bit for bit where the conversion is (scikit-learn's ``partial_dependence(...,
    method="brute")`` gives the same). ``method="recursion"`` is Friedman's weighted
    traversal [1]_: the average over the *training* data as the trees recorded it (each
    split on a feature outside ``S`` weighted by the shares of training weight,
    ``cover`` for boosting libraries) of the trees' raw output, for every tree model;
    as scikit-learn's it leaves out the base score of a boosted model (its curve is
    brute's shifted by a constant when the features do not interact with the rest),
    averages probabilities for a forest classifier and the decision function for a
    boosted one, and gives no ICE. ``method="auto"`` takes recursion where scikit-learn
    does (its gradient boosting, decision-tree and random-forest regressors, with
    ``kind="average"`` and no ``sample_weight``) and brute otherwise.

    Definition: docs/measures.md, section 'Effects and interactions'.

    Parameters
    ----------
    model : tree model
        Any model sapwood reads (scikit-learn, XGBoost, LightGBM, CatBoost, sapwood's
        own; a :class:`~sapwood.TreeEnsemble`).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows the ICE curves are drawn for and the PD averages over (brute).
    features : int, str or sequence of them
        One feature, or several for their joint partial dependence (two: a 2-way PD).
    kind : {"average", "individual", "both"}, default="average"
        PD, ICE, or both.
    grid_resolution : int, default=100
        Grid points per feature (at least 2).
    percentiles : tuple of two floats in [0, 1], default=(0.05, 0.95)
        Where each numeric feature's grid starts and ends (scipy's ``mquantiles``).
    method : {"auto", "brute", "recursion"}, default="auto"
    categorical_features : array-like of bool, int or str, default=None
        Features whose grid is their categories (their unique values): a boolean mask
        over the columns, or column indices or names.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        ``"auto"``: ``predict`` for a regression, ``predict_proba`` for a classifier
        (recursion: ``decision_function`` for a boosted classifier).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows in the brute average.
    custom_values : dict, default=None
        Feature (index or name) -> the grid values to use for it.
    n_jobs : int, default=None
        Threads (brute: the rows are divided among them; the numbers do not change).

    Returns
    -------
    sklearn.utils.Bunch
        ``grid_values``: per feature its grid values; ``average`` (kind "average" or
        "both"): shape (n_outputs, len(grid_values[0]), ...); ``individual`` (brute
        only): shape (n_outputs, n_samples, len(grid_values[0]), ...). ``n_outputs`` is 1
        for a regression or a binary classifier (its positive class), the number of
        classes of a multiclass classifier and of outputs of a multi-output regression.

    References
    ----------
    .. [1] Friedman, J. H. (2001). Greedy function approximation: a gradient boosting
       machine. Annals of Statistics 29(5), 1189-1232. doi:10.1214/aos/1013203451
    .. [2] Goldstein, A., Kapelner, A., Bleich, J., Pitkin, E. (2015). Peeking inside
       the black box: visualizing statistical learning with plots of individual
       conditional expectation. JCGS 24(1), 44-65. doi:10.1080/10618600.2014.907095
    """
    ensemble = read_model(model, _CALLER)
    rows = Rows(ensemble, X, _CALLER)
    columns = resolve_features(features, rows.names, _CALLER)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (rows.n_rows,):
            raise ValueError(f"{_CALLER}: sample_weight must have shape ({rows.n_rows},); "
                             f"got {sample_weight.shape}")
    method = _settle_method(model, method, kind, sample_weight)
    if method == "recursion":
        if kind != "average":
            raise ValueError(f"{_CALLER}: method='recursion' gives only kind='average'; "
                             f"got kind={kind!r}")
        if sample_weight is not None:
            raise ValueError(f"{_CALLER}: method='recursion' averages over the training "
                             "data and takes no sample_weight")
    categorical = _categorical(categorical_features, columns, rows.names)
    custom = _custom(custom_values or {}, rows.names)
    grid_values = [_axis(rows.column(j), categorical[k], grid_resolution, percentiles,
                         custom.get(j)) for k, j in enumerate(columns)]
    given_points = _cartesian(grid_values)
    points = rows.encode_points(columns, given_points)
    shape = [len(values) for values in grid_values]
    result = Bunch(grid_values=grid_values)
    if method == "recursion":
        average = _recursion(ensemble, columns, points, response_method)
        result["average"] = average.reshape(-1, *shape)
        return result
    response = response_of(ensemble, model, response_method, _CALLER)
    predictions = grid_responses(ensemble, model, rows, columns, points, given_points,
                                 response, n_jobs, _CALLER)
    if kind in ("average", "both"):
        average = np.array([np.average(p, axis=0, weights=sample_weight)
                            for p in predictions]).T
        result["average"] = average.reshape(-1, *shape)
    if kind in ("individual", "both"):
        result["individual"] = np.array(predictions).T.reshape(-1, rows.n_rows, *shape)
    return result


def _settle_method(model, method, kind, sample_weight):
    """``"auto"`` as scikit-learn settles it: recursion for the scikit-learn models it
    offers it for, when asked for the average and no sample weights."""
    if method != "auto":
        return method
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
    )
    from sklearn.tree import DecisionTreeRegressor

    recursive = (GradientBoostingClassifier, GradientBoostingRegressor,
                 HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                 DecisionTreeRegressor, RandomForestRegressor)
    if kind == "average" and sample_weight is None and isinstance(model, recursive):
        return "recursion"
    return "brute"


def _categorical(categorical_features, columns, names):
    """Per feature of ``columns``: whether it is categorical."""
    if categorical_features is None:
        return [False] * len(columns)
    flags = np.asarray(categorical_features)
    if flags.size == 0:
        raise ValueError(f"{_CALLER}: categorical_features must be None or name at least "
                         "one feature; got []")
    if flags.dtype.kind == "b":
        if flags.size != len(names):
            raise ValueError(f"{_CALLER}: categorical_features as booleans must have one "
                             f"entry per column ({len(names)}); got {flags.size}")
        return [bool(flags[j]) for j in columns]
    marked = resolve_features(list(flags.tolist()), names, _CALLER, "categorical_features")
    return [j in marked for j in columns]


def _custom(custom_values, names):
    """``custom_values`` by column index."""
    out = {}
    for feature, values in custom_values.items():
        (j,) = resolve_features(feature, names, _CALLER, "custom_values")
        values = np.asarray(values, dtype=object if any(isinstance(v, str) for v in values)
                            else None)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"{_CALLER}: custom_values[{feature!r}] must be a non-empty "
                             f"1-dimensional array; got shape {values.shape}")
        out[j] = values
    return out


def _axis(column, categorical, grid_resolution, percentiles, custom):
    """One feature's grid values, by scikit-learn's rules (``_grid_from_X``)."""
    if custom is not None:
        return custom
    if (not isinstance(percentiles, tuple) or len(percentiles) != 2
            or not all(isinstance(p, Real) and 0 <= p <= 1 for p in percentiles)
            or percentiles[0] >= percentiles[1]):
        raise ValueError(f"{_CALLER}: percentiles must be two increasing numbers in "
                         f"[0, 1]; got {percentiles!r}")
    try:
        uniques = np.unique(np.asarray(column))
    except TypeError as error:
        raise ValueError(f"{_CALLER}: the column {getattr(column, 'name', '')!r} mixes "
                         "types that do not sort (missing values among text categories?)"
                         ) from error
    if categorical or uniques.shape[0] < grid_resolution:
        return uniques
    low, high = mquantiles(np.asarray(column), prob=percentiles, axis=0)
    if np.allclose(low, high):
        raise ValueError(f"{_CALLER}: percentiles {percentiles!r} of column "
                         f"{getattr(column, 'name', '')!r} are too close to each other to "
                         "build a grid; choose percentiles further apart")
    return np.linspace(low, high, num=grid_resolution, endpoint=True)


def _cartesian(grid_values):
    """The grid points, first feature slowest, as a list of tuples."""
    mesh = np.meshgrid(*[np.arange(len(v)) for v in grid_values], indexing="ij")
    index = np.column_stack([m.ravel() for m in mesh])
    return [tuple(values[k] for values, k in zip(grid_values, point, strict=True))
            for point in index]


def _recursion(ensemble, columns, points, response_method):
    """Friedman's weighted traversal of every tree at every grid point: (n_outputs,
    n_points), the outputs as scikit-learn's recursion method gives them."""
    if ensemble.task == "survival":
        ensemble = ensemble.risk_model()  # the effects are on the risk score
    classifier = ensemble.task == "classification"
    boosted = ensemble.combine == "sum"
    if classifier:
        wanted = "decision_function" if boosted else "predict_proba"
        if response_method not in ("auto", wanted):
            raise ValueError(f"{_CALLER}: method='recursion' on this classifier gives "
                             f"response_method={wanted!r} (or 'auto'); got "
                             f"{response_method!r}")
        if not boosted and ensemble.trees[0].n_outputs != 1:
            raise ValueError(f"{_CALLER}: multi-output classifiers are not supported")
    elif response_method not in ("auto", "predict"):
        raise ValueError(f"{_CALLER}: response_method must be 'auto' or 'predict' for a "
                         f"regression model; got {response_method!r}")
    weight = np.concatenate([tree.weighted_n_node_samples for tree in ensemble.trees])
    *routing, roots = ensemble.packed()
    splits = routing[0] != -1
    if not (weight[roots] > 0).all() or not (weight[splits] > 0).all():
        raise ValueError(f"{_CALLER}: method='recursion' needs the training weight of every "
                         "split, which this model does not record; use method='brute'")
    # One weight for every tree (a learning rate): added after the sums, as scikit-learn
    # multiplies its gradient boosting's.
    weights = ensemble.tree_weights
    common = bool(np.all(weights == weights[0]))
    if boosted:
        values = [tree.value[:, 0, :1] * (1.0 if common else w)
                  for tree, w in zip(ensemble.trees, weights, strict=True)]
        tree_column = ensemble.tree_output.astype(np.intp)
        width = max(int(tree_column.max()) + 1, ensemble.base_score.shape[0])
    else:
        values = [tree.value.reshape(tree.node_count, -1) * (1.0 if common else w)
                  for tree, w in zip(ensemble.trees, weights, strict=True)]
        tree_column = np.zeros(ensemble.n_trees, dtype=np.intp)
        width = values[0].shape[1]
    grid_column = np.full(ensemble.n_features, -1, dtype=np.intp)
    grid_column[np.asarray(columns, dtype=np.intp)] = np.arange(len(columns))
    total = np.zeros((points.shape[0], width))
    depth = max(tree.max_depth for tree in ensemble.trees)
    weighted_traversal(np.ascontiguousarray(points), grid_column, *routing, roots, depth,
                       weight, np.ascontiguousarray(np.concatenate(values)), tree_column,
                       total)
    if common and weights[0] != 1.0:
        total *= weights[0]
    if not boosted:
        total /= ensemble.n_trees
        if classifier:
            n_classes = len(ensemble.classes) if ensemble.classes is not None else width
            total = total[:, :n_classes]
            if n_classes == 2:
                total = total[:, 1:]
    return np.ascontiguousarray(total.T)
