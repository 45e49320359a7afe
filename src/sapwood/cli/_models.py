"""Which model the CLI trains (or loads), and whether this sapwood has it yet."""

from __future__ import annotations

from pathlib import Path

from ._data import InputError

__all__ = ["MODEL_NAMES", "available_models", "build_model", "default_model",
           "describe_model", "load_model_file", "model_class", "score_model"]

# --model name -> (sapwood.learners class for classification, for regression, label)
MODEL_NAMES = {
    "tree": ("DecisionTreeClassifier", "DecisionTreeRegressor", "decision tree"),
    "rf": ("RandomForestClassifier", "RandomForestRegressor", "random forest"),
    "et": ("ExtraTreesClassifier", "ExtraTreesRegressor", "extra trees"),
    "gb": ("GradientBoostingClassifier", "GradientBoostingRegressor", "gradient boosting"),
}
# A single tree grown to full depth memorises the training rows; this keeps it readable.
DEFAULT_TREE_DEPTH = 8
N_ESTIMATORS = 100


def model_class(name: str, task: str):
    """The sapwood.learners class for ``--model name``, or None if not in this version."""
    from sapwood import learners

    classifier, regressor, _ = MODEL_NAMES[name]
    return getattr(learners, classifier if task == "classification" else regressor, None)


def available_models(task: str = "classification") -> list:
    return [name for name in MODEL_NAMES if model_class(name, task) is not None]


def default_model(task: str) -> str:
    """A random forest when this sapwood has one, else a single tree."""
    return "rf" if model_class("rf", task) is not None else "tree"


def build_model(name: str, task: str, *, max_depth=None, random_state=0):
    """An unfitted sapwood estimator for ``--model name``."""
    cls = model_class(name, task)
    if cls is None:
        wanted = MODEL_NAMES[name][0 if task == "classification" else 1]
        have = ", ".join(available_models(task))
        raise InputError(f"--model {name}: sapwood.learners.{wanted} is not available in "
                         f"this version yet; available: {have}")
    if name == "tree" and max_depth is None:
        max_depth = DEFAULT_TREE_DEPTH
    params = {"max_depth": max_depth, "random_state": random_state,
              "n_estimators": N_ESTIMATORS}
    accepted = cls().get_params()
    return cls(**{key: value for key, value in params.items() if key in accepted})


def load_model_file(path):
    """A fitted model from a saved file: a sapwood model (``sapwood.load``), else an
    XGBoost or LightGBM file (``sapwood.adapters.from_model``), whichever this version
    has."""
    import sapwood
    from sapwood import adapters

    path = Path(path)
    loaders = [loader for loader in (getattr(sapwood, "load", None),
                                     getattr(adapters, "from_model", None)) if loader]
    if not loaders:
        raise InputError(f"--model {path}: loading model files is not available in this "
                         "version of sapwood yet")
    problem = None
    for loader in loaders:
        try:
            return loader(path)
        except Exception as error:  # each loader has its own error types
            problem = problem or (str(error).strip() or type(error).__name__).splitlines()[0]
    raise InputError(f"cannot load model file {path}: not a sapwood, XGBoost or LightGBM "
                     f"model ({problem})")


def score_model(model, X, y, task: str) -> float:
    """Accuracy or R² on (X, y); works for estimators and loaded tree-format models."""
    if hasattr(model, "score"):
        return float(model.score(X, y))
    from sklearn.metrics import accuracy_score, r2_score

    from sapwood.adapters import predict

    predicted = predict(model, X)
    if task == "classification":
        return float(accuracy_score(y, predicted))
    return float(r2_score(y, predicted))


def describe_model(model) -> str:
    """``RandomForestClassifier(n_estimators=100, max_depth=None)`` style, short."""
    name = type(model).__name__
    get_params = getattr(model, "get_params", None)
    if get_params is None:
        return name
    params = get_params()
    shown = [f"{key}={params[key]!r}" for key in ("n_estimators", "max_depth")
             if key in params]
    return f"{name}({', '.join(shown)})"
