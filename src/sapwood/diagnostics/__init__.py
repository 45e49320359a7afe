"""Checks of what an importance table may conclude: each returns :class:`Finding` objects.

A new check goes in a private module here with its rule in the docstring (and in
``docs/measures.md``), tested where it must fire and where it must not. Checks read
data and :class:`~sapwood.importance.ImportanceResult` objects; the command line adds
the ones that depend on which measures it ran.
"""

from ._correlated import ASSOCIATION_THRESHOLD, association_matrix, find_correlated
from ._finding import Finding
from ._identifier import find_identifiers
from ._leakage import LEAKAGE_SCORE, find_leakage

__all__ = [
    "ASSOCIATION_THRESHOLD",
    "Finding",
    "LEAKAGE_SCORE",
    "association_matrix",
    "find_correlated",
    "find_identifiers",
    "find_leakage",
]
