"""Accumulated local effects (ALE) of a numeric or categorical feature, with PyALE's
conventions."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from .._sklearn_compat import Interval, StrOptions, validate_params
from ..adapters import is_pipeline
from ._engine import RESPONSE_METHODS, Rows, read_model, resolve_features, respond, response_of
from ._pipelines import pipeline_edges

__all__ = ["ale"]

_CALLER = "ale"


@validate_params(
    {
        "model": "no_validation",
        "X": ["array-like"],
        "feature": [Integral, str, "array-like"],
        "grid_size": [Interval(Integral, 1, None, closed="left")],
        "include_CI": ["boolean"],
        "C": [Interval(Real, 0, 1, closed="neither")],
        "response_method": [StrOptions(set(RESPONSE_METHODS))],
        "target": "no_validation",
        "feature_type": [StrOptions({"auto", "continuous", "categorical"})],
    },
    prefer_skip_nested_validation=True,
)
def ale(model, X, feature, *, grid_size=20, include_CI=False, C=0.95,  # noqa: N803
        response_method="auto", target=None, feature_type="auto"):
    """First-order accumulated local effects of a numeric feature (Apley & Zhu 2020 [1]_).

    The feature's range is cut at the type-1 quantiles ``z_0 < z_1 < ... < z_K`` of its
    column (R's ``quantile(type=1)``, the inverse of the empirical distribution
    function, at ``0, 1/grid_size, ..., 1``; equal edges merged), row ``i`` falling in
    bin ``k(i)`` when ``z_{k-1} < x_i <= z_k`` (the first bin closed). The local effect
    of bin ``k`` is the mean change of the response across it, over its rows, and the
    effects accumulate::

        delta_k = mean_{i: k(i) = k} [f(z_k, x_{i,-j}) - f(z_{k-1}, x_{i,-j})]
        ALE(z_k) = sum_{l <= k} delta_l - c,     ALE(z_0) = -c

    centred by ``c``, the mean over the rows of the curve's value at their bin (the
    average of its two edges' values): ``c = sum_k n_k (A_k + A_{k-1}) / 2 / n`` with
    ``A_k`` the uncentred sums. These are PyALE's conventions
    (``PyALE.ale(..., feature_type="continuous")``, whose numbers these equal); unlike a
    partial dependence, each prediction changes a row's feature only within its own
    bin, so the model is never asked about combinations of features the data do not
    hold (correlated features).

    Definition: docs/measures.md, section 'Effects and interactions'.

    Parameters
    ----------
    model : tree model
        Any model sapwood reads.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows; those missing the feature are left out.
    feature : int or str, or a pair of them
        The feature, or two numeric features for their second-order ALE.
    grid_size : int, default=20
        The number of quantile bins (fewer when edges coincide); numeric features only.
    include_CI : bool, default=False
        Add each bin's ``C`` confidence interval: ``eff -/+ t_{(1 + C) / 2, n_k - 1}
        s_k / sqrt(n_k)``, ``s_k`` the standard deviation of the bin's differences (NaN
        at ``z_0``, which has no bin, and for a bin of one row).
    C : float in (0, 1), default=0.95
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        As in :func:`partial_dependence` (a binary classifier: its positive class).
    target : class label, default=None
        The class whose response a multiclass classifier's ALE follows (required there).
    feature_type : {"auto", "continuous", "categorical"}, default="auto"
        ``"auto"``: categorical when the model splits on the feature by category, or the
        column is a pandas categorical, text or boolean; else continuous.

    Returns
    -------
    pandas.DataFrame
        Indexed by the bin edges ``z_0 .. z_K`` (named after the feature): ``eff`` the
        centred ALE, ``size`` the rows of the bin ending there (0 at ``z_0``) and with
        ``include_CI`` the columns ``lowerCI_{100 C}%`` and ``upperCI_{100 C}%``. A
        categorical feature: indexed by its categories in the order found, ``size``
        each category's rows, the interval of category ``k``'s step from ``k - 1``
        (NaN at the first). A pair: the second-order effects on the grid of bin
        edges, indexed by the first feature's edges and with the second's as columns
        (PyALE's layout; ``include_CI`` does not apply).

    References
    ----------
    .. [1] Apley, D. W., Zhu, J. (2020). Visualizing the effects of predictor variables
       in black box supervised learning models. JRSS B 82(4), 1059-1086.
       doi:10.1111/rssb.12377
    """
    if is_pipeline(model):
        return _pipeline_ale(model, X, feature, grid_size, include_CI, C, response_method,
                             target, feature_type)
    ensemble = read_model(model, _CALLER)
    rows = Rows(ensemble, X, _CALLER)
    columns = resolve_features(feature, rows.names, _CALLER, "feature")
    response = response_of(ensemble, model, response_method, _CALLER)
    if len(columns) == 2:
        return _second_order(ensemble, rows, columns, grid_size, response, target)
    if len(columns) != 1:
        raise ValueError(f"{_CALLER}: feature must be one feature or a pair; got "
                         f"{len(columns)}")
    (j,) = columns
    column = rows.column(j)
    if feature_type == "categorical" or (feature_type == "auto"
                                         and _is_categorical(ensemble, column, j)):
        return _categorical_ale(ensemble, rows, j, response, target, include_CI, C)
    if ensemble.categories is not None and ensemble.categories[j] is not None:
        raise ValueError(f"{_CALLER}: feature {rows.names[j]!r} is categorical in the model; "
                         "use feature_type='categorical' (or 'auto')")
    x = (column.to_numpy(dtype=np.float64, na_value=np.nan) if hasattr(column, "to_numpy")
         else np.asarray(column, dtype=np.float64))
    present = ~np.isnan(x)
    if present.sum() < 2:
        raise ValueError(f"{_CALLER}: feature {rows.names[j]!r} needs at least two rows with "
                         "a value")
    x, values = x[present], rows.values[present]
    edges = np.unique(np.concatenate([[x.min()], _quantiles_type1(x, grid_size)]))
    if edges.shape[0] < 2:
        raise ValueError(f"{_CALLER}: feature {rows.names[j]!r} is constant; it has no "
                         "local effects")
    bins = np.searchsorted(edges, x, side="left") - 1
    bins[x == edges[0]] = 0
    low, high = values.copy(), values.copy()
    # The edges as the model reads them (the column's own values are its input's).
    low[:, j] = edges[bins]
    high[:, j] = edges[bins + 1]
    delta = (_single(ensemble, high, response, target, _CALLER)
             - _single(ensemble, low, response, target, _CALLER))
    return _accumulate(delta, bins, edges, rows.names[j], include_CI, C)


def _pipeline_ale(model, X, feature, grid_size, include_CI, C, response_method,  # noqa: N803
                  target, feature_type):
    """The numeric ALE of a Pipeline in its input column: each row's edges written into
    the column and transformed (its derived block), the last step's trees predicting."""
    if feature_type == "categorical":
        raise ValueError(f"{_CALLER}: a Pipeline's ALE is computed for numeric features; "
                         "got feature_type='categorical'")
    pipeline, j, name, x, derived, block, transform_edges = pipeline_edges(
        model, X, feature, _CALLER)
    ensemble = read_model(pipeline.final, _CALLER)
    response = response_of(ensemble, pipeline.final, response_method, _CALLER)
    present = ~np.isnan(x)
    if present.sum() < 2:
        raise ValueError(f"{_CALLER}: feature {name!r} needs at least two rows with a value")
    x, values = x[present], np.ascontiguousarray(ensemble.encode(derived[present]))
    edges = np.unique(np.concatenate([[x.min()], _quantiles_type1(x, grid_size)]))
    if edges.shape[0] < 2:
        raise ValueError(f"{_CALLER}: feature {name!r} is constant; it has no local effects")
    bins = np.searchsorted(edges, x, side="left") - 1
    bins[x == edges[0]] = 0
    at_edges = transform_edges(edges)  # (edges, block): each edge's derived values
    low, high = values.copy(), values.copy()
    low[:, block] = at_edges[bins]
    high[:, block] = at_edges[bins + 1]
    delta = (_single(ensemble, high, response, target, _CALLER)
             - _single(ensemble, low, response, target, _CALLER))
    return _accumulate(delta, bins, edges, name, include_CI, C)


def _single(ensemble, values, response, target, caller):
    """The response as one column (a multiclass classifier's ``target`` class)."""
    out = respond(ensemble, ensemble.raw_predict(values, native=True), response)
    if out.ndim == 1:
        return out
    if out.shape[1] == 1:
        return out[:, 0]
    classes = list(ensemble.classes) if ensemble.classes is not None else \
        list(range(out.shape[1]))
    if target is None or target not in classes:
        raise ValueError(f"{caller}: target must be one of the classes {classes} for a "
                         f"multiclass classifier; got {target!r}")
    return out[:, classes.index(target)]


def _quantiles_type1(x, grid_size):
    """The quantiles PyALE's ``quantile_ied`` takes, at ``0, 1/grid_size, ..., 1``: the
    sorted values at ``j = floor((n - 1) q)``, or at ``j - 1`` where ``(n - 1) q`` is
    whole (0 before the first); the minimum and maximum at 0 and 1."""
    ordered = np.sort(x)
    q = np.linspace(0, 1, grid_size + 1, endpoint=True)
    last = ordered.shape[0] - 1
    j = (last * q).astype(int)
    whole = (last * q - j) == 0
    shifted = np.concatenate([[0.0], ordered[:-1]])
    out = np.where(whole, shifted[j], ordered[j])
    out[q == 0] = ordered[0]
    out[q == 1] = ordered[-1]
    return out


def _accumulate(delta, bins, edges, name, include_CI, C):  # noqa: N803
    """The centred ALE table from each row's difference and bin."""
    observed = np.unique(bins)
    sizes = np.bincount(bins, minlength=edges.shape[0] - 1)[observed]
    frame = pd.DataFrame({"bin": bins, "delta": delta})
    grouped = frame.groupby("bin")["delta"]
    means = grouped.mean().to_numpy()
    effect = np.cumsum(means)
    previous = np.concatenate([[0.0], effect[:-1]])
    centre = ((effect + previous) / 2 * sizes).sum() / sizes.sum()
    index = pd.Index(np.concatenate([[edges[0]], edges[observed + 1]]), name=name)
    table = pd.DataFrame({"eff": np.concatenate([[0.0], effect]) - centre,
                          "size": np.concatenate([[0], sizes])}, index=index)
    if include_CI:
        spread = grouped.std().to_numpy()
        half = spread / np.sqrt(sizes) * student_t.ppf(1 - (1 - C) / 2, sizes - 1)
        half = np.concatenate([[np.nan], half])
        percent = int(C * 100)
        table[f"lowerCI_{percent}%"] = table["eff"] - half
        table[f"upperCI_{percent}%"] = table["eff"] + half
    return table


def _is_categorical(ensemble, column, j):
    if ensemble.categories is not None and ensemble.categories[j] is not None:
        return True
    dtype = getattr(column, "dtype", np.asarray(column).dtype)
    return dtype.name == "category" or dtype.kind in "OSUb"


def _categorical_ale(ensemble, rows, j, response, target, include_CI, C):  # noqa: N803
    """ALE of a categorical feature (Apley & Zhu 2020, section 5.3; PyALE's numbers)."""
    name = rows.names[j]
    column = pd.Series(np.asarray(rows.column(j), dtype=object)) \
        if not hasattr(rows.column(j), "iloc") else rows.column(j).reset_index(drop=True)
    present = ~np.asarray(column.isna())
    column = column[present].reset_index(drop=True)
    others = _other_columns(ensemble, rows, j, present)
    if column.dtype.name == "category" and column.cat.ordered:
        groups = [g for g in column.cat.categories if (column == g).any()]
    else:
        groups = _sorted_unique(column)
        if len(groups) > 2:
            groups = [groups[k] for k in _similarity_order(column, groups, others)]
    K = len(groups)
    if K < 2:
        raise ValueError(f"{_CALLER}: feature {name!r} has one category; it has no local "
                         "effects")
    position = np.empty(column.shape[0], dtype=np.intp)
    for k, group in enumerate(groups):
        position[np.asarray(column == group)] = k
    codes = rows.encode_points([j], [(g,) for g in groups])[:, 0]
    values = rows.values[present]
    here = _single(ensemble, values, response, target, _CALLER)
    up, down = position < K - 1, position > 0
    moved = values[up].copy()
    moved[:, j] = codes[position[up] + 1]
    delta_up = _single(ensemble, moved, response, target, _CALLER) - here[up]
    moved = values[down].copy()
    moved[:, j] = codes[position[down] - 1]
    delta_down = here[down] - _single(ensemble, moved, response, target, _CALLER)
    frame = pd.DataFrame({"step": np.concatenate([position[up] + 1, position[down]]),
                          "delta": np.concatenate([delta_up, delta_down])})
    grouped = frame.groupby("step")["delta"]
    sizes = np.bincount(position, minlength=K)
    effect = np.concatenate([[0.0], np.cumsum(grouped.mean().reindex(range(1, K))
                                              .to_numpy())])
    effect = effect - (effect * sizes).sum() / sizes.sum()
    index = pd.Index(groups, name=name)
    table = pd.DataFrame({"eff": effect, "size": sizes}, index=index)
    if include_CI:
        counts = grouped.count().reindex(range(1, K)).to_numpy()
        spread = grouped.std().reindex(range(1, K)).to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            half = spread / np.sqrt(counts) * student_t.ppf(1 - (1 - C) / 2, counts - 1)
        half = np.concatenate([[np.nan], half])
        percent = int(C * 100)
        table[f"lowerCI_{percent}%"] = table["eff"] - half
        table[f"upperCI_{percent}%"] = table["eff"] + half
    return table


def _sorted_unique(column):
    values = list(pd.unique(column))
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def _other_columns(ensemble, rows, j, present):
    """The other features on the rows with the feature: (values, discrete) each."""
    out = []
    for k in range(len(rows.names)):
        if k == j:
            continue
        column = rows.column(k)
        series = (column.reset_index(drop=True) if hasattr(column, "iloc")
                  else pd.Series(np.asarray(column)))[present].reset_index(drop=True)
        categorical = ensemble.categories is not None and ensemble.categories[k] is not None
        # PyALE's rule: a pandas categorical, or at most 10 values and not floats.
        discrete = (categorical or series.dtype.name == "category"
                    or (series.nunique() <= 10 and "float" not in series.dtype.name))
        out.append((series, discrete))
    return out


def _similarity_order(column, groups, others):
    """The categories' order along the first axis of a classical MDS of their summed
    Kolmogorov-Smirnov / total-variation distances over the other features."""
    K = len(groups)
    members = [np.asarray(column == g) for g in groups]
    distance = np.zeros((K, K))
    for series, discrete in others:
        if discrete:
            table = pd.crosstab(column, series)
            share = table.div(table.sum(axis=1), axis=0).reindex(groups).fillna(0.0)
            share = share.to_numpy(dtype=np.float64)
            distance += np.abs(share[:, None, :] - share[None, :, :]).sum(axis=2) / 2
            continue
        x = series.to_numpy(dtype=np.float64, na_value=np.nan)
        quantiles = np.nanquantile(x, np.arange(0, 1, 1 / 100))
        cdf = np.zeros((K, quantiles.shape[0]))
        for k, rows_k in enumerate(members):
            values = np.sort(x[rows_k][~np.isnan(x[rows_k])])
            if values.shape[0]:
                cdf[k] = np.searchsorted(values, quantiles, side="right") / values.shape[0]
        distance += np.abs(cdf[:, None, :] - cdf[None, :, :]).max(axis=2)
    centring = np.eye(K) - np.ones((K, K)) / K
    B = -0.5 * centring @ np.square(distance) @ centring
    eigenvalues, eigenvectors = np.linalg.eigh(B)
    top = int(np.argmax(eigenvalues))
    coordinate = eigenvectors[:, top] * np.sqrt(max(eigenvalues[top], 0.0))
    # MDS leaves the direction free: the one that agrees with the categories' own order.
    if np.ptp(coordinate) > 0 and np.corrcoef(coordinate, np.arange(K))[0, 1] < 0:
        coordinate = -coordinate
    return np.argsort(coordinate, kind="stable")


def _numeric_column(ensemble, rows, j):
    if ensemble.categories is not None and ensemble.categories[j] is not None:
        raise ValueError(f"{_CALLER}: feature {rows.names[j]!r} is categorical; the "
                         "second-order ALE is for two numeric features")
    column = rows.column(j)
    try:
        return (column.to_numpy(dtype=np.float64, na_value=np.nan)
                if hasattr(column, "to_numpy") else np.asarray(column, dtype=np.float64))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{_CALLER}: feature {rows.names[j]!r} is not numeric; the "
                         "second-order ALE is for two numeric features") from error


