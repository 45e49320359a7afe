"""Which model the CLI trains (or loads), and whether this sapwood has it yet."""

from __future__ import annotations

from pathlib import Path

from sklearn.base import ClassifierMixin, RegressorMixin

from sapwood.importance._engine._permutation_rows import AucScoreMixin

from .._errors import InputError
from ..adapters._fitted_frame import FittedFrameModel
from ..importance._engine._ranking import Ranker

__all__ = ["LARGE_TABLE_ROWS", "MODEL_NAMES", "PROBABILITY_SCORES", "KeptPredictions",
           "LoadedModel", "LoadedSurvivalModel", "StepFunction", "available_models",
           "build_model", "default_model", "default_scoring",
           "describe_ensemble", "describe_model", "describe_source", "large_table_note",
           "large_table_params", "load_model", "model_class", "score_model", "shown_score"]

# --model name -> (sapwood.learners class for classification, for regression, label)
MODEL_NAMES = {
    "tree": ("DecisionTreeClassifier", "DecisionTreeRegressor", "decision tree"),
    "rf": ("RandomForestClassifier", "RandomForestRegressor", "random forest"),
    "et": ("ExtraTreesClassifier", "ExtraTreesRegressor", "extra trees"),
    "gb": ("GradientBoostingClassifier", "GradientBoostingRegressor", "gradient boosting"),
}
# The one default the CLI sets itself: a single tree grown to full depth memorises the
# training rows (every held-out row then meets a one-row leaf), so `--model tree` stops
# at depth 8. Every other model uses its sapwood.learners class's own defaults, but on a
# large table (LARGE_TABLE_ROWS).
DEFAULT_TREE_DEPTH = 8
# Above this many training rows each tree of a forest trained by name (rf, et, the
# default) is grown on this many rows drawn with replacement, not on as many draws as
# there are rows. A fully grown tree has about one leaf per distinct row it draws, so
# without a bound the forest's nodes, its memory and its fit grow with the table: 100
# trees on 750,000 rows held about 10 GB and took nine minutes on 2 cores. With it they
# stop growing past this size; what it costs in held-out accuracy on the benchmark
# tables is measured in docs/getting-started.md, section "Large tables".
LARGE_TABLE_ROWS = 100_000
# The forests the bound applies to: their trees are grown in full by default.
_BOUNDED_FORESTS = ("rf", "et")


# --model name -> the sapwood.learners class for a survival target (time and event).
SURVIVAL_MODELS = {"tree": "SurvivalTree", "rf": "RandomSurvivalForest",
                   "et": "ExtraSurvivalTrees"}


def _class_name(name: str, task: str) -> str | None:
    if task == "survival":
        return SURVIVAL_MODELS.get(name)
    classifier, regressor, _ = MODEL_NAMES[name]
    return classifier if task == "classification" else regressor


def model_class(name: str, task: str):
    """The sapwood.learners class for ``--model name``, or None if not in this version."""
    from sapwood import learners

    wanted = _class_name(name, task)
    return None if wanted is None else getattr(learners, wanted, None)


def available_models(task: str = "classification") -> list:
    return [name for name in MODEL_NAMES if model_class(name, task) is not None]


def default_model(task: str) -> str:
    """A random forest when this sapwood has one, else a single tree."""
    return "rf" if model_class("rf", task) is not None else "tree"


def build_model(name: str, task: str, *, max_depth=None, random_state=0, n_train=None):
    """An unfitted sapwood estimator for ``--model name``: the class's own defaults
    (gb: depth 3, learning rate 0.1, 100 stages; rf, et: 100 trees grown in full), but
    ``tree`` at depth :data:`DEFAULT_TREE_DEPTH`; ``max_depth`` replaces the depth.

    ``n_train``, the number of rows the model will be trained on, when known: above
    :data:`LARGE_TABLE_ROWS` a forest (rf, et) grows each tree on that many rows drawn
    with replacement (:func:`large_table_params`)."""
    cls = model_class(name, task)
    if cls is None:
        wanted = _class_name(name, task) or f"{MODEL_NAMES[name][2]} of survival"
        have = ", ".join(available_models(task)) or "none"
        raise InputError(f"--model {name}: sapwood.learners.{wanted} is not available in "
                         f"this version yet; available: {have}")
    if name == "tree" and max_depth is None:
        max_depth = DEFAULT_TREE_DEPTH
    params = {"random_state": random_state}
    if max_depth is not None:
        params["max_depth"] = max_depth
    params.update(large_table_params(name, n_train))
    return cls(**params)


