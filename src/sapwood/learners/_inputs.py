"""Input checks every sapwood estimator shares."""

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data


def reject_infinity(X):
    """NaN marks a missing value; infinity is an error, as in scikit-learn's trees."""
    if np.isinf(X).any():
        raise ValueError("Input X contains infinity or a value too large for "
                         "dtype('float32').")
    return X


def validate_predict_input(estimator, X):
    """X for predict/apply of a fitted estimator: float32, its features, NaN allowed."""
    check_is_fitted(estimator)
    X = validate_data(estimator, X, dtype=np.float32, ensure_all_finite="allow-nan",
                      reset=False)
    return reject_infinity(X)
