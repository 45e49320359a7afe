"""B13: permutation importance through categorical splits against numeric ones (issue 16,
item 7: routing through a categorical node costs no more than a numeric split).

The pair is one forest in two representations. A 100-tree scikit-learn
``RandomForestRegressor(min_samples_leaf=3)`` is fit on integer category codes (15,000
rows of 12 columns of 4 to 60 categories, the target a sum of per-category effects;
5,000 more rows held out), so every split reads
``code <= t``. Its *categorical twin* replaces every such split by the set split
``code in {0, ..., floor(t)}`` (``OP_CAT``, the same missing-value direction): the same
trees, node for node, routing every row to the same leaf, so the two must give
identical importances and the only difference in cost is how a categorical node is
routed. The twin is offered to sapwood as a model whose ``to_ensemble()`` returns it
(predicting with the forest, which routes the same).

Measured, the two representations taking turns: held-out ``permutation_importance``
(``n_repeats=5``, both cores), ``oob_permutation_importance`` and
``conditional_permutation_importance`` (the forest's out-of-bag rows, both cores); and
held-out ``permutation_importance`` on a 200-tree ``LGBMRegressor`` fit on the same
codes and its twin (the boosted one-pass kernel, ``_boosted_permutation``). The ratio
is the categorical twin's time over the numeric model's (target: at most 1.1, "no more
than a numeric split" with room for the machine's noise).

Run from the repository root::

    .venv/bin/python -m benchmarks.bench_categorical            # 3 runs each
    .venv/bin/python -m benchmarks.bench_categorical --quick    # small data, 1 run
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import time

import numpy as np
import sklearn
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import RandomForestRegressor

import sapwood
from sapwood._format import TreeArrays
from sapwood._kernels._traverse import LEAF, OP_CAT
from sapwood.adapters import as_ensemble
from sapwood.importance import (
    conditional_permutation_importance,
    oob_permutation_importance,
    permutation_importance,
)

from ._timing import time_interleaved

TARGET = 1.1
# Categories per column (below 64: every set is at most two uint32 words).
CATEGORIES = (4, 8, 12, 16, 24, 30, 40, 50, 60, 6, 20, 45)


def data(quick):
    """Integer codes (float64) and a target summing random per-category effects of
    the first eight columns; (X_train, y_train, X_test, y_test)."""
    rng = np.random.RandomState(0)
    n = 6_000 if quick else 20_000
    X = np.column_stack([rng.randint(0, k, n) for k in CATEGORIES]).astype(np.float64)
    y = rng.normal(scale=0.5, size=n)
    for j, k in enumerate(CATEGORIES[:8]):
        y += rng.normal(size=k)[X[:, j].astype(int)]
    split = n * 3 // 4
    return X[:split], y[:split], X[split:], y[split:]


def ordered_twin(ensemble):
    """``ensemble`` with every split ``x <= t`` replaced by ``x in {0, ..., floor(t)}``
    (codes below 64): the same trees and routing of non-negative integer codes."""
    trees = []
    for tree in ensemble.trees:
        threshold = tree.threshold.copy()
        operator = tree.operator.copy()
        words = []
        for node in np.flatnonzero(tree.children_left != LEAF):
            top = max(int(np.floor(tree.threshold[node])), -1)
            bits = np.uint64((1 << (top + 1)) - 1) if top < 63 else ~np.uint64(0)
            threshold[node] = 3 * len(words)
            words.append(np.array([2, bits & np.uint64(0xFFFFFFFF), bits >> np.uint64(32)],
                                  dtype=np.uint32))
            operator[node] = OP_CAT
        fields = tree.to_dict()
        fields.update(threshold=threshold, operator=operator,
                      cat_bitsets=np.concatenate(words) if words else None)
        trees.append(TreeArrays(**fields))
    return dataclasses.replace(ensemble, trees=tuple(trees))


class CategoricalTwin(RegressorMixin, BaseEstimator):
    """A model's categorical twin: sapwood reads ``to_ensemble()``; the scorer's
    predictions are the model's (the same routing)."""

    def __init__(self, model, ensemble):
        self.model = model
        self.ensemble = ensemble

    def to_ensemble(self):
        return self.ensemble

    def fit(self, X, y):
        raise NotImplementedError("wraps a fitted forest")

    @property
    def n_features_in_(self):
        return self.model.n_features_in_

    def predict(self, X):
        return self.model.predict(X)


