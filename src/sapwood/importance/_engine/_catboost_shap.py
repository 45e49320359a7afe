"""SHAP values of a CatBoost model with CTRs, as CatBoost computes them.

A CatBoost model trained with ``cat_features`` at its defaults splits on CTRs (target
statistics of a categorical feature, or of a combination of them, computed by CatBoost
from the training rows' targets) that sapwood's tree format cannot represent, so
:func:`~sapwood.importance.tree_shap` cannot walk its trees. CatBoost's own
``get_feature_importance(type="ShapValues")`` computes exact path-dependent TreeSHAP
values of the model's raw output on its oblivious trees, a CTR split's share going to
the categorical feature(s) it reads (Lundberg et al. 2018, arXiv:1802.03888; CatBoost's
documentation, "ShapValues"). They are returned here as sapwood's one result type, as
:func:`~sapwood.importance.tree_shap` returns its own: mean ``|SHAP|`` per feature
over the rows, the signed values and the expected value in ``extra``.
"""

from __future__ import annotations

import numpy as np

from ._result import ImportanceResult

__all__ = ["catboost_shap"]

# What CatBoost's raw output is, by the number of output columns (its ShapValues are of
# the raw output: the prediction, the binary log-odds, a multiclass model's margins).
_OUTPUT = {"regression": "prediction", "binary": "log-odds", "multiclass": "softmax margin"}


def catboost_shap(model, X, feature_names) -> ImportanceResult:
    """Path-dependent SHAP values of CatBoost ``model`` on ``X`` (a DataFrame in the
    columns the model was fitted on), named ``feature_names``.

    Returns an :class:`ImportanceResult` laid out as
    :func:`~sapwood.importance.tree_shap`'s: ``importances`` the per-row ``|SHAP|``
    (n_features, n_rows) (averaged over a multiclass model's classes),
    ``extra["shap_values"]`` (n_rows, n_features[, n_classes]) and
    ``extra["expected_value"]``, with ``params["source"] = "catboost ShapValues"``."""
    from catboost import Pool

    pool = Pool(X, cat_features=list(model.get_cat_feature_indices()))
    values = np.asarray(model.get_feature_importance(data=pool, type="ShapValues"),
                        dtype=np.float64)
    classes = getattr(model, "classes_", None)
    if values.ndim == 3:  # (rows, classes, features + 1): one column per class
        phi = np.moveaxis(values[:, :, :-1], 1, 2)
        expected = values[0, :, -1].copy()
        magnitude = np.abs(phi).mean(axis=2).T
        output, names = _OUTPUT["multiclass"], _plain(classes)
    else:
        phi = values[:, :-1]
        expected = float(values[0, -1])
        magnitude = np.abs(phi).T
        binary = classes is not None and len(classes) == 2
        output = _OUTPUT["binary" if binary else "regression"]
        names = _plain(classes)[1:] if binary else None
    extra = {"shap_values": phi, "expected_value": expected, "data": X, "output": output,
             "output_names": names}
    return ImportanceResult.from_draws(
        magnitude, feature_names=list(feature_names), method="tree_shap",
        params={"interactions": False, "n_rows": int(phi.shape[0]),
                "feature_perturbation": "tree_path_dependent",
                "source": "catboost ShapValues"}, extra=extra)


def _plain(classes):
    return None if classes is None else [label.item() if hasattr(label, "item") else label
                                         for label in classes]
