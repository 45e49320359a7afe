"""B6 (DecisionTree fit on D1 and D2, sapwood vs scikit-learn) and B11 (cold start).

Also Numba's share, reported apart from warm times as BENCHMARKS.md asks: the first
fit + predict of both trees in a new process with an empty ``NUMBA_CACHE_DIR``
(compilation), and again with that cache filled (loading compiled code).
"""

from __future__ import annotations

import tempfile
from functools import partial

import numpy as np
import sklearn.tree

import sapwood

from ._data import load
from ._timing import repeats_for, run_fresh, time_interleaved

__all__ = ["run"]

TREES = (
    # (workload, data set, sapwood class, scikit-learn class, score name)
    ("DecisionTreeClassifier fit", "D1", sapwood.DecisionTreeClassifier,
     sklearn.tree.DecisionTreeClassifier, "accuracy"),
    ("DecisionTreeRegressor fit", "D2", sapwood.DecisionTreeRegressor,
     sklearn.tree.DecisionTreeRegressor, "R^2"),
)
PARAMS = {"random_state": 0}
B6_TARGET, B6_STRETCH = 1.0, 0.5
B11_TARGET, B11_STRETCH = 1.5, 0.8
NODE_FIELDS = ("children_left", "children_right", "feature", "threshold", "impurity",
               "n_node_samples", "weighted_n_node_samples", "value")

# First and second round of fit + predict of both trees on 1k rows, in one new process.
FIRST_CALLS = """
import json, time
start = time.perf_counter()
import numpy as np
import sapwood
import_s = time.perf_counter() - start
X = np.random.default_rng(0).normal(size=(1000, 20))
y_class = (X[:, 0] + X[:, 1] > 0).astype(int)
y_reg = X[:, 0] + 0.5 * X[:, 2]

def fit_and_predict():
    start = time.perf_counter()
    sapwood.DecisionTreeClassifier(random_state=0).fit(X, y_class).predict(X)
    sapwood.DecisionTreeRegressor(random_state=0).fit(X, y_reg).predict(X)
    return time.perf_counter() - start

first_s = fit_and_predict()
warm_s = fit_and_predict()
print(json.dumps({"import_s": import_s, "first_s": first_s, "warm_s": warm_s}))
"""

# B11: what a user waits for in a new process (interpreter start-up aside).
COLD_START = """
import json, time
start = time.perf_counter()
{import_line}
import_s = time.perf_counter() - start
import numpy as np
X = np.random.default_rng(0).normal(size=(1000, 20))
y = (X[:, 0] + X[:, 1] > 0).astype(int)
start_fit = time.perf_counter()
model = DecisionTreeClassifier(random_state=0).fit(X, y)
fit_s = time.perf_counter() - start_fit
model.predict(X)
predict_s = time.perf_counter() - start_fit - fit_s
print(json.dumps({{"import_s": import_s, "fit_s": fit_s, "predict_s": predict_s,
                  "total_s": import_s + fit_s + predict_s}}))
"""
COLD_IMPORTS = {"sklearn": "from sklearn.tree import DecisionTreeClassifier",
                "sapwood": "from sapwood import DecisionTreeClassifier"}


def _compare(ours, theirs, data, score_name) -> str:
    """Say whether the two fitted trees are the same tree and predict the same."""
    differing = [name for name in NODE_FIELDS
                 if not np.array_equal(np.asarray(getattr(ours.tree_, name)),
                                       np.asarray(getattr(theirs.tree_, name)))]
    same_predictions = np.array_equal(ours.predict(data.X_test), theirs.predict(data.X_test))
    score_ours = ours.score(data.X_test, data.y_test)
    score_theirs = theirs.score(data.X_test, data.y_test)
    nodes = f"{ours.tree_.node_count} vs {theirs.tree_.node_count} nodes"
    if ours.tree_.node_count == theirs.tree_.node_count:
        nodes = f"{ours.tree_.node_count} nodes"
    parts = ["identical trees" if not differing else "DIFFERENT trees (" + ", ".join(differing)
             + ")", nodes,
             "test predictions equal" if same_predictions else "TEST PREDICTIONS DIFFER",
             f"test {score_name} {score_ours:.6f} (sklearn {score_theirs:.6f})"]
    return "; ".join(parts)


