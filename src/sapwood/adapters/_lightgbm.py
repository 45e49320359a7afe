"""LightGBM boosters, their scikit-learn wrappers and saved text models.

Trees are read from LightGBM's text model format (``Booster.model_to_string()`` or a
file), so files convert without LightGBM installed. LightGBM compares float64 X with
``x <= threshold`` and handles a missing value by the node's ``decision_type`` bits:
bit 0 categorical, bit 1 default_left, bits 2-3 the missing type:

- ``None``: NaN is replaced by 0.0 and compared like any value;
- ``NaN``: NaN goes to the default side;
- ``Zero``: NaN and every x with ``|x| <= 1e-35f`` go to the default side.

The first two map onto ``missing_go_to_left`` directly. ``Zero`` maps onto one
threshold/operator pair when the zero band and the comparison agree, and is refused
(naming the feature) when the left side would not be an interval. Leaf values already
include shrinkage and the initial score; random-forest mode averages the trees.

A categorical split (bit 0) sends the categories of its bitset left (its threshold
indexes ``cat_boundaries``, which delimit its words in ``cat_threshold``) and NaN, a
negative value and every other category right: the format's categorical split with
``missing_go_to_left`` 0 (LightGBM truncates a value in (-1, 0) to category 0; the
format sends it right). The category labels of pandas ``category`` columns are the
``pandas_categorical`` line after the trees, in the order of the categorical features
when there is one list per categorical feature.
"""

from __future__ import annotations

import json

import numpy as np

from .._format import LEAF, OP_CAT, OP_LE, OP_LT, FormatError, ModelKind, TreeEnsemble
from ._build import build_tree, category_sets

__all__ = ["from_lightgbm", "read_lightgbm_text"]

# LightGBM's kZeroThreshold is the float 1e-35f, compared against double x.
_ZERO = float(np.float32(1e-35))
_MISSING_NONE, _MISSING_ZERO, _MISSING_NAN = 0, 1, 2

_OBJECTIVES = {
    "binary": ("classification", "logistic"),
    "multiclass": ("classification", "softmax"),
    "softmax": ("classification", "softmax"),
    "cross_entropy": ("regression", "logistic"),
    "xentropy": ("regression", "logistic"),
    "poisson": ("regression", "exp"),
    "gamma": ("regression", "exp"),
    "tweedie": ("regression", "exp"),
    **{name: ("regression", "identity") for name in (
        "regression", "regression_l2", "regression_l1", "huber", "fair", "quantile", "mape",
        "lambdarank", "rank_xendcg", "custom")},
}


def from_lightgbm(model, iteration_range=None) -> TreeEnsemble:
    """Convert a ``lightgbm.Booster`` or a LightGBM scikit-learn estimator.

    By default the trees up to ``best_iteration`` are kept when early stopping set one
    (LightGBM's ``predict`` and ``feature_importance`` use those), else all trees.
    """
    booster = getattr(model, "booster_", model)
    classes = None
    if hasattr(model, "classes_"):
        classes = tuple(np.asarray(model.classes_).tolist())
    # num_iteration=None is LightGBM's own default: the best iteration when there is one.
    num_iteration = None if iteration_range is None else -1
    text = booster.model_to_string(num_iteration=num_iteration)
    # The text format rounds split gains to 6 digits; the JSON dump has them exactly.
    dump = booster.dump_model(num_iteration=num_iteration)
    gains = [_dump_gains(tree["tree_structure"]) for tree in dump["tree_info"]]
    return read_lightgbm_text(text, iteration_range, classes=classes, gains=gains,
                              model_name=type(model).__name__)


def _dump_gains(structure):
    gains = {}
    stack = [structure]
    while stack:
        node = stack.pop()
        if "split_index" in node:
            gains[node["split_index"]] = node["split_gain"]
            stack.extend((node["left_child"], node["right_child"]))
    return np.array([gains[i] for i in range(len(gains))], dtype=np.float64)


