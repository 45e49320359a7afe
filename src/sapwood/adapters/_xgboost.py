"""XGBoost boosters, their scikit-learn wrappers and saved JSON / UBJSON models.

Everything is read from XGBoost's JSON model schema (``Booster.save_raw("ubj")``, its
UBJSON form, or a saved file), so files convert without XGBoost installed. XGBoost
stores X as float32 and sends a sample left when ``x < split_condition``, a missing
value (NaN) to the ``default_left`` side; leaves keep their (already shrunk) value in
``split_conditions``. The margin is ``base_score`` (stored as a mean, turned into a
margin by the objective's link) plus the sum of tree outputs per output group, added
in float32 in tree order. DART models weight each tree by ``weight_drop`` (beside the
trees before XGBoost 3.3, in the tree model since): XGBoost multiplies the float32 leaf
value by the float32 weight in float32 and adds the product. Before 3.3 its in-place
prediction (the scikit-learn wrappers' ``predict``, ``Booster.inplace_predict``) of a
DART model takes each tree's output from a buffer started at the base score and
subtracts the base again before weighting (``Dart::InplacePredict``), which rounds the
leaf value to the base score's precision: a wrapper converted under such an XGBoost
accumulates that way (``accumulate="float32_rebased"``), a Booster or file as
``Booster.predict(DMatrix)`` does (``"float32"``), so each gives its own ``predict``
bit for bit. A vector-leaf tree
(``multi_strategy="multi_output_tree"``, one K-vector per leaf) becomes K scalar trees
with its splits, one per output column; files of XGBoost 2.x and 3.x store it in two
layouts (:func:`_vector_leaf_trees`). XGBoost 2.x records no hessian sums for these
trees, so they have no cover (path-dependent TreeSHAP refuses them); XGBoost >= 3.3
gives them categorical splits, stored as in one-output trees.

A categorical split (``split_type`` 1, ``enable_categorical``) lists the categories
that go *right* (``categories`` from ``categories_segments``, ``categories_sizes`` per
node of ``categories_nodes``); NaN goes the ``default_left`` way and every other value
(negative, past 2**24, an unlisted category) left. It becomes the format's set split
with its children swapped: the listed categories go left, NaN the other way round of
``default_left``, everything else right. The training categories of pandas columns
(XGBoost >= 3.1 stores them as ``cats``) are the features' category labels.
"""

from __future__ import annotations

import json
import math
import re
from itertools import chain

import numpy as np

from .._format import LEAF, OP_CAT, OP_LT, FormatError, ModelKind, TreeEnsemble
from ._build import build_tree, build_trees, category_sets, codes_to_words
from ._ubjson import loads

__all__ = ["from_xgboost", "from_xgboost_dict", "read_xgboost_file"]

# objective -> (task, link); the link also turns base_score into a margin.
_OBJECTIVES = {
    "binary:logistic": ("classification", "logistic"),
    "multi:softprob": ("classification", "softmax"),
    "multi:softmax": ("classification", "softmax"),
    "reg:logistic": ("regression", "logistic"),
    "binary:logitraw": ("regression", "identity"),
    "count:poisson": ("regression", "exp"),
    "reg:gamma": ("regression", "exp"),
    "reg:tweedie": ("regression", "exp"),
    "reg:squarederror": ("regression", "identity"),
    "reg:linear": ("regression", "identity"),
    "reg:squaredlogerror": ("regression", "identity"),
    "reg:pseudohubererror": ("regression", "identity"),
    "reg:absoluteerror": ("regression", "identity"),
    "reg:quantileerror": ("regression", "identity"),
    "rank:pairwise": ("regression", "identity"),
    "rank:ndcg": ("regression", "identity"),
    "rank:map": ("regression", "identity"),
    # Survival: the margin is a log hazard ratio (cox) or a log time (aft); predict
    # gives exp(margin), the hazard ratio or the time.
    "survival:cox": ("survival", "exp"),
    "survival:aft": ("survival", "exp"),
}
# base_score is a probability under these; binary:logitraw stores it as a margin
# already (the files of XGBoost 2.1 and 3.2 in tests/adapters/xgboost_versions).
_LOGIT_BASE = ("binary:logistic", "reg:logistic")


