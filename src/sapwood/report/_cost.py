"""How long a measure will take, guessed before it starts from what the run has timed
already (one fit, one scoring of the held-out rows), so that a run can say so before a
measure that will take more than about a minute (:data:`LONG`) keeps a user waiting.

The guess counts the work each kind of measure does in units of those two timings,
read from its record (the rows it reads, its null, its options): a measure that refits
does its refits (rows "refit", drop-column: one per feature and one with all of them,
per fold; rows "shadows", AIR: one forest on twice the columns); a measure whose
importances of irrelevant features scatter symmetrically around zero compares the
model's score with each feature shuffled: it scores the model once per feature and
repeat (its ``n_repeats``), on the held-out rows or (rows "oob") on about the third of
the training rows each tree left out, and a conditional one (its ``threshold``) builds
each feature's conditioning grid first. A tree model is re-evaluated only in the trees
that split on the shuffled feature, which :data:`REROUTED` allows for (the benchmarks
put sapwood's permutation at about a tenth of scikit-learn's, which scores whole
models), and with many features each splits fewer nodes (:data:`SPREAD`). Measures
whose cost neither timing tells (SHAP, SAGE, MDI+, CPI, the impurity measures) are not
guessed: they bound their own work, or take seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LONG", "Timing", "expected_seconds", "long_wait"]

#: Say so before a measure expected to take longer than this (seconds).
LONG = 60.0
#: A shuffled feature re-evaluates only the trees that split on it: the share of a
#: whole scoring that one shuffle of one feature costs the tree evaluator.
REROUTED = 0.15
#: Past this many features a tree model's splits spread over more of them, and one
#: shuffle re-routes fewer nodes: a repeat over every feature costs about what one over
#: this many does (measured, 2,000 rows: 300 and 1,500 columns, within 1.1x; the guess
#: per feature was 8x the time on 1,500; benchmarks/RESULTS.md, B-CHECKS-estimate).
SPREAD = 170
#: The share of the training rows out of each tree's bootstrap sample.
OUT_OF_BAG = 0.37


@dataclass(frozen=True)
class Timing:
    """Seconds to fit the model once (None: not fit here) and to score it once on the
    held-out rows."""

    fit: float | None
    score: float


def expected_seconds(measure, inputs, timing: Timing, n_features: int,
                     tree_model: bool = True) -> tuple | None:
    """``(seconds, what)`` for ``measure`` (a registry record) on ``inputs``, or None
    when the timings do not tell its cost. ``what`` says what the time is spent on."""
    options = measure.options
    if measure.rows == "refit" and timing.fit is not None:
        folds = inputs.cv or 1
        refits = (n_features + 1) * folds
        return refits * timing.fit, f"it refits the model {refits:,} times"
    if measure.rows == "shadows" and timing.fit is not None:
        return 2 * timing.fit, "it grows a forest on twice the columns"
    if measure.refits or measure.null != "symmetric":
        return None
    repeats = options.get("n_repeats", 1)
    shuffles = repeats * n_features
    if tree_model:
        seconds = repeats * min(n_features, SPREAD) * timing.score * REROUTED
    else:
        seconds = shuffles * timing.score
    if measure.rows == "oob":
        n_test = max(len(inputs.X_test), 1) if inputs.X_test is not None else 1
        seconds *= OUT_OF_BAG * len(inputs.X_train) / n_test
    if "threshold" in options:
        seconds *= 2  # the conditioning grid of each feature, then its shuffles
    return seconds, f"{shuffles:,} shuffles, each scoring the model again"


def long_wait(measure, inputs, timing: Timing | None, n_features: int,
              tree_model: bool = True) -> str | None:
    """The sentence to show before ``measure`` starts when it will take more than
    :data:`LONG`, else None."""
    if timing is None:
        return None
    guess = expected_seconds(measure, inputs, timing, n_features, tree_model)
    if guess is None or guess[0] <= LONG:
        return None
    seconds, what = guess
    minutes = seconds / 60
    shown = f"{minutes:.0f} minutes" if minutes >= 2 else "a minute or two"
    return (f"{measure.name} importance will take about {shown} ({what}); leave it out "
            "of --methods / methods= for a faster run")