def read_lightgbm_text(text, iteration_range=None, classes=None, gains=None,
                       model_name="Booster") -> TreeEnsemble:
    """Convert a LightGBM text model (``str`` or UTF-8 ``bytes``)."""
    if isinstance(text, bytes | bytearray):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(f"not a LightGBM text model: {error}") from None
    header, blocks = _parse(text)
    try:
        n_features = int(header["max_feature_idx"]) + 1
        per_iteration = int(header.get("num_tree_per_iteration", 1))
        n_classes = int(header.get("num_class", 1))
    except (KeyError, ValueError) as error:
        raise FormatError(f"LightGBM header lacks or garbles {error}") from None
    if not 1 <= n_features < 2**31 or not 1 <= per_iteration < 2**31 or n_classes < 1:
        raise FormatError("LightGBM header has a non-positive feature, class or tree count")
    # Declared counts are checked against what the file holds before anything is sized
    # by them: a multiclass model has one tree per class per iteration (so num_class is
    # at most the number of trees), and every feature has a name (or at least a byte).
    if n_classes > 1 and n_classes != per_iteration:
        raise FormatError(f"LightGBM header: num_class={n_classes} but "
                          f"num_tree_per_iteration={per_iteration}; a multiclass model has "
                          "one tree per class per iteration")
    if n_features > len(text):
        raise FormatError(f"LightGBM header: max_feature_idx declares {n_features} features "
                          f"in a file of {len(text)} characters")
    objective = header.get("objective", "custom").split()
    name = objective[0] if objective else "custom"
    if name not in _OBJECTIVES:
        raise ValueError(f"sapwood cannot represent LightGBM objective {name!r}; supported: "
                         f"{', '.join(sorted(_OBJECTIVES))}")
    if "sqrt" in objective:
        raise ValueError("sapwood cannot represent LightGBM's reg_sqrt (predictions are the "
                         "squared raw score)")
    task, link = _OBJECTIVES[name]
    scale = 1.0
    for option in objective[1:]:
        if option.startswith("sigmoid:") and name == "binary":
            # P(y=1) = 1 / (1 + exp(-sigmoid * raw)): scaling the margin by sigmoid lets
            # the plain logistic link reproduce it.
            scale = _float(option.split(":", 1)[1], "sigmoid")
            if not (np.isfinite(scale) and scale > 0):
                raise FormatError(f"LightGBM objective option sigmoid:{scale} must be a "
                                  "positive finite number (LightGBM refuses others)")
    # Names are separated by single spaces only (LightGBM stores a space in a name as
    # an underscore, but keeps tabs and other blanks such as a no-break space).
    names = [name for name in header.get("feature_names", "").split(" ") if name] or None
    if names is not None and len(names) != n_features:
        raise FormatError(f"feature_names has {len(names)} entries for {n_features} features")
    n_trees = len(blocks)
    if n_trees == 0:
        raise ValueError("the LightGBM model has no trees")
    if n_trees % per_iteration:
        raise FormatError(f"{n_trees} trees are not a whole number of iterations of "
                          f"{per_iteration}")
    selected = _select(n_trees // per_iteration, per_iteration, iteration_range)
    if gains is not None and len(gains) != n_trees:
        raise ValueError("gains must have one array per tree")
    trees = [_tree(blocks[t], n_features, names, None if gains is None else gains[t])
             for t in selected]
    categories = _categories(text, header, n_features)
    n_iterations = len(selected) // per_iteration
    weight = scale / n_iterations if "average_output" in header else scale
    if task == "classification" and classes is None:
        classes = tuple(range(max(n_classes, 2)))
    return TreeEnsemble(
        trees=tuple(trees), task=task, n_features=n_features, combine="sum",
        tree_weights=np.full(len(trees), weight), tree_output=selected % per_iteration,
        base_score=np.zeros(per_iteration), link=link,
        classes=classes if task == "classification" else None,
        feature_names=None if names is None else tuple(names), input_dtype=np.float64,
        # Random-forest mode (average_output) bags rows without replacement and does
        # not record them: a forest, not "bagged".
        kind=ModelKind(library="lightgbm", model=model_name, objective=" ".join(objective),
                       library_version=header.get("version", ""),
                       family="forest" if "average_output" in header else "boosting",
                       node_impurity=False),
        categories=categories)


def _categories(text, header, n_features):
    """Per feature the pandas category labels LightGBM recorded, or None.

    ``feature_infos`` lists a categorical feature's codes joined by ``:`` (a numeric
    one's range in brackets, or ``none``); ``pandas_categorical`` one list of labels per
    pandas ``category`` column, in column order. They are matched in order when every
    categorical feature has a list (otherwise it is not known which features the lists
    belong to, and pandas columns are read by their own codes)."""
    marker = "\npandas_categorical:"
    at = text.rfind(marker)
    if at < 0:
        return None
    line = text[at + len(marker):].split("\n", 1)[0].strip()
    try:
        lists = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        raise FormatError("LightGBM pandas_categorical is not JSON") from None
    if not lists:
        return None
    infos = header.get("feature_infos", "").split(" ")
    categorical = [j for j, info in enumerate(infos)
                   if info and not info.startswith("[") and info != "none"]
    if (not isinstance(lists, list) or len(lists) != len(categorical)
            or len(infos) != n_features):
        return None
    categories = [None] * n_features
    for j, labels in zip(categorical, lists, strict=True):
        if not isinstance(labels, list) or len(set(map(repr, labels))) != len(labels):
            raise FormatError("LightGBM pandas_categorical must hold lists of distinct labels")
        categories[j] = tuple(labels)
    return tuple(categories)


def _parse(text):
    lines = iter(text.splitlines())
    if next(lines, "").strip() != "tree":
        raise FormatError("not a LightGBM text model (it must start with the line 'tree')")
    header, blocks, block = {}, [], None
    for line in lines:
        line = line.strip()
        if line == "end of trees":
            break
        if line.startswith("Tree="):
            block = {}
            blocks.append(block)
            continue
        if not line:
            continue
        key, _, value = line.partition("=")
        (header if block is None else block)[key] = value
    else:
        raise FormatError("LightGBM model is truncated: no 'end of trees' line")
    return header, blocks


def _select(n_iterations, per_iteration, iteration_range):
    begin, end = (0, n_iterations) if iteration_range is None else iteration_range
    end = n_iterations if end in (0, None) else end
    if not 0 <= begin < end <= n_iterations:
        raise ValueError(f"iteration_range must satisfy 0 <= begin < end <= {n_iterations}; "
                         f"got {iteration_range}")
    return np.arange(begin * per_iteration, end * per_iteration)


def _float(text, what):
    try:
        return float(text)
    except ValueError:
        raise FormatError(f"LightGBM {what} {text!r} is not a number") from None


def _numbers(block, key, dtype, n):
    text = block.get(key)
    if text is None:
        raise FormatError(f"LightGBM tree lacks {key}")
    try:
        array = np.array(text.split(), dtype=np.float64)
    except ValueError:
        raise FormatError(f"LightGBM tree field {key} is not a list of numbers") from None
    if array.shape != (n,):
        raise FormatError(f"LightGBM tree field {key} has {array.shape[0]} entries; "
                          f"expected {n}")
    if dtype is not np.float64:
        if not np.isfinite(array).all() or (array != np.round(array)).any() \
                or (np.abs(array) >= 2**31).any():
            raise FormatError(f"LightGBM tree field {key} must hold integers")
        array = array.astype(dtype)
    return array


def _tree(block, n_features, names, gains):
    try:
        n_leaves = int(block.get("num_leaves", ""))
    except ValueError:
        raise FormatError("LightGBM tree lacks a valid num_leaves") from None
    if not 1 <= n_leaves < 2**31:
        raise FormatError(f"LightGBM tree has num_leaves={n_leaves}")
    if block.get("is_linear", "0") != "0":
        raise ValueError("sapwood cannot represent LightGBM linear trees (linear_tree=True)")
    leaf_value = _numbers(block, "leaf_value", np.float64, n_leaves)
    leaf_count = _optional(block, "leaf_count", n_leaves)
    leaf_weight = _optional(block, "leaf_weight", n_leaves)
    n_internal = n_leaves - 1
    if n_internal == 0:
        return build_tree([LEAF], [LEAF], None, None, None, None, leaf_value.reshape(1, 1, 1),
                          n_features=n_features, n_node_samples=leaf_count,
                          weighted_n_node_samples=leaf_count, gain=[0.0], cover=leaf_weight)
    feature = _numbers(block, "split_feature", np.int64, n_internal)
    decision = _numbers(block, "decision_type", np.int64, n_internal)
    threshold = _numbers(block, "threshold", np.float64, n_internal)
    children = [_numbers(block, key, np.int64, n_internal)
                for key in ("left_child", "right_child")]
    if gains is None:
        # LightGBM keeps split gains as float32, also when it reads them from text.
        gains = _numbers(block, "split_gain", np.float64, n_internal).astype(
            np.float32).astype(np.float64)
    elif np.shape(gains) != (n_internal,):
        raise ValueError("gains do not match the tree's split count")
    categorical = (decision & 1) != 0
    numeric = ~categorical
    operator = np.full(n_internal, OP_CAT, dtype=np.uint8)
    missing_left = np.zeros(n_internal, dtype=np.uint8)  # NaN: right at a categorical split
    threshold[numeric], operator[numeric], missing_left[numeric] = _routing(
        threshold[numeric], decision[numeric], feature[numeric], names)
    cat_bitsets = None
    if categorical.any():
        threshold[categorical], cat_bitsets = _category_sets(block, threshold[categorical])
    # Leaves follow the internal nodes; LightGBM writes leaf k as child ~k.
    left, right = (np.where(c >= 0, c, n_internal + ~c) for c in children)
    internal_count = _optional(block, "internal_count", n_internal)
    internal_weight = _optional(block, "internal_weight", n_internal)
    internal_value = _optional(block, "internal_value", n_internal)

    def nodes(internal, leaves, fill=0.0):
        return np.concatenate([np.full(n_internal, fill) if internal is None else internal,
                               np.full(n_leaves, fill) if leaves is None else leaves])

    counts = nodes(internal_count, leaf_count)
    return build_tree(
        nodes(left, None, LEAF), nodes(right, None, LEAF), nodes(feature, None),
        nodes(threshold, None), nodes(missing_left, None), nodes(operator, None),
        nodes(internal_value, leaf_value).reshape(-1, 1, 1), n_features=n_features,
        n_node_samples=counts, weighted_n_node_samples=counts,
        gain=nodes(np.asarray(gains, dtype=np.float64), None),
        cover=nodes(internal_weight, leaf_weight), cat_bitsets=cat_bitsets)


def _category_sets(block, index):
    """The format's set offsets and ``cat_bitsets`` of a tree's categorical splits,
    whose thresholds ``index`` point into ``cat_boundaries``."""
    try:
        n_cat = int(block.get("num_cat", ""))
    except ValueError:
        raise FormatError("LightGBM tree with categorical splits lacks a valid num_cat") \
            from None
    if not 1 <= n_cat <= index.shape[0]:
        raise FormatError(f"LightGBM tree has num_cat={n_cat} for {index.shape[0]} "
                          "categorical splits")
    bounds = _numbers(block, "cat_boundaries", np.int64, n_cat + 1)
    if bounds[0] != 0 or (np.diff(bounds) < 0).any():
        raise FormatError("LightGBM cat_boundaries must start at 0 and not decrease")
    words = _numbers(block, "cat_threshold", np.float64, int(bounds[-1]))
    if (words < 0).any() or (words >= 2**32).any() or (words != np.round(words)).any():
        raise FormatError("LightGBM cat_threshold must hold 32-bit unsigned integers")
    if (index != np.round(index)).any() or (index < 0).any() or (index >= n_cat).any():
        raise FormatError(f"a LightGBM categorical split's threshold must index one of its "
                          f"tree's {n_cat} category sets")
    index = index.astype(np.int64)
    return category_sets(words[bounds[k]:bounds[k + 1]] for k in index)


def _optional(block, key, n):
    # LightGBM writes some statistics as empty lines (leaf_weight of a one-leaf tree).
    return _numbers(block, key, np.float64, n) if block.get(key, "").strip() else None


def _routing(threshold, decision, feature, names):
    """Threshold, operator and missing direction reproducing LightGBM's decision."""
    default_left = (decision & 2) != 0
    missing_type = (decision >> 2) & 3
    operator = np.full(threshold.shape, OP_LE, dtype=np.uint8)
    threshold = threshold.copy()
    # None: NaN is compared as 0.0.
    missing_left = np.where(missing_type == _MISSING_NONE, 0.0 <= threshold, default_left)
    zero = missing_type == _MISSING_ZERO
    band_left = zero & default_left & (threshold < _ZERO)
    band_right = zero & ~default_left & (threshold >= -_ZERO)
    # Zero band on the default side next to the threshold: move the threshold to the
    # band's edge. Left is then {x <= 1e-35f} or {x < -1e-35f}.
    unrepresentable = (band_left & (threshold < -_ZERO)) | (band_right & (threshold >= _ZERO))
    if unrepresentable.any():
        node = int(np.argmax(unrepresentable))
        label = f"feature {int(feature[node])}" + (
            f" ({names[int(feature[node])]!r})" if names is not None
            and 0 <= feature[node] < len(names) else "")
        raise ValueError(
            f"LightGBM node {node} on {label} sends zero (zero_as_missing) to the "
            f"{'left' if default_left[node] else 'right'} of threshold {float(threshold[node])!r}, "
            "which one threshold split cannot represent")
    threshold[band_left] = _ZERO
    threshold[band_right] = -_ZERO
    operator[band_right] = OP_LT
    if (missing_type == 3).any():
        raise FormatError("LightGBM decision_type has an unknown missing type (3)")
    return threshold, operator, missing_left.astype(np.uint8)
