"""The terminal rendering of a :class:`~sapwood.report.Report` (rich) and its JSON.

By default one screen, the answer first: the data and model lines, the verdict, one
compact table (each feature's verdict, the verdict measure's importance and interval,
its rank by each other measure; the top :data:`MAX_COMPACT_ROWS` features, then counts),
each warning in one line and the agreement in one sentence. ``details`` adds every
measure's table, the ranks side by side, the agreement table, the node trace and the
warnings in full.

Every table fits the console it is printed on: numbers are compact (a measure's table
on one scale, four significant digits on its largest importance; elsewhere four
significant digits), feature names wrap instead of being cut, and on a narrow console
the columns that matter least are left out first (each table names its order); wider
consoles show them all.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from .._splits import describe as describe_split
from .._text import shorten, visible
from ..importance._engine._html import shown_pvalue
from ._measures import MEASURES
from ._models import shown_score
from ._rows import print_rows, rows_to_json
from ._screen import in_verdict, screen_lines
from ._survival import describe_target, target_json

__all__ = ["AGREEMENT_RULE", "MAX_COMPACT_ROWS", "TEXT_COLUMNS", "agreement_frame",
           "agreement_sentence", "intervals_line", "measure_frame", "measure_title",
           "print_report", "report_to_json", "summary_lines", "text_console", "top_nodes",
           "truth_lines"]

AGREEMENT_RULE = ("over the features that either measure finds above zero on new data (a "
                  "permutation-type measure's 95% interval over new rows or training "
                  "samples, the verdict's; one over the shuffles or trees alone selects "
                  "nothing), or all features when neither selects; discordant = pairs of "
                  "features that the two measures order oppositely, each beyond its own "
                  "uncertainty (simultaneous 95% pairwise tests, over new rows where the "
                  "measure reads other rows than the training ones); a pair of measures "
                  "agrees when none is discordant")
# The compact table's rows at most; the rest are counted by verdict.
MAX_COMPACT_ROWS = 15
# With the features relied on below them, at most this many (a wide table's screen).
MAX_TABLE_ROWS = 25
N_TRACE_NODES = 10
# Text columns: left-aligned, and allowed to wrap.
TEXT_COLUMNS = ("feature", "truth", "measures", "only first", "only second", "compared")
# Columns left out first when a table is too wide, per table.
_MEASURE_DROPS = ("std", "truth")
_AGREEMENT_DROPS = ("only second", "only first", "top-k overlap", "Kendall")
_NODE_DROPS = ("impurity_right", "w_right", "impurity_left", "w_left")


def _number(value, digits=4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.{digits}g}"


def _decimals(values, digits=4) -> int:
    """Decimals that give the largest of ``values`` ``digits`` significant digits, so
    that a whole column shares one scale (0.1392, 0.0460, 0.0004)."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return digits
    return min(max(0, digits - 1 - math.floor(math.log10(max(finite)))), 12)


def _fixed(value, decimals: int) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:.{decimals}f}"


def summary_lines(run) -> list:
    data = run.data
    source = f"{run.source}: " if run.source else ""
    target = describe_target(data) if data.task == "survival" else (
        f"target {data.target!r} ({data.task}, {data.y.nunique()} distinct values)")
    lines = [f"Data: {source}{len(data.y)} rows, {data.X.shape[1]} features, {target}"]
    if data.encodings:
        names = list(data.encodings)
        more = f" and {len(names) - 8:,} more" if len(names) > 8 else ""
        lines.append("Encoded as ordinal codes (text sorted; a categorical column in its "
                     "own order): " + ", ".join(names[:8]) + more)
    if data.n_missing:
        lines.append(f"Missing feature values (cells) kept as missing: {data.n_missing:,}")
    trained = f"trained on {run.n_train} rows, " if run.fitted_here else "loaded, "
    rows = "held-out" if run.held_out else "training"
    lines.append(f"Model: {run.model_text}, {trained}{rows} {score_line(run)}")
    split = describe_split(getattr(run, "split", None))
    return lines + ([split] if split else []) + truth_lines(run)


