"""sapwood's own learners: every tree is grown by sapwood's Numba kernels."""

from ._tree import DecisionTreeClassifier, DecisionTreeRegressor

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor"]
