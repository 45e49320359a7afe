"""Generated data for adapter tests: ties, NaN, zeros and constant columns on purpose."""

import numpy as np
from hypothesis import strategies as st


def make_data(seed, n_samples=200, n_features=4, nan_fraction=0.1, zero_fraction=0.0,
              n_levels=0, n_classes=2):
    """X with NaN (and zeros, coarse levels for ties) plus a classification and a
    regression target that depend on the first features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    if n_levels:
        X = np.round(X * n_levels) / n_levels
    signal = X[:, 0] + (X[:, 1] if n_features > 1 else 0.0)
    X[rng.random(X.shape) < zero_fraction] = 0.0
    X[rng.random(X.shape) < nan_fraction] = np.nan
    cuts = np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1])
    y_class = np.searchsorted(cuts, signal + 0.3 * rng.normal(size=n_samples))
    y_reg = signal * 2.0 + np.sin(3 * X[:, -1] if n_features > 1 else 0.0)
    y_reg = np.where(np.isnan(y_reg), 0.5, y_reg) + 0.1 * rng.normal(size=n_samples)
    return X, y_class, y_reg


datasets = st.builds(
    lambda seed, n, p, nan, zero, levels: make_data(seed, n, p, nan, zero, levels),
    seed=st.integers(0, 2**16), n=st.integers(40, 200), p=st.integers(1, 5),
    nan=st.sampled_from([0.0, 0.05, 0.3]), zero=st.sampled_from([0.0, 0.2]),
    levels=st.sampled_from([0, 2, 10]))


def assert_close(ours, theirs, rtol=0.0, atol=1e-6):
    """Element-wise agreement to ``atol + rtol * |theirs|``."""
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64),
                               np.asarray(theirs, dtype=np.float64), rtol=rtol, atol=atol)


def catboost_document(n_classes, trees):
    """A CatBoost JSON model written by hand (its reader needs no catboost): one float
    feature, ``n_classes`` output columns and the given ``oblivious_trees``."""
    return {"features_info": {"float_features": [{
                "borders": [0.0], "feature_index": 0, "flat_feature_index": 0,
                "feature_id": "", "nan_value_treatment": "AsIs"}]},
            "model_info": {"params": {"loss_function": {
                "type": "MultiClass" if n_classes > 1 else "RMSE"}}},
            "scale_and_bias": [1, [0] * n_classes], "oblivious_trees": trees}
