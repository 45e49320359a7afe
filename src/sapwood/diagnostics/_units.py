"""Repeated units: a column whose values repeat in blocks that look like units (a
person, a firm, a patient measured many times), when the rows are split at random.

A random split then puts rows of one unit on both sides: the model scores by
recognising units it was trained on, which overstates the held-out score and the
importance of the unit's column (and of anything constant within a unit) for new
units. A column is reported when

- it repeats: at least :data:`MIN_UNITS` distinct values on at least :data:`MIN_ROWS`
  rows, at least :data:`MIN_REPEAT` rows per value on median, and at most half as
  many values as rows (fewer values than that is an ordinary category: a region, a
  product type);

and its name or its alike rows say the values are units (blocks support them, alone
they are not enough: a table grouped by a shared covariate lies in blocks too):

- its name reads like an identifier of units (its last word one of
  :data:`UNIT_WORDS`, or a stem and ``id``: ``person_id``, ``firmID``, ``pid``);
- its rows lie in blocks: each value's rows are one run of consecutive rows (a panel
  stored unit by unit) while the column is not sorted (a sorted column, a year or an
  income band, lies in blocks by construction);
- a value's rows are alike in other columns: at least :data:`ALIKE_COLUMNS` other
  columns (each with two or more values) are constant within every value of it (a
  person's sex and schooling), while some other column varies within them.

Definition and the false-alarm rate measured on real tables: docs/measures.md,
'Warnings'.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .._text import quoted
from ._finding import Finding

__all__ = ["find_repeated_units"]

MIN_ROWS = 40
MIN_UNITS = 8
MIN_REPEAT = 2
ALIKE_COLUMNS = 2
UNIT_WORDS = frozenset({
    "id", "ids", "key", "subject", "subj", "person", "pid", "patient", "firm", "company",
    "household", "hh", "individual", "participant", "respondent", "user", "customer",
    "client", "member", "unit", "entity", "student", "panel", "identifier"})


def find_repeated_units(X: pd.DataFrame, *, command=None) -> list:
    """Findings of kind ``"repeated units"`` for the columns of ``X`` (the table in its
    own row order) that look like units. ``command``: a function of the column's name
    giving the command line that splits by it, shown in the message."""
    X = pd.DataFrame(X)
    if len(X) < MIN_ROWS:
        return []
    found = []
    codes = {str(c): pd.factorize(X[c], use_na_sentinel=True)[0] for c in X.columns}
    for column in X.columns:
        name = str(column)
        unit = codes[name]
        present = unit >= 0
        n = int(present.sum())
        if n < MIN_ROWS:
            continue
        counts = np.bincount(unit[present])
        n_units = len(counts)
        if n_units < MIN_UNITS or 2 * n_units > n or np.median(counts) < MIN_REPEAT:
            continue
        evidence = _evidence(name, X[column].to_numpy(), unit, present, n_units, codes)
        if not evidence:
            continue
        how = command(name) if command is not None else None
        found.append(Finding(
            kind="repeated units", features=(name,),
            message=(f"{quoted(name)} repeats in blocks that look like units ({n_units:,} "
                     f"values, {np.median(counts):g} rows each on median; "
                     f"{'; '.join(evidence)}). A random split puts rows of one unit on "
                     f"both sides, so the held-out score and the importance of "
                     f"{quoted(name)} (and of what is constant within a unit) are "
                     "overstated for new units: the model recognises units it has seen. "
                     "If new rows come from new units, split by it"
                     + (f": {how}" if how else " (groups=)") + "."),
            details={"n_units": n_units, "median_rows": float(np.median(counts)),
                     "evidence": evidence}))
    return found


def _evidence(name, column_values, unit, present, n_units, codes) -> list:
    out = []
    if _named_like_units(name):
        out.append("named like an identifier")
    values = unit[present]
    runs = 1 + int(np.count_nonzero(values[1:] != values[:-1]))
    if runs == n_units and not _sorted(column_values[present]):
        out.append("each value's rows are consecutive")
    constant, varying = [], False
    for other, codes_other in codes.items():
        if other == name:
            continue
        both = present & (codes_other >= 0)
        if both.sum() < 2 or len(np.unique(codes_other[both])) < 2:
            continue
        pairs = pd.DataFrame({"u": unit[both], "v": codes_other[both]})
        per_unit = pairs.groupby("u")["v"].nunique()
        if (per_unit <= 1).all():
            constant.append(other)
        elif (per_unit > 1).mean() > 0.5:
            varying = True
    if len(constant) >= ALIKE_COLUMNS and varying:
        shown = ", ".join(quoted(c) for c in constant[:3])
        more = f" and {len(constant) - 3} more" if len(constant) > 3 else ""
        out.append(f"{shown}{more} constant within each value")
    # Blocks alone are not enough: a table grouped by a shared covariate (strikes by
    # the month's production) lies in blocks too.
    return out if out != ["each value's rows are consecutive"] else []


def _named_like_units(name: str) -> bool:
    """The name's last word (split at separators and camelCase) is a word of
    :data:`UNIT_WORDS` or made of a short stem and ``id`` (``personid``, ``idcode``,
    ``custid``): ``person_id``, ``firm``, not ``unit_price``."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]
    stems = UNIT_WORDS | {"cust", "emp", "stud", "pat", "p", "sub", "no", "code", "num", "nr"}
    if not words:
        return False
    last = words[-1]  # "person_id", "firm"; not "unit_price", "user_rating"
    return (last in UNIT_WORDS or (last.endswith("id") and last[:-2] in stems)
            or (last.startswith("id") and last[2:] in stems))


def _sorted(values) -> bool:
    """Whether the values run in sorted order (either way): a sorted column (a year, an
    income band) lies in consecutive blocks by construction, which says nothing of
    units."""
    try:
        steps = np.diff(np.asarray(values, dtype=np.float64))
    except (TypeError, ValueError):
        text = [str(v) for v in values]
        return text == sorted(text) or text == sorted(text, reverse=True)
    return bool((steps >= 0).all() or (steps <= 0).all())
