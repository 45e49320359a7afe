"""sapwood's model file: a versioned, pickle-free, validated format.

A model file is a ZIP archive whose members are all stored uncompressed: one JSON
header, ``sapwood-model.json``, and one NPY array per field, with every tree's nodes
concatenated. docs/model-format.md specifies it field by field. This module writes
version 3 and reads versions 1 to 3 (version 1 had a free-form ``source`` object where
version 2 has the typed ``kind`` and the forest's ``bootstrap``; version 3 adds
categorical splits: the trees' category sets and the features' category labels).

:func:`load` trusts nothing in the file. It reads only the expected members, checks
each member's size against the archive before reading it (stored members cannot
decompress into more than the file holds), parses NPY headers itself, checks every
dtype, shape and value range, and builds the trees through the format's validation
(children form one tree, no cycles or shared nodes, features in range, finite
thresholds and values) before any kernel sees an array. Every problem is a
:class:`FormatError` naming it.
"""

from __future__ import annotations

import ast
import io
import json
import math
import os
import zipfile

import numpy as np

from ._bootstrap import SEED_LIMIT, Bootstrap
from ._files import replace_atomically
from ._format import FormatError, ModelKind, TreeArrays, TreeEnsemble
from ._version import __version__

__all__ = ["save", "load", "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "sapwood-model"
FORMAT_VERSION = 3
READ_VERSIONS = (1, 2, 3)
HEADER = "sapwood-model.json"
_MAX_HEADER_BYTES = 64 * 2**20
_MAX_NPY_HEADER = 4096
_MAX_COUNT = 2**31 - 1
_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so saving the same model twice gives equal files

# name -> (dtype, shape given the header's counts)
_TREE_ARRAYS = {
    "tree_node_count": ("<i8", "trees"),
    "tree_weights": ("<f8", "trees"),
    "tree_output": ("<i8", "trees"),
    "tree_has_gain": ("|u1", "trees"),
    "tree_has_cover": ("|u1", "trees"),
}
_NODE_ARRAYS = {
    "children_left": "<i8",
    "children_right": "<i8",
    "feature": "<i8",
    "threshold": "<f8",
    "operator": "|u1",
    "missing_go_to_left": "|u1",
    "impurity": "<f8",
    "n_node_samples": "<i8",
    "weighted_n_node_samples": "<f8",
    "gain": "<f8",
    "cover": "<f8",
}
_ARRAYS = ({**{name: dtype for name, (dtype, _) in _TREE_ARRAYS.items()}, **_NODE_ARRAYS,
            "value": "<f8", "base_score": "<f8"})
# Version 3: every tree's number of category-set words, and the words (n_cat_words).
_CATEGORY_ARRAYS = {"tree_cat_words": "<i8", "cat_bitsets": "<u4"}
# Present when the header's bootstrap is not null; the weights only when it is weighted.
_BOOTSTRAP_ARRAYS = {"bootstrap_seeds": "<i8", "bootstrap_weight": "<f8"}
_COMMON_KEYS = {
    "format", "format_version", "sapwood_version", "task", "combine", "link", "n_features",
    "n_trees", "n_nodes", "n_outputs", "max_n_classes", "n_base_score", "input_dtype",
    "classes", "feature_names",
}
_HEADER_KEYS = {1: _COMMON_KEYS | {"source"}, 2: _COMMON_KEYS | {"kind", "bootstrap"},
                3: _COMMON_KEYS | {"kind", "bootstrap", "n_cat_words", "categories"}}
# Optional keys: absent means the value shown (the header before the key existed).
_OPTIONAL_KEYS = {"accumulate": "float64", "survival": None}
# Present when the header's survival is not null (a survival model's functions of time):
# the times and which had an event, and a boosted model's baseline when it has one.
_SURVIVAL_ARRAYS = {"times": "<f8", "is_event_time": "|u1",
                    "baseline_cumulative_hazard": "<f8"}
_KIND_STRINGS = ("library", "model", "objective", "library_version")
_KIND_FLAGS = ("bagged", "node_impurity", "oblivious")
_KIND_KEYS = _KIND_STRINGS + ("family",) + _KIND_FLAGS
_MAX_TEXT = 4096
_LINKS = {"mean": ("identity",), "sum": ("identity", "logistic", "softmax", "exp")}


# -- saving -------------------------------------------------------------------------

# n_features is bounded by the file's size (see _load_bytes).
_FREE_FEATURES = 65_536
_FEATURES_PER_BYTE = 16


def save(ensemble, path) -> None:
    """Write the :class:`TreeEnsemble` ``ensemble`` to ``path`` in sapwood's model format.

    :func:`sapwood.save` (:func:`sapwood.adapters.save`) converts any model first.

    Parameters
    ----------
    ensemble : TreeEnsemble
    path : str, path-like or binary file object
        Conventionally ends in ``.sapwood``. A path is written atomically: to a
        temporary file beside it, synced, then renamed onto it, so a save that fails
        part way leaves any model already there byte for byte intact.
    """
    if not isinstance(ensemble, TreeEnsemble):
        raise TypeError(f"save writes a TreeEnsemble; got {type(ensemble).__name__} "
                        "(sapwood.save converts other models first)")
    shapes = {tree.value.shape[1:] for tree in ensemble.trees}
    if len(shapes) != 1:
        raise ValueError(f"every tree of a saved model must have the same value shape "
                         f"(n_outputs, max_n_classes); got {sorted(shapes)}")
    (n_outputs, max_n_classes), = shapes
    trees = ensemble.trees
    arrays = {
        "tree_node_count": np.array([t.node_count for t in trees], dtype=np.int64),
        "tree_weights": ensemble.tree_weights,
        "tree_output": ensemble.tree_output,
        "tree_has_gain": np.array([t.gain is not None for t in trees], dtype=np.uint8),
        "tree_has_cover": np.array([t.cover is not None for t in trees], dtype=np.uint8),
        "base_score": _base_score(ensemble),
        "value": np.concatenate([t.value for t in trees]),
        "tree_cat_words": np.array([t.cat_bitsets.shape[0] for t in trees], dtype=np.int64),
        "cat_bitsets": np.concatenate([t.cat_bitsets for t in trees]),
    }
    for name in _NODE_ARRAYS:
        arrays[name] = np.concatenate([
            np.zeros(t.node_count) if getattr(t, name) is None else getattr(t, name)
            for t in trees])
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "sapwood_version": __version__,
        "task": ensemble.task,
        "combine": ensemble.combine,
        "link": ensemble.link,
        "n_features": ensemble.n_features,
        "n_trees": ensemble.n_trees,
        "n_nodes": int(arrays["tree_node_count"].sum()),
        "n_outputs": n_outputs,
        "max_n_classes": max_n_classes,
        "n_base_score": int(arrays["base_score"].shape[0]),
        "input_dtype": np.dtype(ensemble.input_dtype).name,
        "classes": _classes_to_json(ensemble.classes),
        "feature_names": (None if ensemble.feature_names is None
                          else [str(name) for name in ensemble.feature_names]),
        "kind": {name: getattr(ensemble.kind, name) for name in _KIND_KEYS},
        "bootstrap": _bootstrap_header(ensemble.bootstrap),
        "n_cat_words": int(arrays["cat_bitsets"].shape[0]),
        "categories": _categories_to_json(ensemble.categories),
    }
    # Written only when it differs from the default, so other files stay as they were.
    if ensemble.accumulate != _OPTIONAL_KEYS["accumulate"]:
        header["accumulate"] = ensemble.accumulate
    if ensemble.times is not None:
        baseline = ensemble.baseline_cumulative_hazard
        header["survival"] = {"n_times": ensemble.n_times, "baseline": baseline is not None}
        arrays["times"] = ensemble.times
        arrays["is_event_time"] = ensemble.is_event_time
        if baseline is not None:
            arrays["baseline_cumulative_hazard"] = baseline
    bootstrap = ensemble.bootstrap
    if bootstrap is not None:
        arrays["bootstrap_seeds"] = bootstrap.seeds
        if bootstrap.sample_weight is not None:
            arrays["bootstrap_weight"] = bootstrap.sample_weight
    arrays = {name: np.ascontiguousarray(arrays[name], dtype=np.dtype(dtype))
              for name, dtype in {**_ARRAYS, **_CATEGORY_ARRAYS, **_BOOTSTRAP_ARRAYS,
                                  **_SURVIVAL_ARRAYS}.items()
              if name in arrays}
    text = json.dumps(header, indent=1, allow_nan=False).encode("utf-8")
    try:
        # The loader's own checks, so that every file save() writes can be loaded.
        _assemble(_read_header(text), arrays)
    except FormatError as error:
        raise ValueError(f"this model cannot be saved: {error}") from None
    def write(target):
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
            archive.writestr(zipfile.ZipInfo(HEADER, _DATE), text)
            for name, array in arrays.items():
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, array, version=(1, 0),
                                          allow_pickle=False)
                archive.writestr(zipfile.ZipInfo(f"{name}.npy", _DATE), buffer.getvalue())

    if hasattr(path, "write"):
        write(path)
    else:
        # Whole or not at all: a save that fails part way leaves the old file intact.
        replace_atomically(path, write)


