"""How the report's top features matter: their partial dependence with ICE curves and
their accumulated local effects (ALE), the strongest interactions among them, and a
note where a correlated feature's PDP extrapolates.

:func:`effects` computes it all from a finished :class:`~sapwood.report.Report` as
plain data (lists, dicts, floats: JSON as it is); :func:`effects_html` draws it for the
HTML report and :func:`effects_lines` says it in a few terminal lines.

Everything is computed on the held-out rows (all rows when none were held out), a
sample of at most ``max_rows`` of them drawn with the report's seed, and the
interactions on at most ``h_rows`` of those (the H-statistic costs ``n^2``).

Where PD and ALE differ. Both curves are evaluated at the ALE's bin edges (the
feature's quantiles) from one ICE matrix: the PD is its mean over the rows, the ALE the
accumulated bin means of each row's step across its own bin, both centred alike
(ALE's centring: the curve's mean over the rows' bins is 0). Their difference ``D(z)``
is resampled over the rows (a bootstrap, reweighting the same matrix), and the curves
*differ beyond their intervals* when a simultaneous 95% band of ``D`` (sup-t: the
edges' largest standardised deviation) excludes zero at some edge and the largest
``|D|`` is at least :data:`MATERIAL` of the curves' range (many rows make a negligible
difference significant). For an additive model both curves are the same function, so
a difference is an interaction with other features; for a feature in a correlated
group (a ``correlated`` warning) the PD averages the model over combinations of values
the data do not hold, and the note says that the PDP extrapolates there.
"""

from __future__ import annotations

import html
import math
from itertools import combinations

import numpy as np
import pandas as pd

from .._text import shorten, visible

__all__ = ["effects", "effects_html", "effects_lines"]

# At most this many rows for the curves, and this many of them for the H-statistic.
MAX_ROWS = 500
H_ROWS = 300
# ICE curves kept in the result (evenly spaced rows of the sample).
N_ICE = 50
# Bootstrap resamples for the PD-ALE difference and the H intervals.
N_BOOTSTRAP = 200
# A PD-ALE difference below this share of the curves' range is not reported.
MATERIAL = 0.1
LEVEL = 0.95
# TreeSHAP interaction values cost, per tree, about sum over leaves of d^2 2^(d-2)
# (tables; d the distinct features on the leaf's path) plus d^2 per row and leaf: past
# this many units (a few seconds on one core) they are left out, with the reason.
SHAP_BUDGET = 1.5e9


