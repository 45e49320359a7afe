"""Grouped horizontal bars: several importance measures side by side, per feature."""

from __future__ import annotations

import numpy as np

from .._text import for_plot, shorten

__all__ = ["plot_compare"]

_SCALES = ("max", "none")
_COLUMNS = ("feature", "method", "importance", "std")


def plot_compare(table, ax=None, scale="max", max_features=20):
    """Draw a :func:`sapwood.importance.compare` table as grouped horizontal bars.

    One group of bars per feature (best mean rank over the methods on top), one bar
    and colour per method, with ``std`` as the error bar.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``feature``, ``method``, ``importance``, ``std`` (and ``rank``), one row
        per (feature, method), as :func:`~sapwood.importance.compare` and
        :func:`~sapwood.importance.side_by_side` return.
    ax : matplotlib Axes, optional
        Drawn into a new figure when None.
    scale : {"max", "none"}, default="max"
        ``"max"`` divides each method's importances and stds by that method's largest
        absolute importance, so measures on different scales (MDI sums to 1,
        permutation importance is in score units) share one axis; ``"none"`` draws
        the raw numbers.
    max_features : int or None, default=20
        Show only the features with the best mean rank; None shows all.

    Returns
    -------
    matplotlib.axes.Axes
    """
    missing = [column for column in _COLUMNS if column not in table.columns]
    if missing:
        raise ValueError(f"table must have columns {list(_COLUMNS)}; it lacks {missing}")
    if scale not in _SCALES:
        raise ValueError(f"scale must be one of {_SCALES}; got {scale!r}")
    if max_features is not None and (not isinstance(max_features, int) or max_features < 1):
        raise ValueError(f"max_features must be a positive int or None; got {max_features!r}")
    import matplotlib.pyplot as plt  # lazy: see the package docstring

    methods = list(dict.fromkeys(table["method"]))
    importance = table.pivot(index="feature", columns="method", values="importance")
    std = table.pivot(index="feature", columns="method", values="std")
    if scale == "max":
        largest = importance.abs().max(axis=0).replace(0.0, 1.0)
        importance, std = importance / largest, std / largest
    ranks = importance.rank(ascending=False).mean(axis=1)
    features = list(ranks.sort_values(kind="stable").index[:max_features])[::-1]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 0.25 * len(features) * len(methods) + 1.2))
    height = 0.8 / len(methods)
    positions = np.arange(len(features))
    for k, method in enumerate(methods):
        offset = (len(methods) - 1 - k) * height - 0.4 + height / 2
        ax.barh(positions + offset, importance.loc[features, method], height=height,
                xerr=std.loc[features, method].fillna(0.0), label=for_plot(method),
                capsize=2, ecolor="#333333")
    # Names from data: shown as they are (no mathtext), shortened when very long.
    ax.set_yticks(positions, [shorten(name) for name in features], parse_math=False)
    ax.axvline(0.0, color="#999999", linewidth=0.8)
    ax.set_xlabel("importance / largest importance of the method" if scale == "max"
                  else "importance")
    ax.legend(loc="lower right", fontsize="small")
    return ax
