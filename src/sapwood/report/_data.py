"""Checking the user's table: the target, the task, the features' encoding, enough rows.

Each check raises :class:`~sapwood._errors.InputError` (a ``ValueError``) with one line
naming the problem; the command line prints it and exits with code 2.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import InputError
from ._numbers import numbers_note, read_numbers

__all__ = ["Prepared", "check_enough_rows", "check_magnitude", "check_output",
           "check_target", "column_list", "detect_task", "did_you_mean", "encode_features",
           "parse_dates", "prepare", "prepare_xy"]

# Integer targets with at most this many distinct values are taken as class labels.
MAX_CLASSES_AUTO = 20
# A held-out evaluation needs at least this many rows, this many on each side of the
# split, and this many rows of every class (see check_enough_rows).
MIN_ROWS = 10
MIN_PER_SIDE = 3
MIN_PER_CLASS = 2
# A regression target's squares must stay within float64 (about 1.8e308).
MAX_MAGNITUDE = 1e150
# A text column is read as dates when at least this share of its values (not missing)
# parse with one format; the others become missing.
DATE_SHARE = 0.95
_DATE_SAMPLE = 200
# What a date looks like before any parsing is tried: digits in three groups joined by
# '-' or '/' (2024-03-01, 2024/3/1, 01/03/2024, 1-3-24) or dots with a 4-digit year
# (01.03.2024), a time after it or not.
_DATE_LIKE = re.compile(r"\s*(\d{4}[-/]\d{1,2}[-/]\d{1,2}|\d{1,2}[-/]\d{1,2}[-/]\d{2,4}"
                        r"|\d{1,2}\.\d{1,2}\.\d{4})"
                        r"([T ]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*([AaPp][Mm])?"
                        r"(Z|[+-]\d{2}:?\d{2})?)?\s*")


@dataclass
class Prepared:
    """A table split into encoded features and a checked target."""

    X: pd.DataFrame
    y: pd.Series
    task: str
    target: str
    encodings: dict = field(default_factory=dict)
    n_missing: int = 0
    notes: list = field(default_factory=list)  # what the CLI says about reading it
    # Positions (0 = the first row given) of the rows kept: None when every row is kept,
    # else the rows whose target is not missing.
    kept: np.ndarray | None = None
    # The task was detected from the target (task "auto"), not given.
    task_detected: bool = False


def _plain(value):
    """A value from the data as the user wrote it: 3, not np.int64(3)."""
    return value.item() if hasattr(value, "item") else value


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def column_list(columns, limit: int = 12) -> str:
    """The first ``limit`` column names, comma-separated, and how many there are."""
    names = [str(column) for column in columns]
    more = f", ... ({len(names)} columns)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def did_you_mean(name: str, columns) -> str:
    """``" (did you mean 'Sales'?)"`` for the columns closest to a misspelt ``name`` (the
    same name in other case first), or ``""``."""
    names = [str(column) for column in columns]
    same = [column for column in names if column.casefold() == str(name).casefold()]
    close = same or difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(column) for column in close) + "?)"


def _delimiter_hint(name: str, columns) -> str:
    """A hint when the columns read are one column holding a separated header."""
    if len(columns) > 2:
        return ""
    for column in map(str, columns):
        for delimiter in (";", "\t", ","):
            if delimiter in column and name in column.split(delimiter):
                return (f" (the header looks separated by {delimiter!r}: read the file with "
                        f"that delimiter, --sep {delimiter!r})")
    return ""


def check_target(table: pd.DataFrame, target: str) -> pd.Series:
    """The target column, checked: present, features left, at least 2 rows."""
    if target not in table.columns:
        hint = _delimiter_hint(target, table.columns)
        raise InputError(f"target column {target!r} not found"
                         f"{'' if hint else did_you_mean(target, table.columns)}; columns "
                         f"are: {column_list(table.columns)}{hint}")
    if table.shape[1] < 2:
        raise InputError(f"no feature columns: the table has only the target {target!r}")
    if table.shape[0] < 2:
        raise InputError(f"need at least 2 data rows to fit and evaluate a model; "
                         f"got {table.shape[0]}")
    return table[target]


def _check_y(y: pd.Series, target: str):
    """At least two rows, not constant (missing values left out already)."""
    if len(y) < 2:
        raise InputError(f"need at least 2 data rows to fit and evaluate a model; "
                         f"got {len(y)}")
    if y.nunique() < 2:
        raise InputError(f"target column {target!r} is constant ({_plain(y.iloc[0])!r} in every "
                         "row): there is nothing to explain")


def check_enough_rows(data: Prepared, test_size: float):
    """Refuse a table too small for a held-out evaluation, with the rule it breaks:
    at least :data:`MIN_ROWS` rows, at least :data:`MIN_PER_SIDE` rows on each side of
    the split, and (classification) at least :data:`MIN_PER_CLASS` rows of every class,
    so that both sides can hold one."""
    n = len(data.y)
    if n < MIN_ROWS:
        raise InputError(f"too little data: {n} rows; a held-out evaluation needs at least "
                         f"{MIN_ROWS} (some to train on, some to score and permute)")
    # train_test_split's own rounding: the held-out side gets ceil(test_size * n) rows.
    n_test = math.ceil(test_size * n)
    if min(n_test, n - n_test) < MIN_PER_SIDE:
        raise InputError(f"too little data: --test-size {test_size:g} of {n} rows leaves "
                         f"{n_test} held out and {n - n_test} to train on; each side needs "
                         f"at least {MIN_PER_SIDE}")
    if data.task == "classification":
        counts = data.y.value_counts()
        rare = counts[counts < MIN_PER_CLASS]
        if len(rare):
            label, count = rare.index[0], int(rare.iloc[0])
            raise InputError(f"too little data: class {str(label)!r} of target "
                             f"{data.target!r} has {count} row; every class needs at least "
                             f"{MIN_PER_CLASS} (one to train on, one to hold out)"
                             + (f" ({len(rare)} classes have fewer)" if len(rare) > 1
                                else "") + _regression_hint(data, len(counts)))


def _regression_hint(data: Prepared, n_classes: int) -> str:
    """For integer targets taken as classes: the hint that they may be a quantity."""
    y = data.y
    if n_classes <= 2 or not pd.api.types.is_numeric_dtype(y) \
            or pd.api.types.is_bool_dtype(y):
        return ""
    how = "taken as classes" if data.task_detected else "read as classes"
    whole = bool(np.all(np.mod(y.dropna().to_numpy(dtype=np.float64), 1) == 0))
    kind = "integer values" if whole else "numbers"
    return (f"; {data.target!r} holds {n_classes} {kind} {how}: if it is a "
            "quantity, use --task regression (task='regression')")


def check_output(path, option: str, inputs=()) -> Path:
    """An output path, checked before any work: not a directory, in a folder that
    exists, and not one of ``inputs`` (the data or model file read, however spelt: a
    report over the data would destroy it)."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{option} {path}: is a directory")
    if not path.parent.exists():
        raise InputError(f"{option} {path}: directory {path.parent} does not exist")
    for source in inputs:
        if _same_file(path, Path(source)):
            raise InputError(f"{option} {path}: is the input file {source}; choose another "
                             "name (sapwood never writes over its inputs)")
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_magnitude(values: pd.Series, what: str):
    """Regression needs finite values whose squares stay finite: squared errors, R²
    and impurities of values beyond :data:`MAX_MAGNITUDE` overflow float64."""
    numbers = values.to_numpy(dtype=np.float64)
    infinite = int(np.isinf(numbers).sum())
    if infinite:
        raise InputError(f"{what} has {infinite} infinite value(s); drop or fix those rows")
    largest = float(np.nanmax(np.abs(numbers))) if len(numbers) else 0.0
    if largest > MAX_MAGNITUDE:
        raise InputError(f"{what} has values up to {largest:.3g} in magnitude; squared "
                         f"errors overflow beyond {MAX_MAGNITUDE:.0e}: rescale it (e.g. "
                         "divide by a power of ten)")