def from_xgboost(model, iteration_range=None) -> TreeEnsemble:
    """Convert an ``xgboost.Booster`` or an XGBoost scikit-learn estimator.

    A scikit-learn wrapper fitted with early stopping keeps its trees up to
    ``best_iteration`` (that is what its ``predict`` uses); so does a Booster whose
    attributes record one (its own ``predict`` uses every tree unless given an
    ``iteration_range``; ``iteration_range=(0, 0)`` reads them all).
    """
    booster = model
    classes = None
    in_place = False
    if hasattr(model, "get_booster"):
        # A wrapper predicts in place; XGBoost < 3.3 does so differently for DART
        # (module docstring). xgboost is imported: the model is one of its objects.
        import xgboost

        version = re.match(r"(\d+)\.(\d+)", xgboost.__version__)
        in_place = version is not None and tuple(map(int, version.groups())) < (3, 3)
        missing = getattr(model, "missing", np.nan)
        if missing is not None and not (isinstance(missing, float) and math.isnan(missing)):
            raise ValueError(f"{type(model).__name__} treats {missing!r} as missing; sapwood "
                             "only represents NaN as the missing value")
        booster = model.get_booster()
        if iteration_range is None:
            try:
                iteration_range = (0, model.best_iteration + 1)
            except AttributeError:
                iteration_range = None
        if hasattr(model, "classes_"):
            classes = tuple(np.asarray(model.classes_).tolist())
    # The schema in UBJSON: written in a tenth of the time of its JSON text and read in
    # half (node arrays come as typed arrays, float32 bits as stored, not printed).
    document = loads(bytes(booster.save_raw(raw_format="ubj")))
    return from_xgboost_dict(document, iteration_range, classes=classes,
                             model_name=type(model).__name__, in_place=in_place)


def read_xgboost_file(data: bytes, iteration_range=None) -> TreeEnsemble:
    """Convert the bytes of a saved XGBoost JSON or UBJSON model."""
    if data.lstrip()[:1] == b"{" and data.lstrip()[1:2] in b' \t\r\n"}':
        try:
            document = json.loads(data)
        except (ValueError, RecursionError) as error:
            raise FormatError(f"not a valid XGBoost JSON model: {error}") from None
    else:
        document = loads(data)
    return from_xgboost_dict(document, iteration_range)


def from_xgboost_dict(document, iteration_range=None, classes=None,
                      model_name="Booster", in_place=False) -> TreeEnsemble:
    """Convert XGBoost's JSON model schema, already parsed into Python objects.

    ``in_place``: reproduce the in-place prediction of XGBoost < 3.3 (a DART model's
    differs from ``Booster.predict(DMatrix)``, see the module docstring)."""
    try:
        return _convert(document, iteration_range, classes, model_name, in_place)
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        raise FormatError(f"not a valid XGBoost model: missing or malformed field "
                          f"{error}") from None