def effects(report, *, n_features=3, n_pairs=5, max_rows=MAX_ROWS, h_rows=H_ROWS,
            grid_size=20, n_bootstrap=N_BOOTSTRAP) -> dict:
    """The effects of the report's top features and the strongest interactions among
    them, as plain data.

    Parameters
    ----------
    report : Report
        A finished report (its model fitted, its verdict placed).
    n_features : int, default=3
        How many features of the verdict's order get PD/ICE and ALE curves (those the
        model does not rely on, status ``does_not``, are skipped).
    n_pairs : int, default=5
        How many interactions are kept, strongest first (by H). Their features are the
        top ones (at least ``n_features``, more when needed to make ``n_pairs`` pairs).
    max_rows, h_rows : int
        Rows for the curves, and for the H-statistic and SHAP interactions.
    grid_size : int, default=20
        ALE bins (quantiles); the PD is evaluated at the same edges.
    n_bootstrap : int, default=200
        Resamples of the rows for the PD-ALE difference and the H intervals.

    Returns
    -------
    dict with two keys, JSON as it is (no NaN: missing numbers are None):

    ``effects``: one dict per feature, in the verdict's order: ``feature``, ``status``,
    ``categorical``, ``output`` (a multiclass model's class followed, else None),
    ``rows``, ``pd`` (``grid``, ``average``, ``ice``: at most 50 curves), ``ale``
    (``edges``, ``eff``, ``size``, ``low``, ``high``; a categorical feature's has
    ``categories`` instead of ``edges``, in the order its ALE found by similarity; None
    with ``ale_skipped`` saying why), ``difference`` (``max_abs``, ``at``, ``range``,
    ``beyond_intervals``: see the module docstring; None without a numeric ALE),
    ``correlated_with`` (its correlated group's other features), ``note`` (the
    extrapolation note, or None) and ``held_out`` (whether the rows were held out).

    ``interactions``: one dict per pair, strongest first by H: ``features`` (two
    names), ``H2``, ``H``, ``H_low``, ``H_high`` (bootstrap percentile interval),
    ``shap`` (mean |TreeSHAP interaction|, None where TreeSHAP has no interaction
    values for the model or they would take too long: ``shap_skipped`` says which),
    ``shap_low``, ``shap_high``, ``rows``, ``held_out``.
    """
    from ..effects import ale, h_statistic, partial_dependence
    from ..effects._engine import read_model

    model = report.model
    ensemble = read_model(_trees_of(model), "effects")
    rows = _sample(report, max_rows)
    rng = np.random.default_rng(report.seed)
    status = {entry["feature"]: entry["status"] for entry in report.verdict.features} \
        if report.verdict is not None else {}
    order = list(report.verdict.order) if report.verdict is not None and \
        report.verdict.order else list(rows.columns)
    candidates = [f for f in order if status.get(f) != "does_not" and f in rows.columns]
    groups = _correlated(report)
    classes = list(ensemble.classes) if ensemble.classes is not None else None
    curves = [_feature_effect(model, rows, name, status.get(name), groups.get(name, []),
                              report.data.encodings.get(name), classes, grid_size,
                              n_bootstrap, rng, partial_dependence, ale)
              for name in candidates[:n_features]]
    k = max(n_features, _features_for(n_pairs))
    pair_features = candidates[:k]
    interactions = _interactions(model, rows.iloc[:h_rows], pair_features, n_pairs,
                                 n_bootstrap, report.seed, h_statistic)
    held_out = report.held_out_index is not None
    for entry in curves + interactions:
        entry["held_out"] = held_out
    return _strict({"effects": curves, "interactions": interactions})


def _trees_of(model):
    """The model whose trees the effects walk: a Pipeline's last step (the effects
    themselves take the pipeline, in its input columns), else the model."""
    if type(model).__name__ == "Pipeline":
        from ..adapters import read_pipeline

        return read_pipeline(model).final
    return model


def _sample(report, max_rows) -> pd.DataFrame:
    """The held-out rows (all rows without a held-out side), at most ``max_rows`` of
    them in their own order, drawn with the report's seed."""
    X = report.data.X
    if report.held_out_index is not None:
        X = X.loc[report.held_out_index]
    if len(X) > max_rows:
        rng = np.random.default_rng(report.seed)
        X = X.iloc[np.sort(rng.choice(len(X), size=max_rows, replace=False))]
    return X


def _correlated(report) -> dict:
    """Feature -> the other features of its ``correlated`` warning's group."""
    out = {}
    for finding in report.warnings:
        if finding.kind == "correlated":
            group = [str(f) for f in finding.features]
            for f in group:
                out.setdefault(f, []).extend(g for g in group if g != f)
    return out


def _features_for(n_pairs) -> int:
    """The fewest features with at least ``n_pairs`` pairs."""
    k = 2
    while k * (k - 1) // 2 < n_pairs:
        k += 1
    return k


