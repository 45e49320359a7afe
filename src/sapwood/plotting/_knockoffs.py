"""The knockoff statistics W with the selection threshold."""

from __future__ import annotations

import numpy as np

from .._text import shorten

__all__ = ["plot_knockoffs"]


def plot_knockoffs(result, ax=None, draw=0, max_features=30):
    """Draw a :class:`~sapwood.selection.KnockoffResult`: one bar per feature at its
    statistic W_j = Z_j - Z~_j (largest on top), the selected ones highlighted, and
    the knockoff(+) threshold T as a vertical line (and -T, whose count of W_j <= -T
    estimates the false selections above T).

    Parameters
    ----------
    result : KnockoffResult
    ax : matplotlib Axes, optional
        Drawn into a new figure when None.
    draw : int, default=0
        Which knockoff draw's W and T to show (derandomised runs have several).
    max_features : int or None, default=30
        Show only the features with the largest ``|W|``; None shows all.

    Returns
    -------
    matplotlib.axes.Axes
    """
    W = np.asarray(result.W, dtype=float)
    if not 0 <= draw < W.shape[0]:
        raise ValueError(f"draw must be in [0, {W.shape[0]}) (the result's knockoff draws); "
                         f"got {draw!r}")
    if max_features is not None and (not isinstance(max_features, int) or max_features < 1):
        raise ValueError(f"max_features must be a positive int or None; got {max_features!r}")
    import matplotlib.pyplot as plt  # lazy: see the package docstring

    w = W[draw]
    shown = np.argsort(-np.abs(w), kind="stable")[:max_features]
    order = shown[np.argsort(w[shown], kind="stable")]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 0.3 * order.shape[0] + 1.4))
    selected = result.support[order]
    positions = np.arange(order.shape[0])
    ax.barh(positions, w[order], color=np.where(selected, "#4c72b0", "#b0b0b0"))
    # Names from data: shown as they are (no mathtext), shortened when very long.
    ax.set_yticks(positions, [shorten(result.feature_names[j]) for j in order],
                  parse_math=False)
    ax.axvline(0.0, color="#999999", linewidth=0.8)
    threshold = float(np.asarray(result.threshold, dtype=float)[draw])
    fdr = result.params.get("fdr")
    if np.isfinite(threshold):
        label = f"threshold T = {threshold:.4g}" + (f" (FDR {fdr:g})" if fdr else "")
        ax.axvline(threshold, color="#c44e52", linestyle="--", label=label)
        ax.axvline(-threshold, color="#c44e52", linestyle=":", linewidth=0.8)
        ax.legend(loc="lower right", fontsize="small")
    else:
        ax.set_title("no threshold qualifies: nothing selected", fontsize="small")
    ax.set_xlabel("W = Z(feature) - Z(knockoff)")
    ax.set_ylim(-0.5, max(order.shape[0] - 0.5, 0.5))
    return ax