def _convert(document, iteration_range, classes, model_name, in_place):
    learner = document["learner"]
    params = learner["learner_model_param"]
    n_features = _int(params, "num_feature", 1)
    n_classes = _int(params, "num_class", 0, default=0)
    objective = learner["objective"]["name"]
    if objective not in _OBJECTIVES:
        raise ValueError(f"sapwood cannot represent XGBoost objective {objective!r}; "
                         f"supported: {', '.join(sorted(_OBJECTIVES))}")
    task, link = _OBJECTIVES[objective]
    booster = learner["gradient_booster"]
    if booster["name"] == "gblinear":
        raise ValueError("an XGBoost gblinear model has no trees")
    if booster["name"] == "dart":  # XGBoost < 3.3: the weights beside the trees
        forest = booster["gbtree"]["model"]
        weights = booster["weight_drop"]
    elif booster["name"] == "gbtree":  # XGBoost >= 3.3 keeps DART weights in the model
        forest = booster["model"]
        weights = forest.get("weight_drop")
    else:
        raise ValueError(f"unknown XGBoost booster {booster['name']!r}")
    names = [str(n) for n in learner.get("feature_names") or []] or None
    if names is not None and len(names) != n_features:
        raise FormatError(f"the model has {n_features} features but {len(names)} names")
    raw_trees = forest["trees"]
    # Declared counts are checked against what the file holds before anything is sized
    # by them: every output column (class or target) has trees of its own.
    n_declared = max(n_classes, _int(params, "num_target", 1, default=1))
    if n_declared > max(len(raw_trees), 1):
        raise FormatError(f"learner_model_param declares {n_declared} classes or targets "
                          f"but the model has {len(raw_trees)} trees; each has trees of its "
                          "own")
    # XGBoost multiplies each tree's float32 leaf value by its float32 weight in float32
    # (the file prints the weights shortest-repr, so they are rounded back to float32).
    if weights is None:
        weights = np.ones(len(raw_trees))
    else:
        weights = _array({"weight_drop": weights}, "weight_drop", np.float64)
        with np.errstate(over="ignore"):  # past float32: inf, which the format refuses
            weights = weights.astype(np.float32).astype(np.float64)
    groups = _array(forest, "tree_info", np.int64)
    if groups.shape[0] != len(raw_trees) or weights.shape[0] != len(raw_trees):
        raise FormatError("tree_info / weight_drop do not have one entry per tree")
    if iteration_range is None:
        # As XGBoost's scikit-learn wrappers predict a saved early-stopped model.
        stopped = best_iterations(document)
        iteration_range = None if stopped is None else (0, stopped[0])
    selected = _select(forest, len(raw_trees), iteration_range)
    n_columns = max(1, n_classes, _int(params, "num_target", 1, default=1))
    if groups.size and (groups.min() < 0 or groups.max() >= n_columns):
        raise FormatError(f"tree_info has an output group outside 0..{n_columns - 1}")
    trees, outputs, tree_weights = [], [], []
    plain = _plain_trees([raw_trees[t] for t in selected], n_features)
    for i, t in enumerate(selected):
        if plain is not None:
            trees.append(plain[i])
            outputs.append(groups[t])
            tree_weights.append(weights[t])
            continue
        try:
            if _int(raw_trees[t].get("tree_param", {}), "size_leaf_vector", 0,
                    default=1) > 1:
                parts = _vector_leaf_trees(raw_trees[t], n_features, n_columns)
            else:
                parts = [(_tree(raw_trees[t], n_features, names), groups[t])]
        except FormatError as error:
            raise FormatError(f"tree {t}: {error}") from None
        for tree, output in parts:
            trees.append(tree)
            outputs.append(output)
            tree_weights.append(weights[t])
    if not trees:
        raise ValueError("the XGBoost model has no trees")
    base = _base_margin(params["base_score"], objective, n_columns)
    if task == "classification" and classes is None:
        classes = tuple(range(max(n_classes, 2)))
    return TreeEnsemble(
        trees=tuple(trees), task=task, n_features=n_features, combine="sum",
        tree_weights=tree_weights, tree_output=outputs, base_score=base,
        link=link, classes=classes if task == "classification" else None,
        feature_names=None if names is None else tuple(names), input_dtype=np.float32,
        # XGBoost's predictor sums in float32 (from the float32 base margin, in tree order).
        accumulate="float32_rebased" if in_place and booster["name"] == "dart" else "float32",
        # XGBoost's random forests (XGBRF*) grow their trees on row subsamples drawn
        # without replacement, which the model does not record: not "bagged".
        kind=ModelKind(library="xgboost", model=model_name, objective=objective,
                       library_version=".".join(str(v) for v in document.get("version", [])),
                       family="forest" if model_name.startswith("XGBRF") else "boosting",
                       node_impurity=False),
        categories=_categories(forest.get("cats"), n_features))


