"""Scorers by name, as scikit-learn's ``check_scoring`` gives them, with one repair.

scikit-learn's ``neg_brier_score`` scorer reads a binary classifier's probability of its
second class (``classes_[1]``), then refuses to score it when the labels are not 0/1 or
-1/1 ("pos_label is not specified"), so the Brier score of a yes/no target cannot be had
by name. Here that scorer names the second class as the positive one, the class whose
probability it reads: the same number scikit-learn gives for 0/1 labels, and a number
where it gives an error.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import brier_score_loss, check_scoring, get_scorer, make_scorer

from ._survival_scores import survival_scorer

__all__ = ["scorer_for"]

_PLAIN_BINARY = ({0, 1}, {-1, 1}, {False, True})


def scorer_for(model, scoring, y=None):
    """``check_scoring(model, scoring)`` (a name: ``get_scorer(scoring)``), except
    ``"neg_brier_score"`` of a binary classifier whose labels (its ``classes_``, else
    those of ``y``) are neither 0/1 nor -1/1: then with the second label positive, alone
    or in a list of names."""
    survival = survival_scorer(scoring)
    if survival is not None:
        return survival
    if scoring == "neg_brier_score":
        classes = getattr(model, "classes_", None)
        if classes is None and y is not None:
            classes = np.unique(np.asarray(y))
        if classes is not None and len(classes) == 2 and not any(
                _same(classes, plain) for plain in _PLAIN_BINARY):
            return make_scorer(brier_score_loss, greater_is_better=False,
                               response_method="predict_proba", pos_label=classes[1])
    if isinstance(scoring, list | tuple) and all(isinstance(name, str) for name in scoring):
        # Several names: each repaired as above, scored together as scikit-learn does.
        return check_scoring(model, scoring={name: scorer_for(model, name, y)
                                             for name in scoring})
    if isinstance(scoring, str):
        # What check_scoring gives for a name, for any fitted model (a model read from a
        # file has no fit method, which check_scoring asks for).
        return get_scorer(scoring)
    return check_scoring(model, scoring=scoring)


def _same(classes, plain) -> bool:
    try:
        return set(np.asarray(classes).tolist()) == plain
    except TypeError:
        return False
