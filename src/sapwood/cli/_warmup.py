"""``sapwood warmup``: compile the Numba kernels now, in parallel processes.

Numba compiles a kernel on its first call and keeps it in its on-disk cache; a first
``sapwood demo`` with an empty cache spent most of its minute compiling, one kernel
after another on one core. Warming up runs the library's code paths on tiny data, so
that every kernel they call is compiled and cached, split over processes in two phases:

1. the learners are fit (the growers, the largest kernels) while, in other processes,
   every measure runs on a scikit-learn forest read into the tree format (so the
   measures' kernels compile without waiting for the growers);
2. the command line's whole pipeline runs for every model and task, with every
   measure: what phase 1 left (the refitting measures, the CLI's own paths) compiles
   here, the rest loads from the cache.

``make install`` runs it, so ``make demo`` does not wait. Numbers do not depend on it:
a kernel compiled here is the one a later call would have compiled.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

__all__ = ["PHASES", "run_unit", "warmup"]

N_ROWS = 240
N_TREES = 3
TASKS = ("classification", "regression")
MODELS = ("rf", "tree", "et", "gb")
PHASES = (
    [("fit", task) for task in TASKS] + [("measures", task) for task in TASKS],
    [("pipeline", task, model) for model in MODELS for task in TASKS],
)


def warmup(jobs: int | None = None) -> tuple[float, list[str]]:
    """Run every unit of :data:`PHASES` in ``jobs`` processes (default: one per core),
    phase after phase. Returns the seconds it took and one line per unit that failed
    (the others still run: what they compiled stays cached)."""
    jobs = jobs or os.cpu_count() or 1
    start = time.perf_counter()
    failures = []
    # "spawn": a fresh interpreter per worker, as a user's next command will be.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for phase in PHASES:
            futures = {pool.submit(run_unit, unit): unit for unit in phase}
            for future, unit in futures.items():
                error = future.exception()
                if error is not None:
                    failures.append(f"{' '.join(unit)}: {type(error).__name__}: {error}")
    return time.perf_counter() - start, failures


def run_unit(unit) -> None:
    """One unit of work: ``("fit", task)``, ``("measures", task)`` or
    ``("pipeline", task, model)``."""
    kind, task, *model = unit
    if kind not in ("fit", "measures", "pipeline"):
        raise ValueError(f"warm-up unit {unit!r}: the kind must be fit, measures or "
                         f"pipeline; got {kind!r}")
    # The tiny data makes the measures warn (few distinct values, small samples): those
    # warnings are about data nobody gave, so the user never sees them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = _data(task)
        if kind == "fit":
            _fit_every_learner(task, X, y)
        elif kind == "measures":
            _every_measure(_converted_forest(task, X, y), X, y)
        else:
            _pipeline(task, model[0], X, y)


def _data(task):
    from sapwood.datasets import make_ground_truth

    X, y, _ = make_ground_truth(N_ROWS, task=task, random_state=0)
    return X.astype("float64"), y


def _fit_every_learner(task, X, y):
    from ._models import MODEL_NAMES, model_class

    for name in MODEL_NAMES:
        cls = model_class(name, task)
        if cls is None:
            continue
        model = cls(**_small(cls)).fit(X, y)
        model.predict(X)
        if task == "classification":
            model.predict_proba(X)
    if task == "classification":
        # The grower compiles per criterion, and ``demo --data loan`` grows seed 003's
        # entropy tree.
        model_class("tree", task)(criterion="entropy", max_depth=3).fit(X, y)


def _small(cls) -> dict:
    """Settings that keep a warm-up fit tiny (the kernels' types do not depend on them)."""
    names = cls().get_params()
    return {"n_estimators": N_TREES} if "n_estimators" in names else {}


def _converted_forest(task, X, y):
    """A scikit-learn forest (bagged, so the out-of-bag measures apply): measures read
    it through the same tree format and kernels as a sapwood forest."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    forest = {"classification": RandomForestClassifier,
              "regression": RandomForestRegressor}[task]
    return forest(n_estimators=N_TREES, random_state=0).fit(X, y)


def _every_measure(model, X, y):
    """Every registered measure that needs no refit, on ``model``; a measure that does
    not apply to it (its ValueError or TypeError) is left to phase 2."""
    from sapwood.importance import MEASURES, MeasureInputs

    half = N_ROWS // 2
    inputs = MeasureInputs(X_train=X[:half], y_train=y[:half], X_test=X[half:],
                           y_test=y[half:], random_state=0)
    for measure in MEASURES.values():
        if "estimator" in measure.needs:
            continue
        try:
            if measure.why_not(model, inputs, **measure.options) is None:
                measure.run(model, inputs, **measure.options)
        except (ValueError, TypeError):
            continue


def _pipeline(task, model_name, X, y):
    """The command line's pipeline (fit, score, every measure) as ``explain`` runs it."""
    from . import _measures
    from ._data import Prepared
    from ._models import build_model
    from ._run import UI, Options, run_pipeline

    model = build_model(model_name, task, random_state=0)
    model.set_params(**_small(type(model)))
    data = Prepared(X=X, y=y.rename("y"), task=task, target="y")
    methods = tuple(name for name in _measures.MEASURES if _measures.is_available(name))
    run_pipeline(data, model, Options(methods=methods), ui=UI(quiet=True),
                 source="sapwood warmup")
