"""A survival run's pictures: survival curves for low and high values of the top
features, and each feature's importance over time.

``curves``
    For each of the top :data:`N_CURVES` features (in the verdict measure's order), the
    model's survival function averaged over the held-out rows with the feature set to
    a low value (its 25% quantile there) and to a high one (its 75% quantile; the
    smallest and largest values when those are equal, as for a rare flag): the partial
    dependence of the survival function on the feature at two values.
``importance``
    (``explain(effects=True)``) the mean absolute SHAP value of the survival function
    of each top feature at every time, over at most :data:`SHAP_ROWS` held-out rows:
    time-dependent TreeSHAP (SurvSHAP(t) computed exactly through the forest's vector
    leaves, :func:`sapwood.importance.tree_shap` with ``model_output="survival"``).

Both are given at the model's times, thinned to at most :data:`N_TIMES`; the terminal
reads them at :data:`CHECKPOINTS` of the held-out rows' observed times.
"""

from __future__ import annotations

import numpy as np

from .._text import shorten
from ._verdict import verdict_measure

__all__ = ["CHECKPOINTS", "N_CURVES", "N_TIMES", "SHAP_ROWS", "survival_html",
           "survival_lines", "survival_summary"]

N_CURVES = 3
N_IMPORTANCE = 5
N_TIMES = 60
SHAP_ROWS = 50
CURVE_ROWS = 500
CHECKPOINTS = (0.25, 0.5, 0.75)


def survival_summary(report, importance=False) -> dict | None:
    """The pictures' numbers (module docstring), JSON-ready; None when the model has no
    survival function. ``importance``: also the SHAP values over time (slower)."""
    model = report.model
    grid = getattr(model, "unique_times_", None)
    if grid is None or not hasattr(model, "predict_survival_function"):
        return None
    data = report.data
    X = data.X if report.held_out_index is None else data.X.loc[report.held_out_index]
    if len(X) > CURVE_ROWS:
        X = X.sample(n=CURVE_ROWS, random_state=report.seed)
    grid = np.asarray(grid, dtype=np.float64)
    shown = np.unique(np.linspace(0, grid.shape[0] - 1, min(N_TIMES, grid.shape[0]))
                      .round().astype(np.intp))
    time = data.y.loc[X.index].iloc[:, 0].to_numpy(dtype=np.float64)
    summary = {"times": grid[shown].tolist(),
               "checkpoints": np.quantile(time, CHECKPOINTS).tolist(),
               "time_name": str(data.y.columns[0]),
               "curves": [_curves(model, X, name, shown, data.encodings)
                          for name in _top(report, N_CURVES)]}
    if importance:
        summary["importance"] = _importance(report, model, X, shown)
    return summary


def _top(report, n) -> list:
    """The first ``n`` features by the verdict measure's importance (the first measure's
    without one)."""
    name = verdict_measure(report.results) or next(iter(report.results))
    result = report.results[name]
    order = np.argsort(-result.importances_mean, kind="stable")
    return [result.feature_names[j] for j in order[:n]]


def _curves(model, X, name, shown, encodings) -> dict:
    values = X[name].dropna().to_numpy(dtype=np.float64)
    low, high = np.quantile(values, [0.25, 0.75]) if values.size else (np.nan, np.nan)
    if low == high:
        low, high = values.min(), values.max()
    curves = {}
    for which, value in (("low", low), ("high", high)):
        changed = X.copy()
        changed[name] = value
        survival = np.asarray(model.predict_survival_function(changed, return_array=True))
        curves[which] = survival.mean(axis=0)[shown].tolist()
    labels = encodings.get(name)
    return {"feature": name, "low": float(low), "high": float(high),
            "low_label": _label(low, labels), "high_label": _label(high, labels),
            "survival_low": curves["low"], "survival_high": curves["high"]}


def _label(value, labels) -> str:
    if labels is not None and float(value).is_integer() and 0 <= value < len(labels):
        return str(labels[int(value)])
    return f"{value:.4g}"


