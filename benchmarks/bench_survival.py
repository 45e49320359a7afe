"""S-FIT and S-MEM (issue 53): random survival forests grown by sapwood against
scikit-survival's, the same trees.

S-FIT: ``RandomSurvivalForest`` fit on whas500 (500 x 6 numeric columns), GBSG2 (686 x 6
numeric columns) and 50,000 simulated rows (exponential times, half censored, times on
a 0.01 grid: about 1,500 distinct times), one thread and all cores, against
scikit-survival's ``low_memory=False`` forest with the same options and seed; the check
says whether every tree is the same. S-MEM: the fitted forest's arrays (node arrays
and leaf functions) against scikit-survival's (its trees' node records and values).
S-SHAP: time-dependent SHAP values of the survival function (SurvSHAP(t)) of rows of
whas500 against 50 background rows, for a scikit-survival forest, by sapwood's
interventional TreeSHAP against the ``survshap`` package's exact kernel method (its
default; its "treeshap" method fails in survshap 0.4.2), the values compared.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import sapwood

from ._timing import repeats_for, time_interleaved

__all__ = ["run"]

FIT_TARGETS = {1: 0.5, -1: 0.3}


def _datasets(quick):
    from sksurv.datasets import load_gbsg2, load_whas500

    out = []
    for name, loader in (("whas500", load_whas500), ("GBSG2", load_gbsg2)):
        X, y = loader()
        X = X.select_dtypes("number").to_numpy(np.float64)
        out.append((name, X, y, 20 if quick else 100))
    n = 2_000 if quick else 50_000
    X, y = _simulated(n)
    out.append((f"simulated {n:,}", X, y, 2 if quick else 4))
    return out


def _simulated(n, seed=1):
    """Exponential event times with hazard exp(x0 - x1), censored at the same rate
    (about half the rows), times rounded to 0.01."""
    from sksurv.util import Surv

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    scale = np.exp(-(X[:, 0] - X[:, 1]))
    event_time = rng.exponential(scale)
    censor_time = rng.exponential(scale)
    time = np.round(np.minimum(event_time, censor_time), 2)
    return X, Surv.from_arrays(event_time <= censor_time, time)


def _same_trees(ours, theirs):
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        ta, tb = a.tree_, b.tree_
        if ta.node_count != tb.node_count or not all(
                np.array_equal(getattr(ta, f), getattr(tb, f))
                for f in ("children_left", "feature", "threshold", "value")):
            return False
    return True


def _fitted_bytes(ours, theirs):
    mine = sum(array.nbytes for tree in ours.estimators_
               for array in tree.tree_.to_dict().values() if isinstance(array, np.ndarray))
    state = [tree.tree_.__getstate__() for tree in theirs.estimators_]
    return mine, sum(s["nodes"].nbytes + s["values"].nbytes for s in state)


def _shap_rows(quick, repeats):
    import warnings

    from sksurv.datasets import load_whas500
    from sksurv.ensemble import RandomSurvivalForest
    from survshap import PredictSurvSHAP, SurvivalModelExplainer

    from sapwood.importance import tree_shap

    X, y = load_whas500()
    X = X.select_dtypes("number").astype(float)
    n_trees, n_rows = (5, 2) if quick else (50, 10)
    model = RandomSurvivalForest(n_estimators=n_trees, max_depth=6, random_state=0).fit(X, y)
    background, rows = X.iloc[:50], X.iloc[100:100 + n_rows]
    explainer = SurvivalModelExplainer(model, background, y[:50])

    def theirs():
        values = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(n_rows):
                explanation = PredictSurvSHAP(calculation_method="kernel", function_type="sf")
                explanation.fit(explainer, rows.iloc[[i]])
                table = explanation.result.set_index("variable_name").loc[list(X.columns)]
                values.append(table.filter(like="t = ").to_numpy())
        return np.stack(values)

    def ours():
        return tree_shap(model, rows, data=background, model_output="survival"
                         ).extra["shap_values"]

    tree_shap(model, rows.iloc[:1], data=background.iloc[:3], model_output="survival")
    timings = time_interleaved({"survshap": theirs, "sapwood": ours}, repeats)
    difference = np.abs(timings["survshap"].result - timings["sapwood"].result).max()
    scale = np.abs(timings["sapwood"].result).max()
    ratio = timings["sapwood"].median / timings["survshap"].median
    return [{
        "id": "S-SHAP",
        "workload": f"SurvSHAP(t) of the survival function, {n_rows} whas500 rows x 6 "
                    f"features x {model.unique_times_.shape[0]} times, 50 background rows, "
                    f"scikit-survival forest of {n_trees} trees",
        "peer": "survshap 0.4.2 (exact kernel)", "peer_s": timings["survshap"].median,
        "sapwood_s": timings["sapwood"].median, "ratio": ratio, "target": "(none)",
        "check": f"values equal to {difference:.1e} (largest |value| {scale:.2f})",
        "peer_runs": timings["survshap"].runs, "sapwood_runs": timings["sapwood"].runs}]


def _fit(estimator_class, options, X, y):
    return estimator_class(**options).fit(X, y)


def run(quick: bool = False) -> list[dict]:
    from sksurv.ensemble import RandomSurvivalForest as Theirs

    repeats = repeats_for(quick)
    rows = []
    for name, X, y, n_trees in _datasets(quick):
        sapwood.RandomSurvivalForest(n_estimators=1, random_state=0).fit(X[:100], y[:100])
        for n_jobs in (1, -1):
            options = {"n_estimators": n_trees, "random_state": 0, "n_jobs": n_jobs}
            timings = time_interleaved({
                "sksurv": partial(_fit, Theirs, options, X, y),
                "sapwood": partial(_fit, sapwood.RandomSurvivalForest, options, X, y),
            }, repeats)
            theirs, ours = timings["sksurv"], timings["sapwood"]
            ratio = ours.median / theirs.median
            n_times = ours.result.unique_times_.shape[0]
            nodes = sum(tree.tree_.node_count for tree in ours.result.estimators_)
            same = _same_trees(ours.result, theirs.result)
            rows.append({
                "id": "S-FIT",
                "workload": f"RandomSurvivalForest({n_trees}, n_jobs={n_jobs}) fit, {name} "
                            f"({X.shape[0]:,} x {X.shape[1]}, {n_times:,} times)",
                "peer": "scikit-survival", "peer_s": theirs.median, "sapwood_s": ours.median,
                "ratio": ratio, "target": f"<= {FIT_TARGETS[n_jobs]}",
                "met": ratio <= FIT_TARGETS[n_jobs],
                "check": ("identical trees" if same else "DIFFERENT trees") + f", {nodes:,} nodes",
                "peer_runs": theirs.runs, "sapwood_runs": ours.runs})
            if n_jobs == 1:
                mine, their_bytes = _fitted_bytes(ours.result, theirs.result)
                rows.append({
                    "id": "S-MEM", "workload": f"fitted forest's arrays, {name}",
                    "peer": "scikit-survival (low_memory=False)",
                    "peer_s": their_bytes / 2**20, "sapwood_s": mine / 2**20,
                    "ratio": mine / their_bytes, "target": "<= 1.0",
                    "met": mine <= their_bytes,
                    "check": f"MB: {mine / 2**20:.1f} against {their_bytes / 2**20:.1f}"})
    try:
        rows += _shap_rows(quick, repeats)
    except ImportError as error:
        rows.append({"id": "S-SHAP", "workload": "SurvSHAP(t)", "check": f"skipped: {error}"})
    return rows
