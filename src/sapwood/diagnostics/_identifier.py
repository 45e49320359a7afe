"""Identifier columns: a key with one value per row, which a model can only memorise.

A column is reported when the model uses it and it has (nearly) one value per row
(distinct non-missing values at least :data:`UNIQUE_SHARE` of its non-missing values,
on at least :data:`MIN_ROWS` rows) and looks like a key rather than a measurement:

- text codes (the column was text or categorical: names, e-mail addresses, customer
  codes), or
- integers in a dense range (``max - min + 1`` at most :data:`DENSE_RANGE` times the
  number of distinct values: 0..n-1, 1001..1000+n), or
- values in row order (|Spearman correlation with the row position| at least
  :data:`ROW_ORDER`: a running number, a timestamp of entry).

A continuous measurement with unique values (an income with cents, a price, a uniform
draw) is not reported, nor are unique integers spread over a wide range in random
order (salaries in dollars): those can carry information about new rows. The rule errs
on the side of silence: a random-looking numeric key (a hashed ID stored as a number)
is missed.

Definition: docs/measures.md, section 'Warnings'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._text import quoted
from ._columns import categorical_columns, numeric_values
from ._finding import Finding

__all__ = ["find_identifiers"]

UNIQUE_SHARE = 0.95
MIN_ROWS = 20
DENSE_RANGE = 2.0
ROW_ORDER = 0.99


def find_identifiers(X: pd.DataFrame, *, categorical=(), used=None) -> list:
    """Findings of kind ``"identifier"`` for the columns of ``X`` that look like keys.

    Parameters
    ----------
    X : DataFrame
        The features, as read (text, category, boolean and date columns, missing
        values) or as the model sees them (text columns as codes).
    categorical : iterable of str
        Numeric columns whose original values were text or categories (codes); text
        and category columns are found by themselves.
    used : mapping of str to bool, optional
        Whether the model uses each column (e.g. MDI above zero); an unused column is
        not reported.
    """
    X = pd.DataFrame(X)
    categorical = categorical_columns(X, categorical)
    found = []
    for column in X.columns:
        name = str(column)
        if used is not None and not used.get(name, True):
            continue
        values = X[column].dropna()
        n = len(values)
        if n < MIN_ROWS:
            continue
        n_distinct = int(values.nunique())
        if n_distinct < UNIQUE_SHARE * n:
            continue
        evidence = _key_evidence(values, name in categorical, n_distinct)
        if evidence is None:
            continue
        found.append(Finding(
            kind="identifier", features=(name,),
            message=(f"{quoted(name)} has {n_distinct:,} distinct values in {n:,} rows, "
                     f"{evidence}: it looks like an identifier (a key, not a measurement). "
                     "A model that uses it memorises rows, and its importance says nothing "
                     "about new data; drop it, or find out why it predicts."),
            details={"n_distinct": n_distinct, "n_rows": n, "evidence": evidence}))
    return found


def _key_evidence(values: pd.Series, text: bool, n_distinct: int) -> str | None:
    """Why the column looks like a key, or None."""
    if text:
        return "text codes"
    numbers = numeric_values(values)
    if not np.isfinite(numbers).all():
        return None
    if np.all(numbers == np.round(numbers)):
        low, high = numbers.min(), numbers.max()
        if high - low + 1 <= DENSE_RANGE * n_distinct:
            return f"integers from {low:.0f} to {high:.0f}"
    rho = stats.spearmanr(np.arange(len(numbers)), numbers).statistic
    if np.isfinite(rho) and abs(rho) >= ROW_ORDER:
        return f"in row order (Spearman {rho:+.3f} with the row position)"
    return None
