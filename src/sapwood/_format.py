"""sapwood's one tree format: a struct-of-arrays tree and an ensemble record.

Learners and adapters produce it; every importance measure, plot and export reads
only it. Field names follow scikit-learn's ``tree_`` so that code written for
scikit-learn trees reads the same here. Two fields go beyond scikit-learn, after
treelite: a per-node comparison ``operator`` (XGBoost splits with ``<``) and
optional per-node ``gain`` / ``cover`` statistics whose presence is explicit. The
ensemble also records what kind of model the trees came from (:class:`ModelKind`)
and, for a bagged forest, each tree's bootstrap draws
(:class:`~sapwood._bootstrap.Bootstrap`), so that no measure needs the model object.

Node layout (n_nodes entries each)::

    children_left, children_right   int   child ids, -1 at leaves
    feature                         int   split feature, -2 at leaves
    threshold                       float split value, -2.0 at leaves
    operator                        uint8 0: go left when x <= threshold, 1: when x < threshold,
                                          2: when x is a category of the node's set
    missing_go_to_left              uint8 where a missing (NaN) value goes
    impurity                        float node impurity (criterion of the learner)
    n_node_samples                  int   training rows reaching the node
    weighted_n_node_samples         float their total weight
    value                           float (n_nodes, n_outputs, max_n_classes) node prediction
    gain, cover                     float or None  split gain / hessian cover (boosting libraries)

and per tree ``cat_bitsets`` (uint32, empty without categorical nodes): the category
sets of its categorical nodes (``operator`` 2), whose ``threshold`` holds the offset of
their set in it (layout and routing rule in :mod:`sapwood._kernels._traverse`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from . import _prediction
from ._bootstrap import Bootstrap
from ._cityhash import catboost_hash
from ._impurity import tree_importances
from ._kernels import _traverse
from ._kernels._traverse import (
    LEAF,
    OP_CAT,
    OP_LE,
    OP_LT,
    apply_packed,
    apply_tree,
    decision_path_tree,
    node_depths,
    tree_problem,
)

__all__ = ["Bootstrap", "ModelKind", "TreeArrays", "TreeEnsemble", "FormatError", "LEAF",
           "UNDEFINED", "OP_LE", "OP_LT", "OP_CAT"]

UNDEFINED = -2

_INT_FIELDS = ("children_left", "children_right", "feature", "n_node_samples")
_FLOAT_FIELDS = ("threshold", "impurity", "weighted_n_node_samples")
_FLAG_FIELDS = ("operator", "missing_go_to_left")
_OPTIONAL_FIELDS = ("gain", "cover")


class FormatError(ValueError):
    """A tree or model file does not describe a valid sapwood tree."""


@dataclass(frozen=True, eq=False)
class TreeArrays:
    """One decision tree as parallel node arrays (see the module docstring)."""

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    impurity: np.ndarray
    n_node_samples: np.ndarray
    weighted_n_node_samples: np.ndarray
    value: np.ndarray
    missing_go_to_left: np.ndarray
    operator: np.ndarray
    n_features: int
    gain: np.ndarray | None = None
    cover: np.ndarray | None = None
    cat_bitsets: np.ndarray | None = None
    max_depth: int = field(init=False)

    def __post_init__(self):
        coerce = object.__setattr__
        for name in _INT_FIELDS:
            coerce(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.intp))
        for name in _FLOAT_FIELDS:
            coerce(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.float64))
        for name in _FLAG_FIELDS:
            coerce(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.uint8))
        for name in _OPTIONAL_FIELDS:
            if getattr(self, name) is not None:
                coerce(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.float64))
        bitsets = np.zeros(0) if self.cat_bitsets is None else self.cat_bitsets
        coerce(self, "cat_bitsets", np.ascontiguousarray(bitsets, dtype=np.uint32))
        value = np.asarray(self.value, dtype=np.float64)
        if value.ndim == 1:
            value = value.reshape(-1, 1, 1)
        coerce(self, "value", np.ascontiguousarray(value))
        coerce(self, "n_features", int(self.n_features))
        coerce(self, "max_depth", validate_tree(self))

    # -- scikit-learn's Tree attribute names ------------------------------------------
    @property
    def node_count(self) -> int:
        return self.children_left.shape[0]

    @property
    def capacity(self) -> int:
        return self.node_count

    @property
    def n_outputs(self) -> int:
        return self.value.shape[1]

    @property
    def max_n_classes(self) -> int:
        return self.value.shape[2]

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.children_left == LEAF))

    @property
    def has_gain(self) -> bool:
        return self.gain is not None

    @property
    def has_cover(self) -> bool:
        return self.cover is not None

    @property
    def is_leaf(self) -> np.ndarray:
        return self.children_left == LEAF

    @property
    def has_categorical(self) -> bool:
        """Whether any split tests set membership (``operator == OP_CAT``)."""
        return bool(((self.operator == OP_CAT) & (self.children_left != LEAF)).any())

    def categories_left(self, node: int) -> np.ndarray:
        """The categories (int codes, increasing) categorical node ``node`` sends left."""
        offset = int(self.threshold[node])
        words = self.cat_bitsets[offset + 1:offset + 1 + int(self.cat_bitsets[offset])]
        bits = np.unpackbits(words.astype("<u4").view(np.uint8), bitorder="little")
        return np.flatnonzero(bits)

    def compute_node_depths(self) -> np.ndarray:
        return node_depths(self.children_left, self.children_right)

    # -- routing ---------------------------------------------------------------------
    def _routing(self):
        return (self.children_left, self.children_right, self.feature, self.threshold,
                self.missing_go_to_left, self.operator, self.cat_bitsets)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf id of every row of ``X`` (float32 or float64, already validated)."""
        return apply_tree(_as_kernel_input(X, self.n_features), *self._routing())

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf values, shape (n_samples, n_outputs, max_n_classes)."""
        return self.value[self.apply(X)]

    def decision_path(self, X: np.ndarray):
        """Sparse CSR indicator (n_samples, n_nodes) of the nodes each row visits."""
        from scipy.sparse import csr_matrix

        indptr, indices = decision_path_tree(_as_kernel_input(X, self.n_features),
                                             *self._routing())
        data = np.ones(indices.shape[0], dtype=np.intp)
        return csr_matrix((data, indices, indptr), shape=(X.shape[0], self.node_count))

    def compute_feature_importances(self, normalize: bool = True) -> np.ndarray:
        """MDI of this tree exactly as scikit-learn's ``Tree.compute_feature_importances``."""
        return tree_importances(self, normalize)

    def to_dict(self) -> dict:
        """The node arrays by field name (optional statistics only when present, the
        category sets only when the tree has some)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        if not out["cat_bitsets"].shape[0]:
            del out["cat_bitsets"]
        return {k: v for k, v in out.items() if v is not None}


def _as_kernel_input(X, n_features):
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float32)
    if X.ndim != 2 or X.shape[1] != n_features:
        raise ValueError(f"X must have shape (n_samples, {n_features}); got {X.shape}.")
    return np.ascontiguousarray(X)


def validate_tree(tree: TreeArrays) -> int:
    """Raise FormatError unless ``tree`` is a well-formed binary tree rooted at node 0;
    return its depth.

    Checks every array a kernel will index: lengths, child ranges, that each node has
    exactly one parent (no cycles, no shared nodes, everything reachable), feature
    ranges, no NaN threshold at a split and a finite value row for every node.
    """
    n = tree.children_left.shape[0]
    if n == 0:
        raise FormatError("a tree needs at least one node")
    for name in _INT_FIELDS + _FLOAT_FIELDS + _FLAG_FIELDS:
        array = getattr(tree, name)
        if array.ndim != 1 or array.shape[0] != n:
            raise FormatError(f"{name} must have shape ({n},); got {array.shape}")
    for name in _OPTIONAL_FIELDS:
        array = getattr(tree, name)
        if array is not None and (array.ndim != 1 or array.shape[0] != n):
            raise FormatError(f"{name} must have shape ({n},); got {array.shape}")
    if tree.value.ndim != 3 or tree.value.shape[0] != n or 0 in tree.value.shape[1:]:
        raise FormatError(f"value must have shape ({n}, n_outputs, n_classes); "
                          f"got {tree.value.shape}")
    if tree.n_features < 1:
        raise FormatError(f"n_features must be >= 1; got {tree.n_features}")
    if tree.cat_bitsets.ndim != 1:
        raise FormatError(f"cat_bitsets must be one-dimensional; got shape "
                          f"{tree.cat_bitsets.shape}")
    problem, node, depth = tree_problem(tree.children_left, tree.children_right,
                                        tree.feature, tree.threshold, tree.operator,
                                        tree.n_features)
    if problem != _traverse.SHAPE_OK:
        raise FormatError(_PROBLEMS[problem].format(node=node))
    if not np.isfinite(tree.value).all():
        raise FormatError("value contains NaN or infinite entries")
    _check_category_sets(tree)
    return int(depth)


def _check_category_sets(tree):
    """Every categorical split's offset is a whole number whose set (its word count,
    then that many words) lies inside ``cat_bitsets``, before any kernel reads it."""
    nodes = np.flatnonzero((tree.operator == OP_CAT) & (tree.children_left != LEAF))
    if not nodes.size:
        return
    size = tree.cat_bitsets.shape[0]
    offsets = tree.threshold[nodes]
    bad = (offsets < 0) | (offsets >= size) | (offsets != np.floor(offsets))
    if bad.any():
        node = int(nodes[np.flatnonzero(bad)[0]])
        raise FormatError(f"categorical node {node} has threshold {tree.threshold[node]!r}, "
                          f"which is not an offset into its tree's {size} cat_bitsets words")
    offsets = offsets.astype(np.int64)
    ends = offsets + 1 + tree.cat_bitsets[offsets].astype(np.int64)
    bad = np.flatnonzero(ends > size)
    if bad.size:
        node = int(nodes[bad[0]])
        raise FormatError(f"the category set of node {node} ends at word {int(ends[bad[0]])} "
                          f"past the {size} words of its tree's cat_bitsets")


# scikit-learn stores +inf thresholds for "non-missing left, missing right" splits, so
# only NaN thresholds are an error.
_PROBLEMS = {
    _traverse.ONE_CHILD_LEAF: "a node has exactly one child marked as leaf",
    _traverse.LEFT_OUT_OF_RANGE: "children_left of node {node} is out of range",
    _traverse.RIGHT_OUT_OF_RANGE: "children_right of node {node} is out of range",
    _traverse.NOT_ONE_PARENT: "nodes do not form one tree rooted at node 0 "
                              "(a node has no parent, two parents, or the root has one)",
    _traverse.UNREACHABLE: "the tree contains a cycle unreachable from the root",
    _traverse.FEATURE_OUT_OF_RANGE: "a split node has a feature index out of range",
    _traverse.NAN_THRESHOLD: "a split node has a NaN threshold",
    _traverse.BAD_OPERATOR: "operator must be 0 (<=), 1 (<) or 2 (category set)",
}


TASKS = ("classification", "regression", "survival")
_FAMILIES = ("", "tree", "forest", "boosting")
# How the trees' outputs are added up, as the source library adds them (the dtype of
# the running sum; "_base_last": the sum starts at 0 and the base score is added after
# the trees; "_rebased": each tree's value is first added to its column's base score and
# the base taken off again, in that precision): ``raw_predict`` reproduces the library's
# raw output bit for bit.
ACCUMULATIONS = {"float64": np.float64, "float32": np.float32,
                 "float64_base_last": np.float64, "float32_rebased": np.float32}


@dataclass(frozen=True)
class ModelKind:
    """What kind of model the trees came from, for measures and descriptions.

    ``library``: ``"sapwood"``, ``"sklearn"``, ``"xgboost"``, ``"lightgbm"`` ("" when
    unknown); ``model``: the class name (``"RandomForestClassifier"``, ``"Booster"``);
    ``objective``: the library's objective or loss ("" when not recorded);
    ``library_version``: the version that wrote a model file ("" when not recorded);
    ``family``: ``"tree"`` (one tree), ``"forest"`` (independent trees averaged) or
    ``"boosting"`` (trees fitted in sequence, summed), "" when unknown; ``bagged``:
    each tree was grown on its own bootstrap sample (drawn with replacement), so it has
    out-of-bag rows (the ensemble's ``bootstrap`` says which, when known);
    ``node_impurity``: the trees' ``impurity`` holds the learner's node impurities
    (False for XGBoost, LightGBM and HistGradientBoosting, which record split gains),
    which MDI needs; ``oblivious``: the trees are oblivious (one split per level, as
    CatBoost's symmetric trees), stored breadth first, so that a level's split is the
    same in every node of the level (CatBoost's PredictionValuesChange pairs leaves by
    it).
    """

    library: str = ""
    model: str = ""
    objective: str = ""
    library_version: str = ""
    family: str = ""
    bagged: bool = False
    node_impurity: bool = True
    oblivious: bool = False

    def __post_init__(self):
        for name in ("library", "model", "objective", "library_version"):
            if not isinstance(getattr(self, name), str):
                raise FormatError(f"ModelKind.{name} must be a string; got "
                                  f"{getattr(self, name)!r}")
        if self.family not in _FAMILIES:
            raise FormatError(f"ModelKind.family must be one of {list(_FAMILIES)}; got "
                              f"{self.family!r}")
        for name in ("bagged", "node_impurity", "oblivious"):
            if not isinstance(getattr(self, name), bool):
                raise FormatError(f"ModelKind.{name} must be True or False; got "
                                  f"{getattr(self, name)!r}")


@dataclass(frozen=True, eq=False)
class TreeEnsemble:
    """A model as trees plus how their outputs combine.

    ``raw(X) = base_score + combine_t(tree_weights[t] * value_t(X))`` where ``combine`` is
    ``"mean"`` (forests, single trees: leaf values are class fractions or means, shape
    (n_outputs, max_n_classes)) or ``"sum"`` (boosting: each tree adds its scalar leaf
    value to column ``tree_output[t]`` of a (n_samples, n_columns) margin). ``link``
    turns the raw output into predictions: ``identity``, ``logistic``, ``softmax`` or
    ``exp``. ``classes`` follows scikit-learn's ``classes_``: a tuple of labels for a
    single-output classifier, a tuple of such tuples for a multi-output one (one group
    given for a single output is flattened). ``kind`` says what kind of model the
    trees came from (:class:`ModelKind`), ``bootstrap`` which rows each tree of a
    bagged forest was grown on (:class:`~sapwood._bootstrap.Bootstrap`; None when the
    trees were not bagged or the draws are not known). Adapters and sapwood's learners
    fill both; measures read them instead of asking what class the model is.
    ``categories``: None, or per feature None (numeric, or categories known only by
    their integer codes) or the tuple of the feature's category labels, label ``k``
    being the category of code ``k`` (what categorical splits test, see
    :mod:`sapwood._kernels._traverse`); a pandas ``category`` column is mapped to these
    codes by its labels. A CatBoost model's (``kind.library`` "catboost") labels are
    CatBoost's 32-bit hashes of the categories' text, all its files keep
    (:attr:`hashed_categories`).

    ``accumulate`` is how the source library adds a boosted model's outputs up:
    ``"float64"`` (sapwood, scikit-learn, LightGBM: from the base score, tree by tree
    in float64), ``"float32"`` (XGBoost, whose predictor starts from the float32 base
    score and adds each tree's float32 leaf value in tree order, rounding after every
    addition), ``"float32_rebased"`` (as ``"float32"``, but each tree's leaf value
    first goes through its column's base score, ``(base + value) - base`` in float32,
    before its weight multiplies it: XGBoost < 3.3 predicting a DART model in place,
    as its scikit-learn wrappers do) or ``"float64_base_last"`` (CatBoost: the trees
    summed in float64 from 0, then the base score added). ``raw_predict(X,
    native=True)`` (and so ``predict``, ``predict_proba``) adds the same way, so a
    converted model gives its source's raw output bit for bit (returned as float64).

    ``task="survival"``: a time-to-event model (:mod:`sapwood._prediction` gives its
    risk score, cumulative hazard and survival function). ``times`` are the distinct
    training times, ascending (scikit-survival's ``unique_times_``), ``is_event_time``
    which of them had an event (its ``is_event_time_``; None: all). A survival forest
    or tree (``combine="mean"``) has vector leaves, value shape (n_nodes, n_times, 2):
    ``[..., 0]`` the Nelson-Aalen cumulative hazard and ``[..., 1]`` the Kaplan-Meier
    survival probability of the node's training rows at each time; its risk score is
    the cumulative hazard summed over the event times, averaged over the trees. Without
    ``times`` (scikit-survival's ``low_memory=True``) its leaves hold that risk score
    alone, shape (n_nodes, 1, 1), and it has no functions of time. A boosted survival
    model (``combine="sum"``) sums regression trees into a log hazard ratio (its risk
    score); with ``baseline_cumulative_hazard`` (Breslow's estimate at ``times``) its
    cumulative hazard is ``exp(risk) * baseline`` and its survival
    ``exp(-baseline) ** exp(risk)``.
    """

    trees: tuple
    task: str
    n_features: int
    combine: str = "mean"
    tree_weights: np.ndarray | None = None
    tree_output: np.ndarray | None = None
    base_score: np.ndarray | None = None
    link: str = "identity"
    classes: tuple | None = None
    feature_names: tuple | None = None
    input_dtype: type = np.float32
    kind: ModelKind = ModelKind()
    bootstrap: Bootstrap | None = None
    categories: tuple | None = None
    accumulate: str = "float64"
    times: np.ndarray | None = None
    is_event_time: np.ndarray | None = None
    baseline_cumulative_hazard: np.ndarray | None = None

    def __post_init__(self):
        coerce = object.__setattr__
        coerce(self, "trees", tuple(self.trees))
        if self.accumulate not in ACCUMULATIONS:
            raise FormatError(f"accumulate must be one of {list(ACCUMULATIONS)}; got "
                              f"{self.accumulate!r}")
        if self.accumulate != "float64" and self.combine != "sum":
            raise FormatError(f"accumulate={self.accumulate!r} needs combine='sum' (a "
                              "forest's mean is taken in float64)")
        if self.task not in TASKS:
            raise FormatError(f"task must be one of {list(TASKS)}; got {self.task!r}")
        if self.combine not in ("mean", "sum"):
            raise FormatError(f"combine must be 'mean' or 'sum'; got {self.combine!r}")
        if self.link not in ("identity", "logistic", "softmax", "exp"):
            raise FormatError(f"unknown link {self.link!r}")
        if not self.trees:
            raise FormatError("an ensemble needs at least one tree")
        n_trees = len(self.trees)
        weights = np.ones(n_trees) if self.tree_weights is None else self.tree_weights
        coerce(self, "tree_weights", np.asarray(weights, dtype=np.float64).reshape(n_trees))
        # No library writes a negative or non-finite tree weight, nor a softmax link on
        # a regression (a logistic one it does: XGBoost's reg:logistic, LightGBM's
        # cross_entropy): such a model would predict what its source never did.
        bad = np.flatnonzero(~np.isfinite(self.tree_weights) | (self.tree_weights < 0))
        if bad.size:
            raise FormatError(f"tree_weights must be finite and non-negative; tree "
                              f"{int(bad[0])} has {float(self.tree_weights[bad[0]])}")
        if self.task == "regression" and self.link == "softmax":
            raise FormatError("a regression cannot have the softmax link (it maps the raw "
                              "outputs to class probabilities)")
        outputs = np.zeros(n_trees, np.intp) if self.tree_output is None else self.tree_output
        coerce(self, "tree_output", np.asarray(outputs, dtype=np.intp).reshape(n_trees))
        for tree in self.trees:
            if tree.n_features != self.n_features:
                raise FormatError("every tree must have the ensemble's n_features")
        if self.classes is not None:
            coerce(self, "classes", _normalise_classes(self.classes))
        base = 0.0 if self.base_score is None else self.base_score
        coerce(self, "base_score", np.atleast_1d(np.asarray(base, dtype=np.float64)))
        if not isinstance(self.kind, ModelKind):
            raise FormatError(f"kind must be a ModelKind; got {type(self.kind).__name__}")
        if self.bootstrap is not None and (not isinstance(self.bootstrap, Bootstrap)
                                           or self.bootstrap.seeds.shape != (n_trees,)):
            raise FormatError("bootstrap must be None or a Bootstrap with one seed per tree")
        if self.categories is not None:
            coerce(self, "categories", _normalise_categories(self.categories,
                                                             self.n_features))
        _check_survival(self, coerce)

    @property
    def n_times(self) -> int:
        """How many times a survival model's functions are given at (0 without)."""
        return 0 if self.times is None else int(self.times.shape[0])

    @property
    def has_survival_functions(self) -> bool:
        """Whether the model gives cumulative hazard and survival functions over
        ``times`` (a survival forest with vector leaves, or a Cox-type boosted model
        with its baseline hazard), not only a risk score."""
        return self.task == "survival" and self.times is not None and (
            self.combine == "mean" or self.baseline_cumulative_hazard is not None)

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    @property
    def has_categorical(self) -> bool:
        """Whether any tree has a categorical split."""
        return any(tree.has_categorical for tree in self.trees)

    @property
    def hashed_categories(self) -> bool:
        """Whether ``categories`` holds hashes of the labels: a CatBoost model's, which
        tests ``hash(text) == value`` and keeps only the hashes (the low 32 bits of
        CityHash64 of the label's text, an integer's being its decimal digits). A
        column's labels are then matched by their hash."""
        return self.kind.library == "catboost"

    @property
    def accumulation_dtype(self) -> type:
        """The NumPy type of the running sum (``accumulate``)."""
        return ACCUMULATIONS[self.accumulate]

    @property
    def base_last(self) -> bool:
        """Whether the base score is added after the trees' sum (``accumulate``)."""
        return self.accumulate.endswith("_base_last")

    def _native_values(self, values, t):
        """Tree ``t``'s leaf ``values`` as the source library weights them
        (``accumulate``): through the base score of the tree's column when rebased."""
        if not self.accumulate.endswith("_rebased"):
            return values
        dtype = self.accumulation_dtype
        base = dtype(self.base_score[min(int(self.tree_output[t]),
                                         self.base_score.shape[0] - 1)])
        return ((values.astype(dtype) + base) - base).astype(np.float64)

    def packed(self):
        """All trees' routing arrays concatenated, with global child ids, one
        ``cat_bitsets`` (categorical thresholds shifted to it) and the roots:
        ``(children_left, children_right, feature, threshold, missing_go_to_left,
        operator, cat_bitsets, roots)``."""
        sizes = np.array([t.node_count for t in self.trees], dtype=np.intp)
        roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        offsets = np.repeat(roots, sizes)

        def cat(name):
            return np.concatenate([getattr(tree, name) for tree in self.trees])

        def shifted(name):
            children = cat(name)
            return np.where(children == LEAF, LEAF, children + offsets)

        threshold = cat("threshold")
        operator = cat("operator")
        words = np.array([t.cat_bitsets.shape[0] for t in self.trees], dtype=np.intp)
        if words.any():
            # Each tree's set offsets move by the words of the trees before it (exact:
            # whole numbers far below 2**53).
            word_start = np.repeat(np.cumsum(words) - words, sizes)
            categorical = operator == OP_CAT
            threshold[categorical] += word_start[categorical]
        return (shifted("children_left"), shifted("children_right"), cat("feature"),
                threshold, cat("missing_go_to_left"), operator, cat("cat_bitsets"), roots)

    def node_outputs(self, native=False):
        """What each node adds to the raw output, as ``raw_predict`` adds it: per node
        (all trees, packed in tree order) the tree's weight times its value, shape
        (n_nodes, width); the output column each tree's values start at; and the initial
        raw value. A forest's raw output is ``initial + sum / n_trees + base_score[0]``
        (``combine="mean"``, width = n_outputs x max_n_classes, initial zeros), boosting's
        ``initial + sum`` (``combine="sum"``: one value per tree, initial =
        ``base_score``). ``native=True``: each term as ``raw_predict(native=True)``
        takes it before rounding it to the sum's precision (``accumulate``)."""
        if self.combine == "mean":
            values = [w * tree.value.reshape(tree.node_count, -1)
                      for tree, w in zip(self.trees, self.tree_weights, strict=True)]
            tree_column = np.zeros(self.n_trees, dtype=np.intp)
            initial = np.zeros(values[0].shape[1])
        else:
            values = [w * (self._native_values(tree.value[:, 0, :1], t) if native
                           else tree.value[:, 0, :1])
                      for t, (tree, w) in enumerate(zip(self.trees, self.tree_weights,
                                                        strict=True))]
            tree_column = self.tree_output.astype(np.intp)
            n_columns = max(int(tree_column.max()) + 1, self.base_score.shape[0])
            initial = np.zeros(n_columns) + self.base_score
        return np.ascontiguousarray(np.concatenate(values)), tree_column, initial

    def encode(self, X) -> np.ndarray:
        """``X`` as the ``input_dtype`` array the trees route.

        A pandas DataFrame's ``category`` columns become category codes: by the
        feature's labels in ``categories`` where the model recorded them (a label the
        model does not know, and a missing value, become NaN, as each library's own
        pandas input does), else by the column's own pandas codes. A text (object or
        string) column of a feature with labels is read as a ``category`` column. Other
        columns and other inputs are read as numbers (a categorical feature given as
        numbers holds the codes themselves), except, with :attr:`hashed_categories`,
        integer columns of a feature with labels: CatBoost reads them as categories."""
        dtypes = getattr(X, "dtypes", None)
        hashed = self.hashed_categories
        if dtypes is None or not hasattr(X, "iloc") or not any(
                _as_category(dtype, self._labels(j), hashed)
                for j, dtype in enumerate(dtypes)):
            return np.asarray(X, dtype=self.input_dtype)
        columns = []
        for j in range(X.shape[1]):
            column = X.iloc[:, j]
            if _as_category(column.dtype, self._labels(j), hashed) and \
                    column.dtype.name != "category":
                column = column.astype("category")
            if column.dtype.name != "category":
                columns.append(column.to_numpy(dtype=np.float64, na_value=np.nan))
                continue
            columns.append(category_codes(column.cat.codes.to_numpy(),
                                          list(column.cat.categories), self._labels(j),
                                          hashed))
        return np.column_stack(columns).astype(self.input_dtype)

    def _labels(self, j):
        """Feature ``j``'s category labels, or None."""
        if self.categories is None or j >= len(self.categories):
            return None
        return self.categories[j]

    def apply(self, X) -> np.ndarray:
        """Per-tree leaf ids (local to each tree), shape (n_samples, n_trees)."""
        X = _as_kernel_input(self.encode(X), self.n_features)
        *routing, roots = self.packed()
        return apply_packed(X, *routing, roots) - roots

    def raw_predict(self, X, native=False) -> np.ndarray:
        """``base_score`` plus the combined tree outputs, before the link.

        By default a boosted model's sum is taken in float64 from the base score (the
        sum that attributions such as SHAP values add up to); ``native=True`` adds as
        the source library does (``accumulate``): its raw output, bit for bit.
        """
        leaves = self.apply(X)
        if self.combine == "mean":
            first = self.trees[0].value
            total = np.zeros((leaves.shape[0],) + first.shape[1:])
            for t, (tree, weight) in enumerate(zip(self.trees, self.tree_weights, strict=True)):
                total += weight * tree.value[leaves[:, t]]
            return total / self.n_trees + self.base_score[0]
        n_columns = max(int(self.tree_output.max()) + 1, self.base_score.shape[0])
        dtype = self.accumulation_dtype if native else np.float64
        base_last = native and self.base_last
        margin = np.zeros((leaves.shape[0], n_columns), dtype=dtype)
        if not base_last:
            margin += self.base_score.astype(dtype)
        for t, tree in enumerate(self.trees):
            # Each term rounded to the sum's precision first, as the library stores it.
            value = tree.value[leaves[:, t], 0, 0]
            if native:
                value = self._native_values(value, t)
            term = (self.tree_weights[t] * value).astype(dtype)
            margin[:, self.tree_output[t]] += term
        if base_last:
            margin += self.base_score
        return margin.astype(np.float64, copy=False)

    def predict(self, X) -> np.ndarray:
        """Class labels or link-transformed outputs (:func:`sapwood.adapters.predict`)."""
        return _prediction.predict(self, X)

    def predict_proba(self, X):
        """Class probabilities (:func:`sapwood.adapters.predict_proba`)."""
        return _prediction.predict_proba(self, X)

    def risk_model(self) -> TreeEnsemble:
        """A survival model's risk score as a regression on the same trees: each node's
        value becomes what it adds to the risk score (a forest's cumulative hazard
        summed over the event times; a boosted model's trees are already so), so that
        every measure of a regression (TreeSHAP, partial dependence, ...) reads the risk
        score. Its ``predict`` equals this model's."""
        if self.task != "survival":
            raise ValueError(f"risk_model needs a survival model; this model's task is "
                             f"{self.task!r}")
        fields = {"task": "regression", "times": None, "is_event_time": None,
                  "baseline_cumulative_hazard": None}
        if self.combine == "mean" and self.times is not None:
            fields["trees"] = tuple(
                replace(tree, value=tree.value[:, self.is_event_time, 0].sum(axis=1))
                for tree in self.trees)
        return replace(self, **fields)

    def function_model(self, output) -> TreeEnsemble:
        """A survival forest's cumulative hazard (``output="cumulative_hazard"``) or
        survival function (``"survival"``) at its ``times`` as a multi-output
        regression on the same trees, one output per time (value shape (n_nodes,
        n_times, 1)): its ``raw_predict`` gives the function at every time, and every
        measure of a regression's outputs (TreeSHAP, ...) reads them. Only a forest's
        vector leaves make the functions a sum over trees; a boosted model's are not."""
        columns = {"cumulative_hazard": 0, "survival": 1}
        if output not in columns:
            raise ValueError(f"output must be one of {list(columns)}; got {output!r}")
        if self.task != "survival" or self.combine != "mean" or self.times is None:
            raise ValueError(f"the {output.replace('_', ' ')} at each time is a sum over "
                             "the trees only for a survival forest or tree whose leaves hold "
                             "the functions (scikit-survival's low_memory=False); this model "
                             f"is a {self.task} model (combine={self.combine!r})")
        k = columns[output]
        return replace(self, task="regression", times=None, is_event_time=None,
                       trees=tuple(replace(tree, value=tree.value[:, :, k:k + 1])
                                   for tree in self.trees))

    def predict_cumulative_hazard(self, X) -> np.ndarray:
        """A survival model's cumulative hazard at each of ``times``, shape
        (n_samples, n_times) (:func:`sapwood._prediction.predict_cumulative_hazard`)."""
        return _prediction.predict_cumulative_hazard(self, X)

    def predict_survival(self, X) -> np.ndarray:
        """A survival model's survival probability at each of ``times``, shape
        (n_samples, n_times) (:func:`sapwood._prediction.predict_survival`)."""
        return _prediction.predict_survival(self, X)


def _check_survival(ensemble, coerce):
    """The survival fields: present only on a survival model, each consistent with
    the trees (see :class:`TreeEnsemble`)."""
    names = ("times", "is_event_time", "baseline_cumulative_hazard")
    if ensemble.task != "survival":
        given = [name for name in names if getattr(ensemble, name) is not None]
        if given:
            raise FormatError(f"{given[0]} is a survival model's field; this model's task "
                              f"is {ensemble.task!r}")
        return
    # A boosted model of the time itself (scikit-survival's squared and IPCW losses)
    # predicts exp(raw); every other survival model predicts its raw risk score.
    links = ("identity", "exp") if ensemble.combine == "sum" and \
        ensemble.baseline_cumulative_hazard is None else ("identity",)
    if ensemble.link not in links:
        raise FormatError(f"this survival model's link must be one of {list(links)}; got "
                          f"{ensemble.link!r}")
    times = ensemble.times
    if times is None:
        if ensemble.is_event_time is not None or \
                ensemble.baseline_cumulative_hazard is not None:
            raise FormatError("is_event_time and baseline_cumulative_hazard need times")
    else:
        times = np.ascontiguousarray(times, dtype=np.float64)
        if times.ndim != 1 or not times.shape[0]:
            raise FormatError(f"times must be a non-empty 1-D array; got shape {times.shape}")
        if not np.isfinite(times).all() or (np.diff(times) <= 0).any():
            raise FormatError("times must be finite and strictly increasing")
        coerce(ensemble, "times", times)
        mask = np.ones(times.shape[0], dtype=bool) if ensemble.is_event_time is None \
            else np.asarray(ensemble.is_event_time)
        if mask.shape != times.shape or mask.dtype.kind not in "bui" or \
                not np.isin(mask, (0, 1)).all():
            raise FormatError(f"is_event_time must hold one True/False per time "
                              f"({times.shape[0]}); got shape {mask.shape}")
        coerce(ensemble, "is_event_time", np.ascontiguousarray(mask, dtype=bool))
    if ensemble.combine == "mean":
        if ensemble.baseline_cumulative_hazard is not None:
            raise FormatError("baseline_cumulative_hazard belongs to a boosted (combine="
                              "'sum') survival model; a forest's leaves hold the functions")
        if np.any(ensemble.base_score != 0.0):
            raise FormatError("a survival forest has no base score")
        # Leaves: [cumulative hazard, survival] at each time, or (times None) the risk
        # score alone, as scikit-survival's low_memory trees keep it.
        shape = (1, 1) if times is None else (times.shape[0], 2)
        for t, tree in enumerate(ensemble.trees):
            if tree.value.shape[1:] != shape:
                raise FormatError(f"the values of a survival forest's trees must have shape "
                                  f"(n_nodes, {shape[0]}, {shape[1]}); tree {t} has "
                                  f"{tree.value.shape}")
        return
    hazard = ensemble.baseline_cumulative_hazard
    if hazard is not None:
        hazard = np.ascontiguousarray(hazard, dtype=np.float64)
        if times is None or hazard.shape != times.shape:
            raise FormatError(f"baseline_cumulative_hazard must have one value per time "
                              f"({ensemble.n_times}); got shape {hazard.shape}")
        if not np.isfinite(hazard).all() or (hazard < 0).any() or (np.diff(hazard) < 0).any():
            raise FormatError("baseline_cumulative_hazard must be finite, non-negative "
                              "and non-decreasing")
        coerce(ensemble, "baseline_cumulative_hazard", hazard)
    if ensemble.base_score.shape[0] != 1 or int(ensemble.tree_output.max()) != 0:
        raise FormatError("a boosted survival model has one output column")


def _as_category(dtype, labels, hashed=False) -> bool:
    """Whether a DataFrame column of this dtype is read as categories: a ``category``
    column, or a text one (with ``hashed``, also an integer one) of a feature whose
    labels the model records."""
    name = getattr(dtype, "name", "")
    return name == "category" or (labels is not None and (
        name == "object" or name.startswith("str")
        or (hashed and getattr(dtype, "kind", "") in "iu")))


def category_codes(codes, categories, labels, hashed=False):
    """Float codes of a categorical column given by its own ``codes`` (-1: missing)
    into its ``categories``: the position of each category among the model's
    ``labels`` (NaN for a missing value or a label the model does not know), or the
    column's own codes when ``labels`` is None. With ``hashed`` the labels are
    CatBoost's hashes of the categories' text (:attr:`TreeEnsemble.hashed_categories`)."""
    codes = np.asarray(codes, dtype=np.intp)
    if labels is None:
        lookup = np.arange(len(categories), dtype=np.float64)
    else:
        def key(label):
            return catboost_hash(_label_key(label)) if hashed else _label_key(label)

        known = {label if hashed else _label_key(label): k for k, label in enumerate(labels)}
        lookup = np.array([known.get(key(c), np.nan) for c in categories],
                          dtype=np.float64)
    if not lookup.size:
        return np.full(codes.shape, np.nan)
    return np.where(codes < 0, np.nan, lookup[np.clip(codes, 0, lookup.size - 1)])


def _label_key(label):
    """A category label as a dictionary key: 1, 1.0 and "1" are one category (pandas
    stores a column's categories with its own dtype, libraries record them as text or
    numbers)."""
    label = label.item() if isinstance(label, np.generic) else label
    if isinstance(label, float) and label.is_integer():
        label = int(label)
    return str(label)


def _normalise_categories(categories, n_features):
    """Per feature None or a tuple of distinct labels (Python scalars)."""
    categories = tuple(categories)
    if len(categories) != n_features:
        raise FormatError(f"categories must have one entry per feature ({n_features}); "
                          f"got {len(categories)}")
    out = []
    for j, labels in enumerate(categories):
        if labels is None:
            out.append(None)
            continue
        labels = tuple(np.asarray(labels, dtype=object).tolist())
        if len(set(labels)) != len(labels):
            raise FormatError(f"the categories of feature {j} are not distinct")
        out.append(labels)
    return tuple(out)


def _normalise_classes(classes):
    """Labels as Python scalars; one group of labels for a single output is flattened."""
    groups = [np.asarray(group).tolist() if isinstance(group, tuple | list | np.ndarray)
              else group for group in classes]
    if all(isinstance(group, list) for group in groups):
        nested = tuple(tuple(group) for group in groups)
        return nested[0] if len(nested) == 1 else nested
    return tuple(np.asarray(classes).tolist())
