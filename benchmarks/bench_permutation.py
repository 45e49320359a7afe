"""B1-B4 (and B10's memory): held-out permutation importance, sapwood vs scikit-learn.

For each data set of BENCHMARKS.md a 100-tree random forest is fit with scikit-learn
and handed to sapwood as it is (sapwood's adapters read it into the tree format; its
trees equal sapwood's own forest's).
scikit-learn runs in its best configuration (``permutation_importance(n_jobs=1)`` with
the forest's ``n_jobs=1``); sapwood uses both cores. Both get ``n_repeats=5``,
``random_state=0``, and the importances must be identical.

Run from the repository root::

    .venv/bin/python -m benchmarks.bench_permutation            # D1-D4, 3 runs each, B10 on D2
    .venv/bin/python -m benchmarks.bench_permutation --quick --oob  # small data, with B8
    .venv/bin/python -m benchmarks.bench_permutation --datasets D3 D4 --runs 5 --memory D4

Times are medians of ``--runs`` warm runs, the two tools taking turns; sapwood's first
call (Numba compile or cache load plus the run) is reported separately. The in-process
memory figure is the largest resident-set growth above the level before the call,
sampled every 5 ms (in an extra, untimed sapwood call); B10's figure
(``--memory``, D2 by default) is measured properly: one fresh process per library loads
the pickled forest and data, and reports its peak resident set (``VmHWM``) during the
one call minus its resident set just before it (so the forest itself is excluded).

B8 (full runs, or ``--oob``): sapwood's ``RandomForestClassifier(100, n_jobs=2)`` (the B5
forest) on the D1 training rows, ``oob_permutation_importance(n_jobs=2)``, against the
scikit-learn time of B1.
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import statistics
import sys
import tempfile
import threading
import time

import numpy as np
import sklearn
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.model_selection import train_test_split

import sapwood
from sapwood.importance import oob_permutation_importance, permutation_importance

from ._timing import run_fresh

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


def measure(function, sample=True):
    """(seconds, result, peak resident-set growth in bytes or None; None too when not
    ``sample``d)."""
    start_rss = _rss() if sample else None
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


def run_dataset(name, quick, runs, memory=False):
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
    # Turns: a change in the machine's load moves both tools' times alike. sapwood's
    # timed runs go unsampled (the sampler thread would compete with its two threads
    # for the cores and the GIL); one extra call gives its memory figure.
    ours_runs, theirs_runs = [], []
    for _ in range(runs):
        ours_runs.append(measure(ours, sample=False))
        theirs_runs.append(measure(theirs))
    ours_runs.append((None, None, measure(ours)[2]))
    reference = theirs_runs[0][1]
    identical = np.array_equal(result.importances, reference.importances)
    max_difference = float(np.max(np.abs(result.importances - reference.importances)))
    ours_time = statistics.median(r[0] for r in ours_runs if r[0] is not None)
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
    if memory:
        row.update(fresh_process_memory(forest, X_test, y_test))
        print(f"  fresh-process peak above the loaded forest: sapwood "
              f"{row['sapwood_fresh_peak_mb']:.0f} MB, sklearn "
              f"{row['sklearn_fresh_peak_mb']:.0f} MB (forest + data "
              f"{row['loaded_mb']:.0f} MB)", flush=True)
    return row


_MEMORY_SNIPPET = '''
import gc, json, pickle, sys
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
start = status("VmRSS:")
if {library!r} == "sapwood":
    from sapwood.importance import permutation_importance
    options = dict(n_jobs=2)
else:
    from sklearn.inspection import permutation_importance
    options = dict(n_jobs=1)
with open({path!r}, "rb") as handle:
    forest, X, y = pickle.load(handle)
gc.collect()
before = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # restart the peak (VmHWM) count
permutation_importance(forest, X, y, n_repeats=5, random_state=0, **options)
print(json.dumps({{"growth_mb": status("VmHWM:") - before, "loaded_mb": before - start}}))
'''


def fresh_process_memory(forest, X_test, y_test):
    """B10: peak resident-set growth of one call above the loaded forest, in a fresh
    process per library (Linux: ``/proc/self/clear_refs`` and ``VmHWM``)."""
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "forest.pkl")
        with open(path, "wb") as handle:
            pickle.dump((forest, X_test, y_test), handle, protocol=pickle.HIGHEST_PROTOCOL)
        for library in ("sapwood", "sklearn"):
            report = run_fresh(_MEMORY_SNIPPET.format(library=library, path=path))
            out[f"{library}_fresh_peak_mb"] = report["growth_mb"]
            out["loaded_mb"] = report["loaded_mb"]
    out["memory_ratio"] = out["sapwood_fresh_peak_mb"] / max(out["sklearn_fresh_peak_mb"], 1e-9)
    return out


def run_oob(quick, runs, sklearn_seconds):
    """B8: OOB permutation importance on the B5 forest (sapwood, 100 trees, D1 training
    rows) against scikit-learn's held-out time of B1."""
    make, options = DATASETS["D1"]
    options = dict(options, random_state=0)
    if quick:
        options["n_samples"] = options["n_samples"] // 10
    X, y = make(**options)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.2, random_state=0)
    forest = sapwood.RandomForestClassifier(n_estimators=30 if quick else 100, n_jobs=2,
                                            random_state=0).fit(X_train, y_train)

    def ours():
        return oob_permutation_importance(forest, X_train, y_train, random_state=0, n_jobs=2)

    first, _, _ = measure(ours)
    times = [measure(ours)[0] for _ in range(runs)]
    seconds = statistics.median(times)
    row = {"dataset": "D1 train (B5 forest)", "id": "B8", "target": 0.2, "sapwood_s": seconds,
           "sklearn_s": sklearn_seconds, "ratio": seconds / sklearn_seconds,
           "first_call_s": first, "identical": True, "evaluator": "oob"}
    print(f"B8: oob_permutation_importance {seconds:.3f} s (first call {first:.2f} s), "
          f"B1 sklearn {sklearn_seconds:.2f} s, ratio {row['ratio']:.4f} (target 0.2)",
          flush=True)
    return row


