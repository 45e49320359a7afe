"""Write the XGBoost model files of this folder with the installed XGBoost.

Run once per XGBoost major version (the files are named by it), e.g. XGBoost 2.1.4
installed apart from the project's environment::

    pip install --no-deps --target /tmp/xgb21 xgboost==2.1.4
    PYTHONPATH=/tmp/xgb21 python tests/adapters/xgboost_versions/make_fixtures.py

Each model is saved as JSON and UBJSON beside its raw margin on ``X.npy``
(``output_margin=True``), which the tests compare against.
"""

from pathlib import Path

import numpy as np
import xgboost as xgb

HERE = Path(__file__).parent
MODELS = {
    "multi_output_regression": ({"objective": "reg:squarederror"}, "regression"),
    "multi_output_softprob": ({"objective": "multi:softprob", "num_class": 3}, "class"),
    "one_output_per_tree_softprob": ({"objective": "multi:softprob", "num_class": 3},
                                     "class"),
    "binary_logistic": ({"objective": "binary:logistic"}, "binary"),
    # base_score is a margin here, not a probability.
    "binary_logitraw": ({"objective": "binary:logitraw"}, "binary"),
}


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    filled = np.nan_to_num(X)
    targets = {
        "regression": np.c_[filled[:, 0] + 0.1 * rng.normal(size=200), 2 * filled[:, 1]],
        "class": np.digitize(filled[:, 0] + filled[:, 2], [-0.5, 0.5]),
        "binary": (filled[:, 0] - filled[:, 3] > 0.3).astype(int),
    }
    np.save(HERE / "X.npy", X)
    major = xgb.__version__.split(".")[0]
    for name, (params, target) in MODELS.items():
        params = {"tree_method": "hist", "max_depth": 3, "eta": 0.3, **params}
        if name.startswith("multi_output"):
            params["multi_strategy"] = "multi_output_tree"
        booster = xgb.train(params, xgb.DMatrix(X, label=targets[target]), 4)
        stem = HERE / f"xgboost{major}_{name}"
        for suffix in ("json", "ubj"):
            booster.save_model(f"{stem}.{suffix}")
        np.save(f"{stem}.margin.npy", booster.predict(xgb.DMatrix(X), output_margin=True))


if __name__ == "__main__":
    main()
