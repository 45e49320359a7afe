"""A fitted model with native categorical columns, judged on the frame it was fitted on.

:func:`sapwood.explain` reads every column as numbers, a categorical one as codes
(:func:`~sapwood.report._data.encode_features`). A LightGBM, XGBoost
(``enable_categorical``), HistGradientBoosting (``categorical_features="from_dtype"``)
or CatBoost model fitted on ``category`` columns reads them as categories, so wherever
its own predictions are asked for (the score, the baseline, permutation through the
model's predictions, the leakage check) it is handed the table decoded back into the
columns it was fitted on: :class:`~sapwood.adapters._fitted_frame.FittedFrameModel`.
The codes the measures read are the model's own (its trees' category codes), so the
tree measures and the model's predictions describe one model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import InputError
from ..adapters._fitted_frame import catboost_ctr_columns, wrap_fitted_frame

__all__ = ["categorical_trees", "judged_as_fitted"]


def categorical_trees(model):
    """``(ensemble, reason)`` for a fitted estimator that reads category columns: its
    trees (``reason`` None), or for a CatBoost model with CTRs ``(None, reason)``, the
    reason its trees cannot be read. ``(None, None)`` for any other model."""
    from ..adapters import as_ensemble

    if not _reads_categories(model):
        return None, None
    ctrs = catboost_ctr_columns(model)
    if ctrs is not None:
        return None, (f"the CatBoost model's splits on {', '.join(map(str, ctrs[:5]))} "
                      "read CTRs (target statistics of categories), which sapwood's tree "
                      "format cannot hold (the measures of its predictions apply: "
                      "permutation, CatBoost's own SHAP values)")
    try:
        ensemble = as_ensemble(model)
    except (TypeError, ValueError):
        return None, None
    if ensemble.categories is None or all(labels is None for labels in ensemble.categories):
        return None, None
    return ensemble, None


def _reads_categories(model) -> bool:
    """Whether a fitted estimator was fitted with categorical features, asked of the
    library cheaply (converting a large model's trees takes a while)."""
    package = type(model).__module__.partition(".")[0]
    try:
        if package == "lightgbm":
            return bool(model.booster_.pandas_categorical)
        if package == "xgboost":
            return "c" in (model.get_booster().feature_types or ())
        if package == "catboost":
            return bool(model.get_cat_feature_indices())
        return bool(np.any(getattr(model, "is_categorical_", None)))  # HistGradientBoosting
    except (AttributeError, TypeError, ValueError):
        return False


def judged_as_fitted(model, ensemble, reason, X: pd.DataFrame, encodings: dict):
    """``(model, X, encodings)``: ``model`` wrapped so that its own methods read ``X``
    (the table's numbers and codes, the trees' codes already: see
    :func:`~sapwood.report._explain.recode_categories`) decoded into the columns it was
    fitted on, and ``X`` and ``encodings`` with a CTR model's numeric categorical
    columns coded by their text (CatBoost reads 3 as "3")."""
    decoders = {}
    if ensemble is not None:
        for j, labels in enumerate(ensemble.categories):
            if labels is None:
                continue
            name = X.columns[j]
            # CatBoost keeps only hashes: its codes stand for the table's texts.
            values = encodings[name] if ensemble.hashed_categories else labels
            decoders[j] = _distinct(values, name)
        return wrap_fitted_frame(model, decoders, ensemble, columns=list(X.columns)), X, \
            encodings
    X, encodings = X.copy(), dict(encodings)
    for j in model.get_cat_feature_indices():
        name = X.columns[j]
        if name not in encodings:
            column = pd.Categorical(X[name])
            X[name] = np.where(column.codes < 0, np.nan, column.codes)
            encodings[name] = [f"{value:.17g}" for value in column.categories]
        decoders[j] = _distinct(encodings[name], name)
    return wrap_fitted_frame(model, decoders, None, reason, list(X.columns)), X, encodings


def _distinct(values, name) -> np.ndarray:
    values = np.asarray(list(values), dtype=object)
    if len(set(values.tolist())) != len(values):
        raise InputError(f"column {name!r}: its categories' texts are not distinct, so the "
                         "model's own predictions cannot be asked for them")
    return values
