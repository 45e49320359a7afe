"""Feature selection: which features are relevant at all.

- :func:`boruta` — Boruta (Kursa & Rudnicki 2010): features against shuffled shadow
  copies of themselves, round after round, with Bonferroni-adjusted binomial tests;
  any estimator and any importance measure. Returns a :class:`BorutaResult`.
- :func:`knockoffs` — model-X knockoffs (Candès et al. 2018): features against
  Gaussian knockoff copies, selected at a target false discovery rate (knockoff+),
  optionally derandomised over several draws (e-values, Ren & Barber 2024). Returns a
  :class:`KnockoffResult`.
- :class:`ImportanceGetter` — any registered measure as the ``importance_getter`` of
  scikit-learn's ``RFE``, ``RFECV`` and ``SelectFromModel``.
- :class:`BorutaSelector` — :func:`boruta` as a scikit-learn transformer (``fit``,
  ``transform``, ``support_``, ``ranking_``) for ``Pipeline`` and ``GridSearchCV``.
"""

from ._boruta import BorutaResult, boruta
from ._hooks import BorutaSelector, ImportanceGetter
from ._knockoffs import KnockoffResult, knockoffs

__all__ = ["BorutaResult", "boruta", "KnockoffResult", "knockoffs", "ImportanceGetter",
           "BorutaSelector"]
