"""``--model FILE``: the model files the command reads, each as it is meant to be loaded.

- a sapwood model, an XGBoost JSON / UBJSON model, a LightGBM text model, a CatBoost
  JSON / .cbm model: read into the tree format (:func:`sapwood.from_model`), as the
  library predicts (an early-stopped XGBoost model to its best iteration, unless
  ``--all-trees``);
- ``.joblib``, ``.pkl``, ``.pickle``: a fitted estimator saved by joblib or pickle,
  loaded as it was saved. Loading such a file runs any code it holds, so the report
  says to load only one's own;
- ``.skops`` (or any skops archive): loaded with skops' safe loader, trusting the types
  it names only when every one comes from scikit-learn, NumPy, SciPy, the model
  libraries, imbalanced-learn, quantile-forest or sapwood; any other type is refused
  by name.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from .._errors import InputError

__all__ = ["MODEL_FILE_HELP", "PICKLE_SUFFIXES", "TRUSTED_PACKAGES", "load_model_file",
           "model_task"]

PICKLE_SUFFIXES = (".joblib", ".pkl", ".pickle")
#: The packages whose types a .skops file may hold and still be loaded.
TRUSTED_PACKAGES = ("sklearn", "numpy", "scipy", "xgboost", "lightgbm", "catboost",
                    "imblearn", "quantile_forest", "sapwood")
MODEL_FILE_HELP = ("a saved model: sapwood (.sapwood), XGBoost JSON/UBJSON (.json, .ubj), "
                   "LightGBM text (.txt), CatBoost (.json, .cbm), a fitted estimator saved "
                   "with joblib or pickle (.joblib, .pkl; loading runs code, so load only "
                   "your own) or with skops (.skops, loaded safely)")
PICKLE_NOTE = ("{path} is a {kind} file: loading it ran whatever code it holds, so load "
               "only model files you made or trust (skops files load safely)")


def load_model_file(path, all_trees=False):
    """``(model, notes)``: the model in ``path`` and what the report says about loading
    it. A tree-format file gives a :class:`~sapwood.report._models.LoadedModel`; a
    joblib, pickle or skops file the estimator it holds. ``all_trees``: an
    early-stopped boosting model read with all its iterations, not to its best one."""
    path = Path(path)
    _check_exists(path)
    if path.suffix.lower() in PICKLE_SUFFIXES:
        kind = "pickle" if path.suffix.lower() in (".pkl", ".pickle") else "joblib"
        model = _loaded_object(_unpickled(path), path, all_trees)
        return model, [PICKLE_NOTE.format(path=path, kind=kind)]
    if path.suffix.lower() == ".skops" or _is_skops(path):
        return _loaded_object(_skops(path), path, all_trees), []
    return _tree_file(path, all_trees), []


def _check_exists(path: Path):
    if not path.exists():
        raise InputError(f"model file not found: {path}")
    if path.is_dir():
        raise InputError(f"model path is a directory, not a file: {path}")
    if path.stat().st_size == 0:
        raise InputError(f"model file is empty: {path}")


def _tree_file(path: Path, all_trees: bool):
    from ..adapters import stopped_early
    from ..report._models import load_model
    from ._data import read_model_file

    stopping = stopped_early(path)
    if stopping is not None and all_trees:
        return load_model(read_model_file(path, iteration_range=(0, 0)), path)
    return load_model(read_model_file(path), path, stopping)


def _is_skops(path: Path) -> bool:
    """A ZIP archive of skops' (its schema), not of sapwood's."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    return "schema.json" in names and "sapwood-model.json" not in names


def _unpickled(path: Path):
    import joblib

    try:
        return joblib.load(path)
    except ModuleNotFoundError as error:
        raise InputError(f"cannot load model file {path}: it needs the package "
                         f"{error.name!r}, which is not installed") from None
    except Exception as error:  # pickle and joblib raise many kinds for a damaged file
        raise InputError(f"cannot load model file {path}: {_first_line(error)}") from None


def _skops(path: Path):
    try:
        import skops.io as sio
    except ImportError:
        raise InputError(f"--model {path}: reading a .skops file needs the skops package "
                         "(pip install 'sapwood[skops]')") from None
    try:
        types = sio.get_untrusted_types(file=path)
    except Exception as error:
        raise InputError(f"cannot read model file {path}: {_first_line(error)}") from None
    refused = [name for name in types
               if name.partition(".")[0] not in TRUSTED_PACKAGES]
    if refused:
        raise InputError(f"model file {path} holds types sapwood does not trust, so it is "
                         f"not loaded: {', '.join(refused)} (trusted: types of "
                         f"{', '.join(TRUSTED_PACKAGES)})")
    try:
        return sio.load(path, trusted=types)
    except Exception as error:
        raise InputError(f"cannot load model file {path}: {_first_line(error)}") from None


def _loaded_object(model, path: Path, all_trees: bool):
    """The model a joblib, pickle or skops file held, checked to be one."""
    from .._format import TreeEnsemble
    from ..adapters import stopped_early
    from ..report._models import load_model

    if isinstance(model, TreeEnsemble):
        return load_model(model, path)
    if not hasattr(model, "predict"):
        raise InputError(f"model file {path} holds a {type(model).__name__}, not a model "
                         "(an object with predict)")
    if all_trees and stopped_early(model) is not None:
        # Read whole: the library itself would predict with the best iteration only.
        from ..adapters import from_model

        return load_model(from_model(model, iteration_range=(0, 0)), path)
    return model


def model_task(model) -> str:
    """``"classification"`` or ``"regression"``: a loaded model's task."""
    task = getattr(model, "task", None)
    if task in ("classification", "regression"):
        return task
    from sklearn.base import is_classifier

    return "classification" if is_classifier(model) else "regression"


def _first_line(error) -> str:
    text = (str(error).strip() or type(error).__name__).splitlines()[0]
    return text if len(text) <= 200 else text[:197] + "..."
