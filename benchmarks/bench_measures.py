"""The cost of every importance measure on the D1 forest (issue 5, item 8).

One sapwood RandomForestClassifier(100, n_jobs=2) is fit on D1's training rows; each
measure then runs on it (or, for the measures that refit, on clones of it) with its
defaults and both cores. There is no peer for most measures, so every row is compared
with the same yardstick: scikit-learn's held-out ``permutation_importance`` on the
same forest (n_repeats=5, n_jobs=1, its best configuration; B1's peer), measured in
the same run. A ratio below 1 means the measure costs less than the permutation
importance a scikit-learn user runs today.

Measures that refit (AIR grows one forest on 2p columns, drop-column grows p + 1
forests, Altmann's p-values S + 1 of them) are timed once; Altmann's cost is given for
S = 2 refits and scales linearly in S.
"""

from __future__ import annotations

import sklearn.base
from sklearn.ensemble import RandomForestClassifier as SklearnForest
from sklearn.inspection import permutation_importance as sklearn_permutation_importance

import sapwood
from sapwood import importance

from ._data import load
from ._timing import repeats_for, time_call, time_interleaved

__all__ = ["run"]


def _measures(forest, data, n_jobs):
    """(label, call) for every measure in sapwood.importance that applies to a forest."""
    unfitted = sklearn.base.clone(forest)
    train, test = (data.X_train, data.y_train), (data.X_test, data.y_test)
    measures = [
        ("mdi", lambda: importance.mdi(forest)),
        ("permutation (held-out, 5 repeats)",
         lambda: importance.permutation_importance(forest, *test, n_repeats=5,
                                                   random_state=0, n_jobs=n_jobs)),
        ("janitza p-values on it",
         lambda: importance.janitza_pvalues(importance.permutation_importance(
             forest, *test, n_repeats=5, random_state=0, n_jobs=n_jobs))),
        ("oob_permutation (1 repeat)",
         lambda: importance.oob_permutation_importance(forest, *train, random_state=0,
                                                       n_jobs=n_jobs)),
        ("ufi (OOB rows)", lambda: importance.ufi(forest, *train)),
    ]
    if hasattr(importance, "conditional_permutation_importance"):
        measures.append((
            "conditional_permutation (OOB rows)",
            lambda: importance.conditional_permutation_importance(
                forest, *train, random_state=0, n_jobs=n_jobs)))
    if hasattr(importance, "air"):
        measures.append((
            "air (one forest on 2p columns)",
            lambda: importance.air(unfitted, *train, random_state=0)))
    measures += [
        ("drop_column (p + 1 forests, held-out)",
         lambda: importance.drop_column_importance(unfitted, *train, *test, n_jobs=1)),
        ("altmann_pvalues(mdi, S = 2)",
         lambda: importance.altmann_pvalues(unfitted, *train, measure="mdi",
                                            n_permutations=2, random_state=0)),
    ]
    return measures


def run(quick: bool = False) -> list[dict]:
    data = load("D1", quick=quick)
    n_trees = 10 if quick else 100
    params = {"n_estimators": n_trees, "n_jobs": 2, "random_state": 0}
    forest = sapwood.RandomForestClassifier(**params).fit(data.X_train, data.y_train)
    reference = SklearnForest(**{**params, "n_jobs": 1}).fit(data.X_train, data.y_train)

    # Load every kernel once (Numba cache or compile) so that warm times are compared.
    small = load("D1", quick=True)
    small_forest = sapwood.RandomForestClassifier(n_estimators=3, random_state=0)
    small_forest.fit(small.X_train, small.y_train)
    for _, call in _measures(small_forest, small, n_jobs=2):
        call()

    repeats = repeats_for(quick)
    peer = time_interleaved({"sklearn": lambda: sklearn_permutation_importance(
        reference, data.X_test, data.y_test, n_repeats=5, random_state=0, n_jobs=1)},
        repeats=repeats)["sklearn"].median

    rows = []
    for label, call in _measures(forest, data, n_jobs=2):
        refits = label.startswith(("air", "drop_column", "altmann"))
        timing = time_call(call, repeats=1 if refits else repeats)
        rows.append({
            "id": "M",
            "workload": f"{label}, {n_trees}-tree forest, D1 ({data.X_train.shape[0]:,} train / "
                        f"{data.X_test.shape[0]:,} test rows)",
            "peer": "sklearn permutation_importance (5 repeats, n_jobs=1)",
            "peer_s": peer, "sapwood_s": timing.median, "sapwood_runs": timing.runs,
            "check": "one run (refits)" if refits else f"median of {repeats}",
        })
    return rows