def score_line(run) -> str:
    """``Brier score 0.084 on 250 rows (lower is better; a constant model: 0.210),
    accuracy 0.872``."""
    words, value, lower = shown_score(run.score_name, run.score)
    constant = getattr(run, "baseline", None)
    asides = ["lower is better"] if lower else []
    if constant is not None:
        asides.append(f"{constant.model}: "
                      f"{shown_score(run.score_name, constant.score)[1]:.3f}")
    aside = f" ({'; '.join(asides)})" if asides else ""
    accuracy = getattr(run, "accuracy", None)
    also = f", accuracy {accuracy:.3f}" if accuracy is not None else ""
    if also and constant is not None and constant.accuracy is not None:
        also += f" (a constant model: {constant.accuracy:.3f})"
    return f"{words} {value:.3f} on {run.n_test} rows{aside}{also}"


def truth_lines(run) -> list:
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


def measure_title(run, name: str) -> str:
    """``permutation: drop in held-out score when the feature is shuffled``."""
    text = f"{name}: {MEASURES[name].description}"
    if not run.held_out and MEASURES[name].held_out:
        text += " (here on the training rows: none were held out)"
    params = run.results[name].params
    if "n_rows_available" in params and params["n_rows"] < params["n_rows_available"]:
        text += (f" ({params['n_rows']:,} of the {params['n_rows_available']:,} rows, a "
                 "random sample: --max-rows; the intervals include the sampling)")
    return text


def measure_frame(run, name: str) -> pd.DataFrame:
    """The table of one measure: rank with its 95% interval, feature, [truth],
    importance, std, [95% CI], [p-value]; cells as text."""
    frame = run.results[name].to_frame()
    table = pd.DataFrame({"rank (95%)": [_rank(row) for row in frame.itertuples()],
                          "feature": frame["feature"]})
    if run.truth is not None:
        table["truth"] = frame["feature"].map(run.truth).fillna("")
    # One scale for the whole table: the importances' (four significant digits on the
    # largest), so the spread and the interval read against them.
    decimals = _decimals(frame["importance"].tolist())
    table["importance"] = [_fixed(v, decimals) for v in frame["importance"]]
    table["std"] = [_fixed(v, decimals) for v in frame["std"]]
    if frame["ci_low"].notna().any():
        table["95% CI"] = [f"{_fixed(low, decimals)} to {_fixed(high, decimals)}"
                           if high == high else ""
                           for low, high in zip(frame["ci_low"], frame["ci_high"],
                                                strict=True)]
    if "pvalue" in frame:
        table["p-value"] = [shown_pvalue(v, run.results[name]) for v in frame["pvalue"]]
    return table


def intervals_line(result) -> str | None:
    """What the measure's intervals cover (``extra["intervals"]``), or None when it does
    not say: "95% CI" and "rank (95%)" are not always intervals over new rows."""
    intervals = result.extra.get("intervals")
    if not intervals:
        return None
    return f"95% CI covers {intervals['ci']}; rank (95%) covers {intervals['rank']}."


def _rank(row) -> str:
    """``3`` when the rank is certain or has no interval, ``3 (2-5)`` otherwise."""
    low, high = row.rank_low, row.rank_high
    if pd.isna(low) or low == high:
        return str(row.rank)
    return f"{row.rank} ({low}-{high})"