def _base_score(ensemble):
    base = ensemble.base_score
    if ensemble.combine == "sum":
        # One base score per output column, as raw_predict broadcasts a scalar one.
        n_columns = max(int(ensemble.tree_output.max()) + 1, base.shape[0])
        if base.shape[0] == 1:
            base = np.full(n_columns, base[0])
    return base


def _bootstrap_header(bootstrap):
    if bootstrap is None:
        return None
    return {"n_samples": bootstrap.n_samples, "n_draws": bootstrap.n_draws,
            "weighted": bootstrap.sample_weight is not None}


def _json_label(value, what):
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, bool | int | str) or (isinstance(value, float)
                                               and math.isfinite(value)):
        return value
    raise ValueError(f"{what} {value!r} cannot be saved: labels must be str, int, bool or "
                     "finite float")


def _categories_to_json(categories):
    if categories is None:
        return None
    return [None if labels is None else [_json_label(v, "category label") for v in labels]
            for labels in categories]


def _classes_to_json(classes):
    if classes is None:
        return None

    def scalar(value):
        return _json_label(value, "class label")

    return [[scalar(v) for v in labels] if isinstance(labels, tuple | list | np.ndarray)
            else scalar(labels) for labels in classes]


# -- loading ------------------------------------------------------------------------

def load(path) -> TreeEnsemble:
    """Read a model written by :func:`save`, validating every field.

    Raises
    ------
    FormatError
        The file is not a valid sapwood model file; the message says what is wrong.
    OSError
        The file cannot be opened.
    """
    with open(path, "rb") as stream:
        data = stream.read()
    try:
        return _load_bytes(data)
    except FormatError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, TypeError,
            KeyError, IndexError, OverflowError, UnicodeError, RecursionError,
            NotImplementedError, RuntimeError) as error:
        # zipfile and NumPy signal damage with many exception types; to the caller
        # they all mean the same thing.
        raise FormatError(f"{os.fspath(path)!r} is not a valid sapwood model file: "
                          f"{type(error).__name__}: {error}") from None