def _feature_effect(model, rows, name, status, correlated_with, labels, classes,
                    grid_size, n_bootstrap, rng, partial_dependence, ale):
    column = rows[name].to_numpy(dtype=np.float64, na_value=np.nan)
    present = ~np.isnan(column)
    entry = {"feature": name, "status": status, "categorical": labels is not None,
             "output": None, "rows": int(present.sum()), "pd": None, "ale": None,
             "ale_skipped": None, "difference": None,
             "correlated_with": list(correlated_with), "note": None}
    values = np.unique(column[present])
    if values.shape[0] < 2:
        entry["ale_skipped"] = "the feature is constant on these rows"
        return entry
    if labels is not None:
        grid = values
    else:
        grid = _edges(column[present], grid_size)
    ice = partial_dependence(model, rows, [name], kind="individual", method="brute",
                             custom_values={name: grid})["individual"]
    # (n_outputs, n_rows, n_grid): a multiclass model's curves follow the class whose
    # partial dependence moves most with the feature.
    target = 0
    if ice.shape[0] > 1:
        target = int(np.argmax(np.ptp(ice.mean(axis=1), axis=1)))
        entry["output"] = _plain(classes[target]) if classes is not None else target
    curves = ice[target]
    shown = np.unique(np.linspace(0, curves.shape[0] - 1,
                                  min(N_ICE, curves.shape[0])).astype(np.intp))
    entry["pd"] = {"grid": [_label(v, labels) for v in grid],
                   "average": curves.mean(axis=0).tolist(),
                   "ice": curves[shown].tolist()}
    try:
        table = ale(model, rows, name, grid_size=grid_size, include_CI=True,
                    target=None if entry["output"] is None or classes is None
                    else classes[target],
                    feature_type="categorical" if labels is not None else "auto")
    except ValueError as error:
        entry["ale_skipped"] = str(error).split(": ", 1)[-1]
        return entry
    low, high = (c for c in table.columns if str(c).startswith(("lowerCI_", "upperCI_")))
    entry["ale"] = {"eff": table["eff"].tolist(), "size": table["size"].astype(int).tolist(),
                    "low": table[low].tolist(), "high": table[high].tolist()}
    if labels is not None or table.index.dtype.kind not in "fiu":
        # Categories in the order the ALE found by similarity (Apley & Zhu 2020).
        entry["ale"] = {"categories": [_label(v, labels) for v in table.index],
                        **entry["ale"]}
        return entry
    entry["ale"] = {"edges": table.index.to_numpy(dtype=np.float64).tolist(), **entry["ale"]}
    entry["difference"] = _difference(curves[present], column[present], grid, n_bootstrap,
                                      rng)
    if entry["difference"]["beyond_intervals"] and correlated_with:
        d = entry["difference"]
        others = ", ".join(correlated_with)
        entry["note"] = (f"{name}: its PDP and ALE differ beyond their intervals (by up to "
                         f"{d['max_abs']:.3g} at {name} = {d['at']:.4g}) and it is correlated "
                         f"with {others}: the PDP extrapolates there (it averages the model "
                         "over combinations of values the data do not hold); read the ALE.")
    return entry


def _edges(x, grid_size):
    """The ALE's bin edges (:func:`sapwood.effects.ale`'s type-1 quantiles)."""
    from ..effects._ale import _quantiles_type1

    return np.unique(np.concatenate([[x.min()], _quantiles_type1(x, grid_size)]))


def _difference(ice, x, edges, n_bootstrap, rng) -> dict:
    """The centred PD minus the ALE at the edges, from the ICE matrix (rows x edges),
    and whether a simultaneous bootstrap band excludes zero (module docstring)."""
    n = ice.shape[0]
    weights = np.vstack([np.ones(n), rng.multinomial(n, np.full(n, 1.0 / n),
                                                     size=n_bootstrap)])
    pd_curves, ale_curves = _curves(ice, x, edges, weights)
    difference = pd_curves - ale_curves
    spread = difference[1:].std(axis=0, ddof=1) if n_bootstrap > 1 else \
        np.zeros(edges.shape[0])
    scale = np.where(spread > 0, spread, np.inf)
    observed = np.abs(difference[0])
    if n_bootstrap > 1:
        largest = np.max(np.abs(difference[1:] - difference[0]) / scale, axis=1)
        band = float(np.quantile(largest, LEVEL))
    else:
        band = math.inf
    curve_range = max(float(np.ptp(pd_curves[0])), float(np.ptp(ale_curves[0])))
    at = int(np.argmax(observed))
    significant = bool(np.any(observed / scale > band))
    material = curve_range > 0 and observed[at] >= MATERIAL * curve_range
    return {"max_abs": float(observed[at]), "at": float(edges[at]),
            "range": curve_range, "beyond_intervals": bool(significant and material)}


