"""Writes tests/model_format_v2 with the sapwood of format version 2 (commit 9124e8f), run
once as `PYTHONPATH=<that src> python make_fixtures.py tests/model_format_v2`."""
import sys
from pathlib import Path

import lightgbm
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier

import sapwood

out = Path(sys.argv[1])
X, y = make_classification(n_samples=200, n_features=5, n_informative=3, random_state=0)
X[::17, 1] = np.nan
Xr, yr = make_regression(n_samples=200, n_features=5, random_state=0)
models = {
    "sapwood_forest_bagged": sapwood.RandomForestClassifier(n_estimators=3, max_depth=4,
                                                            random_state=0).fit(X, y),
    "sklearn_forest_bagged": RandomForestClassifier(n_estimators=3, max_depth=4,
                                                    random_state=0).fit(np.nan_to_num(X), y),
    "lightgbm_regression": lightgbm.LGBMRegressor(n_estimators=5, num_leaves=6, verbose=-1,
                                                  random_state=0).fit(Xr, yr),
}
np.save(out / "X.npy", X)
for name, model in models.items():
    path = out / f"{name}.sapwood"
    sapwood.save(model, path)
    loaded = sapwood.load(path)
    np.save(out / f"{name}.predict.npy", loaded.predict(X))
    if loaded.task == "classification":
        np.save(out / f"{name}.predict_proba.npy", loaded.predict_proba(X))
