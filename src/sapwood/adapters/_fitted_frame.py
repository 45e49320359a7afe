"""A model fitted on pandas ``category`` columns, judged on the codes sapwood reads.

LightGBM, XGBoost (``enable_categorical``), scikit-learn's HistGradientBoosting
(``categorical_features="from_dtype"``) and CatBoost (``cat_features``) read a
categorical column as pandas gave it at the fit: a ``category`` column with the fit's
categories (CatBoost: the categories' text). sapwood's tables hold every column as
numbers, a categorical one as codes (the positions of its labels among the model's own,
see :meth:`sapwood.TreeEnsemble.encode`), which the kernels read as the trees' codes.
Handed such a table, the library's ``predict`` refuses it ("train and valid dataset
categorical_feature do not match") or reads the codes as values.

:class:`FittedFrameModel` stands between: its ``predict``, ``predict_proba`` and
``score`` turn the codes back into the columns the model was fitted on
(:meth:`FittedFrameModel.frame`) and ask the model's own method, so a score, a
permutation through the model's predictions or a baseline is the library's own number;
its ``to_ensemble()`` hands the measures that read trees the model's trees, which route
the same codes. A CatBoost model whose splits read CTRs (target statistics of the
categories, which the tree format cannot hold) has no trees to hand:
``to_ensemble()`` raises a ValueError saying so, and the measures of its predictions
remain (its SHAP values are CatBoost's own: :mod:`sapwood.importance._engine._catboost_shap`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin, RegressorMixin, is_classifier

__all__ = ["FittedFrameModel", "catboost_ctr_columns", "fitted_frame", "wrap_fitted_frame"]


class FittedFrameModel:
    """``model`` (a fitted LightGBM, XGBoost, HistGradientBoosting or CatBoost
    estimator) given a table of numbers whose categorical columns hold codes.

    ``decoders``: column position -> ``values``, an object array of what each code
    stands for in the model's frame (a category label; for CatBoost its text), read
    back as a ``category`` column of those values in that order. ``ensemble``: the
    model's trees, or None with ``reason`` saying why they cannot be read.
    ``columns``: the names an array given instead of a table is read with.
    ``missing``: what a missing category is given as (CatBoost takes no missing
    category, only text: ``"nan"``, as ``astype(str)`` writes it), None for missing.
    :func:`wrap_fitted_frame` builds one of the classifier or regressor kind."""

    def __init__(self, model, decoders: dict, ensemble=None, reason: str | None = None,
                 columns=None):
        self.model = model
        self.columns = columns
        self.missing = "nan" if _is_catboost(model) else None
        self.decoders = decoders
        self.ensemble = ensemble
        self.reason = reason
        for name in ("n_features_in_", "feature_names_in_", "classes_"):
            value = getattr(model, name, None)
            if value is not None:
                setattr(self, name, value)

    def __sklearn_tags__(self):
        return self.model.__sklearn_tags__()

    def frame(self, X) -> pd.DataFrame:
        """``X`` (codes) as the model was fitted: each decoded column a ``category``
        column of the model's categories, the others as given."""
        frame = X.copy() if isinstance(X, pd.DataFrame) else pd.DataFrame(
            np.asarray(X), columns=self.columns)
        for j, values in self.decoders.items():
            # A code is read as the trees read it: truncated to an integer, and one that
            # names no category (negative, past the last, or missing) as missing.
            codes = np.trunc(frame.iloc[:, j].to_numpy(dtype=np.float64))
            codes = np.where((codes >= 0) & (codes < len(values)), codes, -1).astype(np.intp)
            column = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(values))
            if self.missing is not None and (codes < 0).any():
                column = column.add_categories([self.missing]).fillna(self.missing)
            frame.isetitem(j, column)
        return frame

    def predict(self, X):
        return self.model.predict(self.frame(X))

    def get_params(self, deep=True):
        return self.model.get_params(deep=deep)

    def to_ensemble(self):
        if self.ensemble is None:
            raise ValueError(self.reason)
        return self.ensemble


class _FittedFrameClassifier(ClassifierMixin, FittedFrameModel):
    """Scored as scikit-learn scores a classifier (accuracy), as each library does."""

    def predict_proba(self, X):
        return self.model.predict_proba(self.frame(X))

    def __sklearn_tags__(self):
        return FittedFrameModel.__sklearn_tags__(self)


class _FittedFrameRegressor(RegressorMixin, FittedFrameModel):
    """Scored as scikit-learn scores a regressor (R²), as each library does."""

    def __sklearn_tags__(self):
        return FittedFrameModel.__sklearn_tags__(self)


def wrap_fitted_frame(model, decoders, ensemble=None, reason=None,
                      columns=None) -> FittedFrameModel:
    """The :class:`FittedFrameModel` of ``model``'s kind (classifier or regressor)."""
    kind = _FittedFrameClassifier if is_classifier(model) else _FittedFrameRegressor
    return kind(model, decoders, ensemble, reason, columns)


def fitted_frame(model, X):
    """``(model, X)`` as the library reads them: a :class:`FittedFrameModel`'s own
    model and ``X`` decoded; anything else as it is."""
    if isinstance(model, FittedFrameModel):
        return model.model, model.frame(X)
    return model, X


def _is_catboost(model) -> bool:
    return type(model).__module__.partition(".")[0] == "catboost"


def catboost_ctr_columns(model) -> list | None:
    """The names (or positions) of the categorical features a fitted CatBoost model
    reads through CTRs, or None when the model is no CatBoost model with CTRs.

    CatBoost builds CTRs of the categorical features it does not split on one-hot
    (more categories than ``one_hot_max_size``); the JSON export lists them
    (``features_info["ctrs"]``)."""
    if not _is_catboost(model):
        return None
    import json
    import os
    import tempfile

    from catboost import CatBoostError

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        try:
            model.save_model(path, format="json")
        except CatBoostError:
            return None
        with open(path) as stream:
            info = json.load(stream).get("features_info", {})
    read = {element.get("cat_feature_index") for ctr in info.get("ctrs") or []
            for element in ctr.get("elements") or [] if isinstance(element, dict)}
    names = [entry.get("feature_id") or entry.get("flat_feature_index")
             for entry in info.get("categorical_features") or []
             if entry.get("feature_index") in read]
    return names or None
