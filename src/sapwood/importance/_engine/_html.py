"""An importance result as an HTML table for notebooks (``ImportanceResult._repr_html_``):
one row per feature, most important first, with its interval, its rank interval and a
small bar. Feature names are data: escaped, and shortened in the table (the full name
stays in the cell's title). :func:`shown_pvalue` writes a p-value as every table shows
it."""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd

from ..._text import shorten, visible

MAX_ROWS = 30
_BAR_PX = 120


def result_html(result, max_rows: int = MAX_ROWS) -> str:
    frame = result.to_frame()
    shown = frame.head(max_rows)
    values = frame["importance"].to_numpy(dtype=np.float64)
    finite = np.abs(values[np.isfinite(values)])
    scale = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    number = _formatter(scale)
    has_ci = bool(np.isfinite(frame["ci_low"].to_numpy(dtype=np.float64)).any())
    has_ranks = bool(frame["rank_low"].notna().any())
    has_p = "pvalue" in frame

    head = ["feature", "importance", ""]
    head += ["95% interval"] if has_ci else ["std"]
    head += ["rank (95%)"] if has_ranks else ["rank"]
    head += ["p-value"] if has_p else []
    rows = []
    for row in shown.itertuples(index=False):
        name = html.escape(visible(row.feature))
        cells = [f'<td title="{name}" style="text-align:left">'
                 f"{html.escape(visible(shorten(row.feature)))}</td>",
                 f"<td>{number(row.importance)}</td>",
                 f"<td>{_bar(row.importance, scale)}</td>"]
        cells.append(f"<td>[{number(row.ci_low)}, {number(row.ci_high)}]</td>" if has_ci
                     else f"<td>{number(row.std)}</td>")
        known = has_ranks and not pd.isna(row.rank_low)
        ranks = (str(row.rank) if not known or row.rank_low == row.rank_high
                 else f"{row.rank_low}–{row.rank_high}")
        cells.append(f"<td>{ranks}</td>")
        if has_p:
            cells.append(f"<td>{html.escape(shown_pvalue(row.pvalue, result))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = len(frame) - len(shown)
    caption = (f"{html.escape(visible(result.method))}: {len(frame)} features"
               + (f" (the first {len(shown)} shown)" if more else ""))
    header = "".join(f"<th>{cell}</th>" for cell in head)
    return (f'<table class="sapwood-importance"><caption>{caption}</caption>'
            f"<thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _formatter(scale: float):
    """Four significant digits on the largest importance, the others on its scale (as
    the command line's tables)."""
    decimals = max(0, 3 - math.floor(math.log10(scale)))

    def number(value) -> str:
        value = float(value)
        return "–" if not math.isfinite(value) else f"{value:.{decimals}f}"

    return number


def _bar(value: float, scale: float) -> str:
    value = float(value) if math.isfinite(float(value)) else 0.0
    width = round(_BAR_PX * min(abs(value) / scale, 1.0))
    colour = "#4c72b0" if value >= 0 else "#c44e52"
    return (f'<div style="width:{width}px;height:0.8em;background:{colour}" '
            f'title="{value:g}"></div>')


def shown_pvalue(value, result) -> str:
    """A p-value of ``result`` as text, three significant digits. Janitza's null sample
    of n values cannot tell a p-value below 1/n from 0: such a p-value reads "< 1/n"."""
    if value is None or value != value:
        return ""
    null = result.extra.get("null_importances")
    if value == 0 and null is not None and len(null):
        return f"< {1 / len(null):.2g}"
    return f"{value:.3g}"
