"""Input checks every sapwood estimator shares."""

import numpy as np
from scipy.sparse import issparse
from sklearn.utils.validation import check_is_fitted, validate_data


def check_rows(X, y, sample_weight=None):
    """X, y and sample_weight must have a row each for the same samples; the error
    names which of them disagree (scikit-learn's says only "inconsistent numbers of
    samples"). Lengths that cannot be read are left to the later validation."""
    n_rows = _length(X)
    for name, values in (("y", y), ("sample_weight", sample_weight)):
        n = _length(values)
        if n_rows is not None and n is not None and n != n_rows:
            raise ValueError(f"{name} has {n} entries but X has {n_rows} rows; they must "
                             "describe the same samples")


def _length(values):
    # len() only: scikit-learn's checks pass objects that refuse NumPy functions. A
    # sparse matrix's len() is not its rows: left to the later validation.
    if values is None or issparse(values):
        return None
    try:
        return len(values)
    except TypeError:  # a scalar, a 0-d array, a sparse matrix: validated later
        return None


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