def _curves(ice, x, edges, weights):
    """The PD and the ALE at the edges, centred alike (ALE's centring), per row
    weighting (replicates x rows): both from the ICE matrix at the edges, the ALE from
    each row's step across its own bin (``z_{k-1} < x <= z_k``, the first bin closed;
    a replicate's bin with no weight takes the plain mean)."""
    n = ice.shape[0]
    bins = np.searchsorted(edges, x, side="left") - 1
    bins[x == edges[0]] = 0
    step = ice[np.arange(n), bins + 1] - ice[np.arange(n), bins]
    onehot = np.zeros((n, edges.shape[0] - 1))
    onehot[np.arange(n), bins] = 1.0
    sizes = weights @ onehot  # (replicates, bins)
    sums = (weights * step) @ onehot
    plain = step @ onehot / np.maximum(onehot.sum(axis=0), 1.0)
    means = np.where(sizes > 0, sums / np.where(sizes > 0, sizes, 1.0), plain)
    uncentred = np.hstack([np.zeros((weights.shape[0], 1)), np.cumsum(means, axis=1)])
    pd_curves = weights @ ice / weights.sum(axis=1, keepdims=True)
    return _centre(pd_curves, sizes), _centre(uncentred, sizes)


def _centre(curves, sizes):
    """Curves at the edges (replicates x edges) minus ALE's centre: the mean over the
    rows of the curve at their bin (its two edges' average)."""
    middle = (curves[:, 1:] + curves[:, :-1]) / 2
    centre = (middle * sizes).sum(axis=1) / sizes.sum(axis=1)
    return curves - centre[:, None]


def _interactions(model, rows, features, n_pairs, n_bootstrap, seed, h_statistic) -> list:
    if len(features) < 2 or len(rows) < 2:
        return []
    position = {name: k for k, name in enumerate(rows.columns)}
    pairs = list(combinations(sorted(features, key=position.__getitem__), 2))
    table = h_statistic(model, rows, pairs=pairs, features=features, n_bootstrap=n_bootstrap,
                        random_state=seed)
    table = table[table["kind"] == "pair"].head(n_pairs)
    shap, reason = _shap_interactions(model, rows)
    out = []
    for row in table.itertuples(index=False):
        pair = tuple(str(f) for f in row.features)
        strength = shap.get(frozenset(pair)) if shap is not None else None
        out.append({"features": list(pair), "H2": float(row.H2), "H": float(row.H),
                    "H_low": float(row.H_low), "H_high": float(row.H_high),
                    "shap": None if strength is None else strength[0],
                    "shap_low": None if strength is None else strength[1],
                    "shap_high": None if strength is None else strength[2],
                    "shap_skipped": reason, "rows": len(rows)})
    return out


def _shap_interactions(model, rows):
    """Pair -> (mean |SHAP interaction|, low, high), and None; or None and the reason
    where TreeSHAP has no interaction values for the model or they would take too long
    (:data:`SHAP_BUDGET`)."""
    from ..effects import shap_interaction_importance
    from ..effects._engine import read_model

    cost = _shap_cost(read_model(_trees_of(model), "effects"), len(rows))
    if cost > SHAP_BUDGET:
        return None, ("the trees' paths are too long (many distinct features) for TreeSHAP "
                      "interaction values in reasonable time")
    try:
        table = shap_interaction_importance(model, rows)
    except (TypeError, ValueError, NotImplementedError) as error:
        return None, str(error).split("\n")[0]
    return {frozenset(str(f) for f in row.features):
            (float(row.mean_abs_interaction), float(row.low), float(row.high))
            for row in table.itertuples(index=False)}, None


def _shap_cost(ensemble, n_rows) -> float:
    """The work of TreeSHAP interaction values, in table entries: per leaf with ``d``
    distinct features on its path, ``d^2 2^(d-2)`` once and ``d^2`` per row."""
    total = 0.0
    for tree in ensemble.trees:
        left, right, feature = tree.children_left, tree.children_right, tree.feature
        stack = [(0, frozenset())]
        while stack:
            node, seen = stack.pop()
            if left[node] == -1:
                d = len(seen)
                if d > 1:
                    total += d * d * (2.0 ** (d - 2) + n_rows)
                continue
            seen = seen | {int(feature[node])}
            stack.append((int(left[node]), seen))
            stack.append((int(right[node]), seen))
        if total > SHAP_BUDGET:
            break
    return total


