"""Feature-importance measures. Each returns an :class:`ImportanceResult`.

A new measure goes in a private module here (``_name.py``) with its formula, paper and
DOI in the docstring, reads models only through :func:`sapwood.adapters.as_ensemble`
(or the estimator API for model-agnostic measures), and is exported below; one
:class:`Measure` record in :data:`MEASURES` (``_registry.py``, or :func:`register` from
outside) makes it known to ``compare``, the p-value functions, ``boruta`` and the
``sapwood`` command.
"""

from ._air import impurity_corrected
from ._compare import compare
from ._conditional import conditional_permutation_importance
from ._cpi import cpi
from ._drop_column import drop_column_importance
from ._friedman import friedman_importance
from ._knockoff_sampler import GaussianKnockoffs
from ._mdi import mdi
from ._mdi_plus import mdi_plus
from ._native import native_importance
from ._oob import oob_permutation_importance
from ._permutation import permutation_importance
from ._pvalues import altmann_pvalues, janitza_pvalues
from ._registry import (
    MEASURES,
    Measure,
    MeasureInputs,
    register,
    registered,
    unregister,
)
from ._result import ImportanceResult, side_by_side
from ._sage import sage
from ._shap import tree_shap
from ._ufi import unbiased_mdi

__all__ = [
    "MEASURES",
    "ImportanceResult",
    "Measure",
    "MeasureInputs",
    "altmann_pvalues",
    "compare",
    "conditional_permutation_importance",
    "drop_column_importance",
    "friedman_importance",
    "impurity_corrected",
    "janitza_pvalues",
    "mdi",
    "mdi_plus",
    "native_importance",
    "oob_permutation_importance",
    "permutation_importance",
    "register",
    "registered",
    "sage",
    "side_by_side",
    "tree_shap",
    "unbiased_mdi",
    "unregister",
    "cpi",
    "GaussianKnockoffs",
]
