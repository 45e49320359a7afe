"""Text views of one tree of any model in the tree format: rules as text and Graphviz DOT.

Both read only :class:`sapwood.TreeArrays` (directly, from a
:class:`sapwood.TreeEnsemble` with ``tree_index``, or from a fitted sapwood
estimator). On trees whose splits all use ``<=``, :func:`export_text` and
:func:`export_graphviz` write exactly what scikit-learn's functions of the same name
write; ``<`` splits (XGBoost) print as ``<`` and, with ``show_missing=True``, each
split says where missing values go. A matplotlib drawing of a tree, with the same
node labels, is :func:`sapwood.plotting.plot_tree` (every picture lives in
:mod:`sapwood.plotting`).
"""

from ._graphviz import export_graphviz
from ._text import export_text

__all__ = ["export_graphviz", "export_text"]
