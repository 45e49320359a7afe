"""Terminal tables (rich) and the ``--json`` document for a :class:`Run`."""

from __future__ import annotations

import json
import math

from ._agreement import KENDALL_AGREE
from ._measures import MEASURES
from ._run import Run, top_nodes

__all__ = ["agreement_frame", "measure_frame", "measure_title", "print_run", "run_to_json",
           "summary_lines", "truth_lines"]


def _number(value, digits=4) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}"


def _row(row, pvalues: bool) -> dict:
    entry = {"feature": row.feature, "importance": _finite(row.importance),
             "std": _finite(row.std), "ci_low": _finite(row.ci_low),
             "ci_high": _finite(row.ci_high), "rank": int(row.rank)}
    if pvalues:
        entry["pvalue"] = _finite(row.pvalue) if hasattr(row, "pvalue") else None
    return entry


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
    rows = "held-out" if run.held_out else "training"
    lines.append(f"Model: {run.model_text}, {trained}{rows} {run.score_name} "
                 f"{run.score:.3f} on {run.n_test} rows")
    return lines + truth_lines(run)


def truth_lines(run: Run) -> list:
    """For data with known answers: which columns are truly informative."""
    if run.truth is None:
        return []
    roles = {}
    for feature, role in run.truth.items():
        roles.setdefault(role, []).append(feature)
    labels = {"informative": "Truly informative", "correlated copy":
              "Correlated copy of an informative column", "noise": "Pure noise"}
    return [f"{labels.get(role, role)}: {', '.join(features)}"
            for role, features in roles.items()]


def measure_title(run: Run, name: str) -> str:
    """``permutation: drop in held-out score when the feature is shuffled``."""
    text = f"{name}: {MEASURES[name].description}"
    if not run.held_out and MEASURES[name].rows == "held-out":
        text += " (here on the training rows: none were held out)"
    return text


def measure_frame(run: Run, name: str):
    """The table of one measure: rank, feature, [truth], importance, std, [95% CI],
    [p-value]."""
    frame = run.results[name].to_frame()
    columns = ["rank", "feature", "importance", "std"]
    if frame["ci_low"].notna().any():
        frame["95% CI"] = [f"{_number(low)} to {_number(high)}" if high == high else ""
                           for low, high in zip(frame["ci_low"], frame["ci_high"],
                                                strict=True)]
        columns.append("95% CI")
    if run.truth is not None:
        frame["truth"] = frame["feature"].map(run.truth).fillna("")
        columns.insert(2, "truth")
    if "pvalue" in frame:
        frame = frame.rename(columns={"pvalue": "p-value"})
        columns.append("p-value")
    return frame[columns]


def agreement_frame(run: Run):
    """One row per pair of measures: Spearman, Kendall, top-k overlap."""
    import pandas as pd

    k = run.top_k
    return pd.DataFrame({
        "measures": [f"{row['measure_a']} vs {row['measure_b']}" for row in run.agreement],
        "Spearman": [row["spearman"] for row in run.agreement],
        "Kendall": [row["kendall"] for row in run.agreement],
        f"top-{k} overlap": [f"{row['top_k_overlap']}/{k}" for row in run.agreement],
        "only first": [", ".join(row["only_a"]) for row in run.agreement],
        "only second": [", ".join(row["only_b"]) for row in run.agreement],
    })


def print_run(run: Run, console):
    from rich.table import Table

    for line in summary_lines(run):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for name in run.results:
        _title(console, measure_title(run, name))
        frame = measure_frame(run, name)
        table = Table()
        for column in frame.columns:
            table.add_column(column, justify="left" if column in ("feature", "truth")
                             else "right")
        for row in frame.itertuples(index=False):
            table.add_row(*[_number(value, 4 if column != "p-value" else 3)
                            if isinstance(value, float) else str(value)
                            for column, value in zip(frame.columns, row, strict=True)])
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
    if run.agreement:
        _title(console, "Rank agreement between the measures (1 = same order; top-"
               f"{run.top_k} overlap = features both put in their top {run.top_k}; only "
               "first / second = in one measure's top but not the other's)")
        frame = agreement_frame(run)
        table = Table()
        for column in frame.columns:
            table.add_column(column, justify="right" if column in ("Spearman", "Kendall")
                             or column.endswith("overlap") else "left")
        for row in frame.itertuples(index=False):
            table.add_row(*[_number(value, 2) if not isinstance(value, str) else value
                            for value in row])
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
            name: [_row(row, run.pvalues is not None)
                   for row in result.to_frame().itertuples()]
            for name, result in run.results.items()},
        "pvalues": None if run.pvalues is None else {
            "method": run.pvalues,
            "measures": [name for name, result in run.results.items()
                         if result.pvalues is not None],
            "n_permutations": run.n_permutations},
        "ranks": run.ranks.to_dict(orient="records"),
        "agreement": {"top_k": run.top_k, "kendall_agree": KENDALL_AGREE,
                      "pairs": run.agreement},
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