def _load_bytes(data: bytes) -> TreeEnsemble:
    archive = zipfile.ZipFile(io.BytesIO(data))
    infos = archive.infolist()
    names = [info.filename for info in infos]
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
            raise FormatError(f"member {info.filename} must be stored uncompressed and "
                              "unencrypted")
        if info.file_size != info.compress_size or info.file_size > len(data):
            raise FormatError(f"member {info.filename} declares an impossible size")
    if HEADER not in names:
        raise FormatError(f"archive members are wrong: missing ['{HEADER}']")
    if archive.getinfo(HEADER).file_size > _MAX_HEADER_BYTES:
        raise FormatError(f"the header is larger than {_MAX_HEADER_BYTES} bytes")
    header = _read_header(archive.read(HEADER))
    array_names = _array_names(header)
    expected = {HEADER} | {f"{name}.npy" for name in array_names}
    if len(names) != len(set(names)) or set(names) != expected:
        unknown = sorted(set(names) - expected)
        missing = sorted(expected - set(names))
        raise FormatError(f"archive members are wrong: missing {missing}, unexpected "
                          f"{unknown}, {len(names) - len(set(names))} duplicated")
    # Every count is backed by the arrays it sizes except n_features (a model need not
    # split on every feature), yet later work is sized by it: it may not exceed
    # _FEATURES_PER_BYTE per byte of the file (or _FREE_FEATURES), so that cost stays
    # in proportion to the file's size.
    if header["n_features"] > max(_FREE_FEATURES, _FEATURES_PER_BYTE * len(data)):
        raise FormatError(f"header field n_features ({header['n_features']}) is more than "
                          f"{_FEATURES_PER_BYTE} per byte of this {len(data)}-byte file")
    counts = {"trees": header["n_trees"], "nodes": header["n_nodes"]}
    arrays = {}
    for name, dtype in array_names.items():
        if name in _TREE_ARRAYS or name in ("bootstrap_seeds", "tree_cat_words"):
            shape = (counts["trees"],)
        elif name == "cat_bitsets":
            shape = (header["n_cat_words"],)
        elif name == "bootstrap_weight":
            # Backed by the member's bytes: _read_npy checks its size before reading.
            shape = (header["bootstrap"]["n_samples"],)
        elif name == "value":
            shape = (counts["nodes"], header["n_outputs"], header["max_n_classes"])
        elif name == "base_score":
            shape = (header["n_base_score"],)
        elif name in _SURVIVAL_ARRAYS:
            shape = (header["survival"]["n_times"],)
        else:
            shape = (counts["nodes"],)
        arrays[name] = _read_npy(name, archive.read(f"{name}.npy"), dtype, shape)
    return _assemble(header, arrays)


