"""Leakage of a survival target: one column alone tells, on the held-out rows, whether
a row's event was seen or how long it was followed, almost perfectly.

The survival analogue of :mod:`._leakage`'s rule, applied to the two parts of the
target separately, with that module's trees, thresholds and evidence:

- **the event**: a column that alone predicts whether the event was seen (a follow-up
  status, a cause of death, a date of death filled in only for the dead) with balanced
  accuracy near 1 on the held-out rows; whether a row is censored depends on how long
  it was followed, which honest features at the start cannot know;
- **the time**: a column that alone predicts the observed time with R² near 1 (the
  length of follow-up itself, a date of the last visit).

Either is recorded at the end of follow-up, not at its start, and a model that reads it
predicts the past. As in :mod:`._leakage`, a column whose information the other columns
share is not reported. The rule's false-alarm and detection rates by simulation:
``tests/diagnostics/test_survival_leakage.py``.
"""

from __future__ import annotations

import dataclasses

from ..importance._engine._survival_scores import survival_arrays
from ._leakage import find_leakage

__all__ = ["find_survival_leakage"]


def find_survival_leakage(X_train, y_train, X_test, y_test, *, categorical=(),
                          random_state=0) -> list:
    """Findings of kind ``"leakage"`` for a survival target (``y_train``, ``y_test``:
    structured arrays of event and time): the columns that alone predict the event or
    the time almost perfectly (module docstring), each once, the event first."""
    event_train, time_train = survival_arrays(y_train)
    event_test, time_test = survival_arrays(y_test)
    names = {"event": "whether the event was seen", "time": "the observed time"}
    found, seen = [], set()
    for part, train, test, task in (("event", event_train, event_test, "classification"),
                                    ("time", time_train, time_test, "regression")):
        for finding in find_leakage(X_train, train, X_test, test, task,
                                    categorical=categorical, random_state=random_state):
            if finding.features in seen:
                continue
            seen.add(finding.features)
            message = finding.message.replace("the held-out target",
                                              f"{names[part]} on the held-out rows")
            message = message.replace("derived from the target or recorded after it",
                                      "recorded at or after the end of follow-up (a "
                                      "status, a date of death or of the last visit)")
            found.append(dataclasses.replace(
                finding, message=message, details={**finding.details, "part": part}))
    return found