def run(quick: bool = False) -> list[dict]:
    """The harness protocol (benchmarks/README.md): B1-B4, medians of 3 (1 with quick)."""
    rows = []
    raw = []
    for name in DATASETS:
        row = run_dataset(name, quick, 1 if quick else 3, memory=name == "D2")
        raw.append(row)
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
        if "memory_ratio" in row:
            rows.append({
                "id": "B10",
                "workload": f"peak RSS growth of one call above the loaded forest, {name}, "
                            "fresh process per library",
                "peer": "sklearn n_jobs=1", "peer_s": None, "sapwood_s": None,
                "ratio": row["memory_ratio"], "target": "<= 0.5",
                "met": row["memory_ratio"] <= 0.5,
                "check": (f"sapwood {row['sapwood_fresh_peak_mb']:.0f} MB, sklearn "
                          f"{row['sklearn_fresh_peak_mb']:.0f} MB, forest and data "
                          f"{row['loaded_mb']:.0f} MB"),
                "raw": row,
            })
    d1 = next(r for r in raw if r["dataset"] == "D1")
    oob = run_oob(quick, 1 if quick else 3, d1["sklearn_s"])
    rows.append({
        "id": "B8", "workload": "oob_permutation_importance, B5 forest (sapwood, 100 trees), "
                                "D1 training rows, vs B1's sklearn time",
        "peer": "sklearn held-out (B1)", "peer_s": oob["sklearn_s"], "sapwood_s": oob["sapwood_s"],
        "ratio": oob["ratio"], "target": "<= 0.2", "met": oob["ratio"] <= 0.2,
        "check": f"first call {oob['first_call_s']:.2f} s", "raw": oob,
    })
    return rows


def _mb(value):
    return round(value / 2**20, 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows, 30 trees")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per tool (median)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--memory", nargs="*", default=["D2"], choices=list(DATASETS),
                        help="data sets whose B10 fresh-process memory is measured")
    parser.add_argument("--oob", action="store_true", help="also B8 (needs D1)")
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"nproc={os.cpu_count()}, python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, sapwood {sapwood.__version__}", flush=True)
    rows = [run_dataset(name, args.quick, args.runs, memory=name in args.memory)
            for name in args.datasets]
    if args.oob and "D1" in args.datasets:
        d1 = next(r for r in rows if r["dataset"] == "D1")
        rows.append(run_oob(args.quick, args.runs, d1["sklearn_s"]))
    print("\n| id | data | sapwood s | sklearn s | ratio | target | identical | first call s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['id']} | {r['dataset']} | {r['sapwood_s']:.3f} | {r['sklearn_s']:.2f} | "
              f"{r['ratio']:.4f} | {r['target']} | {r['identical']} | {r['first_call_s']:.2f} |")
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