def _array_names(header):
    """The arrays a file with this (checked) header holds: name -> dtype."""
    names = dict(_ARRAYS)
    if header["format_version"] >= 3:
        names.update(_CATEGORY_ARRAYS)
    bootstrap = header["bootstrap"]
    if bootstrap is not None:
        names["bootstrap_seeds"] = _BOOTSTRAP_ARRAYS["bootstrap_seeds"]
        if bootstrap["weighted"]:
            names["bootstrap_weight"] = _BOOTSTRAP_ARRAYS["bootstrap_weight"]
    survival = header["survival"]
    if survival is not None:
        names["times"] = _SURVIVAL_ARRAYS["times"]
        names["is_event_time"] = _SURVIVAL_ARRAYS["is_event_time"]
        if survival["baseline"]:
            names["baseline_cumulative_hazard"] = _SURVIVAL_ARRAYS["baseline_cumulative_hazard"]
    return names


def _read_header(raw: bytes) -> dict:
    """The checked header, a version 1 one brought to version 2's fields (a version 1
    or 2 one keeps its version, so that no category arrays are expected, and gets
    version 3's ``n_cat_words`` 0 and ``categories`` null)."""
    def refuse_constant(name):
        raise FormatError(f"the header contains the non-JSON constant {name}")

    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=refuse_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise FormatError(f"the header is not UTF-8 JSON: {error}") from None
    if not isinstance(header, dict):
        raise FormatError("the header must be a JSON object")
    if header.get("format") != FORMAT_NAME:
        raise FormatError(f"not a sapwood model file (format is {header.get('format')!r})")
    version = header.get("format_version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise FormatError(f"format_version {version!r} is not supported by this sapwood "
                          f"(it reads versions {', '.join(map(str, READ_VERSIONS))})")
    keys = _HEADER_KEYS[version]
    given = set(header) - set(_OPTIONAL_KEYS) if version >= 2 else set(header)
    if given != keys:
        raise FormatError(f"header keys are wrong: missing {sorted(keys - given)}"
                          f", unexpected {sorted(given - keys)}")
    for key, default in _OPTIONAL_KEYS.items():
        header.setdefault(key, default)
    for key in ("n_features", "n_trees", "n_nodes", "n_outputs", "max_n_classes",
                "n_base_score"):
        value = header[key]
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= _MAX_COUNT:
            raise FormatError(f"header field {key} must be an integer in [1, {_MAX_COUNT}]; "
                              f"got {value!r}")
    if header["n_trees"] > header["n_nodes"]:
        raise FormatError("n_nodes is smaller than n_trees (every tree has a node)")
    _choice(header, "task", ("classification", "regression", "survival"))
    _choice(header, "combine", tuple(_LINKS))
    _choice(header, "link", _LINKS[header["combine"]])
    _choice(header, "input_dtype", ("float32", "float64"))
    _choice(header, "accumulate", ("float64", "float32", "float64_base_last",
                                   "float32_rebased")
            if header["combine"] == "sum" else ("float64",))
    if not isinstance(header["sapwood_version"], str):
        raise FormatError("header field sapwood_version must be a string")
    names = header["feature_names"]
    if names is not None and (not isinstance(names, list) or len(names) != header["n_features"]
                              or not all(isinstance(n, str) for n in names)):
        raise FormatError("feature_names must be null or a list of n_features strings")
    _check_classes(header)
    if version == 1:
        header["kind"] = _kind_from_source(_check_source(header.pop("source")))
        header["bootstrap"] = None
    if version < 3:
        header["n_cat_words"] = 0
        header["categories"] = None
    _check_kind(header["kind"])
    _check_bootstrap(header["bootstrap"])
    _check_categories(header)
    _check_survival(header)
    return header


