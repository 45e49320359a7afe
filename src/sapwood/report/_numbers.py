"""Text columns that hold numbers: read as numbers, a few cells that say "missing"
left missing.

A table exported by a spreadsheet or a survey tool often writes a missing number as a
token: ``?``, ``n/a``, ``NA``, ``-``, ``.``, an empty cell, ``missing``. One such cell
makes pandas read the whole column as text, which the trees would then see as
categories sorted as strings ("10.2" before "2.5"): a strong numeric column loses
most of its importance, and a column whose codes follow the file's order looks like a
key. The rule, for each column of text (not a categorical, not booleans): when every
cell that is not missing is a number or one of :data:`MISSING_TOKENS` (compared
without case or surrounding spaces), and the tokens fill at most :data:`STRAY_SHARE`
of the column's cells, the column is read as numbers with those cells missing, and a
note names the column, the tokens and their count. A column with other text in it
("none of the above", "3 to 5") is genuine text and stays as it is; so does a column
where the tokens are more than a few cells (they may mean something: "-" for zero).
A column of text whose every cell is a number (a frame built from JSON) is read as
numbers too.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["MISSING_TOKENS", "STRAY_SHARE", "numbers_note", "read_numbers"]

# Cells that mean "no value" in exported tables, compared in lower case after stripping.
MISSING_TOKENS = ("?", "n/a", "na", "nan", "-", "--", ".", "", "missing", "null", "none")
# The tokens may fill at most this share of a column's cells.
STRAY_SHARE = 0.05
# The first values looked at before the whole column: most text columns are not numbers.
_SAMPLE = 200


def read_numbers(frame: pd.DataFrame):
    """``frame`` with its text columns of numbers read as numbers (the module's rule).

    Returns the frame (the caller's is left as it was) and ``{column: {token: count}}``
    for the columns converted (an empty dict: no token, every cell a number)."""
    converted, found = {}, {}
    for position, column in enumerate(frame.columns):
        numbers, tokens = _as_numbers(frame.iloc[:, position])
        if numbers is not None:
            converted[position], found[str(column)] = numbers, tokens
    if not converted:
        return frame, found
    frame = frame.copy()
    for position, numbers in converted.items():
        frame.isetitem(position, numbers)
    return frame, found


def _as_numbers(values: pd.Series):
    if not (values.dtype == object or pd.api.types.is_string_dtype(values.dtype)) \
            or isinstance(values.dtype, pd.CategoricalDtype):
        return None, {}
    present = values.dropna()
    if present.empty or not _numbers_or_tokens(present.iloc[:_SAMPLE]).all():
        return None, {}
    text = present.astype(str).str.strip()
    numbers = pd.to_numeric(text, errors="coerce")
    bad = numbers.isna()
    if bad.all():
        return None, {}
    tokens = text[bad].str.lower()
    if not tokens.isin(MISSING_TOKENS).all() or bad.sum() > STRAY_SHARE * len(values):
        return None, {}
    counts = text[bad].value_counts(sort=True)
    return (numbers.reindex(values.index).astype("float64"),
            {str(token): int(count) for token, count in counts.items()})


def _numbers_or_tokens(values: pd.Series) -> pd.Series:
    text = values.astype(str).str.strip()
    return pd.to_numeric(text, errors="coerce").notna() | text.str.lower().isin(
        MISSING_TOKENS)


def numbers_note(found: dict, n_rows: int) -> str:
    """The note naming the columns read as numbers, their tokens and counts."""
    parts = []
    for column, tokens in list(found.items())[:8]:
        if not tokens:
            parts.append(f"{column!r} (every cell a number)")
            continue
        cells = sum(tokens.values())
        shown = ", ".join(f"{token!r}" + (f" x{count}" if len(tokens) > 1 else "")
                          for token, count in tokens.items())
        parts.append(f"{column!r} ({cells} of {n_rows:,} cells {shown} read as missing)")
    more = f" and {len(found) - 8} more" if len(found) > 8 else ""
    return f"read as numbers, not text: {'; '.join(parts)}{more}"
