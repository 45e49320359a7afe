"""Small data sets bundled with sapwood (nothing is downloaded).

- :func:`load_loan` — the loan-approval table of seed 003, on which CART's entropy
  splits and MDI are worked out by hand (6 or 7 rows).
- :func:`load_iris` — Fisher's iris (seed 002's example), as shipped with
  scikit-learn.
- :func:`make_ground_truth` — generated data with known answers: informative
  features, a noisy copy of one, and pure-noise columns including an ID-like one.

Both return a :class:`sklearn.utils.Bunch` like scikit-learn's loaders (``data``,
``target``, ``frame``, ``feature_names``, ``target_names``, ``DESCR``) or, with
``return_X_y=True``, the pair ``(data, target)``. They default to pandas
(``as_frame=True``) because sapwood keeps column names through to importance tables.
"""

from ._ground_truth import make_ground_truth
from ._iris import load_iris
from ._loan import load_loan

__all__ = ["load_iris", "load_loan", "make_ground_truth"]