def agreement_frame(run) -> pd.DataFrame:
    """One row per pair of measures: features compared, Spearman, Kendall, discordant
    pairs, top-k overlap; cells as text."""
    k = run.top_k
    n = next(iter(run.results.values())).n_features
    return pd.DataFrame({
        "measures": [f"{row['measure_a']} vs {row['measure_b']}" for row in run.agreement],
        "compared": [f"{len(row['features'])} of {n}" for row in run.agreement],
        "Spearman": [_number(row["spearman"], 2) for row in run.agreement],
        "Kendall": [_number(row["kendall"], 2) for row in run.agreement],
        "discordant": [str(row["n_discordant"]) for row in run.agreement],
        "top-k overlap": [f"{row['top_k_overlap']}/{k}" for row in run.agreement],
        "only first": [", ".join(row["only_a"]) for row in run.agreement],
        "only second": [", ".join(row["only_b"]) for row in run.agreement],
    })


def _ranks_frame(run, short: bool) -> pd.DataFrame:
    ranks = run.ranks.astype(str)
    if short:
        ranks = ranks.rename(columns={name: MEASURES[name].short for name in run.results})
    return ranks


def text_console(width: int = 80):
    """A rich Console that records plain text ``width`` columns wide (no colours); in a
    notebook too, where rich would otherwise display each line it prints as HTML."""
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), width=width, record=True, color_system=None,
                   force_terminal=False, force_jupyter=False, legacy_windows=False)


def print_report(run, console, details: bool = False, hint: str | None = None):
    """The report on ``console``: one screen, or every table with ``details``."""
    for line in summary_lines(run):
        # One line each, however long (a path): grep-able; the terminal wraps them.
        console.print(visible(line), markup=False, highlight=False, soft_wrap=True)
    # A model not shown to beat a constant has no groups worth reading on one screen.
    quiet_groups = not details and any(f.kind == "baseline" for f in run.warnings)
    if run.verdict is not None:
        for line in run.verdict.lines if details else screen_lines(run.verdict, run.warnings):
            if line.startswith("- Warnings") or line.startswith("- No warnings"):
                continue  # each warning has a line of its own below
            if quiet_groups and line.startswith("- Entangled"):
                continue
            console.print(visible(line), markup=False, highlight=False, style="bold"
                          if line.startswith("Verdict") else None)
        if quiet_groups and run.verdict.groups:
            n = len(run.verdict.groups)
            console.print(f"- Entangled: {n} group{'s' if n > 1 else ''} of strongly "
                          "associated features, not read while the model is not shown to "
                          "beat a constant (--details)", markup=False, highlight=False)
    if details:
        _print_details(run, console)
    else:
        _print_compact(run, console)
        for finding in run.warnings:
            if quiet_groups and finding.kind == "correlated":
                continue
            if in_verdict(finding, run.verdict):
                continue  # the verdict's Entangled line says it
            # Fewer names before the numbers are cut: the line keeps what it says.
            texts = [f"Warning ({finding.kind}): {warning_summary(finding, n_names)}"
                     for n_names in (4, 3, 2, 1)]
            text = next((t for t in texts if len(visible(t)) <= console.width),
                        min(texts, key=len))
            # Too long still: wrapped at the console's width between words, never cut.
            console.print(visible(text), markup=False, highlight=False, style="bold yellow")
        sentence = agreement_sentence(run)
        if sentence:
            console.print(visible(sentence), markup=False, highlight=False)
    if not run.warnings:
        console.print("No warnings.", markup=False, highlight=False)
    if run.effects:
        from ._effects import effects_lines

        for line in effects_lines(run.effects):
            console.print(visible(line), markup=False, highlight=False)
    if getattr(run, "survival", None):
        from ._survival_curves import survival_lines

        for line in survival_lines(run.survival):
            console.print(visible(line), markup=False, highlight=False)
    if run.selection is not None:
        _print_selection(run.selection, console)
    print_rows(run.rows, run.source, console)
    if not details and hint:
        console.print(visible(hint), markup=False, highlight=False, style="dim")


