"""Terminal tables (rich) and the ``--json`` document for a :class:`Run`."""

from __future__ import annotations

import json
import math

from ._measures import MEASURES
from ._run import Run, top_nodes

__all__ = ["print_run", "run_to_json"]


def _number(value, digits=4) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}"


def summary_lines(run: Run) -> list:
    data = run.data
    lines = [f"Data: {run.source}: {len(data.y)} rows, {data.X.shape[1]} features, "
             f"target {data.target!r} ({data.task}, {data.y.nunique()} distinct values)"]
    if data.encodings:
        lines.append("Encoded as ordinal codes (sorted categories): "
                     + ", ".join(data.encodings))
    if data.n_missing:
        lines.append(f"Missing feature values kept as missing: {data.n_missing}")
    trained = f"trained on {run.n_train} rows, " if run.fitted_here else "loaded, "
    lines.append(f"Model: {run.model_text}, {trained}held-out {run.score_name} "
                 f"{run.score:.3f} on {run.n_test} rows")
    return lines


def print_run(run: Run, console):
    from rich.table import Table

    for line in summary_lines(run):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for name, result in run.results.items():
        _title(console, f"{name}: {MEASURES[name][2]}")
        table = Table()
        table.add_column("rank", justify="right")
        table.add_column("feature")
        if run.truth is not None:
            table.add_column("truth")
        table.add_column("importance", justify="right")
        table.add_column("std", justify="right")
        for row in result.to_frame().itertuples(index=False):
            cells = [str(row.rank), row.feature]
            if run.truth is not None:
                cells.append(run.truth.get(row.feature, ""))
            cells += [_number(row.importance), _number(row.std)]
            table.add_row(*cells)
        console.print(table)
    if len(run.results) > 1:
        ranks = run.ranks
        _title(console, "Ranks side by side (1 = most important)")
        table = Table()
        for column in ranks.columns:
            table.add_column(column, justify="left" if column in ("feature", "truth")
                             else "right")
        for row in ranks.itertuples(index=False):
            table.add_row(*map(str, row))
        console.print(table)
    nodes = top_nodes(run)
    if nodes is not None:
        _title(console, "MDI evidence: first tree's split nodes with the largest impurity "
               "decrease")
        table = Table()
        for column in nodes.columns:
            table.add_column(column, justify="left" if column == "feature" else "right")
        for row in nodes.itertuples(index=False):
            table.add_row(*[_cell(value) for value in row])
        console.print(table)
    for text in run.warnings:
        console.print(f"Warning: {text}", markup=False, highlight=False, soft_wrap=True,
                      style="bold yellow")


def _title(console, text: str):
    # Printed above the table, not as its title, so narrow tables do not wrap it.
    console.print(text, markup=False, highlight=False, soft_wrap=True, style="bold")


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def run_to_json(run: Run, report=None) -> str:
    data = run.data
    document = {
        "data": {"source": run.source, "n_rows": len(data.y), "n_features": data.X.shape[1],
                 "target": data.target, "task": data.task, "encoded": data.encodings,
                 "n_missing": data.n_missing},
        "model": {"name": run.model_text, "trained_here": run.fitted_here,
                  "n_train": run.n_train, "n_test": run.n_test,
                  "score_name": run.score_name, "score": run.score},
        "measures": {
            name: [{"feature": row.feature, "importance": _finite(row.importance),
                    "std": _finite(row.std), "rank": int(row.rank)}
                   for row in result.to_frame().itertuples()]
            for name, result in run.results.items()},
        "ranks": run.ranks.to_dict(orient="records"),
        "warnings": run.warnings,
        "notes": run.notes,
        "report": None if report is None else str(report),
    }
    if run.truth is not None:
        document["truth"] = run.truth
    return json.dumps(document, indent=2, default=_plain)


def _finite(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _plain(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
