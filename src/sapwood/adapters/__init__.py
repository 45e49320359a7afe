"""Bring any supported model into sapwood's tree format, and predict with it.

:func:`from_model` converts scikit-learn, XGBoost, LightGBM and CatBoost tree models (objects or
saved files); :func:`as_ensemble` is what every measure calls on its ``model`` argument;
:func:`predict`, :func:`predict_proba` and :func:`predict_raw` apply the ensemble's link
as the source library does; :func:`save` writes any of these models to a sapwood file.
:func:`split_statistic` says how an (unfitted) estimator's trees will measure a split,
for measures that refit it; :func:`forest_estimators` and :func:`own_trees` hand a
scikit-learn forest's own trees to evaluators that check a conversion against them.
:func:`read_pipeline` reads a fitted scikit-learn ``Pipeline`` as its last step's trees,
its transform and the map of its derived columns back to its input columns.
:func:`fitted_frame` gives a model fitted on category columns the frame as it was
fitted; :func:`catboost_ctr_columns` names a CatBoost model's CTR columns;
:func:`stopped_early` the iterations early stopping chose.
"""

from ._estimators import split_statistic
from ._fitted_frame import catboost_ctr_columns, fitted_frame
from ._iterations import stopped_early
from ._pipeline import CodesToLabels, SplitUnit, is_pipeline, read_pipeline
from ._predict import predict, predict_proba, predict_raw
from ._resolve import as_ensemble, from_model, save
from ._sklearn import forest_estimators, own_trees

__all__ = ["CodesToLabels", "as_ensemble", "catboost_ctr_columns", "fitted_frame",
           "forest_estimators", "from_model", "is_pipeline", "own_trees", "predict",
           "predict_proba", "predict_raw", "read_pipeline", "save", "split_statistic",
           "SplitUnit", "stopped_early"]