def _categories(cats, n_features):
    """Per feature the pandas categories XGBoost trained with (``cats.enc``: text as
    UTF-8 bytes cut at ``offsets``, numbers as ``values``), None where there are none;
    None without ``cats``."""
    if not isinstance(cats, dict) or not cats.get("enc"):
        return None
    encodings = cats["enc"]
    if not isinstance(encodings, list) or len(encodings) != n_features:
        raise FormatError(f"cats.enc must have one entry per feature ({n_features})")
    categories = []
    for entry in encodings:
        values = list(entry.get("values", [])) if isinstance(entry, dict) else []
        if not values:
            categories.append(None)
        elif "offsets" in entry:
            offsets = _array(entry, "offsets", np.int64, len(entry["offsets"]))
            text = bytes(_array(entry, "values", np.uint8, len(values)).tolist())
            if offsets.shape[0] < 1 or offsets[0] != 0 or offsets[-1] != len(text) \
                    or (np.diff(offsets) < 0).any():
                raise FormatError("cats.enc offsets do not cut the category text")
            try:
                categories.append(tuple(text[a:b].decode("utf-8")
                                        for a, b in zip(offsets[:-1], offsets[1:], strict=True)))
            except UnicodeDecodeError:
                raise FormatError("cats.enc holds category text that is not UTF-8") from None
        else:
            numbers = _array(entry, "values", np.float64, len(values)).tolist()
            categories.append(tuple(int(v) if v.is_integer() else v for v in numbers))
        if categories[-1] is not None and len(set(categories[-1])) != len(categories[-1]):
            raise FormatError("cats.enc lists a category twice")
    return tuple(categories) if any(c is not None for c in categories) else None


def best_iterations(document) -> tuple | None:
    """``(best, total)``: the iterations up to the best one that early stopping recorded
    in the model's attributes (``best_iteration``, 0-based; files of XGBoost < 1.4 may
    hold only ``best_ntree_limit``, the best iteration's count times
    ``num_parallel_tree``) and all the iterations the model holds; None when it
    recorded none, or when the best is the last."""
    learner = document["learner"]
    attributes = learner.get("attributes") or {}
    forest = learner["gradient_booster"]
    forest = forest["gbtree"]["model"] if forest["name"] == "dart" else forest.get("model")
    if not isinstance(forest, dict):
        return None
    indptr = forest.get("iteration_indptr")
    if indptr is None:
        return None  # iterations not recorded: all trees are read (_select)
    total = len(indptr) - 1
    try:
        if "best_iteration" in attributes:
            best = int(attributes["best_iteration"]) + 1
        elif "best_ntree_limit" in attributes:
            parallel = _int(forest.get("gbtree_model_param", {}), "num_parallel_tree", 1,
                            default=1)
            best = int(attributes["best_ntree_limit"]) // parallel
        else:
            return None
    except (TypeError, ValueError):
        recorded = attributes.get("best_iteration", attributes.get("best_ntree_limit"))
        raise FormatError(f"the model's best iteration is not a number: "
                          f"{recorded!r}") from None
    if not 1 <= best <= total:
        raise FormatError(f"the model's best iteration ({best - 1}) is not one of its "
                          f"{total} iterations")
    return None if best == total else (best, total)


def _select(forest, n_trees, iteration_range):
    if iteration_range is None:
        return np.arange(n_trees)
    indptr = forest.get("iteration_indptr")
    if indptr is None:
        raise ValueError("this XGBoost model does not record its iterations "
                         "(iteration_indptr); iteration_range cannot be applied")
    indptr = _array(forest, "iteration_indptr", np.int64)
    n_iterations = indptr.shape[0] - 1
    begin, end = iteration_range
    end = n_iterations if end in (0, None) else end
    if not 0 <= begin < end <= n_iterations:
        raise ValueError(f"iteration_range must satisfy 0 <= begin < end <= {n_iterations}; "
                         f"got {iteration_range}")
    if indptr[0] != 0 or indptr[-1] != n_trees or (np.diff(indptr) < 0).any():
        raise FormatError("iteration_indptr does not partition the trees")
    return np.arange(indptr[begin], indptr[end])


