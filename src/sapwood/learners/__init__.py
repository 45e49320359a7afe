"""sapwood's own learners: every tree is grown by sapwood's Numba kernels."""

from ._boosting import GradientBoostingClassifier, GradientBoostingRegressor
from ._forest import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from ._tree import DecisionTreeClassifier, DecisionTreeRegressor

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "RandomForestClassifier",
           "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
           "GradientBoostingClassifier", "GradientBoostingRegressor"]
