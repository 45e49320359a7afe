"""B5 (RandomForest fit, n_jobs=2) and B7 (GradientBoostingRegressor fit), sapwood vs
scikit-learn, same hyper-parameters and seed; the models are identical, which is
checked on the test predictions.

Full-size forests take minutes per fit, so each workload runs once (``--quick``: small
data, for a smoke run).

Peak memory: each library fits each workload once more in a new interpreter
(:func:`_timing.run_fresh`) that reports its own peak RSS (``VmHWM``; ``wait4``'s
``ru_maxrss`` would include the harness's RSS, copied by the fork before ``exec``) and,
from psutil, its RSS just before the fit (imports, data, loaded Numba kernels), so the
fit's own share is the difference.
"""

from __future__ import annotations

import numpy as np
import sklearn.ensemble

import sapwood

from ._data import load
from ._timing import run_fresh, time_interleaved

__all__ = ["run"]

WORKLOADS = (
    # (id, workload, data set, sapwood class, scikit-learn class, params, target)
    ("B5", "RandomForestClassifier(100, n_jobs=2) fit", "D1", sapwood.RandomForestClassifier,
     sklearn.ensemble.RandomForestClassifier, {"n_estimators": 100, "n_jobs": 2}, 1.0),
    ("B5", "RandomForestRegressor(100, n_jobs=2) fit", "D2", sapwood.RandomForestRegressor,
     sklearn.ensemble.RandomForestRegressor, {"n_estimators": 100, "n_jobs": 2}, 1.0),
    ("B7", "GradientBoostingRegressor(100, max_depth=3) fit", "D2",
     sapwood.GradientBoostingRegressor, sklearn.ensemble.GradientBoostingRegressor,
     {"n_estimators": 100, "max_depth": 3}, 0.5),
)


# One fit in a new process: peak RSS of the whole process and RSS before the fit.
MEMORY = """
import importlib, json, psutil
from benchmarks._data import load
from benchmarks._timing import peak_rss_mb
data = load({name!r}, quick={quick!r})
module, _, name = {model!r}.rpartition(".")
model = getattr(importlib.import_module(module), name)
model(**{small!r}).fit(data.X_train[:200], data.y_train[:200])  # load compiled kernels
before = psutil.Process().memory_info().rss / 2**20
model(**{params!r}).fit(data.X_train, data.y_train)
print(json.dumps({{"before_mb": before, "peak_mb": peak_rss_mb()}}))
"""


def peak_memory(name: str, quick: bool, model_class, params: dict) -> dict:
    """Peak RSS (MB) of a new process fitting ``model_class(**params)`` on data set
    ``name``, and its RSS before the fit."""
    model = f"{model_class.__module__}.{model_class.__name__}"
    small = {**params, "n_estimators": 2}
    report = run_fresh(MEMORY.format(name=name, quick=quick, model=model, small=small,
                                     params=params))
    return {"peak_mb": report["peak_mb"], "before_mb": report["before_mb"],
            "fit_mb": report["peak_mb"] - report["before_mb"]}


def run(quick: bool = False) -> list[dict]:
    rows = []
    for bench_id, workload, name, ours, theirs, params, target in WORKLOADS:
        data = load(name, quick=quick)
        params = {**params, "random_state": 0}
        if quick:
            params["n_estimators"] = 5
        ours(**params).fit(data.X_train[:200], data.y_train[:200])  # load compiled kernels
        X, y = data.X_train, data.y_train
        timings = time_interleaved({
            "sklearn": lambda t=theirs, p=params, X=X, y=y: t(**p).fit(X, y),
            "sapwood": lambda o=ours, p=params, X=X, y=y: o(**p).fit(X, y),
        }, repeats=1)
        peer, mine = timings["sklearn"], timings["sapwood"]
        # scikit-learn sums a forest's tree outputs in thread completion order, so equal
        # trees give means equal only to rounding.
        same = np.allclose(peer.result.predict(data.X_test), mine.result.predict(data.X_test),
                           rtol=1e-12, atol=0)
        ratio = mine.median / peer.median
        memory = {library: peak_memory(name, quick, cls, params)
                  for library, cls in (("sklearn", theirs), ("sapwood", ours))}
        memory_note = "; ".join(
            f"{library} peak RSS {m['peak_mb']:.0f} MB (fit +{m['fit_mb']:.0f} MB over "
            f"{m['before_mb']:.0f} MB)" for library, m in memory.items())
        rows.append({
            "id": bench_id,
            "workload": f"{workload}, {name} ({data.X_train.shape[0]:,} x "
                        f"{data.X_train.shape[1]})",
            "peer": "sklearn", "peer_s": peer.median, "sapwood_s": mine.median,
            "ratio": ratio, "target": f"<= {target}", "met": ratio <= target,
            "check": f"test predictions equal (1e-12): {same}; one run each; "
                     + memory_note,
            "memory": memory,
        })
    return rows