def _second_order(ensemble, rows, columns, grid_size, response, target):
    """The second-order ALE of a pair of numeric features (ALEPlot's ``ALEPlot(J=c(j,
    k))``, PyALE's 2-D ALE)."""
    j, k = columns
    x = _numeric_column(ensemble, rows, j)
    w = _numeric_column(ensemble, rows, k)
    present = ~np.isnan(x) & ~np.isnan(w)
    if present.sum() < 2:
        raise ValueError(f"{_CALLER}: the pair needs at least two rows with both values")
    x, w, values = x[present], w[present], rows.values[present]
    edges, bins = [], []
    for column, name in ((x, rows.names[j]), (w, rows.names[k])):
        e = np.unique(np.concatenate([[column.min()], _quantiles_type1(column, grid_size)]))
        if e.shape[0] < 2:
            raise ValueError(f"{_CALLER}: feature {name!r} is constant; it has no local "
                             "effects")
        b = np.searchsorted(e, column, side="left") - 1
        b[column == e[0]] = 0
        edges.append(e)
        bins.append(b)
    (ex, ew), (bx, bw) = edges, bins

    def corner(dx, dw):
        moved = values.copy()
        moved[:, j] = ex[bx + dx]
        moved[:, k] = ew[bw + dw]
        return _single(ensemble, moved, response, target, _CALLER)

    delta = (corner(1, 1) - corner(1, 0)) - (corner(0, 1) - corner(0, 0))
    K1, K2 = ex.shape[0] - 1, ew.shape[0] - 1
    counts = np.zeros((K1, K2))
    np.add.at(counts, (bx, bw), 1.0)
    sums = np.zeros((K1, K2))
    np.add.at(sums, (bx, bw), delta)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    empty = counts == 0
    if empty.any():
        # The nearest non-empty cell, by the cells' centres over each feature's range.
        cx = (ex[:-1] + ex[1:]) / (2 * (ex[-1] - ex[0]))
        cw = (ew[:-1] + ew[1:]) / (2 * (ew[-1] - ew[0]))
        full = np.argwhere(~empty)
        for a, b in np.argwhere(empty):
            distance = (cx[full[:, 0]] - cx[a]) ** 2 + (cw[full[:, 1]] - cw[b]) ** 2
            nearest = full[int(np.argmin(distance))]
            means[a, b] = means[nearest[0], nearest[1]]
    effect = np.zeros((K1 + 1, K2 + 1))
    effect[1:, 1:] = np.cumsum(np.cumsum(means, axis=0), axis=1)
    # Less the first-order effects it holds: each feature's mean change across its
    # bins, weighted by the cells' rows, accumulated.
    step = effect[1:, :] - effect[:-1, :]
    first = np.concatenate([[0.0], np.cumsum(
        (counts * (step[:, :-1] + step[:, 1:]) / 2).sum(axis=1) / counts.sum(axis=1))])
    step = effect[:, 1:] - effect[:, :-1]
    second = np.concatenate([[0.0], np.cumsum(
        (counts * (step[:-1, :] + step[1:, :]) / 2).sum(axis=0) / counts.sum(axis=0))])
    effect = effect - first[:, None] - second[None, :]
    centre = (counts * (effect[:-1, :-1] + effect[:-1, 1:] + effect[1:, :-1]
                        + effect[1:, 1:]) / 4).sum() / counts.sum()
    return pd.DataFrame(effect - centre, index=pd.Index(ex, name=rows.names[j]),
                        columns=pd.Index(ew, name=rows.names[k]))
