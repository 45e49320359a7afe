"""The data sets D1-D4 of BENCHMARKS.md: generated with fixed seeds, never downloaded.

Each is split 80/20 by ``train_test_split(test_size=0.2, random_state=0)`` (the spec's
"80/20"; its reference figures, D1 test = 20k rows and D3 test = 1k rows, confirm the
fraction). ``quick=True`` generates the same recipe with far fewer rows, for smoke runs
of the harness; its numbers mean nothing. Results are cached for the process.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split

__all__ = ["DATASETS", "Dataset", "load"]

# name -> (task, generator keyword arguments at full scale, rows at quick scale)
DATASETS = {
    "D1": ("classification",
           {"n_samples": 100_000, "n_features": 20, "n_informative": 8}, 2_000),
    "D2": ("regression",
           {"n_samples": 100_000, "n_features": 20, "n_informative": 8, "noise": 1.0}, 2_000),
    "D3": ("classification",
           {"n_samples": 5_000, "n_features": 50, "n_informative": 10}, 1_000),
    "D4": ("classification",
           {"n_samples": 20_000, "n_features": 200, "n_informative": 10}, 1_000),
}


@dataclass(frozen=True, eq=False)
class Dataset:
    name: str
    task: str
    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, features) of the whole set before the split."""
        return (self.X_train.shape[0] + self.X_test.shape[0], self.X_train.shape[1])


@cache
def load(name: str, quick: bool = False) -> Dataset:
    """Data set ``name`` ("D1".."D4"), full size or (``quick``) small."""
    if name not in DATASETS:
        raise ValueError(f"Unknown data set {name!r}; expected one of {sorted(DATASETS)}.")
    task, params, quick_rows = DATASETS[name]
    params = {**params, "random_state": 0}
    if quick:
        params["n_samples"] = quick_rows
    generate = make_classification if task == "classification" else make_regression
    X, y = generate(**params)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    return Dataset(name, task, X_train, X_test, y_train, y_test)
