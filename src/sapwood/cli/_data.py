"""Reading the user's files: a CSV or Parquet table, a model file; every failure one line
naming the problem.

What the table then must satisfy (a target, enough rows, features the trees can read)
is the library's to check (:mod:`sapwood.report._data`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..report._data import check_output
from ..report._models import LoadedModel, load_model
from ._errors import InputError

__all__ = ["check_output", "load_model_file", "load_table", "read_model_file"]

PARQUET_SUFFIXES = (".parquet", ".pq")
_SNIFF_BYTES = 8192
# Share of control bytes above which a file is taken as binary rather than text.
_BINARY_SHARE = 0.05
_TEXT_CONTROLS = {9, 10, 12, 13}


def load_table(path) -> pd.DataFrame:
    """Read a CSV or Parquet file, turning every failure into an :class:`InputError`."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"data file not found: {path}")
    if path.is_dir():
        raise InputError(f"data path is a directory, not a file: {path}")
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if size == 0:
        raise InputError(f"data file is empty: {path}")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        table = _read_parquet(path)
    else:
        table = _read_csv(path, head)
    if table.shape[1] == 0:
        raise InputError(f"data file has no columns: {path}")
    if table.shape[0] == 0:
        raise InputError(f"data file has a header but no data rows: {path}")
    return table


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError("reading Parquet needs pyarrow: pip install 'sapwood[parquet]'"
                         ) from None
    try:
        return pd.read_parquet(path)
    except Exception as error:  # pyarrow raises many types for corrupt files
        raise InputError(f"not a readable Parquet file: {path} ({_first_line(error)})"
                         ) from None


def _read_csv(path: Path, head: bytes) -> pd.DataFrame:
    if _looks_binary(head):
        raise InputError(f"not a CSV text file (binary content): {path}")
    try:
        return pd.read_csv(path)
    except UnicodeDecodeError:
        try:
            return pd.read_csv(path, encoding="latin-1")
        except Exception as error:
            raise InputError(f"malformed CSV in {path}: {_first_line(error)}") from None
    except pd.errors.EmptyDataError:
        raise InputError(f"data file has no columns: {path}") from None
    except (pd.errors.ParserError, ValueError) as error:
        raise InputError(f"malformed CSV in {path}: {_first_line(error)}") from None


def _looks_binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    controls = sum(1 for byte in head if (byte < 32 and byte not in _TEXT_CONTROLS)
                   or byte == 127)
    return controls > _BINARY_SHARE * max(len(head), 1)


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def read_model_file(path):
    """The :class:`~sapwood.TreeEnsemble` in a sapwood, XGBoost (JSON / UBJSON) or
    LightGBM (text) model file; every failure is a one-line :class:`InputError`."""
    import sapwood

    path = Path(path)
    if not path.exists():
        raise InputError(f"model file not found: {path}")
    if path.is_dir():
        raise InputError(f"model path is a directory, not a file: {path}")
    if path.stat().st_size == 0:
        raise InputError(f"model file is empty: {path}")
    try:
        return sapwood.from_model(path)
    except Exception as error:  # each reader has its own error types for damage
        problem = (str(error).strip() or type(error).__name__).splitlines()[0]
        if len(problem) > 200:
            problem = problem[:197] + "..."
        raise InputError(f"cannot read model file {path}: {problem}") from None


def load_model_file(path) -> LoadedModel:
    """A fitted model from a saved sapwood, XGBoost or LightGBM file."""
    return load_model(read_model_file(path), path)
