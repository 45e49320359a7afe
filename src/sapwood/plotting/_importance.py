"""Importance charts: horizontal bars with error bars, or a box per feature."""

from __future__ import annotations

import numpy as np

from .._text import shorten

__all__ = ["plot_importance"]

_KINDS = ("bar", "box")


def plot_importance(result, ax=None, kind="bar", max_features=20):
    """Draw an :class:`~sapwood.importance.ImportanceResult`; the most important on top.

    Parameters
    ----------
    result : ImportanceResult
    ax : matplotlib Axes, optional
        Drawn into a new figure when None.
    kind : {"bar", "box"}, default="bar"
        ``"bar"``: one horizontal bar per feature at ``importances_mean`` with an error
        bar of ``importances_std`` (or the confidence interval when the result has
        one). ``"box"``: one box per feature over the raw draws in
        ``result.importances`` (repeats or trees).
    max_features : int or None, default=20
        Show only the most important features (by mean); None shows all.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}; got {kind!r}")
    if max_features is not None and (not isinstance(max_features, int) or max_features < 1):
        raise ValueError(f"max_features must be a positive int or None; got {max_features!r}")
    if kind == "box" and result.importances is None:
        raise ValueError(f"kind='box' needs raw draws, and this {result.method!r} result "
                         "has none (result.importances is None); use kind='bar'")
    import matplotlib.pyplot as plt  # lazy: see the package docstring

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 0.3 * _shown(result, max_features) + 1.2))
    order = np.argsort(-result.importances_mean, kind="stable")[:max_features][::-1]
    names = [result.feature_names[j] for j in order]
    positions = np.arange(order.shape[0])
    if kind == "bar":
        ax.barh(positions, result.importances_mean[order], xerr=_error(result, order),
                color="#4c72b0", ecolor="#333333", capsize=3)
    else:
        ax.boxplot([np.asarray(result.importances[j], dtype=float) for j in order],
                   positions=positions, widths=0.6, **_horizontal())
    # Names from data: shown as they are (no mathtext), shortened when very long.
    ax.set_yticks(positions, [shorten(name) for name in names], parse_math=False)
    ax.axvline(0.0, color="#999999", linewidth=0.8)
    ax.set_xlabel(f"importance ({shorten(result.method)})", parse_math=False)
    ax.set_ylim(-0.5, max(order.shape[0] - 0.5, 0.5))
    return ax


def _shown(result, max_features):
    return result.n_features if max_features is None else min(result.n_features, max_features)


def _error(result, order):
    if result.ci_low is not None and result.ci_high is not None:
        mean = result.importances_mean[order]
        return np.vstack([mean - result.ci_low[order], result.ci_high[order] - mean])
    return result.importances_std[order]


def _horizontal():
    import matplotlib  # lazy: see the package docstring

    # ``orientation`` replaced ``vert`` in matplotlib 3.10.
    major, minor = (int(part) for part in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}
