"""sapwood: tree models and every serious feature-importance measure, exact and fast.

Layout (each a package of small private modules; public names are re-exported here):

- ``sapwood._format``   the one tree format (:class:`TreeArrays`, :class:`TreeEnsemble`)
- ``sapwood._kernels``  all Numba code: split search, growth, traversal
- ``sapwood.learners``  DecisionTree*, forests, boosting (scikit-learn estimator API)
- ``sapwood.adapters``  other libraries' models into the tree format
- ``sapwood.importance`` the measures, all returning :class:`ImportanceResult`
- ``sapwood.export``    text, Graphviz and matplotlib views of a tree
"""

from . import importance
from ._format import FormatError, TreeArrays, TreeEnsemble
from .learners import DecisionTreeClassifier, DecisionTreeRegressor

__version__ = "0.1.0"

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "FormatError",
    "TreeArrays",
    "TreeEnsemble",
    "importance",
]
