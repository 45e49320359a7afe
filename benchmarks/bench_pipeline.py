"""B-PIPE: held-out permutation importance of a fitted scikit-learn Pipeline, in its input
columns (issue 50, item 1: at most 0.1x scikit-learn's on the same pipeline).

The pipeline is how tabular models are kept: a ``ColumnTransformer`` one-hot encoding
four text columns (5 to 40 levels), imputing (with missing indicators) and scaling
eight numeric ones (10% missing), into a 100-tree ``RandomForestRegressor
(min_samples_leaf=3)`` fit on 20,000 rows; 5,000 more rows held out. scikit-learn's
``permutation_importance(pipeline, ...)`` shuffles each of the 12 input columns and runs
the whole pipeline (transform, then the forest's predict) on every shuffle; sapwood's
transforms the held-out rows once and shuffles each input column's block of derived
columns (one-hot columns, value and missing indicator) with the same row permutation
in the forest's tree-aware evaluator: the same numbers (checked, to 1e-12).

scikit-learn runs in its best configuration (``n_jobs=1``, the forest's ``n_jobs=1``:
processes would copy the pipeline for a few seconds of work); sapwood uses both cores.
Both get ``n_repeats=5``, ``random_state=0``, the model's own score (R²).

Run from the repository root::

    .venv/bin/python -m benchmarks.bench_pipeline            # 3 runs each
    .venv/bin/python -m benchmarks.bench_pipeline --quick    # small data, 1 run
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sapwood.importance import permutation_importance

from ._timing import time_interleaved

TARGET = 0.1
LEVELS = (5, 12, 25, 40)  # of the four text columns
N_NUMBERS = 8


def data(quick):
    """A table of four text and eight numeric columns, the target a sum of effects."""
    rng = np.random.default_rng(0)
    n = 3_000 if quick else 25_000
    columns, signal = {}, np.zeros(n)
    for k, levels in enumerate(LEVELS):
        codes = rng.integers(0, levels, n)
        columns[f"text{k}"] = np.asarray([f"level{c}" for c in range(levels)])[codes]
        signal += rng.normal(size=levels)[codes]
    for k in range(N_NUMBERS):
        values = rng.normal(size=n)
        signal += (N_NUMBERS - k) / N_NUMBERS * np.sin(values)
        values[rng.random(n) < 0.1] = np.nan
        columns[f"number{k}"] = values
    X = pd.DataFrame(columns)
    y = signal + rng.normal(scale=0.5, size=n)
    split = n // 5 * 4
    return X.iloc[:split], y[:split], X.iloc[split:], y[split:]


def pipeline(quick):
    steps = ColumnTransformer([
        ("text", OneHotEncoder(handle_unknown="ignore"), [f"text{k}" for k in range(4)]),
        ("numbers", make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()),
         [f"number{k}" for k in range(N_NUMBERS)]),
    ])
    forest = RandomForestRegressor(n_estimators=30 if quick else 100, min_samples_leaf=3,
                                   n_jobs=2, random_state=0)
    return make_pipeline(steps, forest)


def run(quick: bool = False, runs: int | None = None) -> list[dict]:
    """The harness protocol (benchmarks/README.md): medians of 3 (1 with quick)."""
    runs = runs or (1 if quick else 3)
    X_train, y_train, X_test, y_test = data(quick)
    model = pipeline(quick).fit(X_train, y_train)
    model[-1].set_params(n_jobs=1)
    n_derived = model[0].transform(X_test[:1]).shape[1]
    print(f"B-PIPE: {model[-1].n_estimators} trees, {X_test.shape[1]} input columns -> "
          f"{n_derived} derived, train {X_train.shape}, test {X_test.shape}", flush=True)
    pair = {
        "sklearn": lambda: sklearn_permutation_importance(model, X_test, y_test, n_repeats=5,
                                                          random_state=0, n_jobs=1),
        "sapwood": lambda: permutation_importance(model, X_test, y_test, n_repeats=5,
                                                  random_state=0, n_jobs=2),
    }
    first = {name: function() for name, function in pair.items()}  # kernels loaded
    difference = float(np.abs(first["sklearn"].importances
                              - first["sapwood"].importances).max())
    timings = time_interleaved(pair, repeats=runs)
    theirs, ours = timings["sklearn"].median, timings["sapwood"].median
    print(f"  sklearn {theirs:.3f} s, sapwood {ours:.3f} s, ratio {ours / theirs:.4f}, "
          f"max |difference| {difference:.2e}", flush=True)
    return [{"id": "B-PIPE",
             "workload": f"held-out permutation importance of a Pipeline (ColumnTransformer: "
                         f"one-hot, impute + scale; RandomForestRegressor("
                         f"{model[-1].n_estimators})), {len(X_test):,} rows x "
                         f"{X_test.shape[1]} input columns ({n_derived} derived) x 5 repeats",
             "peer": "sklearn n_jobs=1", "peer_s": theirs, "sapwood_s": ours,
             "ratio": ours / theirs, "target": f"<= {TARGET}", "met": ours / theirs <= TARGET,
             "check": f"max |importance difference| {difference:.1e}",
             "raw": {"sklearn_runs": timings["sklearn"].runs,
                     "sapwood_runs": timings["sapwood"].runs}}]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small data, 30 trees")
    parser.add_argument("--runs", type=int, default=None, help="warm runs each (median)")
    args = parser.parse_args(argv)
    for row in run(args.quick, args.runs):
        print(row["id"], row["workload"], f"ratio {row['ratio']:.4f}", row["check"])


if __name__ == "__main__":
    main()
