"""CatBoost models and their saved JSON (``save_model(format="json")``) and .cbm files.

Everything is read from CatBoost's JSON export, so JSON files convert without CatBoost
installed; a .cbm file (CatBoost's binary format) and a model object go through the
``catboost`` package, which writes that JSON. CatBoost compares float32 feature values
with float32 borders: bit ``x > border`` is 1. Its default trees are oblivious (one
split per depth, shared by the whole level): leaf ``sum_i bit_i << i`` over the
``splits`` list, so the last split is the most significant bit and becomes the root
of the ordinary tree built here (the order CatBoost's own ShapValues walks). Trees
grown with ``grow_policy`` Depthwise / Lossguide are exported as nested nodes and
read as they are. A missing value (NaN) follows the feature's
``nan_value_treatment``: ``AsFalse`` (nan_mode Min) and ``AsIs`` (Forbidden; NaN
compares false) send it to the ``x <= border`` side, ``AsTrue`` (Max) to the other.
The raw output is ``scale * sum of trees + bias`` (``scale_and_bias``); a
multiclass tree holds one value per class in each leaf and becomes one tree per
class here.

A one-hot categorical split (``OneHotFeature``) tests ``hash(text) == value``, the
hash being the low 32 bits of CityHash64 of the category's text; its bit is 1 when
they are equal. It becomes a categorical split whose set is that one category, going
left: the node's children are swapped (the equal side, bit 1, is the left child; an
oblivious tree keeps CatBoost's leaf order in its node ids). The model's categories
of a feature are the hashes its ``values`` lists (every value a one-hot split tests),
and they are its labels in ``categories`` (code k: the k-th hash), so the data's
labels are matched by their hash (``TreeEnsemble.hashed_categories``): no text needs
to be stored. CatBoost refuses a missing categorical value; here it goes, like a
category the model does not know, to the not-equal side. CTRs of categorical
features, text and embedding features are refused naming the feature.
"""

from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np

from .._format import LEAF, OP_CAT, OP_LE, FormatError, ModelKind, TreeEnsemble
from ._build import build_tree, category_sets, codes_to_words

__all__ = ["from_catboost", "read_catboost_json", "read_catboost_cbm", "is_catboost_json",
           "from_catboost_dict"]

# loss_function type -> (task, link).
_OBJECTIVES = {
    "RMSE": ("regression", "identity"),
    "Logloss": ("classification", "logistic"),
    "CrossEntropy": ("classification", "logistic"),
    "MultiClass": ("classification", "softmax"),
}
# nan_value_treatment -> does NaN go to the x <= border side.
_NAN_LEFT = {"AsFalse": 1, "AsIs": 1, "AsTrue": 0}
# CatBoost trees are at most 16 deep; anything past this bound is refused before
# 2**depth is computed.
_MAX_DEPTH = 32
# Each (CatBoost tree, class) pair becomes a sapwood tree, which costs far more than
# the bytes its leaf values take in the file; every one CatBoost writes takes at least
# this many (one leaf pair of full-precision doubles, or more).
_MIN_BYTES_PER_TREE = 32
# The category sets of the one-hot splits take at most this many uint32 words per byte
# of the file. A set of the k-th category of a feature takes k / 32 + 2 words, once per
# tree; CatBoost writes each split in some 80 bytes and each category's hash in the
# feature's values, so its models take far fewer.
_MAX_CAT_WORDS_PER_BYTE = 1


def from_catboost(model, iteration_range=None) -> TreeEnsemble:
    """Convert a ``CatBoost``, ``CatBoostRegressor`` or ``CatBoostClassifier``."""
    # Lazy: only a CatBoost model reaches here, so the package is installed.
    from catboost import CatBoostError

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        try:
            model.save_model(path, format="json")
        except CatBoostError as error:  # text / embedding features have no JSON export
            refused = _text_columns(model)
            if refused:
                raise ValueError(f"the CatBoost model takes {refused}; sapwood explains "
                                 "float and categorical features only. Refit with those "
                                 "columns encoded as numbers or categories") from None
            raise ValueError(f"sapwood reads CatBoost models through their JSON export, "
                             f"which this model cannot write: {error}") from None
        with open(path, "rb") as stream:
            data = stream.read()
    classes = getattr(model, "classes_", None)
    return read_catboost_json(data, iteration_range,
                              classes=None if classes is None else tuple(
                                  np.asarray(classes).tolist()),
                              model_name=type(model).__name__)



