"""E-PD and E-H (issue 43): partial dependence and the H-statistic on a 100-tree forest.

A scikit-learn ``RandomForestRegressor(n_estimators=100, max_depth=10, random_state=0)``
is fit on the first 20,000 D2 training rows; both sides run on one thread (the forest
handed over with ``n_jobs=1``, sapwood with ``n_jobs=1``).

- E-PD: the partial dependence and ICE of feature 0 on the first 2,000 D2 test rows,
  scikit-learn's default grid (100 points): ``sklearn.inspection.partial_dependence(
  forest, X, [0], method="brute", kind="both")`` against
  ``sapwood.effects.partial_dependence`` with the same arguments. The numbers must be
  equal, bit for bit. Target: at most 0.2x scikit-learn's time.
- E-H: Friedman's H-statistic of the pair (0, 1) and the overall statistic of feature 0
  on the first 400 test rows. The peer is the definition computed with the forest's own
  ``predict``: each partial dependence at the rows' values is ``n`` predictions of the
  ``n`` rows with the feature(s) set (PD_0, PD_1, PD_01 and PD_-0: ``4 n`` calls of
  ``n`` rows); sapwood's ``h_statistic(forest, X, pairs=[(0, 1)], features=[0])``. The
  values must agree to 1e-9. Target: at most 0.1x the naive time.

sapwood: median of 3 runs after a first call (compile or cache load); the peers: the
median of 3 for E-PD, one run for E-H (its work is the same every time), in between
sapwood's runs. ``--quick``: 20 trees of depth 6, 300 and 60 rows, one run each.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import partial_dependence as sklearn_partial_dependence

from sapwood.effects import h_statistic, partial_dependence

from ._data import load
from ._timing import repeats_for

__all__ = ["run"]

PD_TARGET, H_TARGET = 0.2, 0.1


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def _settings(quick):
    if quick:
        return {"n_estimators": 20, "max_depth": 6, "pd_rows": 300, "h_rows": 60,
                "fit_rows": 2_000}
    return {"n_estimators": 100, "max_depth": 10, "pd_rows": 2_000, "h_rows": 400,
            "fit_rows": 20_000}


def _timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def naive_h(forest, X, j, k):
    """(H2 of the pair (j, k), overall H2 of j) by the definition, with ``predict``."""
    n = X.shape[0]

    def set_to(columns, values):
        modified = X.copy()
        modified[:, columns] = values
        return modified

    def centred(values):
        return values - values.mean()

    def pd_at_rows(columns):
        return centred(np.array([forest.predict(set_to(columns, X[a, columns])).mean()
                                 for a in range(n)]))

    one, other, joint = pd_at_rows([j]), pd_at_rows([k]), pd_at_rows([j, k])
    rest = [c for c in range(X.shape[1]) if c != j]
    without = centred(np.array([forest.predict(set_to(rest, X[b, rest])).mean()
                                for b in range(n)]))
    f = centred(forest.predict(X))
    pair = ((joint - one - other) ** 2).sum() / (joint ** 2).sum()
    overall = ((f - one - without) ** 2).sum() / (f ** 2).sum()
    return pair, overall


def run(quick: bool = False) -> list[dict]:
    size = _settings(quick)
    data = load("D2", quick=quick)
    forest = RandomForestRegressor(n_estimators=size["n_estimators"],
                                   max_depth=size["max_depth"], random_state=0, n_jobs=2)
    forest.fit(data.X_train[:size["fit_rows"]], data.y_train[:size["fit_rows"]])
    forest.set_params(n_jobs=1)
    repeats = repeats_for(quick)
    rows = []

    X = data.X_test[:size["pd_rows"]]
    arguments = {"method": "brute", "kind": "both"}
    first, _ = _timed(lambda: partial_dependence(forest, X, [0], n_jobs=1, **arguments))
    ours, theirs = [], []
    for _ in range(repeats):
        seconds, mine = _timed(lambda: partial_dependence(forest, X, [0], n_jobs=1,
                                                          **arguments))
        ours.append(seconds)
        seconds, peer = _timed(lambda: sklearn_partial_dependence(forest, X, [0],
                                                                  **arguments))
        theirs.append(seconds)
    equal = (np.array_equal(mine.average, peer.average)
             and np.array_equal(mine.individual, peer.individual))
    _progress(f"E-PD: sapwood {ours}, sklearn {theirs}, first call {first:.2f} s")
    rows.append({"id": "E-PD", "workload": f"PD+ICE of 1 feature, 100-point grid, "
                 f"{X.shape[0]} D2 rows, {size['n_estimators']} trees depth "
                 f"{size['max_depth']}", "peer": "sklearn brute", "peer_s":
                 statistics.median(theirs), "sapwood_s": statistics.median(ours),
                 "target": f"<= {PD_TARGET}", "check": "equal" if equal else "DIFFERENT",
                 "first_call_s": first})

    X = np.ascontiguousarray(data.X_test[:size["h_rows"]])
    first, _ = _timed(lambda: h_statistic(forest, X, pairs=[(0, 1)], features=[0], n_jobs=1))
    ours = []
    peer_seconds = None
    for r in range(repeats):
        seconds, table = _timed(lambda: h_statistic(forest, X, pairs=[(0, 1)], features=[0],
                                                    n_jobs=1))
        ours.append(seconds)
        if r == 0:
            peer_seconds, (pair, overall) = _timed(lambda: naive_h(forest, X, 0, 1))
    values = table.set_index("features")["H2"]
    close = (np.isclose(values[("x0", "x1")], pair, rtol=1e-9, atol=1e-12)
             and np.isclose(values[("x0",)], overall, rtol=1e-9, atol=1e-12))
    _progress(f"E-H: sapwood {ours}, naive {peer_seconds:.2f} s, first call {first:.2f} s; "
              f"H2 pair {pair:.6f}, overall {overall:.6f}")
    rows.append({"id": "E-H", "workload": f"H2 of 1 pair + 1 feature's overall, "
                 f"{X.shape[0]} D2 rows, {size['n_estimators']} trees depth "
                 f"{size['max_depth']}", "peer": "naive (predict)", "peer_s": peer_seconds,
                 "sapwood_s": statistics.median(ours), "target": f"<= {H_TARGET}",
                 "check": "equal to 1e-9" if close else "DIFFERENT", "first_call_s": first})
    for row in rows:
        target = PD_TARGET if row["id"] == "E-PD" else H_TARGET
        row["met"] = row["sapwood_s"] / row["peer_s"] <= target
    return rows