def warning_summary(finding, n_names: int = 4) -> str:
    """A warning in a few words, naming at most ``n_names`` features (the terminal's one
    line; ``--details`` and the report give it whole)."""
    features = [shorten(f) for f in finding.features]
    if len(features) > n_names:
        names = f"{', '.join(features[:n_names])} and {len(features) - n_names} more"
    else:
        names = _and_list(features) if features else ""
    d = finding.details
    kind = finding.kind
    if kind == "identifier":
        if d.get("predicts_held_out"):
            return f"{names}: key predicting held-out rows: row order leaks"
        return f"{names}: looks like a key, not a measurement"
    if kind == "repeated units":
        return f"{names}: repeats like units; a random split overstates (--groups {names})"
    if kind == "leakage":
        if d.get("alone"):  # a set of columns (docs/measures.md, "Warnings")
            return f"{names}: together predict the target almost perfectly: a leak?"
        if d.get("copies"):
            return (f"{names}: one column in {len(features)} scales predicts the target "
                    "almost perfectly: a leak?")
        return f"{names}: alone predicts the target almost perfectly: a leak?"
    if kind == "correlated":
        # The group's joint interval (its estimate and the whole text: --details).
        if d.get("joint_importance") is None:
            return f"{names}: one group"
        return f"{names}: jointly {d['joint_ci_low']:.2g} to {d['joint_ci_high']:.2g}"
    if kind == "disagreement":
        causes = f" ({', '.join(d['causes'])})" if d.get("causes") else ""
        return (f"{names}: high by {d.get('training_measure')}, not "
                f"{d.get('held_out_measure')}{causes}")
    if kind == "small-data":
        return (f"only {d.get('n_test', 0)} held-out rows: every ranking is tentative"
                if d.get("n_test") else "no rows held out: the numbers describe the fit")
    if kind == "baseline":
        name = d.get("score_name", "")
        gain = "AUC - 0.5" if d.get("test") == "roc_auc" else "gain"
        scores = (f"{shown_score(name, d['score'])[1]:.3f} against "
                  f"{shown_score(name, d['baseline_score'])[1]:.3f}; {gain} "
                  f"{d['gain_low']:.2g} to {d['gain_high']:.2g}")
        if d.get("no_skill"):
            return f"no better than a constant model ({scores}): no skill to explain"
        return f"not shown to be better than a constant model ({scores})"
    return finding.message


def _print_compact(run, console):
    """One table: each feature's verdict, the verdict measure's importance with its 95%
    interval, and its rank by each other measure; the top rows, then counts."""
    from rich import box
    from rich.table import Table

    verdict = run.verdict
    name = verdict.measure if verdict is not None else None
    first = name or next(iter(run.results))
    order = (verdict.order if verdict is not None and verdict.features
             else run.results[first].to_frame()["feature"].tolist())
    placed = {entry["feature"]: entry for entry in (verdict.features if verdict else [])}
    others = [other for other in run.results if other != first]
    ranks = {other: dict(zip(run.results[other].feature_names,
                             run.results[other].ranks(), strict=True)) for other in others}
    importance = dict(zip(run.results[first].feature_names,
                          run.results[first].importances_mean, strict=True))
    decimals = _decimals([importance[f] for f in order])
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("feature", overflow="fold")
    table.add_column("verdict", no_wrap=True)
    table.add_column(MEASURES[first].short, justify="right", no_wrap=True)
    table.add_column("95% interval", justify="right", no_wrap=True)
    # The top rows, and every feature the model relies on (alone or through its group)
    # however low its own importance, up to MAX_TABLE_ROWS (the rest are counted).
    rows = (order[:MAX_COMPACT_ROWS] + [
        feature for feature in order[MAX_COMPACT_ROWS:]
        if placed.get(feature, {}).get("status") == "relies_on"])[:MAX_TABLE_ROWS]
    shown_others = others
    width = _compact_width(rows, others)
    while shown_others and width > console.width:
        shown_others = shown_others[:-1]
        width = _compact_width(rows, shown_others)
    for other in shown_others:
        table.add_column(f"{MEASURES[other].short} rank", justify="right", no_wrap=True)
    for feature in rows:
        entry = placed.get(feature, {})
        status = _status_label(entry) or ""
        low, high = entry.get("low"), entry.get("high")
        interval = (f"{_fixed(low, decimals)} to {_fixed(high, decimals)}"
                    if low is not None and high is not None else "")
        table.add_row(_plain(feature), status, _fixed(importance[feature], decimals), interval,
                      *[str(ranks[other][feature]) for other in shown_others])
    console.print(table)
    rest = [feature for feature in order if feature not in set(rows)]
    if rest:
        counts = {}
        for feature in rest:
            label = _status_label(placed.get(feature, {})) or "unplaced"
            counts[label] = counts.get(label, 0) + 1
        console.print(visible(f"... and {len(rest):,} more features: " + ", ".join(
            f"{count:,} {label}" for label, count in counts.items())), markup=False,
            highlight=False)
    if len(shown_others) < len(others):
        left = ", ".join(other for other in others if other not in shown_others)
        console.print(visible(f"(ranks by {left} left out at this width)"), markup=False,
                      highlight=False)


