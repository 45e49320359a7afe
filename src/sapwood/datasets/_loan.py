"""Seed 003's loan-approval table."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_loan"]

# Row order as in seed 003; the seventh row (income 550) is the one its second
# worked example adds.
_COLUMNS = {
    "car": [0, 0, 1, 0, 0, 1, 1],
    "income": [650, 200, 700, 500, 425, 900, 550],
    "existloan": [1, 0, 3, 0, 1, 1, 0],
    "loan": [1, 0, 0, 0, 0, 1, 1],
}
FEATURE_NAMES = ["car", "income", "existloan"]
TARGET_NAME = "loan"

DESCR = """\
Loan approval table (seed 003, "Decision Tree")
------------------------------------------------

A toy credit decision used to work out CART's entropy splits and impurity
importance by hand.

=========  ==========================================
car        owns a car (0 / 1)
income     income (integer amount)
existloan  number of loans already held
loan       target: 1 = loan granted ("yes"), 0 = refused ("no")
=========  ==========================================

With 6 rows scikit-learn's DecisionTreeClassifier(criterion="entropy",
max_depth=3) splits the root at income <= 575. The 7-row table adds a row
(car=1, income=550, existloan=0, loan=1); the root then splits at income <= 525,
the right child at existloan <= 2, and the importances are
(car, income, existloan) = (0, 0.5295, 0.4705).
"""


def load_loan(n_rows: int = 7, *, as_frame: bool = True, return_X_y: bool = False):
    """Load seed 003's loan-approval table.

    Parameters
    ----------
    n_rows : {6, 7}, default=7
        The first 6 rows (the table the seed grows its first tree on) or all 7 (the
        table of its feature-importance example).
    as_frame : bool, default=True
        pandas DataFrame / Series (integer columns) if True, numpy arrays if False.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        ``data`` (n_rows x 3: car, income, existloan), ``target`` (loan, 0/1),
        ``frame`` (data and target together, or None when ``as_frame=False``),
        ``feature_names``, ``target_names`` (``["no", "yes"]``, indexed by target)
        and ``DESCR``.

    Examples
    --------
    >>> from sapwood.datasets import load_loan
    >>> X, y = load_loan(return_X_y=True)
    >>> X.shape, int(y.sum())
    ((7, 3), 3)
    """
    if n_rows not in (6, 7):
        raise ValueError(f"The 'n_rows' parameter must be 6 or 7. Got {n_rows!r} instead.")
    frame = pd.DataFrame({name: values[:n_rows] for name, values in _COLUMNS.items()},
                         dtype=np.int64)
    data, target = frame[FEATURE_NAMES], frame[TARGET_NAME]
    if not as_frame:
        data, target, frame = data.to_numpy(), target.to_numpy(), None
    if return_X_y:
        return data, target
    return Bunch(data=data, target=target, frame=frame, feature_names=list(FEATURE_NAMES),
                 target_names=np.array(["no", "yes"]), DESCR=DESCR)
