"""Bring any supported model into sapwood's tree format, and predict with it.

:func:`from_model` converts scikit-learn, XGBoost, LightGBM and CatBoost tree models (objects or
saved files); :func:`as_ensemble` is what every measure calls on its ``model`` argument;
:func:`predict`, :func:`predict_proba` and :func:`predict_raw` apply the ensemble's link
as the source library does; :func:`save` writes any of these models to a sapwood file.
:func:`split_statistic` says how an (unfitted) estimator's trees will measure a split,
for measures that refit it.
"""

from ._estimators import split_statistic
from ._predict import predict, predict_proba, predict_raw
from ._resolve import as_ensemble, from_model, save

__all__ = ["as_ensemble", "from_model", "predict", "predict_proba", "predict_raw", "save",
           "split_statistic"]