def _label(value, labels):
    if labels is None:
        return float(value)
    code = int(value)
    return str(labels[code]) if 0 <= code < len(labels) else str(value)


def _plain(value):
    return value.item() if hasattr(value, "item") else value


def _strict(value):
    """Plain Python values; a number that is not finite becomes None."""
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# -- renderings ------------------------------------------------------------------------


def effects_lines(computed) -> list:
    """Short lines for the terminal: each top feature's effect in words (its ALE), the
    strongest interactions with H, and the extrapolation notes."""
    lines = []
    shapes = [(entry, _shape(entry)) for entry in computed.get("effects") or []]
    shapes = [(entry, shape) for entry, shape in shapes if shape is not None]
    if shapes:
        lines.append(f"How the top features move the prediction (ALE, the change across "
                     f"each feature's values; {_rows(shapes[0][0])}):")
        lines += [f"  {shorten(entry['feature'], 30)}: {shape}" for entry, shape in shapes]
    pairs = computed.get("interactions") or []
    if pairs:
        lines.append(f"Strongest interactions (Friedman's H: 0 none, 1 all interaction; "
                     f"{_rows(pairs[0])}):")
        for pair in pairs[:3]:
            text = (f"  {' × '.join(shorten(f, 30) for f in pair['features'])}: H "
                    f"{_number(pair['H'])} ({_number(pair['H_low'])}-"
                    f"{_number(pair['H_high'])})")
            if pair.get("shap") is not None:
                text += f", mean |SHAP interaction| {pair['shap']:.3g}"
            lines.append(text)
    for entry in computed.get("effects") or []:
        if entry.get("note"):
            others = ", ".join(shorten(f, 30) for f in entry["correlated_with"])
            lines.append(f"PDP extrapolates for {shorten(entry['feature'], 30)} (correlated "
                         f"with {others}): PDP and ALE differ by up to "
                         f"{entry['difference']['max_abs']:.3g}; read the ALE.")
    return lines


# An ALE counts as turning where it comes back by more than this share of its spread.
TURN = 0.1


def _shape(entry) -> str | None:
    """The ALE of one feature in words: "rises by 3.2 from 1.7 to 38" (falls, rises
    then falls, falls then rises, goes up and down), or a categorical feature's highest
    and lowest category; None without an ALE."""
    ale = entry.get("ale")
    if not ale:
        return None
    effect = np.asarray(ale["eff"], dtype=np.float64)
    finite = np.isfinite(effect)
    if finite.sum() < 2:
        return None
    spread = float(np.ptp(effect[finite]))
    towards = f" (the probability of {entry['output']!r})" if entry.get("output") is not None \
        else ""
    if "categories" in ale:
        names = [str(c) for c in ale["categories"]]
        top, bottom = int(np.nanargmax(effect)), int(np.nanargmin(effect))
        return (f"highest for {shorten(names[top], 20)}, lowest for "
                f"{shorten(names[bottom], 20)}, {spread:.3g} apart{towards}")
    edges = np.asarray(ale["edges"], dtype=np.float64)[finite]
    effect = effect[finite]
    if spread == 0:
        return f"flat from {edges[0]:.4g} to {edges[-1]:.4g}"
    back = TURN * spread
    top, bottom, last = int(np.argmax(effect)), int(np.argmin(effect)), len(effect) - 1
    # An extreme inside the range that both ends stay clear of: the curve turns there.
    peak = 0 < top < last and effect[top] - max(effect[0], effect[-1]) > back
    trough = 0 < bottom < last and min(effect[0], effect[-1]) - effect[bottom] > back
    if peak != trough:
        shape = "rises then falls" if peak else "falls then rises"
    elif peak or not _monotone(effect, back):
        shape = "goes up and down"
    else:
        shape = "rises" if effect[-1] > effect[0] else "falls"
    return f"{shape} by {spread:.3g} from {edges[0]:.4g} to {edges[-1]:.4g}{towards}"