def _importance(report, model, X, shown) -> dict | None:
    from sapwood.importance import tree_shap

    rows = X if len(X) <= SHAP_ROWS else X.sample(n=SHAP_ROWS, random_state=report.seed)
    try:
        result = tree_shap(model, rows, model_output="survival")
    except (TypeError, ValueError) as error:
        return {"error": str(error).splitlines()[0]}
    values = np.abs(np.asarray(result.extra["shap_values"])).mean(axis=0)  # features, times
    names = list(result.feature_names)
    top = _top(report, N_IMPORTANCE)
    return {"rows": len(rows), "features": top,
            "mean_abs_shap": [values[names.index(name)][shown].tolist() for name in top]}


def _at(times, values, t) -> float:
    """A step function known at ``times`` (its value before the first: 1) at ``t``."""
    k = int(np.searchsorted(times, t, side="right")) - 1
    return 1.0 if k < 0 else float(values[k])


def survival_lines(summary) -> list:
    """The terminal's lines: each top feature's survival at the checkpoints for its low
    and high value, and the importance over time."""
    if not summary or not summary.get("curves"):
        return []
    times, checkpoints = summary["times"], summary["checkpoints"]
    at = ", ".join(f"{t:.4g}" for t in checkpoints)
    lines = [f"Survival at {summary['time_name']} = {at} (the model's survival "
             "function averaged over the held-out rows, the feature set low / high):"]
    for curve in summary["curves"]:
        for which in ("low", "high"):
            values = " ".join(f"{_at(times, curve['survival_' + which], t):.2f}"
                              for t in checkpoints)
            lines.append(f"  {shorten(curve['feature'])} = {shorten(curve[which + '_label'])}"
                         f" ({which}): {values}")
    importance = summary.get("importance")
    if importance and "features" in importance:
        lines.append(f"Importance over time (mean |SHAP| of the survival probability, "
                     f"{importance['rows']} held-out rows) at the same times:")
        for name, values in zip(importance["features"], importance["mean_abs_shap"],
                                strict=True):
            shown = " ".join(f"{_at(times, values, t) if t >= times[0] else 0.0:.3f}"
                             for t in checkpoints)
            lines.append(f"  {shorten(name)}: {shown}")
    return lines


def survival_figure(summary):
    """Survival curves (left) and importance over time (right, when computed)."""
    from ._pictures import new_figure

    importance = summary.get("importance") or {}
    panels = 2 if "features" in importance else 1
    figure = new_figure((5.5 * panels, 3.6))
    axes = figure.subplots(1, panels, squeeze=False)[0]
    times = summary["times"]
    colours = ["#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280"]
    for k, curve in enumerate(summary["curves"]):
        colour = colours[k % len(colours)]
        axes[0].step(times, curve["survival_high"], where="post", color=colour,
                     label=f"{shorten(curve['feature'])} = {shorten(curve['high_label'])}")
        axes[0].step(times, curve["survival_low"], where="post", color=colour,
                     linestyle="--",
                     label=f"{shorten(curve['feature'])} = {shorten(curve['low_label'])}")
    axes[0].set_xlabel(shorten(summary["time_name"]))
    axes[0].set_ylabel("survival probability")
    axes[0].set_title("Survival, the feature set low (--) and high")
    axes[0].legend(fontsize=7)
    if panels == 2:
        for k, (name, values) in enumerate(zip(importance["features"],
                                               importance["mean_abs_shap"], strict=True)):
            axes[1].step(times, values, where="post", color=colours[k % len(colours)],
                         label=shorten(name))
        axes[1].set_xlabel(shorten(summary["time_name"]))
        axes[1].set_ylabel("mean |SHAP| of the survival probability")
        axes[1].set_title("Importance over time")
        axes[1].legend(fontsize=7)
    figure.tight_layout()
    return figure


def survival_html(summary, svg=False) -> str:
    """The pictures as an ``<img>`` (the report file) or inline SVG (a notebook)."""
    import io

    from ._pictures import img_tag, png_bytes

    figure = survival_figure(summary)
    if not svg:
        return img_tag(png_bytes(figure), "survival curves and importance over time")
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]
