"""Reading the user's files: a CSV (comma, semicolon or tab separated, found from its
first lines; also compressed, .csv.gz, .bz2, .xz, or a .zip of one CSV), Excel (.xlsx)
or Parquet table, a model file; every failure one line naming the problem.

What the table then must satisfy (a target, enough rows, features the trees can read)
is the library's to check (:mod:`sapwood.report._data`).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import re
import zipfile
from pathlib import Path

import pandas as pd

from ..report._data import check_output, column_list, did_you_mean
from ..report._models import LoadedModel, load_model
from ._errors import InputError

__all__ = ["check_output", "load_dask_table", "load_model_file", "load_table",
           "read_model_file"]

PARQUET_SUFFIXES = (".parquet", ".pq")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
OLD_EXCEL_SUFFIXES = (".xls",)
# A CSV file compressed: its suffix, pandas' name for the compression.
COMPRESSED_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}
# The delimiters sniffed, in the order preferred on a tie, and their names.
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
SEP_NAMES = {"comma": ",", "semicolon": ";", "tab": "\t", "\\t": "\t", "pipe": "|"}
# Lines of the file's start that decide its delimiter.
_SNIFF_LINES = 50
# A number written with a decimal comma (3,5 or -0,25 or 1.234,5 with thousands dots).
_DECIMAL_COMMA = re.compile(r"[+-]?(\d+|\d{1,3}(\.\d{3})+)(,\d+)?([eE][+-]?\d+)?")
_SNIFF_BYTES = 8192
# Share of control bytes above which a file is taken as binary rather than text.
_BINARY_SHARE = 0.05
_TEXT_CONTROLS = {9, 10, 12, 13}


def load_table(path, sep=None, drop=(), target=None, na_values=(),
               notes=None) -> pd.DataFrame:
    """Read a CSV (plain or compressed), Excel (.xlsx) or Parquet file, turning every
    failure into an :class:`InputError`.

    ``sep``: the CSV delimiter (one character, or ``comma``, ``semicolon``, ``tab``);
    None: sniffed from the first lines among comma, semicolon and tab. In a
    semicolon-separated file, numbers written with a decimal comma (``3,5``) are read
    as numbers. ``na_values``: cells that are missing values in every column, besides
    pandas' own. ``drop``: columns to leave out (each must exist); ``target``, when
    given, may not be one of them. ``notes``: a list that gets what reading found
    (header names given twice, which pandas renames).
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"data file not found: {path}")
    if path.is_dir():
        raise InputError(f"data path is a directory, not a file: {path} (a directory of "
                         "Parquet files is read with --dask)")
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if size == 0:
        raise InputError(f"data file is empty: {path}")
    suffix = path.suffix.lower()
    if sep is not None and suffix in PARQUET_SUFFIXES + EXCEL_SUFFIXES:
        raise InputError(f"--sep {sep!r}: {path.name} is not a CSV file; --sep is for CSV "
                         "files only")
    na_values = list(na_values)
    header = None
    if suffix in PARQUET_SUFFIXES:
        table = _missing_tokens(_read_parquet(path), na_values)
    elif suffix in EXCEL_SUFFIXES:
        table = _read_excel(path, na_values)
    elif suffix in OLD_EXCEL_SUFFIXES:
        raise InputError(f"{path.name}: the old Excel format (.xls) is not read; save it as "
                         ".xlsx or CSV")
    else:
        compression = COMPRESSED_SUFFIXES.get(suffix)
        truncated = size > len(head)
        if compression is not None:
            head = _decompressed_head(path, compression)
            truncated = len(head) >= _SNIFF_BYTES
        table, header = _read_csv(path, head, _separator(sep), truncated, na_values,
                                  compression)
    if table.shape[1] == 0:
        raise InputError(f"data file has no columns: {path}")
    if notes is not None and header is not None:
        notes += _duplicate_names(header, table.columns)
    table = _dropped(table, drop, target)
    if table.shape[0] == 0:
        raise InputError(f"data file has a header but no data rows: {path}")
    return table