def workloads(quick):
    X_train, y_train, X_test, y_test = data(quick)
    n_trees = 30 if quick else 100
    start = time.perf_counter()
    forest = RandomForestRegressor(n_estimators=n_trees, min_samples_leaf=3, n_jobs=2,
                                   random_state=0).fit(X_train, y_train)
    forest.set_params(n_jobs=1)
    numeric = as_ensemble(forest)
    categorical = ordered_twin(numeric)
    assert categorical.has_categorical and not numeric.has_categorical
    np.testing.assert_array_equal(categorical.apply(X_test), numeric.apply(X_test))
    twin = CategoricalTwin(forest, categorical)
    n_nodes = sum(tree.node_count for tree in numeric.trees)
    print(f"B13: {n_trees} trees, {n_nodes:,} nodes, train {X_train.shape}, test "
          f"{X_test.shape} (fit {time.perf_counter() - start:.1f} s)", flush=True)
    pairs = {
        "held-out permutation_importance(n_repeats=5)": {
            "numeric": lambda: permutation_importance(forest, X_test, y_test, n_repeats=5,
                                                      random_state=0, n_jobs=2),
            "categorical": lambda: permutation_importance(twin, X_test, y_test, n_repeats=5,
                                                          random_state=0, n_jobs=2)},
        "oob_permutation_importance(n_repeats=3)": {
            "numeric": lambda: oob_permutation_importance(numeric, X_train, y_train,
                                                          n_repeats=3, random_state=0,
                                                          n_jobs=2),
            "categorical": lambda: oob_permutation_importance(categorical, X_train, y_train,
                                                              n_repeats=3, random_state=0,
                                                              n_jobs=2)},
        "conditional_permutation_importance": {
            "numeric": lambda: conditional_permutation_importance(numeric, X_train, y_train,
                                                                  random_state=0, n_jobs=2),
            "categorical": lambda: conditional_permutation_importance(
                categorical, X_train, y_train, random_state=0, n_jobs=2)},
    }
    try:
        import lightgbm  # optional: lazily, only the boosted pair needs it
    except ImportError:
        return pairs
    booster = lightgbm.LGBMRegressor(n_estimators=30 if quick else 200, num_leaves=31,
                                     n_jobs=2, verbose=-1, random_state=0)
    booster.fit(X_train, y_train)
    boosted_twin = CategoricalTwin(booster, ordered_twin(as_ensemble(booster)))
    label = f"held-out permutation_importance(n_repeats=5), LGBMRegressor({booster.n_estimators})"
    pairs[label] = {
        "numeric": lambda: permutation_importance(booster, X_test, y_test, n_repeats=5,
                                                  random_state=0, n_jobs=2),
        "categorical": lambda: permutation_importance(boosted_twin, X_test, y_test,
                                                      n_repeats=5, random_state=0, n_jobs=2)}
    return pairs


def run_pair(label, pair, runs):
    # First calls: compile or load the kernels, outside the timing.
    first = {name: function() for name, function in pair.items()}
    timings = time_interleaved(pair, repeats=runs)
    numeric = timings["numeric"].median
    categorical = timings["categorical"].median
    identical = np.array_equal(first["numeric"].importances,
                               first["categorical"].importances)
    evaluator = first["categorical"].params.get("evaluator", "")
    print(f"  {label}: numeric {numeric:.3f} s, categorical {categorical:.3f} s, ratio "
          f"{categorical / numeric:.3f}, identical={identical}"
          + (f", evaluator {evaluator}" if evaluator else ""), flush=True)
    return {"id": "B13", "workload": f"{label}, categorical twin vs numeric forest",
            "peer": "the numeric forest", "peer_s": numeric, "sapwood_s": categorical,
            "ratio": categorical / numeric, "target": f"<= {TARGET}",
            "met": categorical / numeric <= TARGET,
            "check": f"identical importances: {identical}",
            "raw": {"numeric_runs": timings["numeric"].runs,
                    "categorical_runs": timings["categorical"].runs,
                    "identical": identical}}


def run(quick: bool = False, runs: int | None = None) -> list[dict]:
    """The harness protocol (benchmarks/README.md): medians of 3 (1 with quick)."""
    runs = runs or (1 if quick else 3)
    return [run_pair(label, pair, runs) for label, pair in workloads(quick).items()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small data, 30 trees")
    parser.add_argument("--runs", type=int, default=None, help="warm runs each (median)")
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.processor() or platform.machine()}, "
          f"nproc={os.cpu_count()}, load {os.getloadavg()[0]:.1f}, python "
          f"{sys.version.split()[0]}, numpy {np.__version__}, scikit-learn "
          f"{sklearn.__version__}, sapwood {sapwood.__version__}", flush=True)
    rows = run(args.quick, args.runs)
    print("\n| workload | numeric s | categorical s | ratio | identical |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['workload']} | {row['peer_s']:.3f} | {row['sapwood_s']:.3f} | "
              f"{row['ratio']:.3f} | {row['raw']['identical']} |")
    return 0 if all(row["raw"]["identical"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
