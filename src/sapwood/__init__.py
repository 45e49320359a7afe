"""sapwood: tree models and every serious feature-importance measure, exact and fast.

Layout (each a package of small private modules; public names are re-exported here):

- ``sapwood._format``    the one tree format (:class:`TreeArrays`, :class:`TreeEnsemble`)
- ``sapwood._kernels``   all Numba code: split search, growth, traversal, permutation, TreeSHAP
- ``sapwood.learners``   DecisionTree*, RandomForest*, ExtraTrees*, GradientBoosting*,
                         SurvivalTree, RandomSurvivalForest, ExtraSurvivalTrees
- ``sapwood.adapters``   scikit-learn, XGBoost and LightGBM models into the tree format
- ``sapwood.importance`` the measures, all returning :class:`ImportanceResult`
- ``sapwood.selection``  Boruta feature selection with any importance measure
- ``sapwood.export``     text and Graphviz views of a tree
- ``sapwood.plotting``   every matplotlib picture: trees, importance charts, comparisons
- ``sapwood.datasets``   bundled and generated data (nothing is downloaded)
- ``sapwood.report``     :func:`explain`: the verdict, warnings and agreement, as a :class:`Report`
- ``sapwood.cli``        the ``sapwood`` command
- :func:`save` / :func:`load`  the versioned, pickle-free model file (docs/model-format.md)

Errors: bad arguments raise ``ValueError`` / ``TypeError`` naming the parameter; a model
file or tree that is not valid raises :class:`FormatError` (a ``ValueError``).
"""

from typing import TYPE_CHECKING

from ._lazy import lazy_names
from ._version import __version__

# Every public name loads on first use: the learners pull in scikit-learn (and with it
# scipy and rich), the format Numba, the measures pandas (and pyarrow), so an eager
# `import sapwood` took seconds. Loaded lazily it is near instant and loads no optional
# or plotting package (tests/test_import_cost.py), and a command pays only for what it
# runs. Name -> (module, attribute or None for the module itself); see _lazy.py.
_LAZY = {
    "FormatError": ("._format", "FormatError"),
    "ModelKind": ("._format", "ModelKind"),
    "TreeArrays": ("._format", "TreeArrays"),
    "TreeEnsemble": ("._format", "TreeEnsemble"),
    **{name: (".learners", name) for name in (
        "DecisionTreeClassifier", "DecisionTreeRegressor", "ExtraTreesClassifier",
        "ExtraTreesRegressor", "GradientBoostingClassifier", "GradientBoostingRegressor",
        "RandomForestClassifier", "RandomForestRegressor", "SurvivalTree",
        "RandomSurvivalForest", "ExtraSurvivalTrees")},
    "Report": (".report", "Report"),
    "explain": (".report", "explain"),
    "datasets": (".datasets", None),
    "export": (".export", None),
    "effects": (".effects", None),
    "importance": (".importance", None),
    "plotting": (".plotting", None),
    "report": (".report", None),
    "selection": (".selection", None),
    "from_model": (".adapters", "from_model"),
    "load": ("._persist", "load"),
    "save": (".adapters", "save"),
}

if TYPE_CHECKING:  # what the names are, for type checkers and editors
    from ._format import FormatError, ModelKind, TreeArrays, TreeEnsemble
    from .learners import (
        DecisionTreeClassifier,
        DecisionTreeRegressor,
        ExtraSurvivalTrees,
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
        RandomSurvivalForest,
        SurvivalTree,
    )
    from .report import Report, explain


__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraSurvivalTrees",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "FormatError",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "ModelKind",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "RandomSurvivalForest",
    "Report",
    "SurvivalTree",
    "TreeArrays",
    "TreeEnsemble",
    "__version__",
    "datasets",
    "effects",
    "explain",
    "export",
    "from_model",
    "importance",
    "load",
    "report",
    "save",
    "selection",
]