def _check_survival(header):
    """The optional ``survival`` entry: null, or the number of times (backed by the
    arrays it sizes) and whether a baseline hazard is stored, on a survival model."""
    survival = header["survival"]
    if survival is None:
        return
    if header["task"] != "survival":
        raise FormatError(f"a {header['task']} model has survival: null")
    if not isinstance(survival, dict) or set(survival) != {"n_times", "baseline"}:
        raise FormatError("header field survival must be null or an object with keys "
                          "n_times and baseline")
    n_times = survival["n_times"]
    if not isinstance(n_times, int) or isinstance(n_times, bool) or \
            not 1 <= n_times <= _MAX_COUNT:
        raise FormatError(f"survival.n_times must be an integer in [1, {_MAX_COUNT}]; got "
                          f"{n_times!r}")
    if not isinstance(survival["baseline"], bool):
        raise FormatError(f"survival.baseline must be true or false; got "
                          f"{survival['baseline']!r}")


def _choice(header, key, allowed):
    if header[key] not in allowed or not isinstance(header[key], str):
        raise FormatError(f"header field {key} must be one of {list(allowed)}; got "
                          f"{header[key]!r}")


def _check_classes(header):
    classes = header["classes"]
    if header["task"] != "classification":
        if classes is not None:
            raise FormatError(f"a {header['task']} model has classes: null")
        return
    if not isinstance(classes, list) or not classes:
        raise FormatError("a classification model needs a non-empty list of classes")
    nested = header["combine"] == "mean" and header["n_outputs"] > 1
    groups = classes if nested else [classes]
    if nested and len(classes) != header["n_outputs"]:
        raise FormatError("classes must have one list of labels per output")
    for labels in groups:
        if not isinstance(labels, list) or not labels or not all(
                isinstance(v, bool | int | str) or (isinstance(v, float) and math.isfinite(v))
                for v in labels):
            raise FormatError("classes must be lists of str, int, bool or finite float labels")
        if header["combine"] == "mean" and len(labels) > header["max_n_classes"]:
            raise FormatError(f"{len(labels)} classes do not fit max_n_classes="
                              f"{header['max_n_classes']}")
    if header["combine"] == "sum":
        n_labels = len(classes)
        needed = 2 if header["link"] == "logistic" else header["n_base_score"]
        if header["link"] not in ("logistic", "softmax") or n_labels != needed:
            raise FormatError(f"a boosted classifier with link {header['link']!r} and "
                              f"{header['n_base_score']} outputs cannot have {n_labels} classes")


def _check_source(source):
    """Version 1's free-form ``source``: null or at most 64 scalar entries."""
    if source is None:
        return {}
    if not isinstance(source, dict) or len(source) > 64 or not all(
            isinstance(k, str) and len(k) <= 256 and (
                v is None or isinstance(v, bool | int | str)
                or (isinstance(v, float) and math.isfinite(v)))
            and (not isinstance(v, str) or len(v) <= _MAX_TEXT)
            for k, v in source.items()):
        raise FormatError("source must be null or an object of at most 64 scalar entries "
                          "(str, number, bool, null)")
    return source


def _kind_from_source(source):
    """Version 1's ``source`` as version 2's ``kind``: the library, model class and
    objective it named (family and bagging were not recorded). XGBoost, LightGBM and
    HistGradientBoosting trees record split gains, not node impurities."""
    def text(key):
        value = source.get(key)
        return value if isinstance(value, str) else ""

    library, model = text("library"), text("model")
    return {"library": library, "model": model, "objective": text("objective"),
            "library_version": text("version"), "family": "", "bagged": False,
            "oblivious": False, "node_impurity": not (library in ("xgboost", "lightgbm")
                                  or model.startswith("HistGradientBoosting"))}