def _monotone(effect, back) -> bool:
    """No move against the overall direction by more than ``back``."""
    rising = effect[-1] >= effect[0]
    running = np.maximum.accumulate(effect) if rising else np.minimum.accumulate(effect)
    return bool(np.all(np.abs(running - effect) <= back))


def _rows(entry) -> str:
    if entry.get("held_out", True):
        return f"{entry['rows']} held-out rows"
    return f"{entry['rows']} rows, none held out"


def _number(value):
    return "?" if value is None else f"{value:.2f}"


def effects_html(report, computed) -> str:
    """The effects as HTML: per feature its PD with ICE curves beside its ALE with the
    95% band (inline PNG), the interactions chart and table, and the notes."""
    from ._pictures import img_tag as _img
    from ._pictures import png_bytes as _png

    entries = computed.get("effects") or []
    where = _rows(entries[0]) if entries else "held-out rows"
    parts = [f"<p>How the model's prediction moves with each top feature, on {where}. "
             "Left: partial dependence (red) with each row's ICE curve "
             "(blue: the prediction as the feature alone changes). Right: accumulated "
             "local effects (ALE), which change each row's feature only within its own "
             "quantile bin, with 95% intervals; unlike the PD it never asks the model "
             "about combinations of values the data do not hold.</p>"]
    drawn = [entry for entry in computed.get("effects") or [] if entry.get("pd")]
    if drawn:
        parts.append(_img(_png(_effects_figure(drawn)),
                          "partial dependence with ICE curves, and ALE, per feature"))
    for entry in computed.get("effects") or []:
        if entry.get("note"):
            parts.append(f"<p class='warning'>{_e(entry['note'])}</p>")
        elif entry.get("ale_skipped"):
            parts.append(f"<p class='note'>{_e(entry['feature'])}: no ALE "
                         f"({_e(entry['ale_skipped'])}).</p>")
    pairs = computed.get("interactions") or []
    if pairs:
        parts.append("<h3>Interactions</h3><p>Friedman's H: the share of a pair's joint "
                     "partial dependence that is not the sum of the two features' own "
                     f"(0: none; 1: all interaction), on {_rows(pairs[0])}, "
                     "with 95% bootstrap intervals; and the mean |TreeSHAP interaction "
                     "value| of the pair, in the model's raw output.</p>")
        if pairs[0].get("shap_skipped"):
            parts.append(f"<p class='note'>Mean |SHAP interaction| not computed: "
                         f"{_e(pairs[0]['shap_skipped'])}.</p>")
        parts.append(_img(_png(_interaction_figure(pairs)), "interaction strengths"))
        parts.append(_pair_table(pairs))
    return "\n".join(parts)


def _e(text) -> str:
    return html.escape(visible(text))


def _effects_figure(entries):
    """One row per feature: its PD with ICE curves, and its ALE with the band."""
    from ._pictures import new_figure

    figure = new_figure((10, 3.2 * len(entries)))
    axes = figure.subplots(len(entries), 2, squeeze=False)
    for row, entry in zip(axes, entries, strict=True):
        _draw_effect(entry, row)
    figure.subplots_adjust(hspace=0.45, wspace=0.25)
    return figure


