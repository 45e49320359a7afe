"""Feature-importance measures. Each returns an :class:`ImportanceResult`.

A new measure goes in a private module here (``_name.py``) with its formula, paper and
DOI in the docstring, reads models only through :func:`sapwood.adapters.as_ensemble`
(or the estimator API for model-agnostic measures), and is exported below.
"""

from ._mdi import mdi
from ._native import native_importance
from ._oob import oob_permutation_importance
from ._permutation import permutation_importance
from ._result import ImportanceResult, side_by_side

__all__ = [
    "ImportanceResult",
    "mdi",
    "native_importance",
    "oob_permutation_importance",
    "permutation_importance",
    "side_by_side",
]
