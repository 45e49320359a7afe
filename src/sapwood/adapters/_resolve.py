"""One entry point from "a model a user holds" to a :class:`TreeEnsemble`."""

from __future__ import annotations

import os

from .. import _persist
from .._format import FormatError, TreeArrays, TreeEnsemble

__all__ = ["as_ensemble", "from_model", "save"]


def _sklearn(model, iteration_range):
    from ._sklearn import from_sklearn

    return from_sklearn(model, iteration_range)


def _xgboost(model, iteration_range):
    from ._xgboost import from_xgboost

    return from_xgboost(model, iteration_range)


def _sksurv(model, iteration_range):
    from ._sksurv import from_sksurv

    return from_sksurv(model, iteration_range)


def _lightgbm(model, iteration_range):
    from ._lightgbm import from_lightgbm

    return from_lightgbm(model, iteration_range)


def _catboost(model, iteration_range):
    from ._catboost import from_catboost

    return from_catboost(model, iteration_range)


# Top-level package of the model's class -> converter. Looking at the module name
# avoids importing optional libraries just to ask isinstance().
_CONVERTERS = {"sklearn": _sklearn, "xgboost": _xgboost, "lightgbm": _lightgbm,
               "catboost": _catboost, "sksurv": _sksurv}


def from_model(model, *, iteration_range=None) -> TreeEnsemble:
    """Convert a fitted model or a saved model file into sapwood's tree format.

    Parameters
    ----------
    model : estimator, booster, str or path-like
        scikit-learn ``DecisionTree*``, ``ExtraTree*``, ``RandomForest*``,
        ``ExtraTrees*``, ``GradientBoosting*``, ``HistGradientBoosting*``,
        ``IsolationForest`` (raw output: the mean path length, see
        :mod:`sapwood.adapters._sklearn`), or an estimator's bare ``tree_`` (one tree:
        a classifier's class fractions by class position, else a regression);
        ``xgboost.Booster``, ``XGBClassifier``, ``XGBRegressor``, ``XGBRFClassifier``,
        ``XGBRFRegressor``; ``lightgbm.Booster``, ``LGBMClassifier``, ``LGBMRegressor``;
        ``catboost.CatBoost``, ``CatBoostClassifier``, ``CatBoostRegressor``; or the
        path of a saved XGBoost JSON / UBJSON model, a LightGBM text model, a CatBoost
        JSON or .cbm model (.cbm needs the catboost package) or a sapwood model file
        (:func:`sapwood.save`). A :class:`TreeEnsemble` is returned
        as it is.
    iteration_range : (int, int), optional
        Boosting iterations ``[begin, end)`` to keep (``end`` 0 means the last). By
        default the trees the library's own ``predict`` uses: the best iteration for
        XGBoost's scikit-learn wrappers and LightGBM models fitted with early stopping,
        all trees otherwise.

    Returns
    -------
    TreeEnsemble
        Its :meth:`~TreeEnsemble.predict`, :meth:`~TreeEnsemble.predict_proba` and
        :func:`sapwood.adapters.predict_raw` reproduce the library's ``predict``,
        ``predict_proba`` and raw margin (``decision_function`` / ``output_margin`` /
        ``raw_score``). Two margins are rescaled so that the standard links apply:
        scikit-learn's exponential loss (margin doubled) and LightGBM's binary
        objective with ``sigmoid`` != 1 (margin times sigmoid).

    Raises
    ------
    TypeError
        The model is of a kind sapwood cannot read.
    ValueError
        The model uses something the tree format cannot represent (categorical splits,
        a non-NaN missing value, linear trees, an unsupported objective); the message
        names it.
    FormatError
        A model file is malformed.
    """
    if isinstance(model, TreeEnsemble):
        return model
    if isinstance(model, str | os.PathLike):
        return _from_file(model, iteration_range)
    package = _package(model)
    converter = _CONVERTERS.get(package)
    if converter is None:
        raise TypeError(f"sapwood cannot read a model of type {type(model).__name__} "
                        f"(from {package!r}): expected a scikit-learn, XGBoost, LightGBM or "
                        "CatBoost tree model, a model file path, or a TreeEnsemble")
    return converter(model, iteration_range)


