"""The self-contained HTML report and the notebook display: no scripts, no network.

Both in the same order, the answer first: the verdict card (data, model, verdict), the
picture of the verdict measure's importances with their intervals, the warnings, then
the details, each collapsed. The report file is written to a temporary file beside the
target and renamed into place, so it appears complete or not at all.
"""

from __future__ import annotations

import html
import io
from pathlib import Path

from .._errors import InputError
from .._files import replace_atomically
from .._text import shorten, visible
from ..plotting import beeswarm, plot_knockoffs, plot_tree, waterfall
from ._data import check_output
from ._pictures import img_tag as _img
from ._pictures import new_figure, plot_importances, plot_verdict
from ._pictures import png_bytes as _png
from ._rows import contribution_texts, for_plots, heading
from ._screen import MAX_GROUPS, full_lists, in_verdict, screen_lines
from ._selection import selection_frame, selection_lines
from ._terminal import (
    AGREEMENT_RULE,
    TEXT_COLUMNS,
    agreement_frame,
    intervals_line,
    measure_frame,
    measure_title,
    summary_lines,
    top_nodes,
)
from ._verdict import MAX_NAMED

__all__ = ["check_report_path", "notebook_html", "write_report"]

MAX_BARS = 25
# A table of features shows at most this many rows (the most important).
MAX_TABLE_ROWS = 100
TREE_DEPTH = 2
# Smallest readable text in the tree drawing, in points (the page shows it at ~80%).
TREE_FONT = 9

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 70em; margin: 2em auto; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f2f2f2; } td.text, th.text { text-align: left; }
.warning { background: #fff4d6; border-left: 4px solid #e0a000; padding: 0.6em 1em; }
.note { color: #555; } pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; }
img, svg { max-width: 100%; height: auto; }
.measure { display: flex; flex-wrap: wrap; gap: 0 2em; align-items: flex-start; }
.measure img { flex: 0 1 auto; }
.card { border: 1px solid #cbd5e0; border-radius: 6px; padding: 0.6em 1.2em; background: #f7fafc; }
.card li { margin: 0.2em 0; }
details { margin: 0.6em 0; } summary { cursor: pointer; font-weight: 600; }
nav ul { columns: 2; font-size: 0.9em; }
"""


def check_report_path(path, inputs=()) -> Path:
    """Fail before any work if the report cannot be written where asked, or would
    overwrite one of ``inputs``."""
    return check_output(path, "--report", inputs)


def write_report(run, path, title: str = "sapwood report") -> Path:
    """Write the report file to ``path`` (checked first; atomically); returns the path."""
    path = check_report_path(path)
    write_atomic(path, _document(run, title))
    return path


def write_atomic(path: Path, content):
    """Write ``content`` (str or bytes) so that readers see the whole file or none
    (:func:`sapwood._files.replace_atomically`); a failure is an :class:`InputError`."""
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    try:
        replace_atomically(path, lambda handle: handle.write(data))
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None


def _document(run, title: str) -> str:
    """The report file: the card, the picture and the warnings, then every detail in a
    collapsed section, with a table of contents."""
    details = _details(run, charts=True)
    toc = ["<li><a href='#verdict'>Verdict</a></li>",
           "<li><a href='#warnings'>Warnings</a></li>"]
    # A measure's section is listed by its name (its heading is "name: what it is").
    toc += [f"<li><a href='#{anchor}'>{_e(heading.split(': ')[0])}</a></li>"
            for anchor, heading, _ in details]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(title)}</h1>", f"<nav><ul>{''.join(toc)}</ul></nav>",
             _card(run), _verdict_picture(run, svg=False), _warnings(run)]
    parts += [f"<details id='{anchor}'><summary>{_e(heading)}</summary>{body}</details>"
              for anchor, heading, body in details]
    parts.append("<p class='note'>Written by sapwood.</p></body></html>")
    return "\n".join(parts)


def notebook_html(run) -> str:
    """The notebook display: the verdict card first, the picture inline as SVG, the
    warnings, then each measure's details collapsed (no charts inside them; the
    effects' pictures, when asked for, are)."""
    parts = [f"<div class='sapwood-report'><style>{_NOTEBOOK_STYLE}</style>", _card(run),
             _verdict_picture(run, svg=True), _warnings(run)]
    parts += [f"<details><summary>{_e(heading)}</summary>{body}</details>"
              for _, heading, body in _details(run, charts=False)]
    parts.append("</div>")
    return "\n".join(parts)


_NOTEBOOK_STYLE = """
.sapwood-report .card { border: 1px solid #cbd5e0; border-radius: 6px; padding: 0.4em 1em; }
.sapwood-report .warning { background: #fff4d6; border-left: 4px solid #e0a000;
  padding: 0.4em 0.8em; }
.sapwood-report summary { cursor: pointer; font-weight: 600; }
.sapwood-report td.text, .sapwood-report th.text { text-align: left; }
"""


def _card(run) -> str:
    """Data and model lines, then the verdict."""
    lines = [f"<li>{_e(line)}</li>" for line in summary_lines(run)]
    parts = [f"<div class='card' id='verdict'><ul>{''.join(lines)}</ul>"]
    if run.verdict is not None:
        first, *rest = screen_lines(run.verdict, run.warnings, every="every group below")
        items = "".join(f"<li>{_e(line.lstrip('- '))}</li>" for line in rest)
        parts.append(f"<p><strong>{_e(first)}</strong></p><ul>{items}</ul>")
        parts.append(_full_lists(run.verdict))
    parts.append("</div>")
    return "".join(parts)


def _full_lists(verdict) -> str:
    """Every feature by its verdict and every entangled group, folded: the card's lines
    name a few of each (a wide table's card stays small)."""
    lists = full_lists(verdict)
    if len(verdict.groups) <= MAX_GROUPS and all(len(names) <= MAX_NAMED
                                                 for _, names in lists):
        return ""
    items = "".join(f"<li>{_e(heading)} ({len(names):,}): "
                    f"{_e(', '.join(shorten(n) for n in names))}</li>"
                    for heading, names in lists)
    return (f"<details><summary>Every feature by verdict, and every entangled group"
            f"</summary><ul>{items}</ul></details>")


def _verdict_picture(run, svg: bool) -> str:
    n = min(next(iter(run.results.values())).n_features, MAX_BARS)
    figure = new_figure((6.5, 0.32 * n + 1.4))
    plot_verdict(run, ax=figure.add_subplot(), max_display=MAX_BARS)
    if not svg:
        return _img(_png(figure), "importances with their 95% intervals")
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # inline: without the XML prolog and doctype


def _warnings(run) -> str:
    if not run.warnings:
        return "<p id='warnings'>No warnings.</p>"
    parts = ["<div id='warnings'>"]
    parts += [f"<p class='warning'><strong>Warning ({_e(f.kind)}).</strong> {_e(f.message)}</p>"
              for f in run.warnings if not in_verdict(f, run.verdict)]
    # The groups the verdict lists as entangled: their whole warnings, folded.
    groups = [f for f in run.warnings if in_verdict(f, run.verdict)]
    if groups:
        texts = "".join(f"<p>{_e(f.message)}</p>" for f in groups)
        parts.append(f"<details><summary>Warning (correlated): {len(groups):,} "
                     f"group{'s' if len(groups) > 1 else ''} of strongly associated "
                     f"features, listed in the verdict as entangled</summary>{texts}"
                     "</details>")
    parts.append("</div>")
    return "".join(parts)


def _details(run, charts: bool) -> list:
    """(anchor, heading, HTML) for each collapsed section."""
    sections = []
    notes = "".join(f"<p class='note'>{_e(text)}</p>" for text in run.notes)
    if run.data.encodings:
        notes += ("<p class='note'>Text and categorical columns were replaced by ordinal "
                  "codes: 0, 1, 2, ... for their categories in sorted order; missing values "
                  "stay missing.</p>")
    if notes:
        sections.append(("notes", "Notes", notes))
    for index, (name, result) in enumerate(run.results.items()):
        chart = ""
        if charts:
            n = min(result.n_features, MAX_BARS)
            figure = new_figure((5, 0.32 * n + 1.3))
            plot_importances(result, name, ax=figure.add_subplot(), max_display=MAX_BARS)
            chart = _img(_png(figure), f"{name} importance")
        body = f"<div class='measure'>{chart}{_top(measure_frame(run, name))}</div>"
        line = intervals_line(result)
        if line:
            body += f"<p class='note'>{_e(line)}</p>"
        sections.append((f"measure-{index}", measure_title(run, name), body))
    if run.effects:  # pictures in the notebook too: effects are asked for
        from ._effects import effects_html

        sections.append(("effects", "Effects and interactions",
                         effects_html(run, run.effects)))
    if getattr(run, "survival", None) and run.survival.get("curves"):
        from ._survival_curves import survival_html

        sections.append(("survival", "Survival curves and importance over time",
                         survival_html(run.survival, svg=not charts)))
    if charts:
        shap = _shap_section(run)
        if shap:
            sections.append(("shap", "SHAP pictures", "\n".join(shap[1:])))
    if len(run.results) > 1:
        sections.append(("ranks", "Ranks side by side",
                         "<p>1 = most important.</p>" + _top(run.ranks)))
    if run.agreement:
        sections.append(("agreement", "Rank agreement", (
            f"<p>Spearman's rho and Kendall's tau-b between each pair of measures' "
            f"importances (1 = the same order, 0 = unrelated, −1 = reversed) "
            f"{_e(AGREEMENT_RULE)}. Also how many of their top {run.top_k} features they "
            f"share (only first / second: in one measure's top {run.top_k} but not the "
            f"other's).</p>") + _table(agreement_frame(run))))
    if run.selection is not None:
        sections.append(("selection", "Model-X knockoff selection",
                         _selection_section(run.selection)))
    if charts:
        tree = _tree_section(run)
        if tree:
            sections.append(("tree", f"First tree, top {TREE_DEPTH} levels", tree))
    nodes = top_nodes(run)
    if nodes is not None:
        sections.append(("nodes", "MDI node trace", (
            "<p>The first tree's split nodes with the largest impurity decrease: "
            "<code>decrease = (w·impurity − w_left·impurity_left − w_right·impurity_right) "
            "/ w_root</code>, computed on the training rows.</p>") + _table(nodes)))
    return sections


def _e(text) -> str:
    return html.escape(visible(text))


def _table(frame) -> str:
    head = "".join(f"<th class='{_kind(c)}'>{_e(c)}</th>" for c in frame.columns)
    rows = []
    for row in frame.itertuples(index=False):
        cells = "".join(f"<td class='{_kind(c)}'>{_e(_fmt(v))}</td>"
                        for c, v in zip(frame.columns, row, strict=True))
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _top(frame) -> str:
    """The table of the first :data:`MAX_TABLE_ROWS` rows (the most important), and a
    line counting the rest: a wide table's page stays light (every row:
    ``Report.to_frame()``, ``--json``)."""
    if len(frame) <= MAX_TABLE_ROWS:
        return _table(frame)
    rest = len(frame) - MAX_TABLE_ROWS
    return (_table(frame.head(MAX_TABLE_ROWS)) + f"<p class='note'>... and {rest:,} more "
            "features, less important (every one: Report.to_frame(), --json).</p>")


def _kind(name) -> str:
    return "text" if name in TEXT_COLUMNS else "num"


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return shorten(value)


def _shap_section(run) -> list:
    """The TreeSHAP pictures: the beeswarm of the shap measure's rows (one per class
    of a multiclass model) and a waterfall per ``--row``."""
    result = run.results.get("shap")
    if result is None and not run.rows:
        return []
    parts = ["SHAP"]
    if result is not None:
        parts.append("<p>One point per explained row: its SHAP value for the feature (the "
                     "feature's share of that row's prediction), coloured by the row's value "
                     "of the feature (blue low, red high, grey missing).</p>")
        shown = for_plots(result, run.data.encodings)
        phi = result.extra["shap_values"]
        names = result.extra["output_names"]
        outputs = [None] if phi.ndim == 2 or (phi.shape[2] == 2 and names) else (
            range(phi.shape[2]))
        for output in outputs:
            figure = new_figure((7.5, 0.42 * min(result.n_features, 10) + 1.6))
            beeswarm(shown, output=output, ax=figure.add_subplot())
            parts.append(_img(_png(figure), "SHAP beeswarm"))
    for explanation in run.rows:
        lines = heading(explanation, run.source)
        parts.append(f"<h3>{_e(lines[0])}</h3><p>{_e(lines[1])}</p>")
        n_bars = min(explanation.result.n_features, 10)
        figure = new_figure((7.5, 0.42 * n_bars + 1.8))
        waterfall(explanation.result, 0, output=explanation.column, ax=figure.add_subplot())
        frame = explanation.table()
        frame["contribution"] = contribution_texts(frame["contribution"])
        parts.append(f"<div class='measure'>{_img(_png(figure), 'waterfall')}"
                     f"{_table(frame)}</div>")
    return parts


def _selection_section(result) -> str:
    shown = min(len(result.feature_names), 30)
    figure = new_figure((6, 0.3 * shown + 1.4))
    plot_knockoffs(result, ax=figure.add_subplot())
    lines = "".join(f"<li>{_e(line)}</li>" for line in selection_lines(result))
    return ("<p>The model refit on the training rows "
            "with a Gaussian knockoff copy of each feature; W = importance of the feature "
            "− importance of its knockoff. A null feature's W is as likely negative as "
            "positive, so the count of W ≤ −T estimates the false selections among "
            "W ≥ T; T is the smallest threshold whose estimate (+1, knockoff+) is within "
            "the target false discovery rate.</p>"
            f"<ul>{lines}</ul><div class='measure'>{_img(_png(figure), 'knockoff W')}"
            f"{_table(selection_frame(result))}</div>")


def _tree_section(run) -> str:
    try:
        from sapwood import export
    except ImportError:
        return ""
    from ._wrapped import whole_only

    if whole_only(run.model) is not None:
        return ""  # no one tree ensemble predicts as the model (a calibrated one, a vote)
    from sapwood.adapters import as_ensemble

    try:
        as_ensemble(run.model)
    except (TypeError, ValueError):  # trees only their library reads (CatBoost's CTRs)
        return ""
    parts = [""]
    # Names as shown in the tables: control characters escaped, very long ones cut.
    names = [shorten(name) for name in run.data.X.columns]
    figure = _tree_figure(run.model, names, impurity=_has_impurities(run.model))
    parts.append(_img(_png(figure), "first tree"))
    if hasattr(export, "export_text"):
        text = export.export_text(run.model, feature_names=names, max_depth=TREE_DEPTH)
        lines = "\n".join(_e(line) for line in text.splitlines())
        parts.append(f"<pre>{lines}</pre>")
    return "\n".join(parts) if len(parts) > 1 else ""


def _has_impurities(model) -> bool:
    """False for trees that record split gains instead (XGBoost, LightGBM, CatBoost,
    HistGradientBoosting)."""
    ensemble = getattr(model, "ensemble", None)
    return ensemble is None or ensemble.kind.node_impurity


def _tree_figure(model, names, impurity=True):
    """The first tree's top levels, with text no smaller than :data:`TREE_FONT` points
    unless that would make boxes overlap (then plot_tree's own fitted size)."""
    figure = new_figure((10, 4.5))
    ax = figure.add_subplot()

    def draw(fontsize=None):
        return plot_tree(model, ax=ax, max_depth=TREE_DEPTH, feature_names=names,
                         filled=True, rounded=True, fontsize=fontsize, impurity=impurity)

    annotations = draw()
    if annotations and annotations[0].get_fontsize() < TREE_FONT:
        annotations = draw(TREE_FONT)
        if _boxes_overlap(figure, annotations):
            draw()
    return figure


def _boxes_overlap(figure, annotations) -> bool:
    figure.canvas.draw()  # box patches get their place and size when drawn
    boxes = [a.get_bbox_patch().get_window_extent() for a in annotations
             if a.get_bbox_patch() is not None]
    return any(first.overlaps(second) for i, first in enumerate(boxes)
               for second in boxes[i + 1:])
