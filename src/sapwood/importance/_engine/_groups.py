"""The units a permutation-type measure permutes: each column, or named groups of them."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ._names import column_names

__all__ = ["feature_groups_given", "resolve_groups"]


def feature_groups_given(feature_groups, groups, function: str):
    """The feature groups a measure was given: ``feature_groups``, or ``groups``, their
    former name, with a FutureWarning (``groups`` is scikit-learn's word for one label
    per row, and sapwood keeps one meaning per word)."""
    if groups is None:
        return feature_groups
    if feature_groups is not None:
        raise TypeError(f"{function} takes the feature groups once: feature_groups= (groups= "
                        "is its former name); got both")
    # stacklevel: this helper, the measure, scikit-learn's parameter validation, the caller.
    warnings.warn(f"{function}(groups=...) is now {function}(feature_groups=...); 'groups' "
                  "will mean one label per row, as in scikit-learn. The old name will be "
                  "removed in the next release", FutureWarning, stacklevel=4)
    return groups


def resolve_groups(X, model, groups):
    """Names and column-position arrays of the units to permute (``groups``: the
    measure's ``feature_groups``)."""
    n_features = X.shape[1]
    feature_names = column_names(X, model, n_features)
    if groups is None:
        return feature_names, [np.array([j]) for j in range(n_features)]
    if not groups:
        raise ValueError("feature_groups must name at least one group of columns; got {}")
    labels = list(X.columns) if hasattr(X, "columns") else None
    names, columns = [], []
    for name, members in groups.items():
        if isinstance(members, (str, numbers.Integral)) or len(members) == 0:
            raise ValueError(f"feature_groups[{name!r}] must be a non-empty list of columns; "
                             f"got {members!r}")
        positions = []
        for member in members:
            if labels is not None and member in labels:
                positions.append(labels.index(member))
            elif isinstance(member, numbers.Integral) and 0 <= member < n_features:
                positions.append(int(member))
            else:
                raise ValueError(f"feature_groups[{name!r}] names column {member!r}, which X "
                                 f"does not have (X has {n_features} columns)")
        if len(set(positions)) != len(positions):
            raise ValueError(f"feature_groups[{name!r}] lists a column twice: "
                             f"{list(members)!r}")
        names.append(str(name))
        columns.append(np.array(positions, dtype=np.intp))
    return names, columns