def _from_file(path, iteration_range):
    with open(path, "rb") as stream:
        head = stream.read(4)
    if head.startswith(b"PK"):
        if iteration_range is not None:
            raise ValueError("iteration_range does not apply to a sapwood model file")
        return _persist.load(path)
    with open(path, "rb") as stream:
        data = stream.read()
    stripped = data.lstrip()
    if stripped.startswith(b"tree"):
        from ._lightgbm import read_lightgbm_text

        return read_lightgbm_text(data, iteration_range)
    if head == b"CBM1":
        from ._catboost import read_catboost_cbm

        return read_catboost_cbm(path, iteration_range)
    if stripped[:1] == b"{" and stripped[1:2] in b' \t\r\n"}':
        return _from_json(path, data, iteration_range)
    if stripped.startswith(b"{"):
        from ._xgboost import read_xgboost_file

        return read_xgboost_file(data, iteration_range)
    raise FormatError(f"{os.fspath(path)!r} is not a model file sapwood knows: expected a "
                      "sapwood model, an XGBoost JSON/UBJSON model, a LightGBM text model "
                      "or a CatBoost JSON/.cbm model")


def _from_json(path, data, iteration_range):
    """A JSON model file: XGBoost's (a "learner") or CatBoost's ("features_info" and
    trees), told apart by their top-level keys."""
    import json

    from ._catboost import from_catboost_dict, is_catboost_json
    from ._xgboost import from_xgboost_dict

    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise FormatError(f"{os.fspath(path)!r} is not valid JSON: {error}") from None
    if isinstance(document, dict) and "learner" in document:
        return from_xgboost_dict(document, iteration_range)
    if is_catboost_json(document):
        return from_catboost_dict(document, iteration_range, n_bytes=len(data))
    keys = ", ".join(map(repr, list(document)[:5])) if isinstance(document, dict) else ""
    raise FormatError(f"{os.fspath(path)!r} is a JSON file but not a model sapwood knows "
                      "(an XGBoost model has a 'learner', a CatBoost model 'features_info' "
                      f"and 'oblivious_trees' or 'trees'); its top-level keys: {keys}")


def as_ensemble(model, feature_names=None) -> TreeEnsemble:
    """Return ``model`` in the tree format.

    Accepts a :class:`TreeEnsemble`, a single :class:`TreeArrays`, a fitted sapwood
    estimator (anything with a ``to_ensemble()`` method), or anything
    :func:`from_model` reads (scikit-learn, XGBoost and LightGBM models, model files).
    """
    if isinstance(model, TreeEnsemble):
        return model
    if isinstance(model, TreeArrays):
        return TreeEnsemble(trees=(model,), task="regression", n_features=model.n_features,
                            feature_names=feature_names)
    to_ensemble = getattr(model, "to_ensemble", None)
    if callable(to_ensemble):
        return to_ensemble()
    if isinstance(model, str | os.PathLike) or _package(model) in _CONVERTERS:
        return from_model(model)
    raise TypeError(
        f"sapwood cannot read a model of type {type(model).__name__}: expected a fitted "
        "sapwood estimator, a TreeEnsemble, a TreeArrays, a scikit-learn, XGBoost or "
        "LightGBM tree model, or a model file path")


def _package(model):
    return type(model).__module__.partition(".")[0]


def save(model, path) -> None:
    """Write ``model`` to ``path`` in sapwood's model format (docs/model-format.md).

    Parameters
    ----------
    model : anything :func:`as_ensemble` accepts
        A sapwood estimator, a TreeEnsemble, or a scikit-learn / XGBoost / LightGBM
        model (converted first).
    path : str, path-like or binary file object
        Conventionally ends in ``.sapwood``. A path is written atomically: to a
        temporary file beside it, synced, then renamed onto it, so a save that fails
        part way leaves any model already there byte for byte intact.
    """
    _persist.save(as_ensemble(model), path)
