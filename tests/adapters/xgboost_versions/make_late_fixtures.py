"""Write the model files of this folder that need XGBoost >= 3.3 (3.4.1 used).

XGBoost 3.3 moved the DART tree weights into the tree model (``weight_drop`` beside
``trees``, the booster named ``gbtree``) and learned categorical splits in vector-leaf
trees (``multi_strategy="multi_output_tree"``), so these files cannot come from the
XGBoost the tests run with. XGBoost 3.3+ wheels require Python 3.12, but the
``xgboost-cpu`` wheel's package imports on 3.11::

    pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --platform manylinux_2_28_x86_64 -d /tmp/wheel xgboost-cpu==3.4.1
    unzip -d /tmp/xgb34 /tmp/wheel/xgboost_cpu-3.4.1-*.whl
    PYTHONPATH=/tmp/xgb34 python tests/adapters/xgboost_versions/make_late_fixtures.py

DART models (``xgboost3_4_dart_*``) are trained on ``X.npy`` (written by
make_fixtures.py) and saved beside their margin from a DMatrix (``.margin.npy``) and
from in-place prediction (``.inplace_margin.npy``). Vector-leaf models with
categorical splits (``vector_leaf_categorical_*``) are trained on a pandas frame whose
last column is a ``category`` of text labels; ``vector_leaf_categorical.X.npy`` holds
the frame with that column as its category codes, and each model is saved beside its
margin on the frame (in-place prediction).
"""

from pathlib import Path

import numpy as np
import pandas as pd
import xgboost as xgb

HERE = Path(__file__).parent
LABELS = [f"c{k}" for k in range(8)]


def dart():
    X = np.load(HERE / "X.npy")
    filled = np.nan_to_num(X)
    rng = np.random.default_rng(1)
    targets = {
        "regression": (filled[:, 0] + filled[:, 1] * filled[:, 2]
                       + 0.1 * rng.normal(size=X.shape[0])),
        "softprob": np.digitize(filled[:, 0] + filled[:, 2], [-0.5, 0.5]),
        "vector_leaf": np.c_[filled[:, 0], 2 * filled[:, 1] - filled[:, 3]],
    }
    models = {
        "regression": {"objective": "reg:squarederror"},
        "softprob": {"objective": "multi:softprob", "num_class": 3},
        "vector_leaf": {"objective": "reg:squarederror",
                        "multi_strategy": "multi_output_tree"},
    }
    for name, params in models.items():
        params = {"tree_method": "hist", "max_depth": 4, "eta": 0.3, "rate_drop": 0.3,
                  "skip_drop": 0.0, "seed": 0, "nthread": 1, **params}
        booster = xgb.train(params, xgb.DMatrix(X, label=targets[name]), 20)
        save(booster, f"xgboost3_4_dart_{name}",
             booster.predict(xgb.DMatrix(X), output_margin=True))
        np.save(HERE / f"xgboost3_4_dart_{name}.inplace_margin.npy",
                booster.inplace_predict(X, predict_type="margin"))


def vector_leaf_categorical():
    rng = np.random.default_rng(2)
    n = 400
    codes = rng.integers(0, len(LABELS), n)
    frame = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.normal(size=n),
        "colour": pd.Categorical.from_codes(codes, categories=LABELS)})
    frame.loc[rng.random(n) < 0.1, "a"] = np.nan
    frame.loc[rng.random(n) < 0.1, "colour"] = np.nan
    effect = np.array([0.0, 1.5, -1.0, 0.5, 2.0, -2.0, 1.0, -0.5])[codes]
    targets = {
        "regression": np.c_[np.nan_to_num(frame["a"]) + effect, frame["b"] - effect],
        "softprob": np.digitize(np.nan_to_num(frame["a"]) + effect, [-0.5, 0.5]),
    }
    models = {  # partition splits, and one-hot splits (max_cat_to_onehot above 8)
        "regression": {"objective": "reg:squarederror"},
        "softprob": {"objective": "multi:softprob", "num_class": 3,
                     "max_cat_to_onehot": 16},
    }
    for name, params in models.items():
        params = {"tree_method": "hist", "max_depth": 4, "eta": 0.3, "seed": 0,
                  "nthread": 1, "multi_strategy": "multi_output_tree", **params}
        data = xgb.DMatrix(frame, label=targets[name], enable_categorical=True)
        booster = xgb.train(params, data, 8)
        save(booster, f"vector_leaf_categorical_{name}",
             booster.inplace_predict(frame, predict_type="margin"))
    as_codes = frame.assign(colour=frame["colour"].cat.codes.replace(-1, np.nan))
    np.save(HERE / "vector_leaf_categorical.X.npy", as_codes.to_numpy(dtype=np.float64))


def save(booster, stem, margin):
    for suffix in ("json", "ubj"):
        booster.save_model(HERE / f"{stem}.{suffix}")
    np.save(HERE / f"{stem}.margin.npy", margin)


if __name__ == "__main__":
    dart()
    vector_leaf_categorical()
