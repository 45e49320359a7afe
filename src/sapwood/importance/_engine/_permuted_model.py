"""The stand-in for a tree model inside scikit-learn scorers.

The tree-aware evaluator computes the model's outputs on each permuted data set without
predicting; :class:`PermutedModel` hands them to the scorer as the model would, so any
scikit-learn scorer works unchanged. Part of the permutation engine (map:
:mod:`._permutation_engine`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils import get_tags

__all__ = ["PermutedModel", "permuted_model"]


class PermutedModel:
    """Stand-in for a fitted model inside scikit-learn scorers.

    ``predict``, ``predict_proba`` and ``predict_log_proba`` ignore their ``X`` and
    return the model's outputs on one permuted data set, computed beforehand;
    ``score`` runs the model's own (scikit-learn mixin) ``score`` on them;
    ``responses_used`` records which outputs a scorer read. Fitted
    attributes (``classes_``, ``n_outputs_``, ...) and tags are the model's, so a
    scorer picks the same response method and positive class as for the model itself.
    """

    def __init__(self, model, raw, is_classifier, n_classes):
        self._model = model
        self._raw = raw
        self._is_classifier = is_classifier
        self._n_classes = n_classes
        # Response methods the scorer asked for (``score`` asks for ``predict``).
        self.responses_used = set()

    def __getattr__(self, name):
        # Only fitted attributes: any method not defined here must not reach the model.
        if name.endswith("_") and not name.startswith("__"):
            return getattr(self._model, name)
        raise AttributeError(name)

    def __sklearn_tags__(self):
        return get_tags(self._model)

    def predict(self, X):
        self.responses_used.add("predict")
        if self._is_classifier:
            return self._model.classes_.take(np.argmax(self.predict_proba(X), axis=1), axis=0)
        return self._raw[:, 0] if self._raw.shape[1] == 1 else self._raw

    def score(self, X, y, sample_weight=None):
        mixin = ClassifierMixin if self._is_classifier else RegressorMixin
        return mixin.score(self, X, y, sample_weight=sample_weight)


class _PermutedClassifier(PermutedModel):
    def predict_proba(self, X):
        self.responses_used.add("predict_proba")
        return self._raw[:, : self._n_classes]

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


def permuted_model(model, raw, is_classifier, n_classes):
    """A :class:`PermutedModel` (with ``predict_proba`` for a classifier) returning ``raw``."""
    cls = _PermutedClassifier if is_classifier else PermutedModel
    return cls(model, raw, is_classifier, n_classes)
