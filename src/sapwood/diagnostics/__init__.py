"""Checks of what an importance table may conclude: each returns :class:`Finding` objects.

A new check goes in a private module here with its rule in the docstring (and in
``docs/measures.md``), tested where it must fire and where it must not. Checks read
data as the command line reads it (numbers, text, categories, booleans, dates, missing
values) and :class:`~sapwood.importance.ImportanceResult` objects; the command line
adds the ones that depend on which measures it ran.
"""

from ._correlated import ASSOCIATION_THRESHOLD, association_matrix, find_correlated
from ._finding import Finding
from ._identifier import find_identifiers
from ._leakage import EVIDENCE, NEAR_MODEL, NEAR_PERFECT, find_leakage, relative_error
from ._survival_leakage import find_survival_leakage
from ._units import find_repeated_units

__all__ = [
    "ASSOCIATION_THRESHOLD",
    "EVIDENCE",
    "Finding",
    "NEAR_MODEL",
    "NEAR_PERFECT",
    "association_matrix",
    "find_correlated",
    "find_identifiers",
    "find_leakage",
    "find_repeated_units",
    "find_survival_leakage",
    "relative_error",
]
