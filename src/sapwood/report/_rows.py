"""``explain --row N``: why one row got its prediction, feature by feature.

Each requested row is explained by path-dependent TreeSHAP
(:func:`sapwood.importance.tree_shap`): the model's output for the row is the base
value (the output averaged over the rows the trees were trained on) plus one
contribution per feature. N is the row's position in the input file, counting data
rows from 0 (the first row under the header is row 0), as pandas numbers them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._errors import InputError
from .._text import shorten, visible
from ._survival import row_target

__all__ = ["RowExplanation", "explain_rows", "labelled", "print_rows",
           "rows_to_json"]


@dataclass
class RowExplanation:
    """One row's TreeSHAP values, with its place in the file and the split."""

    position: int
    held_out: bool
    result: object  # tree_shap of this one row; extra["data"] shows category labels
    column: int | None  # the output column explained (None: the model has one)
    target: object = None  # the row's recorded target, to read the prediction against

    @property
    def contributions(self) -> np.ndarray:
        phi = self.result.extra["shap_values"][0]
        return phi if self.column is None else phi[:, self.column]

    @property
    def base(self) -> float:
        expected = self.result.extra["expected_value"]
        return float(expected if self.column is None else expected[self.column])

    @property
    def prediction(self) -> float:
        return self.base + float(self.contributions.sum())

    @property
    def output(self) -> str:
        """What the numbers are in: ``log-odds of class 'yes'``."""
        names = self.result.extra["output_names"]
        quantity = self.result.extra["output"]
        if names is None:
            return quantity
        return f"{quantity} of class {shorten(names[0 if self.column is None else self.column])!r}"

    def table(self) -> pd.DataFrame:
        """feature, value (as in the data: category labels, "missing"), contribution;
        the largest |contribution| first."""
        phi = self.contributions
        order = np.argsort(-np.abs(phi), kind="stable")
        row = self.result.extra["data"].iloc[0]
        return pd.DataFrame({
            "feature": [self.result.feature_names[j] for j in order],
            "value": [_value_text(row.iloc[j]) for j in order],
            "contribution": [float(phi[j]) for j in order]})


def explain_rows(run, places) -> list:
    """A :class:`RowExplanation` for each ``(place, row)``: the row at ``place`` in
    ``run``'s data, shown as ``row`` (its position in the rows the caller gave)."""
    from sapwood.importance import tree_shap

    data = run.data
    explanations = []
    for place, shown in places:
        rows = data.X.iloc[[place]]
        try:
            result = tree_shap(run.model, rows)
        except (ValueError, TypeError) as error:
            raise InputError(f"row {shown}: cannot explain it with TreeSHAP: "
                             f"{str(error).splitlines()[0]}") from None
        result.extra["data"] = labelled(rows, data.encodings)
        held_out = run.held_out and rows.index[0] in run.held_out_index
        target = data.y.iloc[place]
        if data.task == "survival":  # its time and whether the event was seen then
            target = row_target(target)
        explanations.append(RowExplanation(shown, held_out, result, _column(result),
                                           target.item() if hasattr(target, "item")
                                           else target))
    return explanations


def _column(result):
    """The output column to explain: the only one; a binary classifier's positive
    (second) class, as the plots show it; else the class the model predicts."""
    phi = result.extra["shap_values"]
    if phi.ndim == 2:
        return None
    if phi.shape[2] == 2:
        return 1
    return int(np.argmax(result.extra["expected_value"] + phi[0].sum(axis=0)))


def labelled(frame: pd.DataFrame, encodings: dict) -> pd.DataFrame:
    """``frame`` with each encoded column (ordinal codes) back as categories, so that
    tables and plots show the labels the data holds."""
    columns = {name: pd.Categorical.from_codes(
        frame[name].fillna(-1).astype(int), categories=categories)
        for name, categories in encodings.items() if name in frame}
    return frame.assign(**columns) if columns else frame


def _value_text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or (
            not isinstance(value, str) and pd.isna(value)):
        return "missing"
    if isinstance(value, float | np.floating):
        return f"{value:.6g}"
    return str(value)


def heading(explanation: RowExplanation, source: str) -> list:
    """The lines above a row's table: which row, its prediction and base value."""
    which = "held-out" if explanation.held_out else "training"
    prediction = _number(explanation.prediction)
    if explanation.result.extra["output"] == "log-odds":
        prediction += f" (probability {1.0 / (1.0 + math.exp(-explanation.prediction)):.4g})"
    of = f" of {source}" if source else ""
    actual = ("" if explanation.target is None
              else f"; its target: {_value_text(explanation.target)}")
    return [f"Row {explanation.position}{of} (a {which} row{actual}): {explanation.output}",
            f"prediction {prediction} = base value {_number(explanation.base)} + the "
            "contributions below (TreeSHAP; the base value is the model's average output "
            "over the rows it was trained on)"]


def _number(value: float) -> str:
    # Sums of many terms leave rounding noise such as 1e-16 where the answer is 0.
    return f"{round(value, 12):.6g}"


def contribution_texts(contributions) -> list:
    """Signed, on one scale: six significant digits on the largest magnitude."""
    largest = max((abs(value) for value in contributions if value != 0), default=1.0)
    decimals = min(max(0, 5 - math.floor(math.log10(largest))), 12)
    return [f"{value:+.{decimals}f}" for value in contributions]


def print_rows(explanations, source: str, console):
    from rich.table import Table
    from rich.text import Text

    for explanation in explanations:
        lines = heading(explanation, source)
        console.print(visible(lines[0]), markup=False, highlight=False, style="bold",
                      soft_wrap=True)
        console.print(visible(lines[1]), markup=False, highlight=False, soft_wrap=True)
        table = Table()
        table.add_column("feature", overflow="fold")
        table.add_column("value", overflow="fold")
        table.add_column("contribution", justify="right", no_wrap=True)
        frame = explanation.table()
        for row, text in zip(frame.itertuples(index=False),
                             contribution_texts(frame["contribution"]), strict=True):
            # Names and values from data are data: never markup, control characters
            # escaped, very long ones cut.
            table.add_row(Text(shorten(row.feature)), Text(shorten(row.value)), Text(text))
        console.print(table)


def rows_to_json(explanations) -> list:
    return [{"row": explanation.position, "held_out": explanation.held_out,
             "target": _plain_target(explanation.target),
             "output": explanation.output, "prediction": explanation.prediction,
             "base_value": explanation.base,
             "contributions": [{"feature": row.feature, "value": row.value,
                                "contribution": row.contribution}
                               for row in explanation.table().itertuples(index=False)]}
            for explanation in explanations]


def _plain_target(value):
    """The target as JSON takes it (a number, text, or None)."""
    if value is None or isinstance(value, str | bool | int):
        return value
    value = float(value)
    return value if math.isfinite(value) else None


def for_plots(result, encodings: dict):
    """``result`` with its rows' encoded columns shown as their category labels."""
    return replace(result, extra={**result.extra,
                                  "data": labelled(result.extra["data"], encodings)})