def _text_columns(model) -> str:
    """``"text features (review, title)"``: the text and embedding columns a fitted
    CatBoost model takes, by name, or ``""``."""
    names = list(getattr(model, "feature_names_", None) or [])
    kinds = []
    for kind in ("text", "embedding"):
        indices = getattr(model, f"get_{kind}_feature_indices", lambda: [])()
        if indices:
            columns = [names[i] if i < len(names) else str(i) for i in indices]
            kinds.append(f"{kind} features ({', '.join(columns[:5])})")
    return " and ".join(kinds)


def read_catboost_cbm(path, iteration_range=None) -> TreeEnsemble:
    """Convert a CatBoost binary model file (.cbm); needs the ``catboost`` package."""
    try:
        # Lazy: catboost is an optional extra, only .cbm files need it.
        import catboost
    except ImportError:
        raise ImportError(f"{os.fspath(path)!r} is a CatBoost binary model (.cbm); reading it "
                          "needs the catboost package: pip install 'sapwood[catboost]'. A "
                          "model saved with save_model(path, format='json') reads without "
                          "it") from None
    model = catboost.CatBoost()
    try:
        model.load_model(os.fspath(path), format="cbm")
    except catboost.CatBoostError as error:
        raise FormatError(f"not a valid CatBoost .cbm model: {error}") from None
    return from_catboost(model, iteration_range)


def is_catboost_json(document) -> bool:
    """Whether a parsed JSON document has the shape of CatBoost's model export."""
    return isinstance(document, dict) and "features_info" in document and (
        "oblivious_trees" in document or "trees" in document)


