"""B1-B4 (and B10's memory): held-out permutation importance, sapwood vs scikit-learn.

For each data set of BENCHMARKS.md a 100-tree random forest is fit with scikit-learn
and handed to sapwood as it is (sapwood's adapters read it into the tree format; its
trees equal sapwood's own forest's).
scikit-learn runs in its best configuration (``permutation_importance(n_jobs=1)`` with
the forest's ``n_jobs=1``); sapwood uses both cores. Both get ``n_repeats=5``,
``random_state=0``, and the importances must be identical.

Run from the repository root::

    .venv/bin/python benchmarks/bench_permutation.py            # D1-D4, 3 runs each
    .venv/bin/python benchmarks/bench_permutation.py --quick    # small data, a minute
    .venv/bin/python benchmarks/bench_permutation.py --datasets D3 D4 --runs 5

Times are medians of ``--runs`` warm runs; sapwood's first call (Numba compile or cache
load plus the run) is reported separately. Peak memory is the largest resident-set
growth above the level before the call, sampled every 5 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import threading
import time

import numpy as np
import sklearn
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.model_selection import train_test_split

import sapwood
from sapwood.importance import permutation_importance

DATASETS = {
    "D1": (make_classification, dict(n_samples=100_000, n_features=20, n_informative=8)),
    "D2": (make_regression, dict(n_samples=100_000, n_features=20, n_informative=8,
                                 noise=1.0)),
    "D3": (make_classification, dict(n_samples=5_000, n_features=50, n_informative=10)),
    "D4": (make_classification, dict(n_samples=20_000, n_features=200, n_informative=10)),
}
TARGETS = {"D1": ("B1", 0.10), "D2": ("B2", 0.10), "D3": ("B3", 0.02), "D4": ("B4", 0.03)}


def _rss():
    try:
        import psutil
    except ImportError:
        return None
    return psutil.Process().memory_info().rss


def measure(function):
    """(seconds, result, peak resident-set growth in bytes or None)."""
    start_rss = _rss()
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(0.005):
            peak[0] = max(peak[0], _rss() - start_rss)

    sampler = threading.Thread(target=sample, daemon=True) if start_rss is not None else None
    if sampler:
        sampler.start()
    start = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - start
    done.set()
    if sampler:
        sampler.join()
        peak[0] = max(peak[0], _rss() - start_rss)
    return seconds, result, (peak[0] if sampler else None)


def run_dataset(name, quick, runs):
    make, options = DATASETS[name]
    options = dict(options, random_state=0)
    if quick:
        options["n_samples"] = options["n_samples"] // 10
    X, y = make(**options)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    forest_class = RandomForestClassifier if make is make_classification else RandomForestRegressor
    n_trees = 30 if quick else 100
    start = time.perf_counter()
    forest = forest_class(n_estimators=n_trees, n_jobs=2, random_state=0).fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    forest.set_params(n_jobs=1)
    n_nodes = sum(e.tree_.node_count for e in forest.estimators_)
    print(f"{name}: test {X_test.shape}, {n_trees} trees, {n_nodes:,} nodes "
          f"(fit {fit_seconds:.1f} s)", flush=True)

    def ours():
        return permutation_importance(forest, X_test, y_test, n_repeats=5, random_state=0,
                                      n_jobs=2)

    def theirs():
        return sklearn_permutation_importance(forest, X_test, y_test, n_repeats=5,
                                              random_state=0, n_jobs=1)

    first, result, _ = measure(ours)
    ours_runs = [measure(ours) for _ in range(runs)]
    theirs_runs = [measure(theirs) for _ in range(runs)]
    reference = theirs_runs[0][1]
    identical = np.array_equal(result.importances, reference.importances)
    max_difference = float(np.max(np.abs(result.importances - reference.importances)))
    ours_time = statistics.median(r[0] for r in ours_runs)
    theirs_time = statistics.median(r[0] for r in theirs_runs)
    row = {
        "dataset": name, "id": TARGETS[name][0], "target": TARGETS[name][1],
        "sapwood_s": ours_time, "sklearn_s": theirs_time, "ratio": ours_time / theirs_time,
        "first_call_s": first, "identical": identical, "max_abs_diff": max_difference,
        "evaluator": result.params["evaluator"],
        "sapwood_peak_mb": _mb(max(r[2] or 0 for r in ours_runs)),
        "sklearn_peak_mb": _mb(max(r[2] or 0 for r in theirs_runs)),
    }
    print(f"  sapwood {ours_time:.3f} s (first call {first:.2f} s), sklearn {theirs_time:.2f} s, "
          f"ratio {row['ratio']:.4f} (target {row['target']}), identical={identical}, "
          f"peak +{row['sapwood_peak_mb']} MB vs +{row['sklearn_peak_mb']} MB", flush=True)
    return row


def run(quick: bool = False) -> list[dict]:
    """The harness protocol (benchmarks/README.md): B1-B4, medians of 3 (1 with quick)."""
    rows = []
    for name in DATASETS:
        row = run_dataset(name, quick, 1 if quick else 3)
        rows.append({
            "id": row["id"],
            "workload": f"permutation_importance(n_repeats=5), 100-tree forest, {name} test",
            "peer": "sklearn n_jobs=1", "peer_s": row["sklearn_s"],
            "sapwood_s": row["sapwood_s"], "ratio": row["ratio"],
            "target": f"<= {row['target']}", "met": row["ratio"] <= row["target"],
            "check": (f"identical importances: {row['identical']}; evaluator "
                      f"{row['evaluator']}; first call {row['first_call_s']:.2f} s"),
            "raw": row,
        })
    return rows


def _mb(value):
    return round(value / 2**20, 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows, 30 trees")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per tool (median)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"nproc={os.cpu_count()}, python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, sapwood {sapwood.__version__}", flush=True)
    rows = [run_dataset(name, args.quick, args.runs) for name in args.datasets]
    print("\n| id | data | sapwood s | sklearn s | ratio | target | identical | first call s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['id']} | {r['dataset']} | {r['sapwood_s']:.3f} | {r['sklearn_s']:.2f} | "
              f"{r['ratio']:.4f} | {r['target']} | {r['identical']} | {r['first_call_s']:.2f} |")
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