def _check_kind(kind):
    keys = set(_KIND_KEYS)
    if not isinstance(kind, dict) or set(kind) != keys:
        raise FormatError(f"header field kind must be an object with exactly the keys "
                          f"{sorted(keys)}")
    for name in _KIND_STRINGS + ("family",):
        if not isinstance(kind[name], str) or len(kind[name]) > _MAX_TEXT:
            raise FormatError(f"kind.{name} must be a string of at most {_MAX_TEXT} "
                              "characters")
    for name in _KIND_FLAGS:
        if not isinstance(kind[name], bool):
            raise FormatError(f"kind.{name} must be true or false")


def _check_categories(header):
    # n_cat_words sizes only the cat_bitsets member, whose bytes _read_npy checks.
    words = header["n_cat_words"]
    if not isinstance(words, int) or isinstance(words, bool) or not 0 <= words <= _MAX_COUNT:
        raise FormatError(f"header field n_cat_words must be an integer in [0, {_MAX_COUNT}]; "
                          f"got {words!r}")
    categories = header["categories"]
    if categories is None:
        return
    if not isinstance(categories, list) or len(categories) != header["n_features"]:
        raise FormatError("categories must be null or a list of n_features entries")
    for labels in categories:
        if labels is not None and (not isinstance(labels, list) or not all(
                isinstance(v, bool | int | str) or (isinstance(v, float) and math.isfinite(v))
                for v in labels) or len(set(labels)) != len(labels)):
            raise FormatError("each entry of categories must be null or a list of distinct "
                              "str, int, bool or finite float labels")


def _check_bootstrap(bootstrap):
    # n_samples and n_draws size no allocation here (the weights, when present, are a
    # member whose size _read_npy checks); out-of-bag measures check X's row count
    # against n_samples before drawing any rows.
    if bootstrap is None:
        return
    keys = {"n_samples", "n_draws", "weighted"}
    if not isinstance(bootstrap, dict) or set(bootstrap) != keys:
        raise FormatError(f"header field bootstrap must be null or an object with exactly "
                          f"the keys {sorted(keys)}")
    for key in ("n_samples", "n_draws"):
        value = bootstrap[key]
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= _MAX_COUNT:
            raise FormatError(f"bootstrap.{key} must be an integer in [1, {_MAX_COUNT}]; "
                              f"got {value!r}")
    if not isinstance(bootstrap["weighted"], bool):
        raise FormatError("bootstrap.weighted must be true or false")


def _read_npy(name, raw: bytes, dtype, shape) -> np.ndarray:
    if raw[:6] != b"\x93NUMPY" or len(raw) < 10:
        raise FormatError(f"{name}.npy is not an NPY file")
    major = raw[6]
    if major == 1:
        header_length, start = int.from_bytes(raw[8:10], "little"), 10
    elif major in (2, 3):
        header_length, start = int.from_bytes(raw[8:12], "little"), 12
    else:
        raise FormatError(f"{name}.npy has unknown NPY version {major}")
    if header_length > _MAX_NPY_HEADER or start + header_length > len(raw):
        raise FormatError(f"{name}.npy has a truncated or oversized header")
    try:
        described = ast.literal_eval(raw[start:start + header_length].decode("latin-1"))
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        raise FormatError(f"{name}.npy has an unreadable header") from None
    if (not isinstance(described, dict)
            or set(described) != {"descr", "fortran_order", "shape"}
            or described["descr"] != dtype or described["fortran_order"] is not False
            or not isinstance(described["shape"], tuple)
            or tuple(described["shape"]) != shape):
        raise FormatError(f"{name}.npy must hold a C-ordered {dtype} array of shape {shape}; "
                          f"its header says {described!r}"[:400])
    body = raw[start + header_length:]
    itemsize = np.dtype(dtype).itemsize
    if len(body) != math.prod(shape) * itemsize:
        raise FormatError(f"{name}.npy holds {len(body)} data bytes; shape {shape} needs "
                          f"{math.prod(shape) * itemsize}")
    return np.frombuffer(body, dtype=dtype).reshape(shape).astype(np.dtype(dtype).newbyteorder(
        "="))