def large_table_params(name: str, n_train=None) -> dict:
    """The parameters a model trained by name takes beyond its class's defaults on
    ``n_train`` training rows: none up to :data:`LARGE_TABLE_ROWS` rows (or when
    ``n_train`` is None, not known); above, for a forest (rf, et), ``max_samples`` of
    :data:`LARGE_TABLE_ROWS` rows per tree, and ``bootstrap=True`` for extra trees,
    whose trees otherwise see every row and which take ``max_samples`` only with it."""
    if name not in _BOUNDED_FORESTS or n_train is None or n_train <= LARGE_TABLE_ROWS:
        return {}
    params = {"max_samples": LARGE_TABLE_ROWS}
    if name == "et":
        params["bootstrap"] = True
    return params


def large_table_note(name: str, n_train=None) -> str | None:
    """Why the forest built by name on ``n_train`` training rows draws fewer rows per
    tree than the class's default, for the report's notes; None when it does not."""
    if not large_table_params(name, n_train):
        return None
    return (f"each tree of the forest is grown on {LARGE_TABLE_ROWS:,} rows drawn from the "
            f"{n_train:,} training rows (max_samples={LARGE_TABLE_ROWS}), sapwood's default "
            f"above {LARGE_TABLE_ROWS:,} training rows: the fit's time and memory then stop "
            "growing with the table, for a small loss of held-out accuracy (R² 0.9466 "
            "against 0.9515 on 750,000 rows of a benchmark table; docs/getting-started.md, "
            "section 'Large tables'); an estimator passed as "
            "model= (on the command line, --max-depth) is grown as given")


class LoadedModel:
    """A model read from a file (a :class:`~sapwood.TreeEnsemble`), dressed as a fitted
    scikit-learn estimator so that scorers and the importance measures accept it.

    ``to_ensemble()`` hands the trees back, so the measures see the model itself.

    :func:`load_model` makes one of its three kinds, each scored as scikit-learn
    scores the model: :class:`_LoadedClassifier`, :class:`_LoadedRegressor` and
    :class:`_LoadedAnomalyDetector`.
    """

    def __init__(self, ensemble, path, stopping=None):
        self.ensemble = ensemble
        self.path = None if path is None else Path(path)
        # The iterations read when early stopping chose fewer than the model holds
        # (sapwood.adapters._iterations.EarlyStopping), for the Model line.
        self.stopping = stopping
        self.anomaly = _is_anomaly_detector(ensemble)
        self.score_name = "ROC AUC" if self.anomaly else (
            "accuracy" if ensemble.task == "classification" else
            "concordance_index" if ensemble.task == "survival" else "R²")
        self.n_features_in_ = ensemble.n_features
        if ensemble.feature_names is not None:
            import numpy as np

            self.feature_names_in_ = np.asarray([str(n) for n in ensemble.feature_names],
                                                dtype=object)
        if ensemble.task == "classification" and ensemble.classes is not None:
            import numpy as np

            self.classes_ = np.asarray(ensemble.classes)

    @property
    def task(self) -> str:
        return self.ensemble.task

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

        classifier = self.task == "classification"
        return Tags(estimator_type="classifier" if classifier else "regressor",
                    target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags() if classifier else None,
                    regressor_tags=None if classifier else RegressorTags())

    def to_ensemble(self):
        return self.ensemble

    def predict(self, X):
        return self.ensemble.predict(_array(X))

    def predict_proba(self, X):
        return self.ensemble.predict_proba(_array(X))


class _LoadedClassifier(ClassifierMixin, LoadedModel):
    """A loaded classifier scored by scikit-learn's ``ClassifierMixin.score``."""

    def __sklearn_tags__(self):
        return LoadedModel.__sklearn_tags__(self)


class _LoadedRegressor(RegressorMixin, LoadedModel):
    """A loaded regressor scored by scikit-learn's ``RegressorMixin.score``."""

    def __sklearn_tags__(self):
        return LoadedModel.__sklearn_tags__(self)