def _check_feature_range(X: pd.DataFrame):
    """Trees read features as float32: an infinite value, or one beyond float32's
    range (it would become infinite), is bad input, named by its column."""
    limit = float(np.finfo(np.float32).max)
    with np.errstate(invalid="ignore"):
        bad = (np.abs(X.to_numpy(dtype=np.float64)) > limit).sum(axis=0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(f"feature column {str(X.columns[first])!r} has {int(bad[first])} "
                         "infinite or "
                         f"too large value(s) (beyond ±{limit:.2g}, the float32 range the "
                         "trees read); drop or fix those rows")


def detect_task(y: pd.Series) -> str:
    """``"classification"`` for non-numeric targets and integer targets with at most
    :data:`MAX_CLASSES_AUTO` distinct values, else ``"regression"``."""
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return "classification"
    values = y.to_numpy(dtype=np.float64)
    if np.all(np.isfinite(values)) and np.all(values == np.round(values)) \
            and y.nunique() <= MAX_CLASSES_AUTO:
        return "classification"
    return "regression"


def encode_features(frame: pd.DataFrame):
    """Every column as float64: numbers kept, booleans 0/1, dates as seconds since 1970,
    text and categorical columns as ordinal codes (categories in sorted order, or a
    categorical column's own order); missing values stay NaN.

    Returns the encoded frame and ``{column: [category, ...]}`` for encoded columns.
    """
    encoded = {}
    encodings = {}
    for column in frame.columns:
        values = frame[column]
        name = str(column)
        if pd.api.types.is_bool_dtype(values):
            encoded[name] = values.astype("float64")
        elif pd.api.types.is_datetime64_any_dtype(values):
            stamps = pd.to_datetime(values)
            seconds = (stamps - pd.Timestamp("1970-01-01", tz=stamps.dt.tz)).dt.total_seconds()
            encoded[name] = seconds.astype("float64")
        elif pd.api.types.is_numeric_dtype(values):
            encoded[name] = values.astype("float64")
        else:
            if isinstance(values.dtype, pd.CategoricalDtype):
                categories = list(values.cat.categories)
            else:
                categories = sorted(values.dropna().astype(str).unique())
                values = values.where(values.isna(), values.astype(str))
            codes = pd.Categorical(values, categories=categories).codes.astype("float64")
            codes[codes < 0] = np.nan
            encoded[name] = pd.Series(codes, index=frame.index)
            encodings[name] = [str(c) for c in categories]
    return pd.DataFrame(encoded, index=frame.index), encodings


def parse_dates(frame: pd.DataFrame):
    """Text columns holding dates (``2024-03-01``, ``2024-03-01 12:00:00``,
    ``01/03/2024``) as datetimes, so that :func:`encode_features` reads them as seconds
    since 1970 rather than as sorted categories.

    A column is taken as dates only when its first values look like dates and at least
    :data:`DATE_SHARE` of its values (not missing) parse with one format: ISO 8601, or a
    format pandas guesses from its first value (month first, or day first when that
    parses more values; day first first for dates with dots, 01.03.2024); the values
    that do not parse become missing. Datetimes with a time zone
    are read in UTC.

    Returns the frame and ``{column: (format, n_unparsed)}`` for the columns converted.
    """
    converted = {}
    found = {}
    for position, column in enumerate(frame.columns):
        values = frame.iloc[:, position]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values) \
                or pd.api.types.is_datetime64_any_dtype(values) \
                or isinstance(values.dtype, pd.CategoricalDtype):
            continue
        present = values.dropna()
        # A look at the first values first: most text columns are not dates.
        sample = present.iloc[:_DATE_SAMPLE]
        if sample.empty or not all(isinstance(value, str) for value in sample) \
                or sample.str.fullmatch(_DATE_LIKE).mean() < DATE_SHARE:
            continue
        if pd.api.types.infer_dtype(present, skipna=True) != "string":
            continue
        # The rest is judged by parsing: nearly all must parse with one format.
        parsed = _parsed_dates(present.str.strip())
        if parsed is None:
            continue
        stamps, form = parsed
        n_unparsed = int(stamps.isna().sum())
        converted[position] = stamps.reindex(values.index)
        found[str(column)] = (form, n_unparsed)
    if not converted:
        return frame, found
    frame = frame.copy()
    for position, stamps in converted.items():
        frame.isetitem(position, stamps)
    return frame, found