def read_catboost_json(data, iteration_range=None, classes=None,
                       model_name="CatBoost") -> TreeEnsemble:
    """Convert the bytes (or text) of a CatBoost JSON model."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise FormatError(f"not a valid CatBoost JSON model: {error}") from None
    return from_catboost_dict(document, iteration_range, classes, model_name,
                              n_bytes=len(data))


def from_catboost_dict(document, iteration_range=None, classes=None,
                       model_name="CatBoost", n_bytes=None) -> TreeEnsemble:
    """Convert CatBoost's JSON model, already parsed into Python objects.

    ``n_bytes``, the size of the file it was read from, bounds the number of trees
    made (one per CatBoost tree and class) before any is built."""
    try:
        return _convert(document, iteration_range, classes, model_name, n_bytes)
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        raise FormatError(f"not a valid CatBoost model: missing or malformed field "
                          f"{error}") from None


def _convert(document, iteration_range, classes, model_name, n_bytes):
    if not is_catboost_json(document):
        raise FormatError("not a CatBoost JSON model: it needs 'features_info' and "
                          "'oblivious_trees' or 'trees'")
    info = document.get("model_info") or {}
    params = info.get("params") or {}
    objective = (params.get("loss_function") or {}).get("type")
    if objective not in _OBJECTIVES:
        raise ValueError(f"sapwood cannot represent CatBoost loss_function {objective!r}; "
                         f"supported: {', '.join(sorted(_OBJECTIVES))}")
    task, link = _OBJECTIVES[objective]
    features, n_features, names, categories = _features(document["features_info"])
    scale, bias = _scale_and_bias(document.get("scale_and_bias", [1.0, [0.0]]))
    n_dims = bias.shape[0]
    if (n_dims > 1) != (objective == "MultiClass"):
        raise FormatError(f"scale_and_bias has {n_dims} biases; a {objective} model has "
                          f"{'one per class' if objective == 'MultiClass' else 'one'}")
    oblivious = "oblivious_trees" in document
    raw_trees = document["oblivious_trees" if oblivious else "trees"]
    if not isinstance(raw_trees, list) or not raw_trees:
        raise ValueError("the CatBoost model has no trees")
    begin, end = _select(len(raw_trees), iteration_range)
    # Every leaf holds n_dims values (checked per tree) and each class gets trees of its
    # own here: the trees made are bounded by the file's bytes before any is built.
    n_made = (end - begin) * n_dims
    if n_bytes is not None and n_made * _MIN_BYTES_PER_TREE > n_bytes:
        raise FormatError(f"scale_and_bias declares {n_dims} classes for {end - begin} trees "
                          f"({n_made} trees here) in a file of {n_bytes} bytes; CatBoost "
                          f"writes at least {_MIN_BYTES_PER_TREE} bytes of leaf values per "
                          "tree and class")
    if n_bytes is not None:
        words = sum(_category_words(raw_trees[t], features, oblivious)
                    for t in range(begin, end))
        if words > _MAX_CAT_WORDS_PER_BYTE * n_bytes:
            raise FormatError(f"the one-hot splits' category sets take {words} words, more "
                              f"than {_MAX_CAT_WORDS_PER_BYTE} per byte of the "
                              f"{n_bytes}-byte file (a set of category k takes k / 32 + 2)")
    read = _oblivious_tree if oblivious else _nested_tree
    trees, outputs = [], []
    for t in range(begin, end):
        try:
            per_dim = read(raw_trees[t], features, n_features, n_dims, scale)
        except FormatError as error:
            raise FormatError(f"tree {t}: {error}") from None
        trees.extend(per_dim)
        outputs.extend(range(n_dims))
    if task == "classification" and classes is None:
        classes = _class_names(info, n_dims)
    return TreeEnsemble(
        trees=tuple(trees), task=task, n_features=n_features, combine="sum",
        tree_output=np.array(outputs, dtype=np.intp), base_score=bias, link=link,
        classes=classes if task == "classification" else None, feature_names=names,
        input_dtype=np.float32, kind=_kind(model_name, objective, info, oblivious),
        # CatBoost sums the trees in float64 from 0, then adds the bias.
        accumulate="float64_base_last",
        categories=categories if any(c is not None for c in categories) else None)


def _kind(model_name, objective, info, oblivious):
    # The one place that says where the trees came from; native_importance reads
    # `oblivious` (CatBoost's PredictionValuesChange pairs the leaves of an oblivious
    # tree, breadth first as read here). CatBoost's nodes record no impurities.
    version = str(info.get("catboost_version_info", ""))
    tag = version.partition("tags/v")[2].split()[0] if "tags/v" in version else ""
    return ModelKind(library="catboost", model=model_name, objective=objective,
                     library_version=tag, family="boosting", node_impurity=False,
                     oblivious=oblivious)


def _features(features_info):
    """The model's features: ``{("float", feature_index): (flat index, NaN goes left)}``
    and ``{("cat", feature_index): (flat index, {hash: code})}`` in one dict,
    n_features, names or None, and per feature None or its category hashes.

    Every feature the model takes is listed with its flat (column) index; features of
    a kind sapwood cannot read are refused, naming them."""
    if not isinstance(features_info, dict):
        raise FormatError("features_info must be an object")
    for kind in ("text_features", "embedding_features"):
        listed = features_info.get(kind) or []
        if listed:
            label = ", ".join(_feature_label(f) for f in listed[:5])
            raise FormatError(
                f"the CatBoost model takes {kind.replace('_', ' ')} ({label}); sapwood's "
                "tree format represents float and one-hot categorical features only. "
                "Refit with those columns encoded as numbers or categories")
    floats = features_info.get("float_features") or []
    cats = features_info.get("categorical_features") or []
    if not isinstance(floats, list) or not isinstance(cats, list) or not floats + cats:
        raise FormatError("features_info lists no float_features or categorical_features")
    features, names, categories = {}, {}, {}
    for k, entry in enumerate(floats):
        where = f"float_features[{k}]"
        index = _int(entry, "feature_index", where)
        flat = _int(entry, "flat_feature_index", where)
        treatment = entry.get("nan_value_treatment", "AsIs")
        if treatment not in _NAN_LEFT:
            raise FormatError(f"{where}.nan_value_treatment must be one of "
                              f"{', '.join(sorted(_NAN_LEFT))}; got {treatment!r}")
        _add(features, names, ("float", index), flat, (flat, _NAN_LEFT[treatment]), entry,
             where)
    for k, entry in enumerate(cats):
        where = f"categorical_features[{k}]"
        index = _int(entry, "feature_index", where)
        flat = _int(entry, "flat_feature_index", where)
        hashes = _hashes(entry.get("values", []), f"{where}.values")
        _add(features, names, ("cat", index), flat,
             (flat, {h: code for code, h in enumerate(hashes)}), entry, where)
        categories[flat] = hashes
    _refuse_ctrs(features_info.get("ctrs") or [], cats)
    # Every column of X is listed (features the model ignores too): the flat indices
    # are 0..n-1, so n_features is backed by the file's entries.
    n_features = len(floats) + len(cats)
    if set(names) != set(range(n_features)):
        raise FormatError(f"flat_feature_index of the {n_features} float and categorical "
                          f"features must be 0..{n_features - 1}")
    labels = [names[j] for j in range(n_features)]
    return (features, n_features, tuple(labels) if all(labels) else None,
            tuple(categories.get(j) for j in range(n_features)))


def _refuse_ctrs(ctrs, cats):
    """A FormatError naming the categorical features the model's CTRs read, if any."""
    if not ctrs:
        return
    used = set()
    for ctr in ctrs if isinstance(ctrs, list) else []:
        elements = ctr.get("elements") if isinstance(ctr, dict) else None
        for element in elements if isinstance(elements, list) else []:
            if isinstance(element, dict):
                used.add(element.get("cat_feature_index"))
    named = [_feature_label(entry) for entry in cats
             if isinstance(entry, dict) and entry.get("feature_index") in used]
    label = ", ".join(named[:5]) or "unnamed features"
    raise FormatError(
        f"the CatBoost model uses CTRs (target statistics) of categorical features "
        f"({label}); sapwood's tree format represents float and one-hot categorical "
        "features only. Refit with one_hot_max_size above those features' numbers of "
        "categories (one-hot splits) or with the columns encoded as numbers")


