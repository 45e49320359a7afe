"""B15: held-out permutation importance on a large held-out set, in bounded memory.

sapwood's ``RandomForestRegressor(n_estimators=20, n_jobs=2, random_state=0)`` is fit
on 300,000 rows of a synthetic regression (``make_regression(550_000, 20,
n_informative=8, noise=1.0, random_state=0)`` as float32, the first 300,000 rows) and
``permutation_importance(n_repeats=5, random_state=0, n_jobs=2)`` runs on the other
250,000 rows, each run in a fresh process that loads the pickled forest and rows, runs
a small call first (the kernels from the cache), and reports the peak resident set
during the one measured call above its resident set just before it (``VmHWM`` after
``/proc/self/clear_refs``: the forest and the rows excluded) and the call's time.

- B15: the default budget (``max_memory="128MB"``). Target: at most 0.5 GB above the
  model. The peer, for the time: the same call with no limit (``max_memory=None``,
  every row at once); the importances must be equal bit for bit.

``--quick``: 2 trees of depth 8 on 6,000 rows, 5,000 held-out rows, a 1 MB budget (so
that windows are taken); the numbers mean nothing.
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile

import numpy as np
from sklearn.datasets import make_regression

import sapwood

from ._timing import run_fresh

__all__ = ["run"]

TARGET_GB = 0.5

_SNIPPET = '''
import gc, json, pickle, time
from sapwood.importance import permutation_importance

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024

with open({path!r}, "rb") as handle:
    forest, X, y = pickle.load(handle)
budget = {budget!r}
permutation_importance(forest, X[:300], y[:300], n_repeats=1, random_state=0, n_jobs=2,
                       max_memory=budget)
gc.collect()
before = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # the peak (VmHWM) counts from here
start = time.perf_counter()
result = permutation_importance(forest, X, y, n_repeats=5, random_state=0, n_jobs=2,
                                max_memory=budget)
seconds = time.perf_counter() - start
print(json.dumps({{"growth_mb": status("VmHWM:") - before, "loaded_mb": before,
                  "seconds": seconds, "importances": result.importances.tolist()}}))
'''


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def _settings(quick):
    if quick:
        return {"n_samples": 11_000, "n_train": 6_000, "n_estimators": 2, "max_depth": 8,
                "budget": "1MB"}
    return {"n_samples": 550_000, "n_train": 300_000, "n_estimators": 20, "max_depth": None,
            "budget": "128MB"}


def run(quick: bool = False) -> list[dict]:
    settings = _settings(quick)
    X, y = make_regression(n_samples=settings["n_samples"], n_features=20, n_informative=8,
                           noise=1.0, random_state=0)
    X = X.astype(np.float32)
    n_train = settings["n_train"]
    forest = sapwood.RandomForestRegressor(n_estimators=settings["n_estimators"],
                                           max_depth=settings["max_depth"], n_jobs=2,
                                           random_state=0).fit(X[:n_train], y[:n_train])
    n_nodes = sum(tree.tree_.node_count for tree in forest.estimators_)
    _progress(f"B15: {settings['n_estimators']} trees, {n_nodes:,} nodes, "
              f"{X.shape[0] - n_train:,} held-out rows")
    reports = {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "forest.pkl")
        with open(path, "wb") as handle:
            pickle.dump((forest, X[n_train:], y[n_train:]), handle,
                        protocol=pickle.HIGHEST_PROTOCOL)
        del forest
        for name, budget in (("budget", settings["budget"]), ("whole", None)):
            reports[name] = run_fresh(_SNIPPET.format(path=path, budget=budget))
            _progress(f"  max_memory={budget!r}: {reports[name]['growth_mb']:.0f} MB above "
                      f"the model, {reports[name]['seconds']:.1f} s")
    ours, whole = reports["budget"], reports["whole"]
    identical = ours["importances"] == whole["importances"]
    growth_gb = ours["growth_mb"] / 1024
    return [{
        "id": "B15",
        "workload": (f"permutation_importance(n_repeats=5, n_jobs=2), "
                     f"RandomForestRegressor({settings['n_estimators']}) of {n_nodes:,} "
                     f"nodes, {X.shape[0] - n_train:,} x 20 float32 held-out rows, "
                     f"max_memory={settings['budget']!r}"),
        "peer": "the same with max_memory=None", "peer_s": whole["seconds"],
        "sapwood_s": ours["seconds"],
        "target": f"<= {TARGET_GB} GB above the model", "met": growth_gb <= TARGET_GB,
        "check": (f"{ours['growth_mb']:.0f} MB above the model (no limit: "
                  f"{whole['growth_mb']:.0f} MB); model and rows {ours['loaded_mb']:.0f} MB; "
                  f"identical importances: {identical}"),
        "raw": {"budget": {k: v for k, v in ours.items() if k != "importances"},
                "whole": {k: v for k, v in whole.items() if k != "importances"},
                "n_nodes": n_nodes, "identical": identical},
    }]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(row)
