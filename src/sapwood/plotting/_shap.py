"""SHAP plots: beeswarm, bar, waterfall and dependence, for any ``tree_shap`` result.

Each plot reads one :func:`~sapwood.importance.tree_shap` result, which carries what
every plot needs (the values, the base value, the rows explained, the feature names and
what the values add up to), so all four take the same input, as the ``shap`` package's
plots take one Explanation (Lundberg et al. 2020, doi:10.1038/s42256-019-0138-9, drew
the first three). Axis labels give the units of the explained output (log-odds,
probability, prediction, log loss): a SHAP value is a share of that output.

Names and category labels come from the data, so they are drawn as the characters they
are (no mathtext), control characters escaped and very long ones shortened.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._text import shorten

__all__ = ["bar", "beeswarm", "dependence", "waterfall"]

# Blue (low feature value, negative contribution) to red (high, positive).
_LOW, _HIGH, _MISSING = "#1e88e5", "#ff0d57", "#8c8c8c"
# Half the height a feature's row of points may take in the beeswarm.
_ROW_HALF_HEIGHT = 0.4
# Colour scales run from the 5th to the 95th percentile, so that a few extreme rows do
# not wash out the rest (the shap package does the same).
_PERCENTILES = (5.0, 95.0)


@dataclass(frozen=True)
class _Explanation:
    """One output column of a ``tree_shap`` result, in memory."""

    values: np.ndarray  # (n_rows, n_features)
    base: np.ndarray  # (n_rows,): the expected value each row's values start from
    numbers: np.ndarray | None  # (n_rows, n_features) floats, category codes; None: no data
    categories: dict  # feature index -> labels of its codes
    names: list
    output: str  # what the values add up to, for axis labels


def beeswarm(result, *, max_display=10, output=None, ax=None):
    """One row of points per feature, one point per explained row, at its SHAP value.

    Features are ordered by mean ``|SHAP value|``, largest on top; beyond ``max_display``
    the rest are summed into one row ("sum of N other features"). A point's colour is
    the row's value of the feature (blue low, red high, between the feature's 5th and
    95th percentiles; grey where missing; categories by their codes); points with
    close SHAP values spread up and down so that their density shows.

    Parameters
    ----------
    result : ImportanceResult
        From :func:`sapwood.importance.tree_shap` (a Dask result's values and rows are
        computed: they must fit in memory).
    max_display : int, default=10
        Rows of the plot, the "other features" row included.
    output : int or class label, optional
        Which output column to show when the model has several (a forest classifier's
        classes, multiclass boosting): its class (matched first) or its index. By
        default the only one, or a binary classifier's second (positive) class.
    ax : matplotlib Axes, optional
        Drawn into a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_max_display(max_display)
    explanation = _explanation(result, output)
    plt = _pyplot()
    rows = _ranked_rows(explanation, max_display)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 0.45 * len(rows) + 1.5))
    cmap = _colormap()
    rng = np.random.default_rng(0)  # the order points stack in a crowded bin
    for position, (_, values, numbers) in enumerate(reversed(rows)):
        colors = _colors(numbers, cmap, len(values))
        offsets = _swarm(values, rng)
        ax.scatter(values, position + offsets, c=colors, s=12, linewidths=0, alpha=0.9,
                   zorder=3, rasterized=len(values) > 2000)
        ax.axhline(position, color="#dddddd", linewidth=0.6, zorder=1)
    _row_ticks(ax, [label for label, _, _ in reversed(rows)])
    ax.axvline(0.0, color="#999999", linewidth=0.8, zorder=2)
    ax.set_xlabel(f"SHAP value (impact on {explanation.output})", parse_math=False)
    if explanation.numbers is not None:
        from matplotlib.cm import ScalarMappable  # lazy: see the package docstring

        bar_ = ax.figure.colorbar(ScalarMappable(cmap=cmap), ax=ax, ticks=[0, 1],
                                  aspect=40, pad=0.02)
        bar_.set_ticklabels(["Low", "High"])
        bar_.set_label("Feature value")
        bar_.outline.set_visible(False)
    return ax


