"""sapwood: tree models and every serious feature-importance measure, exact and fast.

Layout (each a package of small private modules; public names are re-exported here):

- ``sapwood._format``    the one tree format (:class:`TreeArrays`, :class:`TreeEnsemble`)
- ``sapwood._kernels``   all Numba code: split search, growth, traversal, permutation
- ``sapwood.learners``   DecisionTree*, RandomForest*, ExtraTrees*, GradientBoosting*
- ``sapwood.adapters``   scikit-learn, XGBoost and LightGBM models into the tree format
- ``sapwood.importance`` the measures, all returning :class:`ImportanceResult`
- ``sapwood.export``     text, Graphviz and matplotlib views of a tree
- ``sapwood.plotting``   importance charts
- ``sapwood.datasets``   bundled and generated data (nothing is downloaded)
- ``sapwood.cli``        the ``sapwood`` command
- :func:`save` / :func:`load`  the versioned, pickle-free model file (docs/model-format.md)

Errors: bad arguments raise ``ValueError`` / ``TypeError`` naming the parameter; a model
file or tree that is not valid raises :class:`FormatError` (a ``ValueError``).
"""

from . import datasets, export, importance
from ._format import FormatError, TreeArrays, TreeEnsemble
from ._persist import load, save
from .adapters import from_model
from .learners import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

__version__ = "0.1.0"

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "FormatError",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "TreeArrays",
    "TreeEnsemble",
    "datasets",
    "export",
    "from_model",
    "importance",
    "load",
    "save",
]