def _status_label(entry) -> str | None:
    """A feature's verdict as the compact table says it."""
    if entry.get("through_group"):
        return "via group"
    high = entry.get("high")
    if entry.get("status") == "uncertain" and high is not None and high < 0:
        return "below zero"  # the verdict's "better shuffled"
    return {"relies_on": "relies on", "does_not": "does not",
            "uncertain": "uncertain"}.get(entry.get("status"))


def _compact_width(features, others) -> int:
    """The compact table's width: each column's widest cell plus a space either side."""
    name = min(max([len(shorten(f)) for f in features] + [7]), 30)
    widths = [name, 10, 8, 20] + [len(MEASURES[o].short) + 5 for o in others]
    return sum(widths) + 2 * (len(widths) - 1)


def agreement_sentence(run) -> str | None:
    """The rank agreement in one sentence: which measures agree beyond their uncertainty
    and share the top k, and which pair differs, on what."""
    if not run.agreement:
        return None
    k = run.top_k
    discordant = [row for row in run.agreement if not row["agree"]]
    overlap = min(row["top_k_overlap"] for row in run.agreement)
    # One pair of measures shares exactly this many; several share at least the least.
    share = f"{overlap} of {k}" if len(run.agreement) == 1 else f"at least {overlap} of {k}"
    names = list(run.results)
    if not discordant:
        # Over the features either measure finds above zero (the disagreement warning
        # may still name a feature one measure ranks high and the other finds unused).
        compared = {name for row in run.agreement for name in row["features"]}
        if len(compared) < 2:  # no pair to order (a model without shown skill, say)
            return (f"Agreement: fewer than two features are found above zero, so "
                    f"{_and_list(names)} have no order to compare; their top {k} share "
                    f"{share}.")
        among = ("" if len(compared) == len(run.results[names[0]].feature_names)
                 else f" among the {len(compared)} found above zero")
        text = (f"Agreement: {_and_list(names)} order no pair of features{among} "
                f"oppositely beyond their uncertainty; their top {k} share {share}.")
    else:
        worst = max(discordant, key=lambda row: row["n_discordant"])
        a, b = worst["discordant"][0]
        text = (f"Agreement: {len(run.agreement) - len(discordant)} of {len(run.agreement)} "
                f"pairs of measures agree; {worst['measure_a']} and {worst['measure_b']} "
                f"differ on {worst['n_discordant']} pair(s) of features (e.g. "
                f"{worst['measure_a']} puts {shorten(a)} above {shorten(b)}, "
                f"{worst['measure_b']} the reverse); top {k} overlap {share}.")
    return text


