"""Feature selection: which features are relevant at all.

- :func:`boruta` — Boruta (Kursa & Rudnicki 2010): features against shuffled shadow
  copies of themselves, round after round, with Bonferroni-adjusted binomial tests;
  any estimator and any importance measure. Returns a :class:`BorutaResult`.
"""

from ._boruta import BorutaResult, boruta

__all__ = ["BorutaResult", "boruta"]
