"""What a user waits for before any real work (issue 20, items 3 and 4).

- B-COLD: ``sapwood demo`` in a new process with an empty Numba cache (a fresh
  ``NUMBA_CACHE_DIR``: every kernel compiles), against the same command on a filled
  cache (warm). Each round runs warm, cold, warm (the first warm run on the previous
  round's cache, the second on the cache the cold run left), and its ratio is the cold
  run over the mean of its two warm runs: on a shared machine whose speed drifts, the
  drift between the runs cancels to first order. :data:`ROUNDS` rounds, median ratio.
  Target: cold at most 3x warm (stretch 1.5x). The demo compiles its measures' kernels
  in a second process while it fits (``cli._warmup.compile_ahead``); each round also
  runs a cold demo without it (``SAPWOOD_COMPILE_AHEAD=0``, B-COLD-SERIAL).
- B-WARMUP: ``sapwood warmup`` (every kernel compiled in parallel processes) on an
  empty cache, and the demo after it.
- B-IMPORT: ``import sapwood`` in a new interpreter (median of 5). Target <= 0.5 s.
- B-MDI: ``mdi`` (importances, their draws and the 95% interval) on a
  RandomForestRegressor(100) grown in full on 150,000 x 20 rows (19 million nodes,
  9.5 million splits); the node trace is built only when read, timed apart.
  Target well under a second.

``--quick``: the demo on seed 003's loan table (one tree), one round, on the current
cache; a 2,000-row forest of 10 trees for MDI. Its numbers mean nothing.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from ._timing import REPO, run_fresh

__all__ = ["run"]

ROUNDS = 3  # a cold demo takes about twenty seconds on a quiet 2-core machine; load changes
COLD_TARGET = 3.0
IMPORT_TARGET_S = 0.5
MDI_TARGET_S = 1.0


def run(quick: bool = False) -> list[dict]:
    rows = _demo_rows(quick)
    rows.append(_import_row(quick))
    rows.append(_mdi_row(quick))
    return rows


def _sapwood(arguments, cache_dir, ahead=True):
    """Seconds of ``python -m sapwood.cli ARGUMENTS`` in a new process (``ahead``: the
    commands' compiling ahead on, as by default)."""
    env = {**os.environ, "SAPWOOD_COMPILE_AHEAD": "1" if ahead else "0"}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sapwood.cli", *arguments], env=env, cwd=REPO,
                   check=True, capture_output=True)
    return time.perf_counter() - start


def _demo_rows(quick):
    demo = ["demo", "--quiet"] + (["--data", "loan"] if quick else [])
    cold, warm, serial = [], [], []
    with tempfile.TemporaryDirectory() as caches:
        previous = None if quick else os.path.join(caches, "primed")
        _sapwood(demo, previous)  # untimed: the first round's first warm run needs a cache
        for round_number in range(ROUNDS):
            fresh = None if quick else os.path.join(caches, str(round_number))
            before = _sapwood(demo, previous)
            cold.append(_sapwood(demo, fresh))
            after = _sapwood(demo, fresh)
            warm.append((before + after) / 2)
            previous = fresh
            if not quick:
                serial.append(_sapwood(demo, os.path.join(caches, f"serial{round_number}"),
                                       ahead=False))
            _progress(f"  demo warm {before:.1f} s, cold {cold[-1]:.1f} s, warm {after:.1f} s"
                      + (f", cold without compiling ahead {serial[-1]:.1f} s"
                         if serial else ""))
    ratios = [c / w for c, w in zip(cold, warm, strict=True)]
    rows = [{
        "id": "B-COLD", "workload": f"sapwood {' '.join(demo)}: new process, empty Numba "
                                    "cache (sapwood) vs the warm runs around it (peer)",
        "peer": "warm run", "peer_s": statistics.median(warm),
        "sapwood_s": statistics.median(cold), "ratio": statistics.median(ratios),
        "target": f"<= {COLD_TARGET:g}x (stretch 1.5x)",
        "met": statistics.median(ratios) <= COLD_TARGET,
        "check": "rounds (cold, mean of the warm runs around it): " + ", ".join(
            f"({c:.1f}, {w:.1f})" for c, w in zip(cold, warm, strict=True)),
        "sapwood_runs": cold, "peer_runs": warm,
    }]
    if quick:
        return rows
    serial_ratios = [c / w for c, w in zip(serial, warm, strict=True)]
    rows.append({
        "id": "B-COLD-SERIAL", "workload": f"sapwood {' '.join(demo)} as B-COLD, compiling "
                                           "ahead off (SAPWOOD_COMPILE_AHEAD=0)",
        "peer": "warm run", "peer_s": statistics.median(warm),
        "sapwood_s": statistics.median(serial), "ratio": statistics.median(serial_ratios),
        "target": "B-COLD's cold run faster",
        "met": statistics.median(cold) < statistics.median(serial),
        "check": "rounds (cold without, warm): " + ", ".join(
            f"({c:.1f}, {w:.1f})" for c, w in zip(serial, warm, strict=True)),
        "sapwood_runs": serial, "peer_runs": warm,
    })
    with tempfile.TemporaryDirectory() as cache:
        warming = _sapwood(["warmup"], cache)
        after = _sapwood(demo, cache)
    _progress(f"  warmup {warming:.1f} s, demo after it {after:.1f} s")
    rows.append({
        "id": "B-WARMUP", "workload": "sapwood warmup (2 processes) on an empty cache, then "
                                      "sapwood demo (sapwood_s) vs its warm run (peer)",
        "peer": "warm run", "peer_s": statistics.median(warm), "sapwood_s": after,
        "target": "demo after warmup as warm", "met": after <= 1.25 * max(warm),
        "check": f"warmup itself {warming:.1f} s",
        "sapwood_runs": [after], "peer_runs": warm, "raw": {"warmup_s": warming},
    })
    return rows


