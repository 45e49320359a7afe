"""The feature names a measure reports."""

from __future__ import annotations

__all__ = ["column_names", "feature_names_of"]


def feature_names_of(ensemble, feature_names=None, X=None):
    """The names a measure reports: ``feature_names`` if given, else ``X``'s columns
    (a DataFrame), else the model's, else x0, x1, ..."""
    if feature_names is not None:
        names = list(feature_names)
    elif hasattr(X, "columns"):
        names = [str(c) for c in X.columns]
    elif ensemble.feature_names is not None:
        names = list(ensemble.feature_names)
    else:
        names = [f"x{j}" for j in range(ensemble.n_features)]
    if len(names) != ensemble.n_features:
        raise ValueError(f"feature_names has {len(names)} entries; the model has "
                         f"{ensemble.n_features} features")
    return names


def column_names(X, model, n_features):
    """The names of X's columns (a DataFrame), else the model's ``feature_names_in_``
    when it has as many, else x0, x1, ..."""
    if hasattr(X, "columns"):
        return [str(c) for c in X.columns]
    names = getattr(model, "feature_names_in_", None)
    if names is not None and len(names) == n_features:
        return [str(c) for c in names]
    return [f"x{j}" for j in range(n_features)]