def _assemble(header, arrays) -> TreeEnsemble:
    n_trees, n_nodes = header["n_trees"], header["n_nodes"]
    node_count = arrays["tree_node_count"]
    if (node_count < 1).any() or int(node_count.sum()) != n_nodes:
        raise FormatError(f"tree_node_count must be positive and sum to n_nodes={n_nodes}")
    for name in ("tree_has_gain", "tree_has_cover", "missing_go_to_left"):
        if (arrays[name] > 1).any():
            raise FormatError(f"{name} must hold only 0 and 1")
    if (arrays["operator"] > 2).any():
        raise FormatError("operator must hold only 0, 1 and 2")
    for name in ("tree_weights", "base_score", "impurity", "weighted_n_node_samples", "gain",
                 "cover"):
        if not np.isfinite(arrays[name]).all():
            raise FormatError(f"{name} contains NaN or infinite entries")
    if (arrays["n_node_samples"] < 0).any():
        raise FormatError("n_node_samples must not be negative")
    outputs = arrays["tree_output"]
    if header["combine"] == "sum":
        if (outputs < 0).any() or (outputs >= header["n_base_score"]).any():
            raise FormatError(f"tree_output must lie in [0, n_base_score="
                              f"{header['n_base_score']})")
        if header["n_outputs"] != 1 or header["max_n_classes"] != 1:
            raise FormatError("a boosted model's leaves hold one value (value shape "
                              "(n_nodes, 1, 1))")
    elif (outputs != 0).any() or header["n_base_score"] != 1:
        raise FormatError("an averaging model has tree_output 0 and one base score")
    bounds = np.concatenate([[0], np.cumsum(node_count)])
    cat_words = arrays.get("tree_cat_words", np.zeros(n_trees, dtype=np.int64))
    cat_bitsets = arrays.get("cat_bitsets", np.zeros(0, dtype=np.uint32))
    if (cat_words < 0).any() or int(cat_words.sum()) != cat_bitsets.shape[0]:
        raise FormatError(f"tree_cat_words must be non-negative and sum to n_cat_words="
                          f"{cat_bitsets.shape[0]}")
    word_bounds = np.concatenate([[0], np.cumsum(cat_words)])
    trees = []
    for t in range(n_trees):
        nodes = slice(int(bounds[t]), int(bounds[t + 1]))
        fields = {name: arrays[name][nodes] for name in _NODE_ARRAYS}
        if not arrays["tree_has_gain"][t]:
            fields["gain"] = None
        if not arrays["tree_has_cover"][t]:
            fields["cover"] = None
        # TreeArrays checks every categorical split's offset and set against these.
        fields["cat_bitsets"] = cat_bitsets[int(word_bounds[t]):int(word_bounds[t + 1])]
        try:
            trees.append(TreeArrays(value=arrays["value"][nodes],
                                    n_features=header["n_features"], **fields))
        except FormatError as error:
            raise FormatError(f"tree {t}: {error}") from None
    classes = header["classes"]
    if classes is not None:
        classes = tuple(tuple(c) if isinstance(c, list) else c for c in classes)
    return TreeEnsemble(
        kind=ModelKind(**header["kind"]), bootstrap=_bootstrap(header, arrays),
        trees=tuple(trees), task=header["task"], n_features=header["n_features"],
        combine=header["combine"], tree_weights=arrays["tree_weights"],
        tree_output=outputs, base_score=arrays["base_score"], link=header["link"],
        classes=classes,
        feature_names=None if header["feature_names"] is None else tuple(
            header["feature_names"]),
        input_dtype=np.dtype(header["input_dtype"]).type,
        categories=header["categories"], accumulate=header["accumulate"],
        **_survival_fields(arrays))


def _survival_fields(arrays):
    """The survival model's times, event flags and baseline, as the format takes them
    (it checks them against the trees)."""
    fields = {name: arrays[name] for name in _SURVIVAL_ARRAYS if name in arrays}
    if "is_event_time" in fields:
        if (fields["is_event_time"] > 1).any():
            raise FormatError("is_event_time must hold only 0 and 1")
        fields["is_event_time"] = fields["is_event_time"].astype(bool)
    return fields


def _bootstrap(header, arrays):
    described = header["bootstrap"]
    if described is None:
        return None
    seeds = arrays["bootstrap_seeds"]
    if (seeds < 0).any() or (seeds >= SEED_LIMIT).any():
        raise FormatError("bootstrap_seeds must lie in [0, 2**32)")
    try:
        return Bootstrap(seeds=seeds, n_samples=described["n_samples"],
                         n_draws=described["n_draws"],
                         sample_weight=arrays.get("bootstrap_weight"))
    except ValueError as error:
        raise FormatError(str(error)) from None