def _and_list(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _print_details(run, console):
    """Every measure's table, the ranks side by side, the agreement, the node trace and
    the warnings in full."""
    for name in run.results:
        _title(console, measure_title(run, name))
        _print_table(console, measure_frame(run, name), _MEASURE_DROPS)
        line = intervals_line(run.results[name])
        if line:
            console.print(visible(line), markup=False, highlight=False)  # wrapped
    if len(run.results) > 1:
        _title(console, "Ranks side by side (1 = most important)")
        frame = _ranks_frame(run, short=False)
        if _width(frame) > console.width:
            frame = _ranks_frame(run, short=True)
        _print_table(console, frame, ("truth",))
    if run.agreement:
        _title(console, f"Rank agreement between the measures: {AGREEMENT_RULE}")
        _print_table(console, agreement_frame(run), _AGREEMENT_DROPS)
    nodes = top_nodes(run)
    if nodes is not None:
        _title(console, "MDI evidence: first tree's split nodes with the largest impurity "
               "decrease")
        cells = pd.DataFrame({column: [_number(v) if isinstance(v, float) else str(v)
                                       for v in nodes[column]] for column in nodes.columns})
        _print_table(console, cells, _NODE_DROPS)
    for finding in run.warnings:
        console.print(visible(f"Warning ({finding.kind}): {finding.message}"), markup=False,
                      highlight=False, style="bold yellow")


def _print_selection(result, console):
    from ._selection import selection_frame, selection_lines

    _title(console, "Model-X knockoff selection on the training rows: W = importance of the "
           "feature - importance of its knockoff")
    frame = selection_frame(result)
    cells = pd.DataFrame({column: [_number(v) if isinstance(v, float) else str(v)
                                   for v in frame[column]] for column in frame.columns})
    _print_table(console, cells, ("Z", "Z knockoff"))
    for line in selection_lines(result):
        console.print(visible(line), markup=False, highlight=False, soft_wrap=True,
                      style="bold" if line.startswith("Selected") else None)


def _width(frame: pd.DataFrame) -> int:
    """The width rich needs to show ``frame`` without wrapping: each column's widest
    cell or header, plus padding and borders."""
    return 1 + sum(3 + max([len(str(column))] + [len(str(v)) for v in frame[column]])
                   for column in frame.columns)


def _print_table(console, frame: pd.DataFrame, drops):
    """``frame`` (text cells) as a rich table as wide as the console allows: leave out
    the columns ``drops`` names, in that order, until it fits; what still does not
    fit wraps in the text columns."""
    from rich.table import Table

    for column in drops:
        if _width(frame) <= console.width:
            break
        if column in frame:
            frame = frame.drop(columns=column)
    table = Table()
    for column in frame.columns:
        text = column in TEXT_COLUMNS
        table.add_column(column, justify="left" if text else "right",
                         overflow="fold", no_wrap=not text)
    for row in frame.itertuples(index=False):
        table.add_row(*[_plain(str(value)) for value in row])
    console.print(table)


def _plain(text: str):
    from rich.text import Text

    # Names from data are data: never markup, never control characters, never so long
    # that a table is all one column (JSON keeps them whole).
    return Text(shorten(text))


def _title(console, text: str):
    console.print(visible(text), markup=False, highlight=False, style="bold")


def report_to_json(run) -> str:
    data = run.data
    document = {
        "data": {"source": run.source, "n_rows": len(data.y), "n_features": data.X.shape[1],
                 "target": data.target, "task": data.task, "encoded": data.encodings,
                 "n_missing": data.n_missing},
        "model": {"name": run.model_text, "trained_here": run.fitted_here,
                  "params": _params(run.model),
                  "n_train": run.n_train, "n_test": run.n_test,
                  "score_name": run.score_name, "score": run.score,
                  "accuracy": getattr(run, "accuracy", None),
                  "baseline": None if run.baseline is None else run.baseline.to_dict()},
        "split": getattr(run, "split", None),
        "stability": getattr(run, "stability", None),
        "verdict": None if run.verdict is None else run.verdict.to_dict(),
        "warnings": [finding.to_dict() for finding in run.warnings],
        "measures": {
            name: [_row(row, run.pvalues is not None)
                   for row in result.to_frame().itertuples()]
            for name, result in run.results.items()},
        "pvalues": None if run.pvalues is None else {
            "method": run.pvalues,
            "measures": [name for name, result in run.results.items()
                         if result.pvalues is not None],
            "n_permutations": run.n_permutations,
            "adjust": next((result.params.get("adjust") for result in run.results.values()
                            if result.pvalues is not None), None)},
        "rows_explained": {
            name: {"n_rows": result.params["n_rows"],
                   "n_rows_available": result.params["n_rows_available"]}
            for name, result in run.results.items()
            if "n_rows_available" in result.params},
        "ranks": run.ranks.to_dict(orient="records"),
        "agreement": {"top_k": run.top_k, "rule": AGREEMENT_RULE, "pairs": run.agreement},
        "notes": run.notes,
        "intervals": {name: result.extra["intervals"] for name, result in run.results.items()
                      if result.extra.get("intervals")},
        "rows": rows_to_json(run.rows),
        "selection": None if run.selection is None else _selection_json(run.selection),
    }
    if run.effects:
        document.update(run.effects)  # "effects" and "interactions"
    if run.truth is not None:
        document["truth"] = run.truth
    if data.task == "survival":
        document["data"].update(target_json(data))
        if getattr(run, "survival", None) is not None:
            document["survival"] = run.survival  # curves, importance over time
    # Strict JSON: a value that is not a finite number is null (the notes say which).
    return json.dumps(_strict(document), indent=2, allow_nan=False, default=_plain_json)


def _selection_json(result) -> dict:
    return {"method": "knockoffs", "fdr": result.params["fdr"],
            "offset": result.params["offset"], "statistic": result.params["statistic"],
            "threshold": float(result.threshold[0]), "selected": result.selected,
            "W": dict(zip(result.feature_names, result.W[0].tolist(), strict=True))}


def _strict(value):
    """``value`` with NumPy scalars as Python ones and non-finite floats as None."""
    if isinstance(value, dict):
        return {key: _strict(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(item) for item in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _row(row, pvalues: bool) -> dict:
    entry = {"feature": row.feature, "importance": _finite(row.importance),
             "std": _finite(row.std), "ci_low": _finite(row.ci_low),
             "ci_high": _finite(row.ci_high), "rank": int(row.rank),
             "rank_low": None if pd.isna(row.rank_low) else int(row.rank_low),
             "rank_high": None if pd.isna(row.rank_high) else int(row.rank_high)}
    if pvalues:
        entry["pvalue"] = _finite(row.pvalue) if hasattr(row, "pvalue") else None
    return entry


def _params(model):
    """The fitted estimator's ``get_params()`` (None for a loaded model file), with
    values JSON cannot hold shown as their repr."""
    if type(model).__name__ == "Pipeline":
        from ._pipelines import users_pipeline

        model = users_pipeline(model)
    get_params = getattr(model, "get_params", None)
    if get_params is None:
        return None
    return {key: value if value is None or isinstance(value, bool | int | float | str)
            else repr(value) for key, value in get_params(deep=False).items()}


def _finite(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _plain_json(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def top_nodes(run, n: int = N_TRACE_NODES) -> pd.DataFrame | None:
    """The first tree's split nodes with the largest impurity decrease (MDI evidence)."""
    result = run.results.get("mdi")
    if result is None:
        return None
    # Tree by tree, so that a large forest's whole trace is never built for the CLI.
    for tree in range(result.params.get("n_trees", 1)):
        first = result.tree_trace(tree)
        if first is None:
            return None
        if len(first):  # the first tree with a split
            break
    columns = ["node", "feature", "threshold", "w", "impurity", "w_left", "impurity_left",
               "w_right", "impurity_right", "decrease"]
    return first.nlargest(n, "decrease")[columns].reset_index(drop=True)