def _fit(estimator_class, X, y):
    return estimator_class(**PARAMS).fit(X, y)


def _fit_rows(quick: bool) -> list[dict]:
    rows = []
    repeats = repeats_for(quick)
    for workload, name, ours_class, theirs_class, score_name in TREES:
        data = load(name, quick)
        X, y = data.X_train, data.y_train
        # Load (or compile) the kernels before timing: that cost is reported apart.
        ours_class(**PARAMS).fit(X[:200], y[:200]).predict(X[:10])
        timings = time_interleaved({
            "sklearn": partial(_fit, theirs_class, X, y),
            "sapwood": partial(_fit, ours_class, X, y)}, repeats)
        theirs_time, ours_time = timings["sklearn"], timings["sapwood"]
        ratio = ours_time.median / theirs_time.median
        rows.append({
            "id": "B6", "workload": f"{workload}, {name} ({X.shape[0]:,} x {X.shape[1]})",
            "peer": "sklearn", "peer_s": theirs_time.median, "sapwood_s": ours_time.median,
            "ratio": ratio, "target": f"<= {B6_TARGET} (stretch {B6_STRETCH})",
            "met": ratio <= B6_TARGET,
            "check": _compare(ours_time.result, theirs_time.result, data, score_name),
            "peer_runs": theirs_time.runs, "sapwood_runs": ours_time.runs,
        })
    return rows


def _numba_rows(quick: bool) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="sapwood-numba-cache-") as cache_dir:
        env = {"NUMBA_CACHE_DIR": cache_dir}
        if quick:
            rows.append({"id": "compile", "workload": "Numba compile, empty cache",
                         "check": "not measured with --quick (it takes ~20 s)"})
        else:
            cold = run_fresh(FIRST_CALLS, env)
            rows.append({
                "id": "compile", "workload": "Numba compile, empty cache: first fit + predict "
                "of both trees (1k rows), minus the same calls warm",
                "sapwood_s": cold["first_s"] - cold["warm_s"],
                "check": f"first calls {cold['first_s']:.2f} s, warm {cold['warm_s']:.3f} s; "
                         f"peak RSS {cold['peak_rss_mb']:.0f} MB",
                "raw": cold})
        cached = run_fresh(FIRST_CALLS, env if not quick else None)
    rows.append({
        "id": "compile", "workload": "Numba cache load, new process: first fit + predict of "
        "both trees (1k rows), minus the same calls warm",
        "sapwood_s": cached["first_s"] - cached["warm_s"],
        "check": f"first calls {cached['first_s']:.2f} s, warm {cached['warm_s']:.3f} s; "
                 f"import sapwood {cached['import_s']:.2f} s",
        "raw": cached})
    return rows


def _cold_start_row(quick: bool) -> dict:
    if not quick:
        # The kernels' own cache (next to the sources) must be warm: B11's condition.
        run_fresh(COLD_START.format(import_line=COLD_IMPORTS["sapwood"]))
    reports = {}
    for library, import_line in COLD_IMPORTS.items():
        snippet = COLD_START.format(import_line=import_line)
        reports[library] = [run_fresh(snippet) for _ in range(repeats_for(quick))]

    def median(library, key):
        return float(np.median([report[key] for report in reports[library]]))

    ours = median("sapwood", "total_s")
    parts = ", ".join(f"{key[:-2]} {median('sapwood', key):.2f} s"
                      for key in ("import_s", "fit_s", "predict_s"))
    return {
        "id": "B11", "workload": "cold start: new process, import, fit 1k-row tree, predict "
        "(warm Numba cache)", "peer": "sklearn", "peer_s": median("sklearn", "total_s"),
        "sapwood_s": ours, "ratio": ours / median("sklearn", "total_s"),
        "target": f"<= {B11_TARGET} s (stretch {B11_STRETCH} s)", "met": ours <= B11_TARGET,
        "check": f"sapwood {parts}; whole process incl. interpreter "
                 f"{median('sapwood', 'process_s'):.2f} s",
        "raw": reports,
    }


def run(quick: bool = False) -> list[dict]:
    """B6 rows, Numba compile / cache-load rows, and the B11 row (see README.md)."""
    return [*_fit_rows(quick), *_numba_rows(quick), _cold_start_row(quick)]
