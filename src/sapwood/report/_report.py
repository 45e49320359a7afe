"""The :class:`Report`: everything :func:`sapwood.explain` concludes, and its renderings."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _agreement
from ._data import Prepared

__all__ = ["Report"]


@dataclass
class Report:
    """What a model relies on, concluded on held-out rows: the answer of
    :func:`sapwood.explain`.

    The conclusions: :attr:`verdict` (which features the model relies on, which it
    does not, which are uncertain, which are entangled, each with the interval over new
    rows that decides it), :attr:`warnings` (:class:`~sapwood.diagnostics.Finding`
    objects), :attr:`agreement` (each pair of measures) and the evidence behind them:
    :attr:`results`, one :class:`~sapwood.importance.ImportanceResult` per measure by
    name. Also the data and model summaries (:attr:`data`, :attr:`model`,
    :attr:`score`, :attr:`baseline`) and :attr:`notes` (what was skipped, and why).

    Renderings: ``print(report)`` (one screen), :meth:`to_text` (``details=True``: every
    table), :meth:`to_json`, :meth:`to_html`, :meth:`to_frame`, :meth:`plot`, and in a
    notebook the report shows itself (a verdict card, the picture, the warnings, then
    each measure collapsed).
    """

    source: str | None
    data: Prepared
    model: object
    model_text: str
    n_train: int
    n_test: int
    score_name: str  # a scikit-learn scorer name, or the model's own score (accuracy, R²)
    score: float  # scikit-learn's sign: greater is better (neg_brier_score -0.05)
    results: dict
    truth: dict | None = None
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    fitted_here: bool = True
    agreement: list = field(default_factory=list)
    top_k: int | None = None
    pvalues: str | None = None
    n_permutations: int | None = None
    held_out: bool = True
    seed: int = 0
    verdict: object = None
    held_out_index: object = None  # the held-out rows' labels in data.X.index
    rows: list = field(default_factory=list)  # explain(rows=...): RowExplanation each
    selection: object = None
    baseline: object = None  # the constant model's held-out score (_baseline.Baseline)
    # explain(effects=True): the top features' PD / ICE and ALE curves and the strongest
    # interactions ({"effects": [...], "interactions": [...]}, JSON-ready)
    effects: dict | None = None
    # A survival target: survival curves of the top features, importance over time
    # (report._survival_curves; JSON-ready)
    survival: dict | None = None
    accuracy: float | None = None  # held-out, beside a probability score (Brier, log loss)
    # How the rows were split when not at random, or cross-fitted (sapwood._splits.summary:
    # kind, the groups on each side, the cut in time, the folds); None: a random split.
    split: dict | None = None
    # How often each feature's status held across refits (folds or seeds), and whether
    # the verdict changes with the score (sapwood.report._stability).
    stability: dict | None = None

    @property
    def task(self) -> str:
        return self.data.task

    @property
    def ranks(self) -> pd.DataFrame:
        """One row per feature: its rank under each measure (1 = most important)."""
        return _agreement.rank_table(self.results, self.truth)

    # -- renderings ---------------------------------------------------------------------

    def to_json(self) -> str:
        """The whole report as one JSON document (the command line's ``--json``)."""
        from ._terminal import report_to_json

        return report_to_json(self)

    def to_text(self, width: int = 80, details: bool = False) -> str:
        """The terminal rendering as plain text ``width`` columns wide: one screen (the
        verdict first), or with ``details`` every measure's table and the agreement."""
        from ._terminal import print_report, text_console

        console = text_console(width)
        print_report(self, console, details=details)
        return console.export_text()

    def print(self, console=None, details: bool = False):
        """Print the terminal rendering on ``console`` (a rich Console; default stdout)."""
        from rich.console import Console

        from ._terminal import print_report

        print_report(self, console or Console(), details=details)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        # The dataclass's own repr would print every field, the encoded table included.
        head = (f"Report(target={self.data.target!r}, {self.task}, model={self.model_text}, "
                f"{self.n_test} {'held-out' if self.held_out else 'training'} rows, "
                f"results={list(self.results)}")
        if self.verdict is not None and self.verdict.measure is not None:
            relies = self.verdict.relies_on
            more = f" and {len(relies) - 8} more" if len(relies) > 8 else ""
            head += f", relies_on={relies[:8]!r}{more}"
        return head + "); print() it for the verdict and the evidence"

    def to_html(self, path, title: str | None = None):
        """Write the self-contained HTML report to ``path`` (atomically: the file
        appears whole or not at all); returns its path."""
        from ._html import write_report

        return write_report(self, path, title=title or self.title)

    @property
    def title(self) -> str:
        where = f" in {self.source}" if self.source else ""
        return f"sapwood: what drives {self.data.target!r}{where}"

    def _repr_html_(self) -> str:
        from ._html import notebook_html

        return notebook_html(self)

    def to_frame(self) -> pd.DataFrame:
        """One row per feature (index: feature, in the verdict measure's order): its
        verdict ``status`` (relies_on, uncertain, does_not), the verdict measure's
        interval over new rows (``low``, ``high``), its entangled ``group`` if any, then
        for each measure its importance and its rank with the 95% rank interval
        (``<measure>``, ``<measure>_rank``, ``<measure>_rank_low``,
        ``<measure>_rank_high``)."""
        placed = {entry["feature"]: entry for entry in self.verdict.features}
        first = next(iter(self.results.values()))
        order = [f for f in (self.verdict.order or first.feature_names)]
        frame = pd.DataFrame(index=pd.Index(order, name="feature"))
        frame["status"] = [placed.get(f, {}).get("status") for f in order]
        frame["low"] = [placed.get(f, {}).get("low", np.nan) for f in order]
        frame["high"] = [placed.get(f, {}).get("high", np.nan) for f in order]
        frame["group"] = [", ".join(placed.get(f, {}).get("group") or []) or None
                          for f in order]
        for name, result in self.results.items():
            table = result.to_frame().set_index("feature")
            frame[name] = table["importance"].reindex(order)
            frame[f"{name}_rank"] = table["rank"].reindex(order)
            frame[f"{name}_rank_low"] = table["rank_low"].reindex(order)
            frame[f"{name}_rank_high"] = table["rank_high"].reindex(order)
        return frame

    def plot(self, ax=None, max_display: int = 20):
        """The verdict measure's importances with their 95% intervals over new rows,
        the largest on top, coloured by the verdict; returns the Axes (drawn on ``ax``,
        or on a new pyplot figure, which a notebook shows)."""
        from ._pictures import plot_verdict

        return plot_verdict(self, ax=ax, max_display=max_display)
