"""The units a permutation-type measure permutes: each column, or named groups of them."""

from __future__ import annotations

import numbers

import numpy as np

from ._names import column_names

__all__ = ["resolve_groups"]


def resolve_groups(X, model, groups):
    """Names and column-position arrays of the units to permute."""
    n_features = X.shape[1]
    feature_names = column_names(X, model, n_features)
    if groups is None:
        return feature_names, [np.array([j]) for j in range(n_features)]
    if not groups:
        raise ValueError("groups must name at least one group of columns; got {}")
    labels = list(X.columns) if hasattr(X, "columns") else None
    names, columns = [], []
    for name, members in groups.items():
        if isinstance(members, (str, numbers.Integral)) or len(members) == 0:
            raise ValueError(f"groups[{name!r}] must be a non-empty list of columns; "
                             f"got {members!r}")
        positions = []
        for member in members:
            if labels is not None and member in labels:
                positions.append(labels.index(member))
            elif isinstance(member, numbers.Integral) and 0 <= member < n_features:
                positions.append(int(member))
            else:
                raise ValueError(f"groups[{name!r}] names column {member!r}, which X does "
                                 f"not have (X has {n_features} columns)")
        if len(set(positions)) != len(positions):
            raise ValueError(f"groups[{name!r}] lists a column twice: {list(members)!r}")
        names.append(str(name))
        columns.append(np.array(positions, dtype=np.intp))
    return names, columns