class _LoadedAnomalyDetector(AucScoreMixin, LoadedModel):
    """A loaded anomaly detector (scikit-learn's IsolationForest, whose raw output is
    the mean path length), scored by ROC AUC against the target's two labels, the
    greater one the inliers (scikit-learn's ``predict`` labels 1 inliers, -1 outliers):
    :class:`~sapwood.importance._engine._permutation_rows.AucScoreMixin`'s score of
    ``decision_function``, here the mean path length, which orders the rows as the
    estimator's own ``decision_function`` does (it increases with the path length), so
    the number is that of scikit-learn's ``roc_auc`` scorer on the estimator."""

    def decision_function(self, X):
        return self.ensemble.predict(_array(X))


class LoadedSurvivalModel(LoadedModel):
    """A survival tree model read from a file or another library, dressed as a fitted
    scikit-survival estimator: ``predict`` (the risk score, or the time of a model of
    the time), ``score`` (Harrell's concordance, as scikit-survival's models score) and,
    where the model has them, ``predict_survival_function`` and
    ``predict_cumulative_hazard_function`` at ``unique_times_``."""

    def __init__(self, ensemble, path, stopping=None):
        super().__init__(ensemble, path, stopping)
        if ensemble.has_survival_functions:
            self.unique_times_ = ensemble.times

    def score(self, X, y):
        from sapwood.importance._engine._survival_scores import concordance_index, risk_score

        return concordance_index(y, risk_score(self, X))

    def predict_survival_function(self, X, return_array=False):
        survival = self.ensemble.predict_survival(_array(X))
        return survival if return_array else [StepFunction(self.ensemble.times, row)
                                              for row in survival]

    def predict_cumulative_hazard_function(self, X, return_array=False):
        hazard = self.ensemble.predict_cumulative_hazard(_array(X))
        return hazard if return_array else [StepFunction(self.ensemble.times, row)
                                            for row in hazard]


