"""Feature-importance measures. Each returns an :class:`ImportanceResult`.

One module per measure, named as the measure is named on the command line and in
:data:`MEASURES` (``_permutation.py``, ``_drop.py``, ``_gain.py``, ...), holding its
public function with the formula, paper and DOI in the docstring; the machinery they
share (evaluators, per-row draws, ranks, results, names) is in ``_engine``, whose
docstring maps it. A new measure is one module here, reading models only through
:func:`sapwood.adapters.as_ensemble` (or the estimator API, to refit), and one
:class:`Measure` record in :data:`MEASURES` (``_registry.py``, or :func:`register` from
outside), which makes it known to ``compare``, the p-value functions, ``boruta``, the
report and the ``sapwood`` command. ``tests/importance/test_layout.py`` keeps the rooms.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_names

# Every name loads on first use, and the registry imports a measure's module only when
# the measure runs: the command line reads the records (which kernels to compile
# ahead) before it imports pandas and scikit-learn, which the measures' modules import.
# Name -> the module it comes from.
_LAZY = {
    "MEASURES": "._registry",
    "Measure": "._registry",
    "MeasureInputs": "._registry",
    "register": "._registry",
    "registered": "._registry",
    "unregister": "._registry",
    "GaussianKnockoffs": "._engine._knockoff_sampler",
    "ImportanceResult": "._engine._result",
    "side_by_side": "._engine._result",
    "adjust_pvalues": "._pvalues",
    "altmann_pvalues": "._pvalues",
    "janitza_pvalues": "._pvalues",
    "compare": "._compare",
    "conditional_permutation_importance": "._conditional",
    "cpi": "._cpi",
    "drop_column_importance": "._drop",
    "friedman_importance": "._friedman",
    "air": "._air",
    "mdi": "._mdi",
    "mdi_plus": "._mdi_plus",
    "native_importance": "._gain",
    "oob_permutation_importance": "._oob",
    "permutation_importance": "._permutation",
    "sage": "._sage",
    "tree_shap": "._shap",
    "ufi": "._ufi",
    "survival_vimp": "._vimp",
}

if TYPE_CHECKING:  # what the names are, for type checkers and editors
    from ._air import air
    from ._compare import compare
    from ._conditional import conditional_permutation_importance
    from ._cpi import cpi
    from ._drop import drop_column_importance
    from ._engine._knockoff_sampler import GaussianKnockoffs
    from ._engine._result import ImportanceResult, side_by_side
    from ._friedman import friedman_importance
    from ._gain import native_importance
    from ._mdi import mdi
    from ._mdi_plus import mdi_plus
    from ._oob import oob_permutation_importance
    from ._permutation import permutation_importance
    from ._pvalues import adjust_pvalues, altmann_pvalues, janitza_pvalues
    from ._registry import (
        MEASURES,
        Measure,
        MeasureInputs,
        register,
        registered,
        unregister,
    )
    from ._sage import sage
    from ._shap import tree_shap
    from ._ufi import ufi
    from ._vimp import survival_vimp


# Former names of measures, now named as the measure is everywhere else.
_RENAMED = {"unbiased_mdi": "ufi", "impurity_corrected": "air"}

__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY, _RENAMED)

__all__ = [
    "MEASURES",
    "ImportanceResult",
    "Measure",
    "MeasureInputs",
    "adjust_pvalues",
    "altmann_pvalues",
    "compare",
    "conditional_permutation_importance",
    "drop_column_importance",
    "friedman_importance",
    "air",
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
    "survival_vimp",
    "tree_shap",
    "ufi",
    "unregister",
    "cpi",
    "GaussianKnockoffs",
]
