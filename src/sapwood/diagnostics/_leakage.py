"""Leakage: one feature alone predicts the held-out target almost perfectly.

For each feature, a small decision tree (sapwood's own: depth :data:`DEPTH`, leaves of
at least :data:`MIN_LEAF` rows; missing values go where the tree learnt to send them)
is fit on that column of the training rows and scored on the held-out rows:
classification by balanced accuracy, regression by R². A score of at least
:data:`LEAKAGE_SCORE`, on at least :data:`MIN_HELD_OUT` held-out rows, is reported. A
real predictor that good is rare enough that a user should check the column was not
derived from the target or recorded after it. One tree per column: the cost is linear
in rows times columns.

Definition: docs/measures.md, section 'Warnings'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score, r2_score

from .._text import quoted
from ..learners import DecisionTreeClassifier, DecisionTreeRegressor
from ._finding import Finding

__all__ = ["LEAKAGE_SCORE", "find_leakage"]

LEAKAGE_SCORE = 0.99
MIN_HELD_OUT = 20
DEPTH = 5
MIN_LEAF = 5


def find_leakage(X_train, y_train, X_test, y_test, task: str, *, threshold=LEAKAGE_SCORE,
                 random_state=0) -> list:
    """Findings of kind ``"leakage"``: features that alone score at least
    ``threshold`` on the held-out rows (balanced accuracy or R², by ``task``)."""
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression'; got {task!r}")
    if len(y_test) < MIN_HELD_OUT:
        return []
    X_train, X_test = pd.DataFrame(X_train), pd.DataFrame(X_test)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    classify = task == "classification"
    learner = DecisionTreeClassifier if classify else DecisionTreeRegressor
    score_name = "balanced accuracy" if classify else "R²"
    found = []
    for column in X_train.columns:
        train = X_train[[column]].to_numpy(dtype=np.float64)
        if np.isnan(train).all():
            continue
        tree = learner(max_depth=DEPTH, min_samples_leaf=MIN_LEAF, random_state=random_state)
        tree.fit(train, y_train)
        predicted = tree.predict(X_test[[column]].to_numpy(dtype=np.float64))
        score = float(balanced_accuracy_score(y_test, predicted) if classify
                      else r2_score(y_test, predicted))
        if score >= threshold:
            name = str(column)
            found.append(Finding(
                kind="leakage", features=(name,),
                message=(f"{quoted(name)} alone predicts the held-out target almost perfectly "
                         f"({score_name} {score:.3f} on {len(y_test):,} held-out rows, a "
                         f"depth-{DEPTH} tree on this column only): check that it is not "
                         "derived from the target or recorded after it."),
                details={"score": score, "score_name": score_name,
                         "n_test": len(y_test)}))
    return found
