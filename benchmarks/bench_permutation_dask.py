"""Permutation importance out of core (issue 21, item 1): a table of 10 million rows,
generated block by block by Dask and never held whole, scored on a local cluster of two
worker processes (one thread each).

The figure that matters is memory: the peak resident set of each worker process during
the call (its high-water mark, reset just before; it includes Python, NumPy, Numba,
scikit-learn and sapwood themselves, shown as the resident set at the start) and of the
client, against the size of the table. The permutations are the in-memory ones
(tests/importance/test_permutation_dask.py checks the numbers on a smaller table); here
the in-memory run is not repeated, as holding the table is what the workload avoids.
"""

from __future__ import annotations

import time

import numpy as np

from ._timing import peak_rss_mb, reset_peak_rss

N_ROWS, N_FEATURES, BLOCK = 10_000_000, 8, 250_000
QUICK = (40_000, 4, 10_000)


def _table(n_rows, n_features, block):
    """Gaussian features and a label from an interaction, as lazy Dask blocks."""
    import dask.array as da

    rng = da.random.default_rng(0)
    X = rng.standard_normal((n_rows, n_features), chunks=(block, n_features))
    noise = rng.standard_normal(n_rows, chunks=block)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + 0.5 * noise > 0).astype(np.int64)
    return X, y


def _resident_mb():
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def run(quick: bool = False) -> list[dict]:
    import distributed

    from sapwood import RandomForestClassifier
    from sapwood.importance import permutation_importance

    n_rows, n_features, block = QUICK if quick else (N_ROWS, N_FEATURES, BLOCK)
    n_repeats = 2
    X, y = _table(n_rows, n_features, block)
    train = min(n_rows, 100_000)
    forest = RandomForestClassifier(n_estimators=20, max_depth=8, random_state=0).fit(
        X[:train].compute(), y[:train].compute())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        start_mb = client.run(_resident_mb)
        client.run(reset_peak_rss)
        reset_peak_rss()
        start = time.perf_counter()
        result = permutation_importance(forest, X, y, n_repeats=n_repeats, random_state=0)
        seconds = time.perf_counter() - start
        client_mb = peak_rss_mb()
        worker_mb = client.run(peak_rss_mb)
    table_mb = n_rows * n_features * 8 / 2**20
    peaks = ", ".join(f"{mb:.0f}" for mb in worker_mb.values())
    starts = ", ".join(f"{mb:.0f}" for mb in start_mb.values())
    top = int(np.argmax(result.importances_mean))
    return [{
        "id": "B-dask",
        "workload": (f"permutation_importance, {n_rows:,} x {n_features} Dask array in "
                     f"{block:,}-row blocks, forest 20 x depth 8, n_repeats={n_repeats}, "
                     f"2 worker processes x 1 thread"),
        "sapwood_s": seconds,
        "check": (f"table {table_mb:.0f} MB never held; peak RSS per worker {peaks} MB "
                  f"(at the start {starts} MB); client peak "
                  f"{client_mb if client_mb is None else round(client_mb)} MB; baseline "
                  f"accuracy {float(result.extra['baseline_score']):.4f}, top feature "
                  f"{result.feature_names[top]} "
                  f"({result.importances_mean[top]:.4f})"),
        "raw": {"worker_peak_mb": list(worker_mb.values()),
                "worker_start_mb": list(start_mb.values()), "client_peak_mb": client_mb,
                "importances_mean": result.importances_mean.tolist()},
    }]