def bar(result, *, max_display=10, output=None, ax=None):
    """Mean ``|SHAP value|`` per feature as horizontal bars, largest on top, each labelled
    with its number; beyond ``max_display`` the rest are summed into one bar.

    Parameters
    ----------
    result : ImportanceResult
        From :func:`sapwood.importance.tree_shap`; a Dask result is drawn from its
        summaries without computing the values again (one output column; otherwise
        the chosen column's mean is computed).
    max_display, output, ax
        As in :func:`beeswarm`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_max_display(max_display)
    column, label = _output_column(result, output)
    values = result.extra["shap_values"]
    if column is None:
        means = np.asarray(result.importances_mean, dtype=np.float64)
    else:
        means = np.asarray(abs(values[..., column]).mean(axis=0), dtype=np.float64)
    plt = _pyplot()
    order = np.argsort(-means, kind="stable")
    labels = [shorten(result.feature_names[j]) for j in order]
    heights = list(means[order])
    if len(order) > max_display:
        rest = len(order) - max_display + 1
        labels = labels[:max_display - 1] + [f"sum of {rest} other features"]
        heights = heights[:max_display - 1] + [float(np.sum(means[order[max_display - 1:]]))]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 0.4 * len(labels) + 1.2))
    positions = np.arange(len(labels))[::-1]
    bars = ax.barh(positions, heights, color=_LOW, height=0.7)
    ax.bar_label(bars, labels=[f"{height:.3g}" for height in heights], padding=3,
                 fontsize="small")
    _row_ticks(ax, labels[::-1])
    ax.set_xlim(0.0, max(max(heights), 1e-300) * 1.15)
    ax.set_xlabel(f"mean |SHAP value| (impact on {label})", parse_math=False)
    return ax


def waterfall(result, row, *, max_display=10, output=None, ax=None):
    """How one row's prediction is built: from the base value E[f(X)] (bottom) each
    feature's SHAP value moves the output up (red) or down (blue) until the row's
    prediction f(x) (top).

    The features with the largest ``|SHAP value|`` are on top, each labelled with the
    row's value of it (category labels for categorical columns, "missing" for a
    missing value); beyond ``max_display`` bars the rest are one bar. The bars' widths
    add up to f(x) - E[f(X)].

    Parameters
    ----------
    result : ImportanceResult
        From :func:`sapwood.importance.tree_shap` (a Dask result: only this row is
        computed).
    row : int
        The row's position among the rows explained (0 is the first).
    max_display, output, ax
        As in :func:`beeswarm`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_max_display(max_display)
    n_rows = int(result.extra["shap_values"].shape[0])
    if not isinstance(row, int | np.integer) or not 0 <= row < n_rows:
        raise ValueError(f"row must be the position of an explained row, an int in [0, "
                         f"{n_rows - 1}]; got {row!r}")
    explanation = _explanation(result, output, rows=[int(row)])
    phi = explanation.values[0]
    base = float(explanation.base[0])
    prediction = base + float(phi.sum())
    order = np.argsort(-np.abs(phi), kind="stable")
    labels = [_feature_with_value(explanation, 0, j) for j in order]
    widths = list(phi[order])
    if len(order) > max_display:
        rest = len(order) - max_display + 1
        labels = labels[:max_display - 1] + [f"{rest} other features"]
        widths = widths[:max_display - 1] + [float(phi[order[max_display - 1:]].sum())]
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 0.45 * len(labels) + 1.8))
    # Bottom to top: the smallest contribution starts at the base value.
    labels, widths = labels[::-1], widths[::-1]
    lefts = base + np.concatenate([[0.0], np.cumsum(widths)[:-1]])
    colors = [_HIGH if width >= 0 else _LOW for width in widths]
    bars = ax.barh(np.arange(len(widths)), widths, left=lefts, color=colors, height=0.7)
    ax.bar_label(bars, labels=[f"{width:+.3g}" for width in widths], padding=3,
                 fontsize="small")
    _row_ticks(ax, labels)
    top = len(widths) - 0.5
    for x, y, text, align in ((base, -0.75, f"E[f(X)] = {base:.4g}", "top"),
                              (prediction, top + 0.15, f"f(x) = {prediction:.4g}", "bottom")):
        ax.axvline(x, color="#666666", linestyle=":", linewidth=1, zorder=1)
        ax.text(x, y, text, ha="center", va=align, fontsize="small", parse_math=False,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
    ax.set_ylim(-1.3, top + 0.8)
    ends = np.concatenate([lefts, lefts + np.asarray(widths), [base, prediction]])
    span = max(float(ends.max() - ends.min()), abs(base) * 1e-3, 1e-12)
    ax.set_xlim(ends.min() - 0.2 * span, ends.max() + 0.2 * span)
    ax.set_xlabel(f"model output: {explanation.output}", parse_math=False)
    return ax


def dependence(result, feature, interaction="auto", *, output=None, ax=None):
    """A feature's SHAP value against its value, one point per explained row,
    coloured by a second feature's value.

    Parameters
    ----------
    result : ImportanceResult
        From :func:`sapwood.importance.tree_shap` (a Dask result's values and rows are
        computed: they must fit in memory).
    feature : str or int
        The feature, by name or position.
    interaction : "auto", str, int or None, default="auto"
        The feature whose value colours the points: ``"auto"`` the one that interacts
        most with ``feature`` (from the interaction values when the result has them,
        else estimated as the ``shap`` package's ``approximate_interactions`` does:
        rows sorted by ``feature``'s value, the correlation of its SHAP value with the
        other feature's value within consecutive runs of rows, where ``feature``
        barely changes); None: one colour.
    output, ax
        As in :func:`beeswarm`.

    Returns
    -------
    matplotlib.axes.Axes
        Rows missing ``feature`` are not drawn (the x-axis label says how many).
    """
    explanation = _explanation(result, output)
    if explanation.numbers is None:
        raise ValueError("dependence needs the explained rows; this result has none "
                         "(result.extra['data'] is missing: compute it with "
                         "sapwood.importance.tree_shap)")
    j = _feature_index(explanation.names, feature, "feature")
    if isinstance(interaction, str) and interaction == "auto":
        k = _strongest_interaction(result, explanation, j, output)
    elif interaction is None:
        k = None
    else:
        k = _feature_index(explanation.names, interaction, "interaction")
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    x = explanation.numbers[:, j]
    present = ~np.isnan(x)
    cmap = _colormap()
    if k is None:
        colors = _LOW
    else:
        colors = _colors(explanation.numbers[present, k], cmap, int(present.sum()))
    ax.scatter(x[present], explanation.values[present, j], c=colors, s=14, linewidths=0,
               alpha=0.9, zorder=3)
    ax.axhline(0.0, color="#999999", linewidth=0.8, zorder=2)
    name = shorten(explanation.names[j])
    missing = int((~present).sum())
    ax.set_xlabel(name + (f" ({missing} rows missing it not shown)" if missing else ""),
                  parse_math=False)
    ax.set_ylabel(f"SHAP value of {name}\n(impact on {explanation.output})",
                  parse_math=False)
    if j in explanation.categories:
        labels = explanation.categories[j]
        ax.set_xticks(np.arange(len(labels)), [shorten(label) for label in labels],
                      parse_math=False)
    if k is not None:
        from matplotlib.cm import ScalarMappable  # lazy: see the package docstring

        values = explanation.numbers[:, k]
        low, high = _color_range(values)
        mappable = ScalarMappable(cmap=cmap)
        mappable.set_clim(low, high if high > low else low + 1.0)
        colorbar = ax.figure.colorbar(mappable, ax=ax, aspect=40, pad=0.02)
        colorbar.set_label(shorten(explanation.names[k]), parse_math=False)
        colorbar.outline.set_visible(False)
        if k in explanation.categories:
            labels = explanation.categories[k]
            shown = [code for code in range(len(labels)) if low <= code <= high]
            colorbar.set_ticks(shown, labels=[shorten(labels[code]) for code in shown],
                               parse_math=False)
    return ax


# -- reading the result ---------------------------------------------------------------

def _explanation(result, output, rows=None) -> _Explanation:
    """The chosen output column of ``result`` in memory (only ``rows``, if given)."""
    column, label = _output_column(result, output)
    values = result.extra["shap_values"]
    if column is not None:
        values = values[..., column]
    if rows is not None:
        values = values[rows]
    values = np.asarray(values, dtype=np.float64)  # a Dask array is computed here
    n_rows = int(result.extra["shap_values"].shape[0])
    base = np.asarray(result.extra["expected_value"], dtype=np.float64)
    if result.params.get("model_output") == "log_loss":
        base = base[rows] if rows is not None else base  # one per row (its label's loss)
        if base.ndim == 2:  # a forest classifier's loss: one per row and class
            base = base[:, column]
    else:
        base = np.full(len(values), base if base.ndim == 0 else base[column])
    numbers, categories = _numbers(result.extra.get("data"), rows, n_rows)
    return _Explanation(values, base, numbers, categories, list(result.feature_names), label)


def _output_column(result, output):
    """(index of the output column or None when there is one, its axis label)."""
    extra = getattr(result, "extra", None) or {}
    if getattr(result, "method", None) != "tree_shap" or "shap_values" not in extra:
        raise ValueError("result must be a sapwood.importance.tree_shap result; got "
                         f"{getattr(result, 'method', type(result).__name__)!r}")
    names = extra.get("output_names")
    quantity = extra.get("output", "model output")
    values = extra["shap_values"]
    n_columns = 1 if values.ndim == 2 else int(values.shape[2])
    if n_columns == 1:
        if output not in (None, 0) and not (names and output == names[0]):
            raise ValueError(f"output must be None or 0: the result has one output column; "
                             f"got {output!r}")
        return None, _with_class(quantity, names, 0)
    allowed = list(range(n_columns)) + list(names or [])
    if output is None:
        if n_columns == 2 and names is not None:
            return 1, _with_class(quantity, names, 1)  # a binary classifier's positive class
        raise ValueError(f"output must name one of the result's {n_columns} output columns "
                         f"(one of {allowed}); got None")
    if names is not None and not isinstance(output, bool | np.bool_) and output in names:
        column = names.index(output)
    elif isinstance(output, int | np.integer) and 0 <= output < n_columns:
        column = int(output)
    else:
        raise ValueError(f"output must be one of {allowed}; got {output!r}")
    return column, _with_class(quantity, names, column)


def _with_class(quantity, names, column) -> str:
    return quantity if names is None else f"{quantity} of class {shorten(names[column])!r}"


def _numbers(data, rows, n_rows):
    """The explained rows as floats (categories as their codes, missing as NaN) and the
    labels of each categorical column's codes; (None, {}) without data."""
    if data is None:
        return None, {}
    if hasattr(data, "to_dask_array"):  # a Dask DataFrame: numeric columns only
        data = data.to_dask_array(lengths=True)
    if hasattr(data, "compute"):  # a Dask array: only the rows asked for
        return np.asarray((data if rows is None else data[rows]).compute(),
                          dtype=np.float64), {}
    if len(data) != n_rows:
        raise ValueError(f"result.extra['data'] has {len(data)} rows; the values have "
                         f"{n_rows}")
    if not isinstance(data, pd.DataFrame):
        numbers = np.asarray(data, dtype=np.float64)
        return (numbers if rows is None else numbers[rows]), {}
    frame = data if rows is None else data.iloc[rows]
    columns, categories = [], {}
    for j, (_, column) in enumerate(frame.items()):
        if isinstance(column.dtype, pd.CategoricalDtype):
            categories[j] = [str(label) for label in column.cat.categories]
            codes = column.cat.codes.to_numpy(dtype=np.float64)
            codes[codes < 0] = np.nan
            columns.append(codes)
        elif pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            columns.append(column.to_numpy(dtype=np.float64, na_value=np.nan))
        else:  # text: its distinct values in sorted order
            labels = sorted(data.iloc[:, j].dropna().astype(str).unique())
            categories[j] = labels
            codes = pd.Categorical(column.astype(str).where(column.notna()),
                                   categories=labels).codes.astype(np.float64)
            codes[codes < 0] = np.nan
            columns.append(codes)
    return np.column_stack(columns) if columns else np.empty((len(frame), 0)), categories


def _feature_index(names, feature, parameter) -> int:
    if isinstance(feature, int | np.integer) and not isinstance(feature, bool | np.bool_):
        if 0 <= feature < len(names):
            return int(feature)
    elif isinstance(feature, str) and feature in names:
        return names.index(feature)
    raise ValueError(f"{parameter} must be a feature name or a position in [0, "
                     f"{len(names) - 1}]; got {feature!r}")


def _strongest_interaction(result, explanation, j, output):
    """The feature that interacts most with feature ``j`` (None if it is alone)."""
    n_features = explanation.values.shape[1]
    if n_features < 2:
        return None
    pairs = result.extra.get("interaction_values")
    if pairs is not None:
        column, _ = _output_column(result, output)
        pairs = pairs if column is None else pairs[..., column]
        scores = np.asarray(abs(pairs[:, j, :]).mean(axis=0), dtype=np.float64)
    else:
        scores = approximate_interactions(explanation.values[:, j], explanation.numbers, j)
    scores[j] = -np.inf
    return int(np.argmax(scores))


def approximate_interactions(phi, numbers, j):
    """How strongly each feature seems to interact with feature ``j``, from one SHAP
    column ``phi`` (n_rows,) and the rows ``numbers`` (n_rows, n_features).

    The rows are sorted by feature ``j``'s value and cut into runs of consecutive rows
    (a tenth of the rows, at most 50 per run, the ``shap`` package's choice): within a
    run ``j`` barely changes, so whatever moves its SHAP value there is another feature
    acting with it. A feature's score is the sum over the runs of the absolute
    correlation between ``phi`` and its value (runs where either is constant, or with
    fewer than two rows that have the feature, add nothing)."""
    n_rows, n_features = numbers.shape
    order = np.argsort(numbers[:, j], kind="stable")  # missing values last
    size = max(min(n_rows // 10, 50), 1)
    scores = np.zeros(n_features)
    for start in range(0, n_rows, size):
        chunk = order[start:start + size]
        x = numbers[chunk]
        present = ~np.isnan(x)
        y = np.where(present, phi[chunk, None], 0.0)
        count = present.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            x_centred = np.where(present, x - np.nansum(x, axis=0) / count, 0.0)
            y_centred = np.where(present, y - y.sum(axis=0) / count, 0.0)
            correlation = np.abs((x_centred * y_centred).sum(axis=0) / np.sqrt(
                (x_centred ** 2).sum(axis=0) * (y_centred ** 2).sum(axis=0)))
        # A run where either is constant (or nearly all missing) is no evidence.
        varies = (np.where(present, x, -np.inf).max(axis=0)
                  > np.where(present, x, np.inf).min(axis=0))
        phi_varies = (np.where(present, phi[chunk, None], -np.inf).max(axis=0)
                      > np.where(present, phi[chunk, None], np.inf).min(axis=0))
        usable = (count >= 2) & varies & phi_varies & np.isfinite(correlation)
        scores += np.where(usable, np.minimum(correlation, 1.0), 0.0)
    return scores


# -- drawing helpers --------------------------------------------------------------------

def _ranked_rows(explanation, max_display):
    """(label, SHAP values, feature values or None) per beeswarm row, most important
    first, the features beyond ``max_display - 1`` summed into the last row."""
    values, numbers = explanation.values, explanation.numbers
    order = np.argsort(-np.abs(values).mean(axis=0), kind="stable")
    rows = [(shorten(explanation.names[j]), values[:, j],
             None if numbers is None else numbers[:, j]) for j in order]
    if len(rows) > max_display:
        rest = order[max_display - 1:]
        rows = rows[:max_display - 1] + [(f"sum of {len(rest)} other features",
                                          values[:, rest].sum(axis=1), None)]
    return rows


def _swarm(values, rng, n_bins=100):
    """Vertical offsets that spread points with nearly equal values: values are
    binned along the axis and the points of a bin alternate above and below the
    line, one layer further out each pair (the bin's order shuffled by ``rng``)."""
    n = len(values)
    if n == 0:
        return np.zeros(0)
    low, high = float(np.min(values)), float(np.max(values))
    bins = (np.zeros(n, dtype=np.intp) if high == low else
            np.rint((values - low) / (high - low) * (n_bins - 1)).astype(np.intp))
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(bins[shuffled], kind="stable")]
    sorted_bins = bins[order]
    first = np.searchsorted(sorted_bins, sorted_bins, side="left")
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n) - first
    layer = (rank + 1) // 2
    offsets = np.where(rank % 2 == 1, layer, -layer).astype(np.float64)
    return offsets * (_ROW_HALF_HEIGHT / max(int(layer.max()), 1))


def _color_range(numbers):
    finite = numbers[np.isfinite(numbers)]
    if finite.size == 0:
        return 0.0, 1.0
    low, high = np.percentile(finite, _PERCENTILES)
    if high <= low:
        low, high = float(finite.min()), float(finite.max())
    return float(low), float(high)


def _colors(numbers, cmap, n):
    """RGBA per point: the value between the 5th and 95th percentile on ``cmap``, grey
    where missing; one grey for all without values."""
    from matplotlib.colors import to_rgba  # lazy: see the package docstring

    if numbers is None:
        return np.tile(to_rgba(_MISSING), (n, 1))
    low, high = _color_range(numbers)
    scaled = np.clip((numbers - low) / (high - low), 0.0, 1.0) if high > low else (
        np.full(n, 0.5))
    colors = cmap(np.nan_to_num(scaled, nan=0.5))
    colors[np.isnan(numbers)] = to_rgba(_MISSING)
    return colors


def _feature_with_value(explanation, row, j) -> str:
    """``name = value`` for the waterfall: the row's value as a category label,
    ``missing``, or four significant digits; just the name without data."""
    name = shorten(explanation.names[j])
    if explanation.numbers is None:
        return name
    value = explanation.numbers[row, j]
    if np.isnan(value):
        return f"{name} = missing"
    labels = explanation.categories.get(j)
    if labels is not None and float(value).is_integer() and 0 <= value < len(labels):
        return f"{name} = {shorten(labels[int(value)])}"
    return f"{name} = {value:.4g}"


def _row_ticks(ax, labels):
    # Names from data: shown as they are (no mathtext), shortened when very long.
    ax.set_yticks(np.arange(len(labels)), labels, parse_math=False)
    ax.set_ylim(-0.5 - _ROW_HALF_HEIGHT / 2, len(labels) - 0.5 + _ROW_HALF_HEIGHT / 2)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)


def _colormap():
    from matplotlib.colors import LinearSegmentedColormap  # lazy: see the package docstring

    return LinearSegmentedColormap.from_list("sapwood_shap", [_LOW, _HIGH])


def _check_max_display(max_display):
    if not isinstance(max_display, int | np.integer) or isinstance(max_display, bool) or (
            max_display < 1):
        raise ValueError(f"max_display must be a positive int; got {max_display!r}")


def _pyplot():
    import matplotlib.pyplot as plt  # lazy: see the package docstring

    return plt