def load_dask_table(path, sep=None, drop=(), target=None, na_values=()):
    """A Dask DataFrame read lazily from a Parquet file or directory, or from CSV or
    Parquet files named by a pattern (``data/*.csv``), for ``explain --dask``.

    Nothing but the first file's first bytes (the CSV delimiter, sniffed as
    :func:`load_table` sniffs it) is read here; the rows are read block by block as
    :func:`sapwood.explain` needs them. ``drop``, ``target`` and ``na_values`` (CSV
    files) as in :func:`load_table`.
    """
    try:
        import dask.dataframe as dd
    except ImportError:
        raise InputError("--dask needs Dask: pip install 'sapwood[dask]'") from None
    path = Path(path)
    if path.is_dir():
        files, parquet = [path], True
    else:
        files = sorted(path.parent.glob(path.name)) if _is_pattern(path.name) else [path]
        if not files or not files[0].exists():
            raise InputError(f"data file not found: {path}")
        suffixes = {file.suffix.lower() for file in files}
        if suffixes & set(EXCEL_SUFFIXES + OLD_EXCEL_SUFFIXES):
            raise InputError(f"{path.name}: --dask reads CSV and Parquet files, not Excel")
        parquet = bool(suffixes & set(PARQUET_SUFFIXES))
        if parquet and not suffixes <= set(PARQUET_SUFFIXES):
            raise InputError(f"{path}: mixes Parquet and other files; name one kind")
    if sep is not None and parquet:
        raise InputError(f"--sep {sep!r}: {path.name} is Parquet; --sep is for CSV files only")
    try:
        if parquet:
            import pyarrow  # noqa: F401
            table = dd.read_parquet([str(file) for file in files] if len(files) > 1
                                    else str(files[0]))
        else:
            with files[0].open("rb") as handle:
                head = handle.read(_SNIFF_BYTES)
            if not head:
                raise InputError(f"data file is empty: {files[0]}")
            sep = _separator(sep) or sniff_delimiter(
                head, truncated=files[0].stat().st_size > len(head))
            table = dd.read_csv([str(file) for file in files], sep=sep,
                                na_values=list(na_values) or None)
    except ImportError:
        raise InputError("reading Parquet needs pyarrow: pip install 'sapwood[parquet]'"
                         ) from None
    except InputError:
        raise
    except Exception as error:  # Dask, pyarrow and pandas raise many types
        raise InputError(f"cannot read {path} with Dask: {_first_line(error)}") from None
    if table.shape[1] == 0:
        raise InputError(f"data file has no columns: {path}")
    names = [str(column) for column in table.columns]
    if target is not None and target not in names:
        raise InputError(f"--target {target!r}: no such column"
                         f"{did_you_mean(target, names)}; columns are: {column_list(names)}")
    return _dropped(table, drop, target)


def _is_pattern(name: str) -> bool:
    return any(mark in name for mark in "*?[")


def _separator(sep):
    """``--sep`` as one character (None: sniff)."""
    if sep is None:
        return None
    sep = SEP_NAMES.get(str(sep).lower(), sep)
    if len(sep) != 1 or sep in "\"\r\n":
        raise InputError(f"--sep {sep!r}: give one character (e.g. ';' or ','), or comma, "
                         "semicolon, tab")
    return sep


def _dropped(table: pd.DataFrame, drop, target) -> pd.DataFrame:
    """``table`` without the ``drop`` columns; an unknown one is bad input."""
    if not drop:
        return table
    names = [str(column) for column in table.columns]
    for column in drop:
        if column not in names:
            raise InputError(f"--drop {column!r}: no such column"
                             f"{did_you_mean(column, names)}; columns are: "
                             f"{column_list(names)}")
        if target is not None and column == target:
            raise InputError(f"--drop {column!r} is the target column; leave it out of --drop")
    keep = [name not in set(drop) for name in names]
    if not any(keep):
        raise InputError("--drop leaves no columns")
    # A Dask DataFrame takes a list of columns, not a mask.
    return table.loc[:, keep] if isinstance(table, pd.DataFrame) else \
        table[[column for column, kept in zip(table.columns, keep, strict=True) if kept]]


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


def _read_excel(path: Path, na_values=()) -> pd.DataFrame:
    """The first sheet of an Excel workbook, its first row the header."""
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise InputError("reading Excel needs openpyxl: pip install 'sapwood[excel]'"
                         ) from None
    try:
        return pd.read_excel(path, sheet_name=0, engine="openpyxl",
                             na_values=list(na_values) or None)
    except Exception as error:  # zipfile, openpyxl and pandas raise many types
        raise InputError(f"not a readable Excel file: {path} ({_first_line(error)})"
                         ) from None


def _read_csv(path: Path, head: bytes, sep, truncated: bool, na_values=(),
              compression=None):
    """The table and its header row as written (None when it cannot be had)."""
    if head.startswith(b"PK\x03\x04"):
        raise InputError(f"not a CSV text file: {path} is a zip archive (an Excel workbook? "
                         "name it .xlsx; a zip of one CSV file, name it .zip)")
    if _looks_binary(head):
        raise InputError(f"not a CSV text file (binary content): {path}")
    if sep is None:
        sep = sniff_delimiter(head, truncated)
    options = {"sep": sep, "na_values": list(na_values) or None, "compression": compression}
    try:
        try:
            table = pd.read_csv(path, **options)
            encoding = None
        except UnicodeDecodeError:
            table = pd.read_csv(path, encoding="latin-1", **options)
            encoding = "latin-1"
    except pd.errors.EmptyDataError:
        raise InputError(f"data file has no columns: {path}") from None
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError, OSError, EOFError,
            zipfile.BadZipFile) as error:
        raise InputError(f"malformed CSV in {path}: {_first_line(error)}") from None
    if sep == ";":
        table = decimal_commas(table)
    try:
        header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str,
                             keep_default_na=False, compression=compression,
                             encoding=encoding).iloc[0].tolist()
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError, IndexError):
        header = None
    return table, header