def _import_row(quick):
    code = ("import json, sys, time; start = time.perf_counter(); import sapwood; "
            "seconds = time.perf_counter() - start; print(json.dumps({'s': seconds, "
            "'modules': sorted({m.partition('.')[0] for m in sys.modules})}))")
    reports = [run_fresh(code) for _ in range(1 if quick else 5)]
    seconds = statistics.median(report["s"] for report in reports)
    heavy = sorted(set(reports[-1]["modules"]) & {
        "matplotlib", "rich", "xgboost", "lightgbm", "catboost", "shap", "dask", "pyarrow",
        "cvxpy", "pandas", "sklearn", "scipy", "numba"})
    return {
        "id": "B-IMPORT", "workload": "import sapwood in a new interpreter (median of 5)",
        "sapwood_s": seconds, "target": f"<= {IMPORT_TARGET_S} s",
        "met": seconds <= IMPORT_TARGET_S,
        "check": f"heavy or optional packages loaded: {', '.join(heavy) or 'none'}",
        "sapwood_runs": [report["s"] for report in reports],
    }


def _mdi_row(quick):
    from sklearn.datasets import make_regression

    import sapwood
    from sapwood.adapters import as_ensemble
    from sapwood.importance import mdi

    n_rows, n_trees = (2_000, 10) if quick else (150_000, 100)
    X, y = make_regression(n_samples=n_rows, n_features=20, n_informative=8, noise=1.0,
                           random_state=0)
    forest = sapwood.RandomForestRegressor(n_estimators=n_trees, n_jobs=2, random_state=0)
    forest.fit(X, y)
    n_nodes = sum(tree.node_count for tree in as_ensemble(forest).trees)
    runs = []
    for _ in range(1 if quick else 3):
        start = time.perf_counter()
        result = mdi(forest)
        runs.append(time.perf_counter() - start)
    start = time.perf_counter()
    n_trace = len(result.trace)
    trace_s = time.perf_counter() - start
    equal = np.array_equal(result.importances_mean, forest.feature_importances_)
    seconds = statistics.median(runs)
    _progress(f"  mdi {seconds:.2f} s on {n_nodes:,} nodes; trace {trace_s:.1f} s")
    return {
        "id": "B-MDI", "workload": f"mdi with its interval, RandomForestRegressor({n_trees}) "
                                   f"on {n_rows:,} x 20 ({n_nodes:,} nodes)",
        "sapwood_s": seconds, "target": f"< {MDI_TARGET_S:g} s", "met": seconds < MDI_TARGET_S,
        "check": f"equals feature_importances_: {equal}; the trace ({n_trace:,} rows) "
                 f"builds when read: {trace_s:.1f} s",
        "sapwood_runs": runs, "raw": {"trace_s": trace_s, "n_nodes": n_nodes},
    }


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
