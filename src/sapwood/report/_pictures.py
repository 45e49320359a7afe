"""The report's pictures: the verdict measure's importances with their intervals, and
each measure's bar chart.

Intervals are drawn as they are computed, never as ±1 std: a measure that cannot be
negative (mean |SHAP|, MDI) has its interval cut at zero, and a measure's bars use its
95% interval (the verdict's, over new rows, where it has one).
"""

from __future__ import annotations

import numpy as np

from .._text import shorten
from ._intervals import verdict_interval
from ._measures import MEASURES

__all__ = ["img_tag", "new_figure", "plot_importances", "plot_verdict", "png_bytes"]

COLOURS = {"relies_on": "#2b6cb0", "uncertain": "#a0aec0", "does_not": "#e2e8f0"}
LABELS = {"relies_on": "relies on", "uncertain": "uncertain", "does_not": "does not"}


def new_figure(figsize):
    """A matplotlib Figure on the Agg canvas, outside pyplot's global state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize)
    FigureCanvasAgg(figure)
    return figure


def png_bytes(figure) -> bytes:
    """``figure`` as PNG bytes, cropped to what it draws."""
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def img_tag(png: bytes, alt: str) -> str:
    """An ``<img>`` holding ``png`` inline (the page needs no other file)."""
    import base64
    import html

    from .._text import visible

    encoded = base64.b64encode(png).decode("ascii")
    return f"<img alt='{html.escape(visible(alt))}' src=\"data:image/png;base64,{encoded}\">"


def plot_verdict(report, ax=None, max_display: int = 20):
    """The verdict measure's importances (the largest ``max_display``, largest on top)
    with their 95% intervals over new rows, each bar coloured by the feature's verdict;
    returns the Axes."""
    verdict = report.verdict
    name = verdict.measure if verdict is not None and verdict.measure else next(
        iter(report.results))
    status = {e["feature"]: e["status"] for e in (verdict.features if verdict else [])}
    return plot_importances(report.results[name], name, ax=ax, max_display=max_display,
                            status=status)


def plot_importances(result, name: str, ax=None, max_display: int = 20, status=None):
    """``result``'s importances as horizontal bars, largest on top, with the 95%
    interval the verdict reads (:func:`~._intervals.verdict_interval`), cut at zero for
    a measure that cannot be negative; returns the Axes."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    if ax is None:
        # pyplot's figure, as scikit-learn's displays make theirs: a notebook shows it.
        import matplotlib.pyplot as plt

        n = min(result.n_features, max_display)
        _, ax = plt.subplots(figsize=(6, 0.32 * n + 1.3))
    frame = result.to_frame().head(max_display).iloc[::-1]
    order = [result.feature_names.index(f) if isinstance(result.feature_names, list)
             else list(result.feature_names).index(f) for f in frame["feature"]]
    mean = result.importances_mean[order]
    interval = verdict_interval(name, result)
    low, high = interval.low[order], interval.high[order]
    if MEASURES[name].null == "uncentred":
        low = np.maximum(low, 0.0)  # e.g. mean |SHAP| cannot be below zero
    positions = np.arange(len(frame))
    colours = [COLOURS.get((status or {}).get(f), "#4c72b0") for f in frame["feature"]]
    ax.barh(positions, mean, color=colours, edgecolor="#4a5568", linewidth=0.4)
    finite = np.isfinite(low) & np.isfinite(high)
    if finite.any():
        below = np.where(finite, np.maximum(mean - low, 0), 0)
        above = np.where(finite, np.maximum(high - mean, 0), 0)
        ax.errorbar(mean[finite], positions[finite],
                    xerr=[below[finite], above[finite]], fmt="none", ecolor="#1a202c",
                    elinewidth=1, capsize=2.5)
    # Names from data: shown as they are (no mathtext), shortened when very long.
    ax.set_yticks(positions, [shorten(f) for f in frame["feature"]], parse_math=False)
    ax.axvline(0, color="#999999", linewidth=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
    label = f"{MEASURES[name].title} importance"
    if finite.any():
        label += f" (95% interval over {interval.covers})"
    ax.set_xlabel(label, wrap=True)
    if status:
        shown = [s for s in LABELS if s in set(status.values())]
        ax.legend(handles=[Patch(color=COLOURS[s], label=LABELS[s]) for s in shown],
                  loc="lower right", fontsize="small", frameon=False)
    return ax