def _base_margin(text, objective, n_columns):
    # XGBoost >= 3 writes a vector "[v1,v2]"; older versions a scalar "v".
    try:
        values = np.array([float(v) for v in str(text).strip("[] ").split(",")],
                          dtype=np.float32).astype(np.float64)
    except ValueError:
        raise FormatError(f"base_score {text!r} is not a number or list of numbers") from None
    if values.shape[0] not in (1, n_columns):
        raise FormatError(f"base_score has {values.shape[0]} entries for {n_columns} outputs")
    values = np.broadcast_to(values, (n_columns,)).copy()
    # As XGBoost's ProbToMargin computes it, in float32: -logf(1.0f / p - 1.0f) and
    # logf(p) (a correctly rounded logf: the float64 log rounded once to float32).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if objective in _LOGIT_BASE:
            odds = np.float32(1.0) / values.astype(np.float32) - np.float32(1.0)
            values = (-np.log(odds.astype(np.float64))).astype(np.float32).astype(np.float64)
        elif _OBJECTIVES[objective][1] == "exp":
            values = np.log(values).astype(np.float32).astype(np.float64)
    if not np.isfinite(values).all():
        raise FormatError(f"base_score {text!r} has no finite margin under {objective}")
    return values


def _tree(raw, n_features, names):
    left = _array(raw, "left_children", np.int64)
    n = left.shape[0]
    right = _array(raw, "right_children", np.int64, n)
    feature = _array(raw, "split_indices", np.int64, n)
    # XGBoost keeps node statistics in float32; widening them exactly keeps its values.
    conditions = _array(raw, "split_conditions", np.float32, n).astype(np.float64)
    default_left = _array(raw, "default_left", np.uint8, n)
    if (default_left > 1).any():
        node = int(np.argmax(default_left > 1))
        raise FormatError(f"default_left must be 0 or 1 (XGBoost writes nothing else); node "
                          f"{node} has {int(default_left[node])}")
    gain = _array(raw, "loss_changes", np.float32, n).astype(np.float64)
    hessian = _array(raw, "sum_hessian", np.float32, n).astype(np.float64)
    internal = _array(raw, "base_weights", np.float32, n).astype(np.float64) \
        if "base_weights" in raw else np.zeros(n)
    value = np.where(left == LEAF, conditions, internal).reshape(n, 1, 1)
    left, right, conditions, default_left, operator, cat_bitsets = _category_splits(
        raw, left, right, conditions, default_left)
    return build_tree(
        left, right, feature, conditions, default_left, operator, value,
        n_features=n_features, weighted_n_node_samples=hessian, gain=gain, cover=hessian,
        cat_bitsets=cat_bitsets)


def _plain_trees(raws, n_features):
    """The trees of ``raws`` converted at once (``build_trees``: as ``_tree`` converts each,
    in one NumPy pass) when all are one-output trees without categorical splits, else
    None. Also None when anything in them is malformed: ``_tree``, tree by tree, then
    converts them or names the problem, so errors read as they always have."""
    try:
        if not raws or any(_int(raw.get("tree_param", {}), "size_leaf_vector", 0,
                                default=1) > 1 for raw in raws):
            return None
        sizes = [len(raw["left_children"]) for raw in raws]
        left = _joined(raws, "left_children", np.int64, sizes)
        right = _joined(raws, "right_children", np.int64, sizes)
        feature = _joined(raws, "split_indices", np.int64, sizes)
        conditions = _joined(raws, "split_conditions", np.float32, sizes).astype(np.float64)
        default_left = _joined(raws, "default_left", np.uint8, sizes)
        gain = _joined(raws, "loss_changes", np.float32, sizes).astype(np.float64)
        hessian = _joined(raws, "sum_hessian", np.float32, sizes).astype(np.float64)
        with_weights = ["base_weights" in raw for raw in raws]
        with_types = ["split_type" in raw for raw in raws]
        if len(set(with_weights)) > 1 or len(set(with_types)) > 1 \
                or (default_left > 1).any():
            return None
        internal = _joined(raws, "base_weights", np.float32, sizes).astype(np.float64) \
            if with_weights[0] else np.zeros(left.shape[0])
        if with_types[0] and ((left != LEAF)
                              & (_joined(raws, "split_type", np.int64, sizes) != 0)).any():
            return None  # categorical splits: tree by tree (_category_splits)
        value = np.where(left == LEAF, conditions, internal).reshape(-1, 1, 1)
        return build_trees(sizes, left, right, feature, conditions, default_left, value,
                           n_features=n_features, weighted_n_node_samples=hessian, gain=gain,
                           cover=hessian)
    except Exception:  # noqa: BLE001 -- tree by tree, any problem is named there
        return None


