"""The 95% interval of each importance that the verdict rests on: one over new rows
where the measure has it (:func:`verdict_interval`), and what it covers.

The verdict (:mod:`._verdict`) and the rank agreement (:mod:`._agreement`) both say
which features are above zero. A claim the command line prints must hold on new data,
so both read it here (a module of its own because the verdict's imports the
agreement's): from the per-row draws the rank intervals rest on, not from the
``ci_low`` / ``ci_high`` of the repeats or trees, which cover the shuffles or the
trees only and let test-set noise pass for an effect (docs/measures.md, "The
verdict").
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sapwood.importance._engine._result import t_interval

from ._measures import MEASURES

__all__ = ["Interval", "verdict_interval"]


@dataclasses.dataclass(frozen=True)
class Interval:
    """The 95% interval of each importance (``low``, ``high``: arrays over the
    features), what it covers in words (``covers``), and whether that includes new
    rows (``rows``; if not, no claim rests on it)."""

    low: np.ndarray
    high: np.ndarray
    covers: str
    rows: bool


def verdict_interval(name: str, result) -> Interval:
    """The 95% interval of each importance of measure ``name`` (its result
    ``result``) over new rows where it has one, and what it covers.

    Where the measure has per-row draws (``rank_draws``: held-out permutation with a
    score that is a mean over rows or binary ROC AUC, OOB permutation, conditional
    permutation of forests; AIR of a bagged forest, jackknife pseudo-draws), the
    Student-t interval of the importance with their standard error, ``mean -/+
    t(0.975, n - 1) sd / sqrt(n)``: the one the rank intervals use, over new rows and
    new shuffles (for AIR, new training samples). Where each of its draws is other
    rows (the record gives ``"new_rows"``) and it has two or more: ``ci_low`` /
    ``ci_high``, the interval over them (drop-column by cross-validation: its folds,
    each a new set of held-out rows; CPI: its per-row loss changes). Otherwise
    ``ci_low`` / ``ci_high``, which cover the shuffles or the trees only (``rows``
    False; SAGE's rows are drawn with replacement from the held-out ones, as many as it
    needs, so its interval does not cover new rows)."""
    notes = result.extra.get("intervals") or {}
    draws = result.rank_draws
    if draws is not None and draws.ndim == 2 and draws.shape[1] >= 2:
        low, high = t_interval(result.importances_mean, draws.std(axis=1, ddof=1),
                               draws.shape[1])
        return Interval(low, high, _short(notes.get("rank", "new rows")), rows=True)
    nan = np.full(result.n_features, np.nan)
    low = nan if result.ci_low is None else result.ci_low
    high = nan if result.ci_high is None else result.ci_high
    n_draws = 0 if result.importances is None else result.importances.shape[1]
    measure = MEASURES[name]
    if "new_rows" in measure.gives and n_draws >= 2:
        # A measure that refits and scores held-out rows draws folds (by --cv); another
        # draws its held-out rows one by one (CPI: its interval is its t-test's).
        if measure.rows == "refit":
            return Interval(low, high, f"the {n_draws} cross-validation folds (each a new "
                            "set of held-out rows, and a refit)", rows=True)
        return Interval(low, high, f"the {n_draws} held-out rows, one draw per row",
                        rows=True)
    return Interval(low, high, _short(notes.get("ci", "its draws only")), rows=False)


def _short(covers: str) -> str:
    """A measure's note on what an interval covers without its explanation (after a
    colon or in parentheses), which the line under the measure's table gives."""
    return covers.split(" (")[0].split(":")[0]