def _draw_effect(entry, axes):
    from sklearn.utils import Bunch

    from ..plotting import ale as plot_ale
    from ..plotting import partial_dependence as plot_pd

    part = entry["pd"]
    grid = np.asarray(part["grid"], dtype=object if entry["categorical"] else np.float64)
    bunch = Bunch(grid_values=[grid], average=np.asarray([part["average"]], dtype=float),
                  individual=np.asarray([part["ice"]], dtype=float))
    plot_pd(bunch, ax=axes[0], feature_names=[entry["feature"]])
    if entry.get("output") is not None:
        axes[0].set_title(f"class {shorten(str(entry['output']), 30)}", fontsize="small",
                          loc="left")
    part = entry.get("ale")
    if part is None:
        axes[1].set_axis_off()
        axes[1].text(0.5, 0.5, f"no ALE: {entry.get('ale_skipped') or ''}", ha="center",
                     va="center", wrap=True, transform=axes[1].transAxes, parse_math=False)
        return
    if "categories" in part:
        _categorical_ale(axes[1], entry["feature"], part)
        return
    frame = pd.DataFrame({"eff": part["eff"], "size": part["size"],
                          "lowerCI_95%": _floats(part["low"]),
                          "upperCI_95%": _floats(part["high"])},
                         index=pd.Index(part["edges"], name=entry["feature"]))
    plot_ale(frame, ax=axes[1])
    if entry.get("note"):
        axes[1].set_title("PDP extrapolates: read the ALE", fontsize="small", loc="left",
                          color="#b7791f")


def _categorical_ale(ax, feature, part):
    """A categorical ALE: a point per category (in the ALE's order), each step's
    interval as a bar at its upper category."""
    x = np.arange(len(part["categories"]))
    eff, low, high = (_floats(part[k]) for k in ("eff", "low", "high"))
    ax.plot(x, eff, "-o", color="#c0392b", markersize=4, linewidth=1.2)
    shown = ~np.isnan(low) & ~np.isnan(high)
    ax.errorbar(x[shown], eff[shown], yerr=[eff[shown] - low[shown], high[shown] - eff[shown]],
                fmt="none", ecolor="#4a6a8a", capsize=3)
    ax.set_xticks(x, [shorten(str(c), 20) for c in part["categories"]], parse_math=False)
    ax.set_xlabel(shorten(feature), parse_math=False)
    ax.set_ylabel("accumulated local effect")


def _floats(values):
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _pair_table(pairs) -> str:
    head = ("<tr><th class='text'>pair</th><th>H²</th><th>H</th><th>H 95% interval</th>"
            "<th>mean |SHAP interaction|</th></tr>")
    rows = "".join(
        f"<tr><td class='text'>{_e(' × '.join(p['features']))}</td><td>{p['H2']:.3f}</td>"
        f"<td>{p['H']:.3f}</td><td>{_number(p['H_low'])} to {_number(p['H_high'])}</td>"
        f"<td>{'' if p['shap'] is None else format(p['shap'], '.4g')}</td></tr>"
        for p in pairs)
    return f"<table>{head}{rows}</table>"


def _interaction_figure(pairs):
    from ..plotting import interactions as plot_interactions
    from ._pictures import new_figure

    with_shap = any(p["shap"] is not None for p in pairs)
    height = 0.35 * len(pairs) + 1.3
    figure = new_figure((10, height) if with_shap else (5.5, height))
    axes = figure.subplots(1, 2 if with_shap else 1, squeeze=False)[0]
    frame = pd.DataFrame({"features": [tuple(p["features"]) for p in pairs],
                          "kind": "pair", "H": [p["H"] for p in pairs],
                          # A percentile interval can miss its estimate (H is biased
                          # upward on a resample): the bars' whiskers reach it.
                          "H_low": np.fmin(_floats([p["H_low"] for p in pairs]),
                                           [p["H"] for p in pairs]),
                          "H_high": np.fmax(_floats([p["H_high"] for p in pairs]),
                                            [p["H"] for p in pairs])})
    plot_interactions(frame, ax=axes[0])
    if with_shap:
        shap = pd.DataFrame({"features": [tuple(p["features"]) for p in pairs
                                          if p["shap"] is not None],
                             "mean_abs_interaction": [p["shap"] for p in pairs
                                                      if p["shap"] is not None],
                             "low": _floats([p["shap_low"] for p in pairs
                                             if p["shap"] is not None]),
                             "high": _floats([p["shap_high"] for p in pairs
                                              if p["shap"] is not None])})
        plot_interactions(shap, ax=axes[1])
    figure.subplots_adjust(wspace=0.6)
    return figure
