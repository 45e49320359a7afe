"""The cost of the inference layer on the D1 forest (issue 19, item 7), and SAGE against
the sage-importance package.

Knockoffs and CPI have no peer that runs on the same forest, so, as in
``bench_measures``, they are compared with scikit-learn's held-out
``permutation_importance`` (n_repeats=5, n_jobs=1) on the same 100-tree D1 forest,
measured in the same run:

- ``cpi``: the fitted forest, D1's 20,000 test rows, Gaussian knockoffs fitted to them,
  one draw, t-test (p + 1 = 21 predictions of 20,000 rows);
- ``knockoffs``: one draw on D1's 80,000 training rows: the knockoffs, a new
  100-tree forest on the 2p = 40 columns and its permutation importance (5 repeats) on
  the same rows. Timed once (it refits).

SAGE: sapwood's ``sage`` and sage-importance's ``PermutationEstimator`` with
``MarginalImputer`` on the same scikit-learn forest (100 trees, depth 6, D1), the same
32 background rows and the same number of draws (2,048 permutations of D1's test
rows, convergence detection off), log loss; taking turns, medians of 3. The values
must agree within Monte-Carlo error (the check column gives the largest |difference|
in standard errors of the difference).
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestClassifier as SklearnForest
from sklearn.inspection import permutation_importance as sklearn_permutation_importance

import sapwood
from sapwood import importance, selection

from ._data import load
from ._timing import repeats_for, time_call, time_interleaved

__all__ = ["run"]

N_BACKGROUND = 32


def _sage_pair(model, X, y, n_permutations, batch_size):
    import sage as sage_package  # the peer; optional

    background = X[:N_BACKGROUND]

    def ours():
        return importance.sage(model, X, y, background=background, random_state=0,
                               n_permutations=n_permutations, batch_size=batch_size)

    def theirs():
        estimator = sage_package.PermutationEstimator(
            sage_package.MarginalImputer(model, background), "cross entropy",
            random_state=0)
        return estimator(X, y, n_permutations=n_permutations, batch_size=batch_size,
                         detect_convergence=False, bar=False)

    return ours, theirs


def run(quick: bool = False) -> list[dict]:
    data = load("D1", quick=quick)
    n_trees = 10 if quick else 100
    params = {"n_estimators": n_trees, "random_state": 0}
    forest = sapwood.RandomForestClassifier(**params, n_jobs=2).fit(data.X_train, data.y_train)
    reference = SklearnForest(**params, n_jobs=1).fit(data.X_train, data.y_train)
    shallow = SklearnForest(n_estimators=n_trees, max_depth=6, random_state=0, n_jobs=1)
    shallow.fit(data.X_train, data.y_train)
    repeats = repeats_for(quick)
    n_permutations, batch_size = (256, 128) if quick else (2048, 512)

    # Load every kernel once (Numba cache or compile) so that warm times are compared.
    small = load("D1", quick=True)
    small_forest = sapwood.RandomForestClassifier(n_estimators=3, random_state=0)
    small_forest.fit(small.X_train, small.y_train)
    importance.cpi(small_forest, small.X_test, small.y_test, random_state=0)
    importance.sage(small_forest, small.X_test, small.y_test, n_permutations=8,
                    batch_size=8, n_background=4, random_state=0)

    peer = time_interleaved({"sklearn": lambda: sklearn_permutation_importance(
        reference, data.X_test, data.y_test, n_repeats=5, random_state=0, n_jobs=1)},
        repeats=repeats)["sklearn"].median
    shape = f"D1 ({data.X_train.shape[0]:,} train / {data.X_test.shape[0]:,} test rows)"
    yardstick = "sklearn permutation_importance (5 repeats, n_jobs=1)"
    rows = []

    cpi = time_call(lambda: importance.cpi(forest, data.X_test, data.y_test, random_state=0),
                    repeats=repeats)
    rows.append({"id": "I1", "workload": f"cpi (Gaussian knockoffs, t-test), {n_trees}-tree "
                 f"forest, {shape}", "peer": yardstick, "peer_s": peer,
                 "sapwood_s": cpi.median, "sapwood_runs": cpi.runs,
                 "check": f"median of {repeats}"})

    estimator = sapwood.RandomForestClassifier(**params, n_jobs=2)
    knockoffs = time_call(lambda: selection.knockoffs(
        data.X_train, data.y_train, fdr=0.1, estimator=estimator, random_state=0,
        n_jobs=2), repeats=1)
    rows.append({"id": "I2", "workload": f"knockoffs (one draw: a {n_trees}-tree forest on "
                 f"2p columns + its permutation importance), {shape}", "peer": yardstick,
                 "peer_s": peer, "sapwood_s": knockoffs.median,
                 "sapwood_runs": knockoffs.runs, "check": "one run (refits)"})

    X, y = data.X_test, data.y_test
    ours, theirs = _sage_pair(shallow, X, y, n_permutations, batch_size)
    timings = time_interleaved({"sage-importance": theirs, "sapwood": ours}, repeats=repeats)
    mine, peer_result = ours(), theirs()
    z = np.abs(mine.importances_mean - peer_result.values) / np.hypot(
        mine.extra["std_error"], peer_result.std)
    rows.append({"id": "I3", "workload": f"sage ({n_permutations:,} permutations, "
                 f"{N_BACKGROUND} background rows, log loss), {n_trees}-tree depth-6 sklearn "
                 f"forest, D1 test rows", "peer": "sage-importance PermutationEstimator",
                 "peer_s": timings["sage-importance"].median,
                 "sapwood_s": timings["sapwood"].median,
                 "peer_runs": timings["sage-importance"].runs,
                 "sapwood_runs": timings["sapwood"].runs,
                 "check": f"max |difference| {np.nanmax(z):.2f} standard errors"})
    return rows
