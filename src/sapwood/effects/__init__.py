"""How the features matter: partial dependence and ICE, accumulated local effects, and
the strength of interactions, on every tree model sapwood reads.

- :func:`partial_dependence` -- PD and ICE (scikit-learn's arguments, grid and Bunch);
  brute force through the trees (the model's own predictions, bit for bit) or
  Friedman's weighted traversal (``method="recursion"``).
- :func:`ale` -- accumulated local effects (Apley & Zhu) of a numeric feature, of a
  categorical one (its categories ordered by similarity) and the second-order effect of
  a pair, PyALE's conventions and numbers.
- :func:`h_statistic` -- Friedman & Popescu's H-statistic, exactly by its definition.
- :func:`shap_interaction_importance` -- mean |TreeSHAP interaction value| per pair.

Each returns a plain structure (a Bunch or a DataFrame) that :mod:`sapwood.plotting`
draws. The package sits beside :mod:`sapwood.importance`: it reads the tree format and
the kernels, never a library's own objects.
"""

from ._ale import ale
from ._h_statistic import h_statistic
from ._partial_dependence import partial_dependence
from ._shap_interactions import shap_interaction_importance

__all__ = ["ale", "h_statistic", "partial_dependence", "shap_interaction_importance"]
