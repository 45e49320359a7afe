"""B5 (RandomForest fit, n_jobs=2) and B7 (GradientBoostingRegressor fit), sapwood vs
scikit-learn, same hyper-parameters and seed; the models are identical, which is
checked on the test predictions.

Full-size forests take minutes per fit, so each workload runs once (``--quick``: small
data, for a smoke run).
"""

from __future__ import annotations

import numpy as np
import sklearn.ensemble

import sapwood

from ._data import load
from ._timing import time_interleaved

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
        rows.append({
            "id": bench_id,
            "workload": f"{workload}, {name} ({data.X_train.shape[0]:,} x "
                        f"{data.X_train.shape[1]})",
            "peer": "sklearn", "peer_s": peer.median, "sapwood_s": mine.median,
            "ratio": ratio, "target": f"<= {target}", "met": ratio <= target,
            "check": f"test predictions equal (1e-12): {same}; one run each",
        })
    return rows
