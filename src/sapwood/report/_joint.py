"""Each correlated group's joint held-out permutation importance (its columns shuffled
together), for the group's warning and the verdict's Entangled line.

Every group is scored in one permutation call (``feature_groups=``: one set-up of the model's
trees on the held-out rows, one baseline score, one pass over the groups), which gives
each group what a call of its own would (every group starts from the same seed); a
wide table's dozens of groups no longer re-run permutation once each.

Above :data:`JOINT_ROWS` held-out rows the groups are shuffled on a seeded sample of
that many (a note says so): shuffling a group reroutes the rows through every node
that splits on any of its members, each shuffle costing about three of one feature's
(benchmarks/RESULTS.md, B-CHECKS), while the interval of a group that matters is
already narrow on that many rows.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sapwood.importance import permutation_importance

from ._intervals import verdict_interval

__all__ = ["JOINT_REPEATS", "JOINT_ROWS", "with_joint"]

JOINT_REPEATS = 5
JOINT_ROWS = 20_000


def with_joint(findings, model, X_test, y_test, run_like, progress=False) -> list:
    """``findings`` (correlated groups), each with the group's joint held-out
    permutation importance in its message and details, when permutation ran."""
    findings = list(findings)
    if not findings or "permutation" not in run_like.results or not run_like.held_out:
        return findings
    # Scored as the members were.
    scoring = run_like.results["permutation"].params.get("scoring")
    where = "the held-out rows"
    n_held_out = len(X_test)
    if n_held_out > JOINT_ROWS:
        rows = np.sort(np.random.default_rng(run_like.seed).choice(
            n_held_out, JOINT_ROWS, replace=False))
        X_test = X_test.iloc[rows] if hasattr(X_test, "iloc") else X_test[rows]
        y_test = y_test.iloc[rows] if hasattr(y_test, "iloc") else np.asarray(y_test)[rows]
        where = f"a sample of {JOINT_ROWS:,} held-out rows"
        note = (f"The correlated groups were shuffled together on {where} of the "
                f"{n_held_out:,} (seeded): their intervals rest on those rows.")
        notes = getattr(run_like, "notes", None)
        if notes is not None and note not in notes:
            notes.append(note)
    names = [f"group {i}" for i in range(len(findings))]
    joint = permutation_importance(
        model, X_test, y_test, n_repeats=JOINT_REPEATS, scoring=scoring,
        random_state=run_like.seed, progress=progress,
        feature_groups={name: list(f.features) for name, f in zip(names, findings, strict=True)})
    interval = verdict_interval("permutation", joint)
    order = list(joint.feature_names)
    out = []
    for name, finding in zip(names, findings, strict=True):
        j = order.index(name)
        mean = float(joint.importances_mean[j])
        low, high = float(interval.low[j]), float(interval.high[j])
        text = (f" Shuffled together on {where}, the group's permutation "
                f"importance is {_g(mean)} (95% interval {_g(low)} to {_g(high)}, over "
                f"{interval.covers}).")
        details = {**finding.details, "joint_importance": mean, "joint_ci_low": low,
                   "joint_ci_high": high, "joint_interval_covers": interval.covers}
        out.append(dataclasses.replace(finding, message=finding.message + text,
                                       details=details))
    return out


def _g(value) -> str:
    return f"{value:.3g}"
