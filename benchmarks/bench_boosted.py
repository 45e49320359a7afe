"""B12: held-out permutation importance on boosted models, sapwood vs scikit-learn.

XGBoost (500 trees, depth 6) and LightGBM (500 trees, 31 leaves) regressors are fit on
60,000 D2-style rows (``make_regression(80_000, 20 features, 8 informative, noise=1)``,
a quarter held out: 20,000 rows). scikit-learn runs its ``permutation_importance`` with
the library's native predict in its best configuration (``n_jobs=1``; the booster
itself uses both cores); sapwood uses both cores. Both get ``n_repeats=5``,
``random_state=0``, and the importances must be identical.

Run from the repository root::

    .venv/bin/python -m benchmarks.bench_boosted              # 3 runs each, taking turns
    .venv/bin/python -m benchmarks.bench_boosted --runs 5 --models xgboost
    .venv/bin/python -m benchmarks.bench_boosted --cache /tmp/b12   # fit once, reuse
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import statistics
import sys
import time

import numpy as np
import sklearn
from sklearn.datasets import make_regression
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.model_selection import train_test_split

import sapwood
from sapwood.importance import permutation_importance

TARGET = 0.10


def _models(quick):
    n_trees = 30 if quick else 500
    models = {}
    try:
        import xgboost  # optional: lazily, only this benchmark needs it
        models["xgboost"] = (f"XGBRegressor({n_trees}, max_depth=6)",
                             xgboost.XGBRegressor(n_estimators=n_trees, max_depth=6,
                                                  n_jobs=2, random_state=0))
    except ImportError:
        pass
    try:
        import lightgbm  # optional, as above
        models["lightgbm"] = (f"LGBMRegressor({n_trees}, num_leaves=31)",
                              lightgbm.LGBMRegressor(n_estimators=n_trees, num_leaves=31,
                                                     n_jobs=2, verbose=-1, random_state=0))
    except ImportError:
        pass
    return models


def data(quick):
    X, y = make_regression(n_samples=8_000 if quick else 80_000, n_features=20,
                           n_informative=8, noise=1.0, random_state=0)
    return train_test_split(X, y, test_size=0.25, random_state=0)


def run_model(name, quick, runs, only=None, cache=None):
    X_train, X_test, y_train, y_test = data(quick)
    label, model = _models(quick)[name]
    # A loaded host fits the two models in minutes: ``cache`` keeps them (the fits are
    # seeded, so a kept model is the one a new fit would give).
    path = None if cache is None else os.path.join(
        cache, f"{name}-{'quick' if quick else 'full'}.pkl")
    if path is not None and os.path.exists(path):
        with open(path, "rb") as file:
            model = pickle.load(file)
        print(f"B12 {label}: fitted model from {path}, test {X_test.shape}", flush=True)
    else:
        start = time.perf_counter()
        model.fit(X_train, y_train)
        print(f"B12 {label}: fit {time.perf_counter() - start:.1f} s, test {X_test.shape}",
              flush=True)
        if path is not None:
            os.makedirs(cache, exist_ok=True)
            with open(path, "wb") as file:
                pickle.dump(model, file)

    def ours():
        return permutation_importance(model, X_test, y_test, n_repeats=5, random_state=0,
                                      n_jobs=2)

    def theirs():
        return sklearn_permutation_importance(model, X_test, y_test, n_repeats=5,
                                              random_state=0, n_jobs=1)

    start = time.perf_counter()
    first = ours()
    first_s = time.perf_counter() - start
    ours_s, theirs_s, reference = [], [], None
    for _ in range(runs):  # taking turns: a change in load hits both
        start = time.perf_counter()
        ours()
        ours_s.append(time.perf_counter() - start)
        if only == "sapwood":
            continue
        start = time.perf_counter()
        reference = theirs()
        theirs_s.append(time.perf_counter() - start)
    row = {"id": "B12", "model": name, "workload": label,
           "sapwood_s": statistics.median(ours_s), "first_call_s": first_s,
           "evaluator": first.params["evaluator"]}
    if reference is not None:
        row["sklearn_s"] = statistics.median(theirs_s)
        row["ratio"] = row["sapwood_s"] / row["sklearn_s"]
        row["identical"] = bool(np.array_equal(first.importances, reference.importances))
    print(f"  sapwood {row['sapwood_s']:.3f} s (runs {', '.join(f'{t:.3f}' for t in ours_s)};"
          f" first call {first_s:.2f} s, evaluator {row['evaluator']})"
          + (f", sklearn {row['sklearn_s']:.2f} s, ratio {row['ratio']:.4f} (target "
             f"{TARGET}), identical={row['identical']}" if reference is not None else ""),
          flush=True)
    return row


def run(quick: bool = False) -> list[dict]:
    """The harness protocol (benchmarks/README.md): B12, medians of 3 (1 with quick)."""
    rows = []
    for name in _models(quick):
        row = run_model(name, quick, 1 if quick else 3)
        rows.append({
            "id": "B12",
            "workload": f"permutation_importance(n_repeats=5), {row['workload']}, "
                        "20k D2-style test rows" if not quick else row["workload"],
            "peer": "sklearn n_jobs=1, native predict", "peer_s": row["sklearn_s"],
            "sapwood_s": row["sapwood_s"], "ratio": row["ratio"],
            "target": f"<= {TARGET}", "met": row["ratio"] <= TARGET,
            "check": (f"identical importances: {row['identical']}; evaluator "
                      f"{row['evaluator']}; first call {row['first_call_s']:.2f} s"),
            "raw": row,
        })
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows, 30 trees")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per tool (median)")
    parser.add_argument("--models", nargs="+", default=["xgboost", "lightgbm"],
                        choices=["xgboost", "lightgbm"])
    parser.add_argument("--only", choices=["sapwood"], default=None,
                        help="time sapwood alone (no scikit-learn runs, no ratio)")
    parser.add_argument("--cache", default=None,
                        help="folder keeping the fitted models between runs")
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.processor() or platform.machine()}, "
          f"nproc={os.cpu_count()}, load {os.getloadavg()[0]:.1f}, python "
          f"{sys.version.split()[0]}, scikit-learn {sklearn.__version__}, sapwood "
          f"{sapwood.__version__}", flush=True)
    rows = [run_model(name, args.quick, args.runs, args.only, args.cache)
            for name in args.models
            if name in _models(args.quick)]
    return 0 if all(r.get("identical", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
