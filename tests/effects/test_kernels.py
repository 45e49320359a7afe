"""The effects' kernels against the obvious computation: rows with the grid columns set,
predicted one grid point at a time (raw outputs, bit for bit)."""

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from sapwood.adapters import as_ensemble
from sapwood.effects._engine import grid_raw


def _naive(ensemble, values, columns, points):
    out = []
    for point in points:
        modified = values.copy()
        modified[:, columns] = point
        out.append(ensemble.raw_predict(modified, native=True))
    return np.array(out)


def _model(kind, X, y):
    if kind == "forest":
        return RandomForestRegressor(8, max_depth=6, random_state=0).fit(X, y)
    if kind == "boosting-multiclass":
        return GradientBoostingClassifier(n_estimators=6, random_state=0).fit(
            np.nan_to_num(X), np.digitize(y, [-0.5, 0.5]))
    return HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)


@pytest.mark.parametrize("kind", ["forest", "boosting-multiclass", "hist-missing"])
@pytest.mark.parametrize("n_rows", [1, 7, 120])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_grid_sums_equal_predicting_each_grid_point(kind, n_rows, n_jobs):
    rng = np.random.default_rng(n_rows)
    X = np.round(rng.normal(size=(150, 4)), 1)  # ties, and grid values on thresholds
    X[:, 3] = 1.0  # a constant column
    y = X[:, 0] * X[:, 1] + X[:, 2]
    if kind == "hist-missing":
        X[rng.random(size=X.shape) < 0.15] = np.nan
    ensemble = as_ensemble(_model(kind, X, y))
    values = np.ascontiguousarray(X[:n_rows], dtype=ensemble.input_dtype)
    for columns in ([0], [1, 2], [3]):
        points = np.round(rng.normal(size=(9, len(columns))), 1).astype(values.dtype)
        ours = grid_raw(ensemble, values, columns, points, n_jobs)
        np.testing.assert_array_equal(ours, _naive(ensemble, values, columns, points))