def _add(features, names, key, flat, value, entry, where):
    if key in features or flat in names:
        raise FormatError(f"{where} repeats feature_index {key[1]} or flat_feature_index "
                          f"{flat}")
    features[key] = value
    names[flat] = str(entry.get("feature_id", ""))


def _hashes(values, where):
    """A categorical feature's one-hot values as unsigned 32-bit hashes (CatBoost
    writes them as signed 32-bit integers; the hash map of a model saved with a pool
    unsigned), each once."""
    if not isinstance(values, list):
        raise FormatError(f"{where} must be a list of 32-bit integers")
    hashes = tuple(_hash(value, f"{where}[{i}]") for i, value in enumerate(values))
    if len(set(hashes)) != len(hashes):
        raise FormatError(f"{where} repeats a value")
    return hashes


def _hash(value, what):
    if isinstance(value, bool) or not isinstance(value, int) or not -2**31 <= value < 2**32:
        raise FormatError(f"{what} must be a 32-bit integer; got {value!r}")
    return value & 0xFFFFFFFF


def _feature_label(entry):
    if not isinstance(entry, dict):
        return repr(entry)
    name = entry.get("feature_id") or entry.get("feature_name")
    label = f"column {entry.get('flat_feature_index')}"
    return f"{label} ({name!r})" if name else label


def _scale_and_bias(value):
    if not isinstance(value, list) or len(value) != 2:
        raise FormatError(f"scale_and_bias must be [scale, [bias, ...]]; got {value!r}")
    scale = _finite(value[0], "scale_and_bias scale")
    bias = value[1] if isinstance(value[1], list) else [value[1]]
    if not bias:
        raise FormatError("scale_and_bias has no bias")
    return scale, np.array([_finite(b, "scale_and_bias bias") for b in bias])


