"""Categorical splits one row and one node at a time (plain Python): the reference for
every kernel that routes rows through the format's category sets.

The rule (docs/model-format.md): at a split with operator 2 the threshold is the
offset ``k`` of the node's set in its tree's ``cat_bitsets``, ``cat_bitsets[k]`` the
number of words and the words after it the set, category ``c`` being bit ``c % 32`` of
word ``c // 32``. NaN goes where ``missing_go_to_left`` says; a value goes left when it
is not negative and its integer part is a category of the set; everything else goes
right.
"""

import itertools
import math

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from sapwood._format import LEAF, TreeArrays, TreeEnsemble
from sapwood.adapters import as_ensemble

OP_LE, OP_LT, OP_CAT = 0, 1, 2


def naive_goes_left(tree, node, value):
    value = float(value)
    if math.isnan(value):
        return bool(tree.missing_go_to_left[node])
    operator = int(tree.operator[node])
    threshold = float(tree.threshold[node])
    if operator == OP_LE:
        return value <= threshold
    if operator == OP_LT:
        return value < threshold
    offset = int(threshold)
    n_words = int(tree.cat_bitsets[offset])
    if value < 0 or value >= 32 * n_words:
        return False
    code = int(value)
    return (int(tree.cat_bitsets[offset + 1 + code // 32]) >> (code % 32)) & 1 == 1


def naive_path(tree, x):
    """The nodes row ``x`` passes through, root first."""
    node = 0
    path = [0]
    while tree.children_left[node] != LEAF:
        if naive_goes_left(tree, node, x[tree.feature[node]]):
            node = int(tree.children_left[node])
        else:
            node = int(tree.children_right[node])
        path.append(node)
    return path


def naive_apply(tree, X):
    return np.array([naive_path(tree, x)[-1] for x in X], dtype=np.intp)


def naive_raw(ensemble, X):
    """``TreeEnsemble.raw_predict`` with the naive routing."""
    X = np.asarray(X, dtype=ensemble.input_dtype).astype(np.float64)
    values, tree_column, initial = ensemble.node_outputs()
    starts = np.cumsum([0] + [t.node_count for t in ensemble.trees])
    out = np.zeros((X.shape[0], initial.shape[0]))
    for t, tree in enumerate(ensemble.trees):
        leaves = naive_apply(tree, X) + starts[t]
        width = values.shape[1]
        out[:, tree_column[t]:tree_column[t] + width] += values[leaves]
    if ensemble.combine == "mean":
        return out / ensemble.n_trees + ensemble.base_score[0]
    return out + initial


def _expectation(tree, x, known, node=0):
    """Path-dependent E[f(X) | X_S = x_S]: follow x at splits on S, else the children's
    values weighted by cover (the shap package's definition)."""
    if tree.children_left[node] == LEAF:
        return tree.value[node].reshape(-1)
    left, right = int(tree.children_left[node]), int(tree.children_right[node])
    if tree.feature[node] in known:
        child = left if naive_goes_left(tree, node, x[tree.feature[node]]) else right
        return _expectation(tree, x, known, child)
    cover = tree.weighted_n_node_samples
    return (cover[left] * _expectation(tree, x, known, left)
            + cover[right] * _expectation(tree, x, known, right)) / cover[node]


def naive_path_dependent_shap(tree, x):
    """SHAP values (n_features, width) of one tree by enumerating every coalition."""
    n = tree.n_features
    phi = np.zeros((n, tree.value[0].size))
    for j in range(n):
        others = [f for f in range(n) if f != j]
        for size in range(n):
            weight = math.factorial(size) * math.factorial(n - size - 1) / math.factorial(n)
            for subset in itertools.combinations(others, size):
                known = set(subset)
                phi[j] += weight * (_expectation(tree, x, known | {j})
                                    - _expectation(tree, x, known))
    return phi


def categorical_tree(tree, rng, n_categories=70, share=0.5, x_columns=None):
    """``tree`` (a TreeArrays) with about ``share`` of its splits replaced by
    categorical ones on the same feature: a random set of codes below
    ``n_categories`` (some sets span three words, some are empty) and a random
    missing-value direction. ``x_columns``: the features that may become categorical
    (default all)."""
    threshold = tree.threshold.copy()
    operator = tree.operator.copy()
    missing = tree.missing_go_to_left.copy()
    words = []
    for node in np.flatnonzero(tree.children_left != LEAF):
        if x_columns is not None and tree.feature[node] not in x_columns:
            continue
        if rng.rand() >= share:
            continue
        codes = np.flatnonzero(rng.rand(n_categories) < rng.choice([0.0, 0.3, 0.6]))
        set_words = np.zeros(rng.randint(0, 4), dtype=np.uint32)
        codes = codes[codes < 32 * set_words.shape[0]]
        for code in codes:
            set_words[code // 32] |= np.uint32(1 << int(code % 32))
        threshold[node] = sum(len(w) for w in words)
        words.append(np.concatenate([[set_words.shape[0]], set_words]).astype(np.uint32))
        operator[node] = OP_CAT
        missing[node] = rng.randint(0, 2)
    fields = tree.to_dict()
    fields.update(threshold=threshold, operator=operator, missing_go_to_left=missing,
                  cat_bitsets=np.concatenate(words) if words else None)
    return TreeArrays(**fields)


def categorical_ensemble(ensemble, rng, **options):
    """``ensemble`` with every tree made partly categorical (:func:`categorical_tree`)."""
    trees = tuple(categorical_tree(tree, rng, **options) for tree in ensemble.trees)
    fields = {name: getattr(ensemble, name) for name in (
        "task", "n_features", "combine", "tree_weights", "tree_output", "base_score", "link",
        "classes", "feature_names", "input_dtype", "kind", "bootstrap")}
    return TreeEnsemble(trees=trees, **fields)


def categorical_forest(X, rng, seed, task="regression", n_estimators=4, max_depth=6,
                       **options):
    """A scikit-learn forest fitted on ``X``'s clipped codes (a target of three of its
    columns; ``task`` "classification": its halves), made partly categorical with
    ``rng`` (:func:`categorical_ensemble`). Returns the ensemble and the target."""
    codes = np.nan_to_num(np.clip(X, -2, 90), nan=-1.0)
    y = (codes[:, 0] % 3) + 0.5 * (codes[:, 1] % 5 == 0) + 0.1 * codes[:, 2] / 90
    if task == "regression":
        model = RandomForestRegressor(n_estimators=n_estimators, max_depth=max_depth,
                                      random_state=seed)
    else:
        y = (y > np.median(y)).astype(int)
        model = RandomForestClassifier(n_estimators=n_estimators, max_depth=max_depth,
                                       random_state=seed)
    model.fit(codes, y)
    ensemble = categorical_ensemble(as_ensemble(model), rng, **options)
    assert ensemble.has_categorical
    return ensemble, y


def awkward_codes(rng, n_rows, n_categories=70):
    """Category codes with everything a categorical split must route: NaN, negative
    values (-0.5 among them), values past every set, fractions and huge values."""
    values = rng.randint(0, n_categories + 10, n_rows).astype(np.float64)
    kinds = rng.randint(0, 12, n_rows)
    values[kinds == 0] = np.nan
    values[kinds == 1] = rng.choice([-1.0, -0.5, -3.0, -1e12], (kinds == 1).sum())
    values[kinds == 2] += 0.5
    values[kinds == 3] = rng.choice([1e9, 2.0**40, 1e30], (kinds == 3).sum())
    return values


class NaiveCategoricalModel(BaseEstimator):
    """A fitted model made of a (categorical) single-output forest ``ensemble``: offers
    ``to_ensemble()`` to sapwood and predicts by the naive routing (a classifier's
    probabilities are the mean class fractions, as a scikit-learn forest's)."""

    def __init__(self, ensemble):
        self.ensemble = ensemble

    def to_ensemble(self):
        return self.ensemble

    def fit(self, X, y):
        raise NotImplementedError("wraps a ready ensemble")

    @property
    def n_features_in_(self):
        return self.ensemble.n_features

    @property
    def classes_(self):
        if self.ensemble.task != "classification":
            raise AttributeError("classes_")
        return np.asarray(self.ensemble.classes)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = ("classifier" if self.ensemble.task == "classification"
                               else "regressor")
        return tags

    def predict_proba(self, X):
        return naive_raw(self.ensemble, X)[:, :len(self.ensemble.classes)]

    def predict(self, X):
        if self.ensemble.task == "classification":
            return self.classes_[self.predict_proba(X).argmax(axis=1)]
        return naive_raw(self.ensemble, X)[:, 0]