def _parsed_dates(text: pd.Series):
    """(datetimes, format) when at least :data:`DATE_SHARE` of ``text`` parse with
    one format, else None."""
    import warnings

    from pandas.tseries.api import guess_datetime_format

    need = DATE_SHARE * len(text)
    candidates = ["ISO8601"]
    first = text.iloc[0]
    # 01.03.2024 is day first where dots are written; 01/03/2024 month first unless
    # only day first parses (more of) the values.
    for dayfirst in ((True, False) if "." in first else (False, True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            form = guess_datetime_format(first, dayfirst=dayfirst)
        if form and form not in candidates and "%d" in form and "%m" in form:
            candidates.append(form)
    def parse(values, form):
        # Each distinct value parsed once: dates repeat, and parsing is the slow part.
        codes, distinct = pd.factorize(values)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                stamps = pd.to_datetime(distinct, format=form, errors="coerce", utc=True)
            except (ValueError, TypeError, OverflowError):
                return None
        return pd.Series(stamps.take(codes), index=values.index)

    # The formats that read the first values, best first (failing values are slow to
    # parse: a format is tried on the whole column only when it reads the first ones).
    sample = text.iloc[:_DATE_SAMPLE]
    shares = {}
    for form in candidates:
        stamps = parse(sample, form)
        if stamps is not None and stamps.notna().mean() >= DATE_SHARE:
            shares[form] = stamps.notna().mean()
    best = None
    for form in sorted(shares, key=lambda form: -shares[form]):
        stamps = parse(text, form)
        if stamps is None:
            continue
        n = int(stamps.notna().sum())
        if n >= need and (best is None or n > best[0]):
            best = (n, stamps, form)
        if n == len(text):
            break
    if best is None:
        return None
    return best[1], "ISO 8601" if best[2] == "ISO8601" else best[2]


def _date_note(found: dict, datetimes: list) -> str:
    """The note naming the columns read as dates."""
    names = [*found, *datetimes]
    shown = ", ".join(repr(name) for name in names[:8]) + (
        f" and {len(names) - 8} more" if len(names) > 8 else "")
    forms = sorted({form for form, _ in found.values() if form != "ISO 8601"})
    unparsed = sum(n for _, n in found.values())
    return (f"date column{'s' if len(names) > 1 else ''} {shown} read as seconds since "
            "1970-01-01 (UTC)"
            + (f", read with the format {' / '.join(forms)}" if forms else "")
            + (f"; {unparsed} value(s) that are not dates left missing" if unparsed else ""))


def prepare(table: pd.DataFrame, target: str, task: str = "auto") -> Prepared:
    """Check the target column ``target`` of ``table``, settle the task and encode the
    other columns as features."""
    check_target(table, target)
    return prepare_xy(table.drop(columns=[target]), table[target], task)


def encoded_features(X: pd.DataFrame, notes: list):
    """``(X, encodings)``: the features as every target's preparation reads them, date
    columns read as dates (a note added to ``notes``), every column encoded
    (:func:`encode_features`) and its range checked."""
    X, found = parse_dates(X)
    datetimes = [str(column) for position, column in enumerate(X.columns)
                 if str(column) not in found
                 and pd.api.types.is_datetime64_any_dtype(X.iloc[:, position])]
    if found or datetimes:
        notes.append(_date_note(found, datetimes))
    X, encodings = encode_features(X)
    _check_feature_range(X)
    return X, encodings


def prepare_xy(X: pd.DataFrame, y: pd.Series, task: str = "auto") -> Prepared:
    """Check the target ``y`` (named by its name), settle the task and encode ``X``."""
    if task not in ("auto", "classification", "regression"):
        raise InputError(f"task must be 'auto', 'classification' or 'regression'; got "
                         f"{task!r}")
    target = str(y.name)
    if X.shape[1] == 0:
        raise InputError("no feature columns: X has none")
    # A number column with a stray "?" is numbers, not text codes (report/_numbers.py).
    X, found = read_numbers(X)
    numeric_y, found_y = read_numbers(y.to_frame(name=target))
    y = numeric_y.iloc[:, 0].rename(y.name)
    notes = [numbers_note({**found, **found_y}, len(y))] if found or found_y else []
    kept = None
    missing = y.isna().to_numpy()
    if missing.any():
        n_missing, n_left = int(missing.sum()), int((~missing).sum())
        if n_left < 2:
            raise InputError(f"target column {target!r} has {n_missing} missing value(s) and "
                             f"{n_left} row(s) with a value; need at least 2 data rows to "
                             "fit and evaluate a model")
        kept = np.flatnonzero(~missing)
        X, y = X.iloc[kept], y.iloc[kept]
        notes.append(f"{n_missing} row(s) whose target {target!r} is missing left out; "
                     f"{n_left} rows remain")
    _check_y(y, target)
    detected = task == "auto"
    if detected:
        task = detect_task(y)
    if task == "regression":
        if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
            raise InputError(f"target column {target!r} is not numeric, so it cannot be "
                             "used for regression; use --task classification")
        y = y.astype("float64")
        check_magnitude(y, f"target column {target!r}")
    elif pd.api.types.is_float_dtype(y) and np.all(y == np.round(y)):
        y = y.astype("int64")
    elif not pd.api.types.is_numeric_dtype(y):
        y = y.astype(str)
    X, encodings = encoded_features(X, notes)
    return Prepared(X=X, y=y.rename(target), task=task, target=target,
                    encodings=encodings, n_missing=int(X.isna().sum().sum()), notes=notes,
                    kept=kept, task_detected=detected)