def _joined(raws, key, dtype, sizes):
    """Array ``key`` of every tree, one after the other (``sizes``: each tree's nodes);
    the values as ``_array`` reads them. Lists parsed from JSON, or typed arrays of one
    type read from UBJSON, become one array in one NumPy call."""
    values = [raw[key] for raw in raws]
    if all(type(v) is list for v in values):
        array = np.asarray(list(chain.from_iterable(values)), dtype=dtype)
    elif all(type(v) is np.ndarray and v.ndim == 1 and v.dtype == values[0].dtype
             for v in values):
        array = np.concatenate(values).astype(dtype, copy=False)
    else:
        array = None
    if array is not None:
        if array.ndim != 1 or [len(v) for v in values] != sizes:
            raise FormatError(f"tree array {key} does not match the trees' sizes")
        return array
    return np.concatenate([_array(raw, key, dtype, n) for raw, n in zip(raws, sizes,
                                                                         strict=True)])


# XGBoost's categories are float32 values below 2**24 (its OutOfRangeCat).
_MAX_CATEGORY = 2**24


def _category_splits(raw, left, right, conditions, default_left):
    """The tree's children, thresholds, missing directions and operators with its
    categorical splits turned into the format's (children swapped, see the module
    docstring), and their ``cat_bitsets`` (None without any)."""
    n = left.shape[0]
    operator = np.full(n, OP_LT, dtype=np.uint8)
    at_set = np.flatnonzero((left != LEAF) & (_array(raw, "split_type", np.int64, n) != 0)) \
        if "split_type" in raw else np.zeros(0, dtype=np.int64)
    if not at_set.size:
        return left, right, conditions, default_left, operator, None
    nodes = _array(raw, "categories_nodes", np.int64)
    segments = _array(raw, "categories_segments", np.int64, nodes.shape[0])
    sizes = _array(raw, "categories_sizes", np.int64, nodes.shape[0])
    listed = _array(raw, "categories", np.float64)
    ends = segments + sizes
    if (segments < 0).any() or (sizes < 0).any() or (ends > listed.shape[0]).any():
        raise FormatError("categories_segments / categories_sizes reach outside categories")
    if (listed < 0).any() or (listed >= _MAX_CATEGORY).any() \
            or (listed != np.round(listed)).any():
        raise FormatError(f"categories must be integers in [0, {_MAX_CATEGORY})")
    where = {int(node): k for k, node in enumerate(nodes)}
    missing = [int(node) for node in at_set if int(node) not in where]
    if missing:
        raise FormatError(f"categorical node {missing[0]} has no entry in categories_nodes")
    words = [codes_to_words(listed[segments[where[int(node)]]:ends[where[int(node)]]])
             for node in at_set]
    conditions, default_left = conditions.copy(), default_left.copy()
    conditions[at_set], cat_bitsets = category_sets(words)
    operator[at_set] = OP_CAT
    default_left[at_set] = 1 - default_left[at_set]
    left, right = left.copy(), right.copy()
    left[at_set], right[at_set] = right[at_set], left[at_set]
    return left, right, conditions, default_left, operator, cat_bitsets


