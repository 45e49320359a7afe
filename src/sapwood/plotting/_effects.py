"""Effect plots: partial dependence with ICE lines, ALE with its band, interaction strengths.

Each draws one result of :mod:`sapwood.effects` as it is returned (a Bunch, a
DataFrame), so the numbers on the picture are the numbers in the table. Category labels
and feature names come from the data: drawn as the characters they are (no mathtext),
shortened when very long.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._text import shorten

__all__ = ["ale", "interactions", "partial_dependence"]

_ICE_COLOUR, _PD_COLOUR = "#9fb8d0", "#c0392b"


def _axes(ax, size=(6.4, 4.2)):
    import matplotlib.pyplot as plt  # lazy: see the package docstring

    if ax is None:
        _, ax = plt.subplots(figsize=size)
    return ax


def _numeric(values):
    values = np.asarray(values)
    return values.dtype.kind in "fiub"


def _positions(values):
    """x positions of grid values, and tick labels when they are categories."""
    if _numeric(values):
        return np.asarray(values, dtype=np.float64), None
    return np.arange(len(values), dtype=np.float64), [shorten(str(v)) for v in values]


def partial_dependence(result, ax=None, *, feature_names=None, target=0, centered=False,
                       max_ice_lines=200):
    """The partial dependence of one feature with its ICE curves, or of a pair as a
    heatmap, from :func:`sapwood.effects.partial_dependence`'s Bunch.

    Parameters
    ----------
    result : Bunch
        ``grid_values`` and ``average`` and/or ``individual`` (scikit-learn's layout).
    ax : matplotlib Axes, default=None
        Where to draw (a new figure when None).
    feature_names : sequence of str, default=None
        The features' names, for the axis labels.
    target : int, default=0
        The output drawn (a multiclass model's class index).
    centered : bool, default=False
        Centred ICE (Goldstein et al. 2015): every curve, and the PD, minus its value at
        the first grid point.
    max_ice_lines : int, default=200
        At most this many ICE curves (evenly spaced rows) are drawn.

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    grid = list(result["grid_values"])
    names = list(feature_names) if feature_names is not None else \
        [f"feature {k}" for k in range(len(grid))]
    if len(names) != len(grid):
        raise ValueError(f"feature_names must have {len(grid)} entries (one per grid); got "
                         f"{len(names)}")
    average = result.get("average")
    individual = result.get("individual")
    if average is None and individual is None:
        raise ValueError("result must hold 'average' or 'individual' (a partial_dependence "
                         "Bunch)")
    n_outputs = (average if average is not None else individual).shape[0]
    if not 0 <= target < n_outputs:
        raise ValueError(f"target must be in [0, {n_outputs - 1}]; got {target}")
    if average is None:
        average = individual.mean(axis=1)
    if len(grid) == 2:
        return _heatmap(ax, grid, names, average[target])
    if len(grid) != 1:
        raise ValueError(f"partial_dependence draws one or two features; the result has "
                         f"{len(grid)}")
    x, labels = _positions(grid[0])
    curve = np.asarray(average[target], dtype=np.float64)
    if centered:
        curve = curve - curve[0]
    style = "-" if labels is None else "o"
    if individual is not None:
        lines = np.asarray(individual[target], dtype=np.float64)
        keep = np.unique(np.linspace(0, lines.shape[0] - 1,
                                     min(max_ice_lines, lines.shape[0])).astype(np.intp))
        lines = lines[keep]
        if centered:
            lines = lines - lines[:, :1]
        for line in lines:
            ax.plot(x, line, style, color=_ICE_COLOUR, linewidth=0.6, alpha=0.5,
                    markersize=2)
    ax.plot(x, curve, style + ("-" if labels is not None else ""), color=_PD_COLOUR,
            linewidth=2.2, label="partial dependence")
    if labels is not None:
        ax.set_xticks(x, labels, parse_math=False)
    ax.set_xlabel(shorten(names[0]), parse_math=False)
    ax.set_ylabel("centred ICE and PD" if centered else
                  ("ICE and partial dependence" if individual is not None
                   else "partial dependence"))
    return ax


def _heatmap(ax, grid, names, values):
    (x, x_labels), (y, y_labels) = _positions(grid[0]), _positions(grid[1])
    mesh = ax.pcolormesh(_edges(x), _edges(y), np.asarray(values, dtype=np.float64).T,
                         cmap="viridis", shading="flat")
    ax.figure.colorbar(mesh, ax=ax, label="partial dependence")
    if x_labels is not None:
        ax.set_xticks(x, x_labels, parse_math=False)
    if y_labels is not None:
        ax.set_yticks(y, y_labels, parse_math=False)
    ax.set_xlabel(shorten(names[0]), parse_math=False)
    ax.set_ylabel(shorten(names[1]), parse_math=False)
    return ax


def _edges(centres):
    """Cell edges around grid values (midpoints; the ends mirrored)."""
    if centres.shape[0] == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    middle = (centres[1:] + centres[:-1]) / 2
    return np.concatenate([[2 * centres[0] - middle[0]], middle,
                           [2 * centres[-1] - middle[-1]]])


def ale(result, ax=None):
    """An ALE from :func:`sapwood.effects.ale`'s DataFrame: a numeric feature's curve
    with its confidence band when the frame has one and the bin edges as a rug; a
    categorical feature's effect per category (in the ALE's order, labelled by name)
    with its intervals; a pair's second-order effect as a heatmap over the two
    features' bin edges.

    Returns
    -------
    matplotlib Axes
    """
    if not isinstance(result, pd.DataFrame):
        raise TypeError("result must be the DataFrame sapwood.effects.ale returns")
    if "eff" not in result.columns:
        if not (_numeric(result.index) and _numeric(result.columns)):
            raise TypeError("result must be the DataFrame sapwood.effects.ale returns")
        return _second_order(_axes(ax, (5.6, 4.8)), result)
    ax = _axes(ax)
    x, labels = _positions(result.index.to_numpy())
    effect = result["eff"].to_numpy(dtype=np.float64)
    lower = [c for c in result.columns if str(c).startswith("lowerCI_")]
    upper = [c for c in result.columns if str(c).startswith("upperCI_")]
    band = None
    if lower and upper:
        level = str(lower[0])[len("lowerCI_"):]
        band = (result[lower[0]].to_numpy(dtype=np.float64),
                result[upper[0]].to_numpy(dtype=np.float64), f"{level} confidence interval")
    if labels is None:
        if band is not None:
            ax.fill_between(x, band[0], band[1], color=_ICE_COLOUR, alpha=0.6, linewidth=0,
                            label=band[2])
        ax.plot(x, effect, "-o", color=_PD_COLOUR, markersize=3, linewidth=1.8, label="ALE")
        ax.plot(x, np.zeros_like(x), "|", color="black", markersize=8,
                transform=ax.get_xaxis_transform())
    else:
        # Categories: one effect each, no line between them (their order is the ALE's,
        # by similarity, not a scale); the first category's step has no interval.
        if band is not None:
            known = np.isfinite(band[0]) & np.isfinite(band[1])
            ax.errorbar(x[known], effect[known],
                        yerr=np.vstack([effect[known] - band[0][known],
                                        band[1][known] - effect[known]]),
                        fmt="none", ecolor="#4a6a8a", capsize=3, label=band[2])
        ax.plot(x, effect, "o", color=_PD_COLOUR, markersize=6, label="ALE")
        ax.axhline(0.0, color="black", linewidth=0.6)
        ax.set_xticks(x, labels, rotation=45 if len(labels) > 6 else 0,
                      ha="right" if len(labels) > 6 else "center", parse_math=False)
    ax.set_xlabel(shorten(str(result.index.name or "feature")), parse_math=False)
    ax.set_ylabel("accumulated local effect")
    return ax


def _second_order(ax, result):
    """A pair's second-order ALE on the grid of its bin edges."""
    x = result.index.to_numpy(dtype=np.float64)
    w = result.columns.to_numpy(dtype=np.float64)
    values = result.to_numpy(dtype=np.float64).T
    reach = float(np.nanmax(np.abs(values))) or 1.0
    image = ax.pcolormesh(x, w, values, shading="nearest", cmap="RdBu_r", vmin=-reach,
                          vmax=reach)
    ax.figure.colorbar(image, ax=ax, label="second-order ALE")
    ax.set_xlabel(shorten(str(result.index.name or "feature")), parse_math=False)
    ax.set_ylabel(shorten(str(result.columns.name or "feature")), parse_math=False)
    return ax


def interactions(result, ax=None, *, style="bars", max_display=10):
    """Pair strengths from :func:`sapwood.effects.h_statistic` (its pairs' ``H``) or
    :func:`sapwood.effects.shap_interaction_importance` (``mean_abs_interaction``):
    ranked bars (with the intervals, when the table has them), or a heatmap over the
    features.

    Parameters
    ----------
    result : DataFrame
    ax : matplotlib Axes, default=None
    style : {"bars", "heatmap"}, default="bars"
    max_display : int, default=10
        The strongest pairs drawn as bars.

    Returns
    -------
    matplotlib Axes
    """
    if style not in ("bars", "heatmap"):
        raise ValueError(f"style must be 'bars' or 'heatmap'; got {style!r}")
    if not isinstance(result, pd.DataFrame) or "features" not in result.columns:
        raise TypeError("result must be the DataFrame h_statistic or "
                        "shap_interaction_importance returns")
    if "H" in result.columns:
        table = result[result["kind"] == "pair"] if "kind" in result.columns else result
        value, low, high, label = "H", "H_low", "H_high", "H-statistic (H)"
    elif "mean_abs_interaction" in result.columns:
        table, value, low, high = result, "mean_abs_interaction", "low", "high"
        label = "mean |SHAP interaction|"
    else:
        raise ValueError("result has neither an 'H' nor a 'mean_abs_interaction' column")
    table = table.sort_values(value, ascending=False, kind="stable")
    if style == "heatmap":
        return _pair_heatmap(_axes(ax, (5.6, 4.8)), table, value, label)
    shown = table.head(max_display)
    ax = _axes(ax, (6.4, 0.35 * len(shown) + 1.2))
    positions = np.arange(len(shown))[::-1]
    values = shown[value].to_numpy(dtype=np.float64)
    error = None
    if low in shown.columns and high in shown.columns:
        error = np.vstack([values - shown[low].to_numpy(dtype=np.float64),
                           shown[high].to_numpy(dtype=np.float64) - values])
    ax.barh(positions, values, xerr=error, color=_ICE_COLOUR, edgecolor="#4a6a8a",
            capsize=3)
    ax.set_yticks(positions, [" x ".join(shorten(str(f)) for f in pair)
                              for pair in shown["features"]], parse_math=False)
    ax.set_xlabel(label)
    return ax


def _pair_heatmap(ax, table, value, label):
    names = sorted({f for pair in table["features"] for f in pair}, key=str)
    index = {name: k for k, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    for pair, v in zip(table["features"], table[value], strict=True):
        j, k = index[pair[0]], index[pair[1]]
        matrix[j, k] = matrix[k, j] = v
    image = ax.imshow(matrix, cmap="magma_r")
    ax.figure.colorbar(image, ax=ax, label=label)
    ticks = np.arange(len(names))
    labels = [shorten(str(n)) for n in names]
    ax.set_xticks(ticks, labels, rotation=45, ha="right", parse_math=False)
    ax.set_yticks(ticks, labels, parse_math=False)
    return ax