class StepFunction:
    """One row's function of time known at ``x`` (values ``y``), as scikit-survival's
    ``StepFunction`` evaluates it: the value at the last of ``x`` at or before a time."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __call__(self, at):
        import numpy as np

        from sapwood.importance._engine._survival_scores import survival_at

        return survival_at(self.x, self.y[None, :], np.atleast_1d(at))[0]


def load_model(ensemble, path, stopping=None) -> LoadedModel:
    """The loaded model of ``ensemble`` (read from ``path``), of the class whose
    ``score`` is the one scikit-learn gives the model: accuracy or R² (scikit-learn's
    own ``ClassifierMixin`` / ``RegressorMixin`` score) or, for an anomaly detector,
    ROC AUC. The measures recognise each of these scores, and held-out permutation
    gives it per-row draws (DeLong's for ROC AUC): the intervals over new rows that the
    verdict rests on (docs/measures.md, section 'The verdict')."""
    if _is_anomaly_detector(ensemble):
        return _LoadedAnomalyDetector(ensemble, path, stopping)
    if ensemble.task == "survival":
        return LoadedSurvivalModel(ensemble, path, stopping)
    if ensemble.task == "classification":
        return _LoadedClassifier(ensemble, path, stopping)
    return _LoadedRegressor(ensemble, path, stopping)


def _is_anomaly_detector(ensemble) -> bool:
    return (ensemble.kind.library, ensemble.kind.model) == ("sklearn", "IsolationForest")


def _array(X):
    import numpy as np

    return np.asarray(X, dtype=np.float64)


_LIBRARY_NAMES = {"xgboost": "XGBoost", "lightgbm": "LightGBM", "sklearn": "scikit-learn",
                  "catboost": "CatBoost", "imblearn": "imbalanced-learn"}
# Libraries whose objective names the training loss (scikit-learn's records a criterion).
_OBJECTIVE_LIBRARIES = ("xgboost", "lightgbm", "catboost")


def describe_source(ensemble, trees=False) -> str:
    """``XGBoost Booster (objective binary:logistic)`` or ``sapwood model``; with
    ``trees``, ``XGBoost Booster (10 trees, objective binary:logistic)``."""
    kind = ensemble.kind
    foreign = kind.library not in ("", "sapwood")
    library = _LIBRARY_NAMES.get(kind.library, kind.library) if foreign else "sapwood"
    text = f"{library} {kind.model}" if foreign and kind.model else f"{library} model"
    details = [f"{ensemble.n_trees} trees"] if trees else []
    if kind.library in _OBJECTIVE_LIBRARIES and kind.objective:
        details.append(f"objective {kind.objective}")
    return f"{text} ({', '.join(details)})" if details else text


def describe_ensemble(ensemble) -> str:
    """``10 trees, 3 features, classification (2 classes)``."""
    trees = f"{ensemble.n_trees} tree{'s' if ensemble.n_trees != 1 else ''}"
    task = ensemble.task
    if task == "classification" and ensemble.classes is not None:
        classes = ensemble.classes
        if classes and isinstance(classes[0], tuple):
            task += f" ({len(classes)} outputs)"
        else:
            task += f" ({len(classes)} classes)"
    return f"{trees}, {ensemble.n_features} features, {task}"


#: The scores of a classifier's probabilities: accuracy is shown beside them.
PROBABILITY_SCORES = ("neg_brier_score", "neg_log_loss")


def default_scoring(model, task: str) -> str | None:
    """The score :func:`sapwood.explain` judges a model by when not told:
    ``"neg_brier_score"`` for a classifier with probabilities, else None (the model's own
    ``score``: R², or an anomaly detector's ROC AUC).

    The Brier score is proper (only the true probabilities minimise it, so a constant
    model cannot win), defined for any number of classes, a mean over rows (so its
    intervals over new rows exist) and bounded, so that a fully grown forest's
    probability of 0 for a row's class costs that row at most 2, not the unbounded
    -log 0 of log loss; and unlike accuracy it moves when a feature shifts the
    probabilities without crossing 0.5, as on a rare class."""
    anomaly = getattr(model, "anomaly", False)
    if task == "classification" and not anomaly and hasattr(model, "predict_proba"):
        return "neg_brier_score"
    if task == "survival":
        return "concordance_index"  # Harrell's (docs/measures.md, 'Survival scores')
    return None


_LOSS_NAMES = {"brier_score": "Brier score", "log_loss": "log loss",
               "integrated_brier_score": "integrated Brier score"}
_SCORE_NAMES = {"concordance_index": "concordance index (Harrell's C)",
                "concordance_index_ipcw": "concordance index (Uno's IPCW C)",
                "roc_auc": "ROC AUC", "roc_auc_ovr": "ROC AUC (one vs rest)",
                "roc_auc_ovo": "ROC AUC (one vs one)", "r2": "R²",
                "average_precision": "average precision"}


def shown_score(name: str, value: float) -> tuple:
    """``(words, value, lower_is_better)`` for showing a score: scikit-learn's negated
    losses (``neg_brier_score`` -0.05) as the loss itself (Brier score 0.05)."""
    if name.startswith("neg_"):
        loss = name[len("neg_"):]
        return _LOSS_NAMES.get(loss, loss.replace("_", " ")), -value, True
    return _SCORE_NAMES.get(name, name.replace("_", " ")), value, False


def score_model(model, X, y, task: str, scoring: str | None = None) -> float:
    """The score by ``scoring`` (a scikit-learn scorer name), else the model's own:
    accuracy or R² on (X, y); works for estimators and loaded tree-format models."""
    if scoring is not None:
        from sapwood.importance._engine._scoring import scorer_for

        return float(scorer_for(model, scoring, y)(model, X, y))
    if hasattr(model, "score"):
        return float(model.score(X, y))
    from sklearn.metrics import accuracy_score, r2_score

    from sapwood.adapters import predict

    predicted = predict(model, X)
    if task == "classification":
        return float(accuracy_score(y, predicted))
    return float(r2_score(y, predicted))


# Above this many rows, a prediction the run shows a bar for is made in pieces of
# PREDICTION_PIECE rows, which the bar counts with the time left; below, it takes a
# second or two and the step's own bar shows it.
COUNTED_PREDICTION_ROWS = 100_000
PREDICTION_PIECE = 25_000
_KEPT_METHODS = ("predict", "predict_proba")


class KeptPredictions:
    """A model's ``predict`` and ``predict_proba`` of one table ``X``, each made once and
    handed back (as a copy) to every later call on that same table object, while the
    model is inside ``with kept:`` (it can be entered again and again; what was made is
    kept between).

    explain predicts its held-out rows for the score, for the accuracy shown beside a
    probability score, for the baseline's per-row gains and for the leakage check's
    model score: on a large table and a large forest each of those takes as long as the
    first. Inside ``with``, the model's two methods are replaced on the instance, where
    scikit-learn's scorers and the estimators' own ``score`` look them up, so every one
    of those calls reads the numbers the first call made; any other table goes to the
    model's own method, and leaving puts the class's methods back. A model whose
    instance takes no attributes is left alone (each call predicts again).

    ``progress``: on more than :data:`COUNTED_PREDICTION_ROWS` rows the first prediction
    is made in pieces of rows under a bar with the time left (:attr:`counted`), which
    names them ``rows``. A tree
    model predicts each row on its own, so the pieces put together are the prediction
    of the whole table; without ``progress`` the table is predicted in one call."""

    def __init__(self, model, X, progress=False, rows="held-out rows"):
        self.model = model
        self.X = X
        self.rows = rows
        self.counted = bool(progress) and len(X) > COUNTED_PREDICTION_ROWS
        self._made = {}
        self._replaced = []

    def __enter__(self):
        own = getattr(self.model, "__dict__", None)
        if own is None:
            return self
        for name in _KEPT_METHODS:
            method = getattr(self.model, name, None)
            if method is None or name in own:
                continue
            try:
                setattr(self.model, name, self._answering(name, method))
            except (AttributeError, TypeError):
                continue
            self._replaced.append(name)
        return self

    def __exit__(self, *exc):
        for name in self._replaced:
            self.model.__dict__.pop(name, None)
        self._replaced = []
        return False

    def _answering(self, name, method):
        from functools import wraps

        # Named as the method: scikit-learn's scorers call the model's method by name.
        @wraps(method)
        def answer(X, *args, **kwargs):
            if X is not self.X or args or kwargs:
                return method(X, *args, **kwargs)
            if name not in self._made:
                self._made[name] = self._predicted(name, method)
            made = self._made[name]
            # A copy: a caller may write into what it is given.
            return [part.copy() for part in made] if isinstance(made, list) else made.copy()
        return answer

    def _predicted(self, name, method):
        if not self.counted or self._made:
            # In one call when a prediction is made already: a classifier's predict
            # reads its predict_proba of the whole table, kept, where in pieces it
            # would make each piece's again.
            return method(self.X)
        from .._progress import progress_bar

        n_rows = len(self.X)
        pieces = []
        with progress_bar(n_rows, f"{self.rows} predicted", True) as steps:
            for start in range(0, n_rows, PREDICTION_PIECE):
                piece = self.X[start:start + PREDICTION_PIECE] if not hasattr(
                    self.X, "iloc") else self.X.iloc[start:start + PREDICTION_PIECE]
                pieces.append(method(piece))
                steps.advance(len(piece))
        return _joined(pieces)


def _joined(pieces):
    """The pieces' predictions as one: arrays stacked by rows; a list of arrays (one per
    output) output by output."""
    import numpy as np

    if isinstance(pieces[0], list):
        return [np.concatenate([piece[k] for piece in pieces]) for k in range(len(pieces[0]))]
    return np.concatenate([np.asarray(piece) for piece in pieces])


def describe_model(model) -> str:
    """``RandomForestClassifier(n_estimators=100, max_depth=None)`` style, short."""
    while isinstance(model, FittedFrameModel | Ranker):  # the model judged, itself
        model = model.model
    if isinstance(model, LoadedModel):
        source = describe_source(model.ensemble, trees=True)
        if model.stopping is not None:
            source = f"{source[:-1]}; {model.stopping})"
        return source if model.path is None else f"{source} from {model.path}"
    from ._wrapped import describe

    wrapper = describe(model, describe_model)
    if wrapper is not None:
        return wrapper
    name = type(model).__name__
    if name == "Pipeline":
        from ._pipelines import describe_pipeline

        return describe_pipeline(model, describe_model)
    get_params = getattr(model, "get_params", None)
    if get_params is None:
        return name
    params = get_params()
    shown = [f"{key}={params[key]!r}" for key in ("n_estimators", "max_depth")
             if key in params]
    # The rows each tree draws, when not the class's default (a large table's default
    # forest, or the user's own), so that the line says what was grown.
    defaults = _default_params(type(model))
    shown += [f"{key}={params[key]!r}" for key in ("bootstrap", "max_samples")
              if key in params and key in defaults and params[key] != defaults[key]]
    from ..adapters import stopped_early

    stopping = stopped_early(model)
    if stopping is not None:
        shown.append(f"read: {stopping}")
    return f"{name}({', '.join(shown)})"


def _default_params(cls) -> dict:
    """The defaults of ``cls.__init__``'s keyword parameters."""
    import inspect

    try:
        signature = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return {}
    return {name: parameter.default for name, parameter in signature.parameters.items()
            if parameter.default is not inspect.Parameter.empty}