def _vector_leaf_trees(raw, n_features, n_columns):
    """A vector-leaf tree (``multi_strategy="multi_output_tree"``) as one scalar tree per
    output column, each with the same splits and covers: ``[(tree, column), ...]``.

    Two layouts: XGBoost 2.x keeps every node's K weights in ``base_weights`` (n_nodes
    x K, a leaf's weights are its output) and no split statistics; later versions
    (3.2 tested) keep the leaves' outputs apart in ``leaf_weights`` (n_leaves x K,
    leaf ``i`` at the row ``right_children[i]`` names), ``base_weights`` only for the
    targets the splits used, plus ``loss_changes`` and ``sum_hessian``. The layout is
    told by those keys, not by the version number.
    """
    n_outputs = _int(raw["tree_param"], "size_leaf_vector", 2)
    if n_outputs != n_columns:
        raise FormatError(f"size_leaf_vector is {n_outputs} but the model has {n_columns} "
                          "outputs")
    left = _array(raw, "left_children", np.int64)
    n = left.shape[0]
    right = _array(raw, "right_children", np.int64, n)
    leaf = left == LEAF
    feature = _array(raw, "split_indices", np.int64, n)
    conditions = _array(raw, "split_conditions", np.float32, n).astype(np.float64)
    default_left = _array(raw, "default_left", np.uint8, n)
    node_weights = _array(raw, "base_weights", np.float32).astype(np.float64)
    value = np.zeros((n, n_outputs))
    if node_weights.shape[0] == n * n_outputs:
        value = node_weights.reshape(n, n_outputs)
    if "leaf_weights" in raw:
        leaf_weights = _array(raw, "leaf_weights", np.float32).astype(np.float64)
        if leaf_weights.shape[0] % n_outputs:
            raise FormatError(f"leaf_weights has {leaf_weights.shape[0]} entries, not a "
                              f"multiple of the {n_outputs} outputs")
        leaf_weights = leaf_weights.reshape(-1, n_outputs)
        index = right[leaf]
        if ((index < 0) | (index >= leaf_weights.shape[0])).any():
            raise FormatError("a leaf's right_children is not a row of leaf_weights")
        value = value.copy()
        value[leaf] = leaf_weights[index]
        right = np.where(leaf, LEAF, right)
    elif node_weights.shape[0] != n * n_outputs:
        raise FormatError(f"base_weights has {node_weights.shape[0]} entries for {n} nodes "
                          f"and {n_outputs} outputs, and there are no leaf_weights")
    # Categorical splits are stored as in one-output trees (XGBoost >= 3.3 grows them).
    left, right, conditions, default_left, operator, cat_bitsets = _category_splits(
        raw, left, right, conditions, default_left)
    gain = hessian = None
    if "loss_changes" in raw and "sum_hessian" in raw:
        gain = _array(raw, "loss_changes", np.float32, n).astype(np.float64)
        hessian = _array(raw, "sum_hessian", np.float32, n).astype(np.float64)
    # Every output's tree has the covers TreeSHAP weighs by, but only the first carries
    # the split statistics, so that native importances count each split once, as
    # XGBoost's get_score does.
    return [(build_tree(left, right, feature, conditions, default_left, operator,
                        value[:, k].reshape(n, 1, 1), n_features=n_features,
                        weighted_n_node_samples=hessian, gain=gain if k == 0 else None,
                        cover=hessian if k == 0 else None, cat_bitsets=cat_bitsets), k)
            for k in range(n_outputs)]


def _array(raw, key, dtype, n=None):
    try:
        array = np.asarray(raw[key], dtype=dtype)
    except (ValueError, OverflowError):
        raise FormatError(f"tree array {key} holds values that are not {np.dtype(dtype)}") \
            from None
    if array.ndim != 1 or (n is not None and array.shape[0] != n):
        raise FormatError(f"tree array {key} has shape {array.shape}; expected "
                          f"({'n_nodes' if n is None else n},)")
    return array


def _int(params, key, minimum, default=None):
    text = params.get(key, default)
    try:
        number = int(text)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
        raise FormatError(f"{key} must be an integer; got {text!r}") from None
    if not minimum <= number < 2**31:
        raise FormatError(f"{key} must be in [{minimum}, 2**31); got {number}")
    return number