def _select(n_trees, iteration_range):
    if iteration_range is None:
        return 0, n_trees
    begin, end = iteration_range
    end = n_trees if end in (0, None) else end
    if not 0 <= begin < end <= n_trees:
        raise ValueError(f"iteration_range must satisfy 0 <= begin < end <= {n_trees}; "
                         f"got {iteration_range}")
    return begin, end


def _split(split, features, where):
    """(flat feature, float32 border, NaN goes left, category code) of a float split,
    whose category is None, or of a one-hot split (border 0, NaN right)."""
    if not isinstance(split, dict):
        raise FormatError(f"{where} must be an object")
    kind = split.get("split_type")
    if kind == "OneHotFeature":
        index = _int(split, "cat_feature_index", where)
        if ("cat", index) not in features:
            raise FormatError(f"{where}.cat_feature_index {index} is not a listed "
                              "categorical feature")
        flat, codes = features["cat", index]
        value = _hash(split.get("value"), f"{where}.value")
        if value not in codes:
            raise FormatError(f"{where}.value {split.get('value')!r} is not one of its "
                              "feature's values in features_info")
        return flat, 0.0, 0, codes[value]
    if kind != "FloatFeature":
        what = {"OnlineCtr": "a CTR (target statistic) of categorical features",
                "EstimatedFeature": "a feature estimated from text or embeddings"}.get(
                    kind, f"split_type {kind!r}")
        raise FormatError(f"{where} splits on {what}; "
                         "sapwood's tree format represents float and one-hot categorical "
                         "splits only (train with one_hot_max_size above the categorical "
                         "features' number of categories for one-hot splits)")
    index = _int(split, "float_feature_index", where)
    if ("float", index) not in features:
        raise FormatError(f"{where}.float_feature_index {index} is not a listed float "
                          "feature")
    border = _finite(split.get("border"), f"{where}.border")
    with np.errstate(over="ignore"):
        border32 = np.float32(border)
    if not np.isfinite(border32):
        raise FormatError(f"{where}.border {border!r} is outside float32 (CatBoost stores "
                          "borders as float32)")
    flat, nan_left = features["float", index]
    return flat, float(border32), nan_left, None


