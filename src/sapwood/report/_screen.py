"""The verdict on one screen, however wide the table.

A table of hundreds of columns can hold dozens of entangled groups; the verdict's
full lines list each of them, and the warnings again. The one-screen renderings (the
terminal without ``--details``, the HTML verdict card) show the :data:`MAX_GROUPS`
groups with the largest joint held-out importance and count the rest in one line; the
full lines are in ``--details`` (the terminal) or folded under the card (HTML). A
correlated warning whose group the verdict already lists is not repeated as a warning
line there.
"""

from __future__ import annotations

from .._text import shorten

__all__ = ["MAX_GROUPS", "full_lists", "in_verdict", "screen_lines"]

MAX_GROUPS = 3
ENTANGLED = "- Entangled:"
WARNINGS = "- Warnings:"
# A warning in the line of warnings names at most this many features.
MAX_NAMED = 4


def screen_lines(verdict, warnings=(), every="every group with --details") -> list:
    """The verdict's lines for one screen: every line, except that of the entangled
    groups only the :data:`MAX_GROUPS` largest by joint importance are listed (largest
    first), then one line counting the others and saying where ``every`` one is; and
    the line of warnings counts the groups the verdict lists instead of naming them
    again."""
    lines = [_warnings_line(verdict, warnings) if line.startswith(WARNINGS) and warnings
             else line for line in verdict.lines]
    entangled = [line for line in lines if line.startswith(ENTANGLED)]
    if len(entangled) <= MAX_GROUPS or len(entangled) != len(verdict.groups):
        return lines
    ranked = sorted(range(len(entangled)), key=lambda i: -_joint(verdict.groups[i]))
    kept = [entangled[i] for i in ranked[:MAX_GROUPS]]
    others = [verdict.groups[i] for i in ranked[MAX_GROUPS:]]
    n_features = sum(len(group["features"]) for group in others)
    summary = (f"- And {len(others):,} more entangled groups ({n_features:,} features, "
               f"jointly less important): {every}")
    first = lines.index(entangled[0])
    rest = [line for line in lines if not line.startswith(ENTANGLED)]
    return rest[:first] + kept + [summary] + rest[first:]


def in_verdict(finding, verdict) -> bool:
    """Whether ``finding`` is a correlated group the verdict lists as entangled (its
    warning line would say it a second time)."""
    if verdict is None or finding.kind != "correlated":
        return False
    return any(list(finding.features) == list(group) for group in verdict.entangled)


def full_lists(verdict) -> list:
    """(heading, names) for each verdict status with its every feature, and each
    entangled group: what the one-screen lines shorten."""
    labels = {"relies_on": "Relied on", "through_group": "Relied on through their group",
              "uncertain": "Uncertain", "does_not": "Not relied on"}
    lists = {label: [] for label in labels.values()}
    for entry in verdict.features:
        status = "through_group" if entry.get("through_group") else entry["status"]
        if status in labels:
            lists[labels[status]].append(entry["feature"])
    found = [(label, names) for label, names in lists.items() if names]
    found += [(f"Entangled group {i}", group["features"])
              for i, group in enumerate(verdict.groups, start=1)]
    return found


def _warnings_line(verdict, warnings) -> str:
    parts = []
    for finding in warnings:
        if in_verdict(finding, verdict):
            continue
        names = [shorten(name) for name in finding.features]
        if len(names) > MAX_NAMED:
            names = names[:MAX_NAMED] + [f"{len(finding.features) - MAX_NAMED:,} more"]
        parts.append(finding.kind + (f" ({', '.join(names)})" if names else ""))
    groups = sum(in_verdict(finding, verdict) for finding in warnings)
    if groups:
        parts.append("correlated (the entangled group)" if groups == 1 else
                     f"correlated ({groups:,} groups: the entangled ones)")
    return WARNINGS + " " + "; ".join(parts)


def _joint(group) -> float:
    value = group.get("joint_importance")
    return float("-inf") if value is None else value
