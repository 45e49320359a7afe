"""The checks take the frames the command line reads: numbers, text, categories,
booleans, dates and missing values, as they come.

A column is categorical when it is named in ``categorical`` (numeric codes the caller
made from text) or when its values are not numbers: a pandas ``category`` column, or
text (``object`` / ``string``) whose non-missing values do not all read as numbers.
Every other column is numeric: booleans as 0 / 1, pandas' nullable integers and floats
with ``<NA>`` as NaN, dates and times as nanoseconds since 1970, text that reads as
numbers as those numbers. Missing values (None, NaN, NaT, ``<NA>``) stay missing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["categorical_columns", "numeric_values"]


def categorical_columns(X: pd.DataFrame, categorical=()) -> set:
    """Names (as str) of the columns of ``X`` to treat as categories: those named in
    ``categorical`` and those whose values are not numbers."""
    names = {str(c) for c in categorical}
    for column in X.columns:
        if _is_text(X[column]):
            names.add(str(column))
    return names


def numeric_values(values: pd.Series) -> np.ndarray:
    """A non-categorical column as float64, NaN where a value is missing."""
    if isinstance(values.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_any_dtype(
            values.dtype):
        stamps = pd.to_datetime(values)
        out = stamps.astype("int64").to_numpy(dtype=np.float64)
        out[stamps.isna().to_numpy()] = np.nan
        return out
    if pd.api.types.is_timedelta64_dtype(values.dtype):
        out = values.astype("int64").to_numpy(dtype=np.float64)
        out[values.isna().to_numpy()] = np.nan
        return out
    if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
        values = pd.to_numeric(values, errors="coerce")
    return values.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)


def _is_text(values: pd.Series) -> bool:
    if isinstance(values.dtype, pd.CategoricalDtype):
        return True
    if not (values.dtype == object or pd.api.types.is_string_dtype(values.dtype)):
        return False
    present = values.dropna()
    if present.empty:
        return False
    if present.map(lambda v: isinstance(v, bool | np.bool_)).all():
        return False
    return bool(pd.to_numeric(present, errors="coerce").isna().any())
