"""Obviously-correct held-out permutation importance, and tree-format stand-ins for
scikit-learn trees and forests (test-only; the product's adapters live in sapwood).

The naive version follows docs/measures.md literally: one seed, a fresh RandomState per
group, the row subset drawn first, a copy of X whose group columns are re-shuffled in
place repeat after repeat (the shuffles compose), a full re-score every time.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.utils.random import sample_without_replacement

from sapwood import TreeArrays, TreeEnsemble

__all__ = ["FormatClassifier", "FormatRegressor", "as_format_model", "as_opaque_model",
           "naive_permutation_scores"]


def naive_permutation_scores(model, X, y, scorer, groups, n_repeats, random_state,
                             max_samples=None, sample_weight=None):
    """(baseline score, scores of shape (n_groups, n_repeats)) for column ``groups``
    (a list of lists of positions); ``X`` a float ndarray, ``random_state`` an int."""
    seed = np.random.RandomState(random_state).randint(2**31)
    kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
    baseline = scorer(model, X, y, **kwargs)
    n = X.shape[0]
    scores = []
    for columns in groups:
        rng = np.random.RandomState(seed)
        X_eval, y_eval, w_eval = X, y, sample_weight
        if max_samples is not None and max_samples < n:
            rows = sample_without_replacement(n, max_samples, random_state=rng)
            X_eval, y_eval = X[rows], y[rows]
            w_eval = None if sample_weight is None else sample_weight[rows]
        X_permuted = X_eval.copy()
        shuffling = np.arange(X_eval.shape[0])
        row = []
        for _ in range(n_repeats):
            rng.shuffle(shuffling)
            for j in columns:
                X_permuted[:, j] = X_permuted[shuffling, j]
            kwargs = {} if w_eval is None else {"sample_weight": w_eval}
            row.append(scorer(model, X_permuted, y_eval, **kwargs))
        scores.append(row)
    return baseline, np.array(scores)


def _tree_arrays(tree):
    value = tree.value
    return TreeArrays(
        children_left=tree.children_left, children_right=tree.children_right,
        feature=tree.feature, threshold=tree.threshold, impurity=tree.impurity,
        n_node_samples=tree.n_node_samples,
        weighted_n_node_samples=tree.weighted_n_node_samples, value=value,
        missing_go_to_left=tree.missing_go_to_left,
        operator=np.zeros(tree.node_count, dtype=np.uint8), n_features=tree.n_features)


class _FormatModel(BaseEstimator):
    """A fitted scikit-learn tree or forest that also offers ``to_ensemble()``.

    Predictions are the scikit-learn model's own; ``to_ensemble`` copies its trees
    field by field (classifier leaves hold class fractions, which are what
    scikit-learn 1.9's ``predict_proba`` returns).
    """

    def __init__(self, model):
        self.model = model

    def to_ensemble(self):
        classifier = is_classifier(self.model)
        estimators = [self.model] if hasattr(self.model, "tree_") else self.model.estimators_
        trees = [_tree_arrays(e.tree_) for e in estimators]
        return TreeEnsemble(
            trees=trees, task="classification" if classifier else "regression",
            n_features=self.model.n_features_in_, combine="mean",
            classes=tuple(self.model.classes_) if classifier else None)

    def fit(self, X, y):
        raise NotImplementedError("wraps an already fitted model")

    def predict(self, X):
        return self.model.predict(X)

    def __getattr__(self, name):
        if name.endswith("_") and not name.startswith("__") and "model" in self.__dict__:
            return getattr(self.__dict__["model"], name)
        raise AttributeError(name)


class FormatClassifier(ClassifierMixin, _FormatModel):
    def predict_proba(self, X):
        return self.model.predict_proba(X)


class FormatRegressor(RegressorMixin, _FormatModel):
    pass


def as_format_model(model):
    """Wrap a fitted scikit-learn tree / forest so sapwood sees it in the tree format."""
    return FormatClassifier(model) if is_classifier(model) else FormatRegressor(model)


class _Opaque(BaseEstimator):
    """A fitted model sapwood cannot read as trees: forces the generic evaluator."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        raise NotImplementedError("wraps an already fitted model")

    def predict(self, X):
        return self.model.predict(X)

    def __getattr__(self, name):
        if name.endswith("_") and not name.startswith("__") and "model" in self.__dict__:
            return getattr(self.__dict__["model"], name)
        raise AttributeError(name)


class _OpaqueClassifier(ClassifierMixin, _Opaque):
    def predict_proba(self, X):
        return self.model.predict_proba(X)


class _OpaqueRegressor(RegressorMixin, _Opaque):
    pass


def as_opaque_model(model):
    """Wrap a fitted model so that sapwood only sees its estimator API."""
    return _OpaqueClassifier(model) if is_classifier(model) else _OpaqueRegressor(model)
