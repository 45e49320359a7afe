"""Every matplotlib picture sapwood draws: trees, importance charts, measure comparisons,
SHAP plots (beeswarm, bar, waterfall, dependence), effects (partial dependence with ICE,
ALE, interaction strengths).

Why one package, and why this one: pictures need matplotlib, an optional and slow
import, and they draw things from several layers (a tree from the format, an
:class:`~sapwood.importance.ImportanceResult`, a :func:`~sapwood.importance.compare`
table). So they sit in one package at the top of the library, above what they draw,
and nothing below imports them. :mod:`sapwood.export` stays what its name says: text
formats (rules as text, Graphviz DOT) that need nothing but NumPy and write exactly
what scikit-learn's exporters write. A tree drawing shares the export's node labels
(``sapwood.export._common``), so a box says what the DOT node says.

matplotlib is imported inside the drawing functions, not here: ``import sapwood`` and
the command line start without paying for it (importing ``matplotlib.pyplot`` takes
about a second), and sapwood works without matplotlib installed until a picture is
asked for.
"""

from ._compare import plot_compare
from ._effects import ale, interactions, partial_dependence
from ._importance import plot_importance
from ._knockoffs import plot_knockoffs
from ._shap import bar, beeswarm, dependence, waterfall
from ._tree import plot_tree

__all__ = ["ale", "bar", "beeswarm", "dependence", "interactions", "partial_dependence",
           "plot_compare", "plot_importance", "plot_knockoffs", "plot_tree", "waterfall"]