def _decompressed_head(path: Path, compression: str) -> bytes:
    """The first bytes of the CSV inside a compressed file (a zip: of its one file)."""
    try:
        if compression == "zip":
            with zipfile.ZipFile(path) as archive:
                names = [name for name in archive.namelist() if not name.endswith("/")]
                if len(names) != 1:
                    raise InputError(f"{path.name}: a zip archive of {len(names)} files; "
                                     "sapwood reads a zip of one CSV file")
                with archive.open(names[0]) as handle:
                    return handle.read(_SNIFF_BYTES)
        opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[compression]
        with opener(path, "rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError) as error:
        raise InputError(f"not a readable {compression} file: {path} "
                         f"({_first_line(error)})") from None


def _duplicate_names(header, columns) -> list:
    """A note for each header name given to more than one column (pandas renames the
    later ones ``name.1``, ``name.2``): which names the columns were read under."""
    written = [str(name) for name in header]
    if len(written) != len(columns):
        return []
    notes = []
    for name in dict.fromkeys(written):
        read = [str(column) for column, given in zip(columns, written, strict=True)
                if given == name]
        if len(read) > 1:
            notes.append(f"the header names {name!r} {len(read)} times: the columns are "
                         f"read as {', '.join(repr(r) for r in read)}, in that order "
                         "(rename them in the file to say which is which)")
    return notes


def _missing_tokens(table: pd.DataFrame, na_values) -> pd.DataFrame:
    """``table`` with the text cells equal to one of ``na_values`` missing (a Parquet
    file's; CSV and Excel are read with them)."""
    if not na_values:
        return table
    table = table.copy()
    for position in range(table.shape[1]):
        values = table.iloc[:, position]
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            table.isetitem(position, values.mask(values.isin(na_values)))
    return table


def sniff_delimiter(head: bytes, truncated: bool = False) -> str:
    """Comma, semicolon or tab: among the delimiters that split the header line, the
    one that splits the most of the following lines (of the first :data:`_SNIFF_LINES`)
    into as many fields as the header, quotes respected; then the one giving more
    columns. Comma when none splits the header.

    Counting fields on the first lines is steadier than :class:`csv.Sniffer`, which
    weighs every character's frequency and picks a decimal comma, a space or a letter
    on some files, or gives up on others; pandas' ``sep=None`` is that sniffer.
    """
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = text.splitlines()
    if truncated and len(lines) > 1:
        lines = lines[:-1]  # the last line read may be cut short
    lines = [line for line in lines[:_SNIFF_LINES + 1] if line.strip()]
    if not lines:
        return ","
    best, best_key = ",", None
    for order, delimiter in enumerate(DELIMITERS):
        try:
            rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter))
        except csv.Error:
            continue
        if not rows:
            continue
        width = len(rows[0])
        if width < 2:
            continue
        body = rows[1:]
        agree = (sum(len(row) == width for row in body) / len(body)) if body else 1.0
        key = (agree, width, -order)
        if best_key is None or key > best_key:
            best, best_key = delimiter, key
    return best


def decimal_commas(table: pd.DataFrame) -> pd.DataFrame:
    """Text columns of numbers written with a decimal comma (``3,5``; thousands dots
    ``1.234,5`` allowed) as numbers; a column with a value of another form is left as
    it is."""
    converted = {}
    for column in table.columns:
        values = table[column]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        present = values.dropna()
        if present.empty:
            continue
        try:
            text = present.astype(str).str.strip()
        except (TypeError, ValueError):
            continue
        if not text.str.contains(",", regex=False).any():
            continue
        if not text.str.fullmatch(_DECIMAL_COMMA).all():
            continue
        numbers = text.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
        converted[column] = pd.to_numeric(numbers, errors="coerce").reindex(values.index)
    if not converted:
        return table
    table = table.copy()
    for column, numbers in converted.items():
        table[column] = numbers
    return table


def _looks_binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    controls = sum(1 for byte in head if (byte < 32 and byte not in _TEXT_CONTROLS)
                   or byte == 127)
    return controls > _BINARY_SHARE * max(len(head), 1)


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def read_model_file(path, iteration_range=None):
    """The :class:`~sapwood.TreeEnsemble` in a sapwood, XGBoost (JSON / UBJSON) or
    LightGBM (text) model file (``iteration_range`` as :func:`sapwood.from_model`
    takes it); every failure is a one-line :class:`InputError`."""
    import sapwood

    path = Path(path)
    if not path.exists():
        raise InputError(f"model file not found: {path}")
    if path.is_dir():
        raise InputError(f"model path is a directory, not a file: {path}")
    if path.stat().st_size == 0:
        raise InputError(f"model file is empty: {path}")
    try:
        return sapwood.from_model(path, iteration_range=iteration_range)
    except Exception as error:  # each reader has its own error types for damage
        problem = (str(error).strip() or type(error).__name__).splitlines()[0]
        if len(problem) > 200:
            problem = problem[:197] + "..."
        raise InputError(f"cannot read model file {path}: {problem}") from None


def load_model_file(path) -> LoadedModel:
    """A fitted model from a saved sapwood, XGBoost or LightGBM file."""
    return load_model(read_model_file(path), path)
