"""sapwood's own learners: every tree is grown by sapwood's Numba kernels."""

from ._boosting import GradientBoostingClassifier, GradientBoostingRegressor
from ._forest import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from ._survival_forest import ExtraSurvivalTrees, RandomSurvivalForest
from ._survival_tree import SurvivalTree
from ._tree import DecisionTreeClassifier, DecisionTreeRegressor

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "RandomForestClassifier",
           "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
           "GradientBoostingClassifier", "GradientBoostingRegressor", "SurvivalTree",
           "RandomSurvivalForest", "ExtraSurvivalTrees"]