def _category_words(raw, features, oblivious):
    """The words of a tree's category sets, one per distinct one-hot code (what
    :class:`_Sets` will hold), counted before any tree is built; splits that are not
    well-formed one-hot splits count nothing here and are refused when read."""
    if oblivious:
        splits = raw.get("splits") if isinstance(raw, dict) else None
        splits = splits if isinstance(splits, list) else []
    else:
        splits, stack = [], [raw]
        while stack:
            node = stack.pop()
            if isinstance(node, dict) and "split" in node:
                splits.append(node["split"])
                stack.extend((node.get("left"), node.get("right")))
    codes = set()
    for split in splits:
        if isinstance(split, dict) and split.get("split_type") == "OneHotFeature":
            feature = features.get(("cat", split.get("cat_feature_index")))
            value = split.get("value")
            if feature is not None and isinstance(value, int):
                codes.add(feature[1].get(value & 0xFFFFFFFF))
    return sum(code // 32 + 2 for code in codes if code is not None)


class _Sets:
    """A tree's category sets, one per distinct one-hot code, numbered as met; the
    nodes hold their set's number until :meth:`finish` makes it an offset."""

    def __init__(self):
        self.codes = {}

    def number(self, code):
        return self.codes.setdefault(code, len(self.codes))

    def finish(self, threshold, categorical):
        """Each ``categorical`` node's set number in ``threshold`` replaced by the set's
        offset in the tree's ``cat_bitsets``, which are returned (None without sets)."""
        if not self.codes:
            return None
        offsets, bitsets = category_sets(codes_to_words([code]) for code in self.codes)
        threshold[categorical] = offsets[threshold[categorical].astype(np.intp)]
        return bitsets


def _oblivious_tree(raw, features, n_features, n_dims, scale):
    """One tree per output dimension from an oblivious tree: a full binary tree whose
    root tests the last split; level d (from the root) tests splits[depth - 1 - d]."""
    splits = raw["splits"]
    values = raw["leaf_values"]
    if not isinstance(splits, list) or not isinstance(values, list):
        raise FormatError("splits and leaf_values must be lists")
    depth = len(splits)
    if depth > _MAX_DEPTH or len(values) != n_dims << depth:
        raise FormatError(f"leaf_values has {len(values)} entries; {depth} splits and "
                          f"{n_dims} output(s) need {n_dims} x 2**{depth}")
    leaf_values = _finite_array(values, "leaf_values").reshape(1 << depth, n_dims)
    weights = raw.get("leaf_weights")
    if weights is None:
        weights = np.ones(1 << depth)
    elif not isinstance(weights, list) or len(weights) != 1 << depth:
        raise FormatError(f"leaf_weights must have {1 << depth} entries (one per leaf)")
    else:
        weights = _finite_array(weights, "leaf_weights")
        if (weights < 0).any():
            raise FormatError(f"leaf_weights[{int(np.argmax(weights < 0))}] is negative")
    # Breadth-first numbering: node i has children 2i + 1 (bit 0) and 2i + 2 (bit 1), so
    # leaf p (node ids in order) took bit depth - 1 - d at level d: it is CatBoost's leaf
    # p. A one-hot level's left child is 2i + 2 (bit 1: equal, the category's set).
    n_internal = (1 << depth) - 1
    n_nodes = 2 * n_internal + 1
    ids = np.arange(n_nodes)
    left = np.where(ids < n_internal, 2 * ids + 1, LEAF)
    right = np.where(ids < n_internal, 2 * ids + 2, LEAF)
    feature = np.zeros(n_nodes, dtype=np.intp)
    threshold = np.zeros(n_nodes)
    nan_left = np.zeros(n_nodes, dtype=np.uint8)
    operator = np.full(n_nodes, OP_LE, dtype=np.uint8)
    sets = _Sets()
    levels = [np.arange((1 << d) - 1, (2 << d) - 1) for d in range(depth)]
    for d, nodes in enumerate(levels):
        flat, border, missing, code = _split(splits[depth - 1 - d], features,
                                             f"splits[{depth - 1 - d}]")
        feature[nodes], threshold[nodes], nan_left[nodes] = flat, border, missing
        if code is not None:
            operator[nodes] = OP_CAT
            threshold[nodes] = sets.number(code)
            left[nodes], right[nodes] = right[nodes], left[nodes].copy()
    cover = np.zeros(n_nodes)
    cover[n_internal:] = weights
    value = np.zeros((n_nodes, n_dims))
    value[n_internal:] = scale * leaf_values
    _fill_internal(cover, value, left, right, levels[::-1])
    bitsets = sets.finish(threshold, operator == OP_CAT)
    return _per_dimension(left, right, feature, threshold, nan_left, operator, value, cover,
                          n_features, bitsets)


def _fill_internal(cover, value, left, right, batches):
    """Internal nodes' cover (their children's sum) and value (their children's
    cover-weighted mean, what CatBoost's PredictionValuesChange compares against; the
    plain mean without weight), batch by batch from the deepest."""
    for nodes in batches:
        a, b = left[nodes], right[nodes]
        cover[nodes] = cover[a] + cover[b]
        total = cover[nodes][:, None]
        weighted = cover[a][:, None] * value[a] + cover[b][:, None] * value[b]
        value[nodes] = np.where(total > 0, weighted / np.where(total > 0, total, 1.0),
                                0.5 * (value[a] + value[b]))


def _per_dimension(left, right, feature, threshold, nan_left, operator, value, cover,
                   n_features, bitsets):
    """One sapwood tree per output dimension (column of ``value``)."""
    return [build_tree(left, right, feature, threshold, nan_left, operator,
                       value[:, k].reshape(-1, 1, 1), n_features=n_features,
                       weighted_n_node_samples=cover, cover=cover, cat_bitsets=bitsets)
            for k in range(value.shape[1])]


def _nested_tree(raw, features, n_features, n_dims, scale):
    """One tree per output dimension from a non-symmetric (Depthwise / Lossguide) tree,
    exported as nested {"split", "left", "right"} / {"value", "weight"} objects; the
    "right" child of a one-hot split is the equal side (its bit 1), the left one here."""
    left, right, split_of, leaf_values, weights = [], [], [], [], []
    depths = []
    sets = _Sets()
    stack = [(raw, -1, False, 0)]
    while stack:
        node, parent, is_right, level = stack.pop()
        if not isinstance(node, dict):
            raise FormatError(f"node {len(left)} must be an object")
        here = len(left)
        if parent >= 0:
            (right if is_right else left)[parent] = here
        left.append(LEAF)
        right.append(LEAF)
        depths.append(level)
        if "split" in node:
            flat, border, missing, code = _split(node["split"], features,
                                                 f"node {here} split")
            equal_left = code is not None
            if equal_left:
                split_of.append((flat, sets.number(code), missing, OP_CAT))
            else:
                split_of.append((flat, border, missing, OP_LE))
            leaf_values.append(np.zeros(n_dims))
            weights.append(0.0)
            stack.append((node["right"], here, not equal_left, level + 1))
            stack.append((node["left"], here, equal_left, level + 1))
        else:
            value = node["value"]
            value = _finite_array(value if isinstance(value, list) else [value],
                                  f"node {here} value")
            if value.shape[0] != n_dims:
                raise FormatError(f"node {here} value has {value.shape[0]} entries for "
                                  f"{n_dims} output(s)")
            weight = _finite(node.get("weight", 1.0), f"node {here} weight")
            if weight < 0:
                raise FormatError(f"node {here} weight is negative")
            split_of.append((0, 0.0, 0, OP_LE))
            leaf_values.append(value)
            weights.append(weight)
    left, right = np.array(left), np.array(right)
    feature, threshold, nan_left, operator = (
        np.array(column) for column in zip(*split_of, strict=True))
    threshold = threshold.astype(np.float64)
    operator = operator.astype(np.uint8)
    cover = np.array(weights)
    value = scale * np.array(leaf_values)
    # Deepest level first fills bottom-up (a level's children are all one level down).
    depth = np.array(depths)
    internal = np.flatnonzero(left != LEAF)
    internal = internal[np.argsort(-depth[internal], kind="stable")]
    batches = np.split(internal, np.flatnonzero(np.diff(depth[internal])) + 1)
    _fill_internal(cover, value, left, right, batches)
    bitsets = sets.finish(threshold, (operator == OP_CAT) & (left != LEAF))
    return _per_dimension(left, right, feature, threshold, nan_left, operator, value, cover,
                          n_features, bitsets)


def _class_names(info, n_dims):
    names = (info.get("class_params") or {}).get("class_names") or []
    n_classes = max(n_dims, 2)
    if names and len(names) != n_classes:
        raise FormatError(f"class_params.class_names has {len(names)} names for "
                          f"{n_classes} classes")
    return tuple(names) if names else tuple(range(n_classes))


def _int(entry, key, where):
    value = entry.get(key) if isinstance(entry, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise FormatError(f"{where}.{key} must be an integer in [0, 2**31); got {value!r}")
    return value


def _is_finite_number(value):
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond float64
        return False


def _finite(value, what):
    if not _is_finite_number(value):
        raise FormatError(f"{what} must be a finite number; got {value!r}")
    return float(value)


def _finite_array(values, what):
    """A list of finite numbers as float64; the first other entry is named."""
    for i, value in enumerate(values):
        if not _is_finite_number(value):
            raise FormatError(f"{what}[{i}] must be a finite number; got {value!r}")
    return np.array(values, dtype=np.float64)
