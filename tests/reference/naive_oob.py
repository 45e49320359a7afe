"""Obviously-correct out-of-bag permutation importance (test-only).

docs/measures.md, literally: for each tree take its OOB rows (drawn zero times in the
forest's ``estimators_samples_``), predict them with the tree's own ``predict``, then
for every repeat and every feature copy them, permute the column with the next
permutation of the tree's random stream, predict everything again and compare. The
random stream is the one ``oob_permutation_importance`` documents: one seed per tree
drawn up front, then ``RandomState(seed_t).permutation(|B_t|)`` per repeat and
feature, in that order.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["naive_oob_importance"]


def naive_oob_importance(forest, X, y, n_repeats=1, random_state=None):
    """Per-tree importances (n_features, n_trees), per-class ones (n_features,
    n_classes, n_trees) or None, casewise (n_samples, n_features) and the number of
    trees each row was OOB for. ``X`` a float ndarray, ``y`` the training labels."""
    X = np.asarray(X, dtype=np.float32)
    n_samples, n_features = X.shape
    classification = hasattr(forest, "classes_")
    if classification:
        classes = list(forest.classes_)
        target = np.array([classes.index(label) for label in y], dtype=np.float64)
    else:
        target = np.asarray(y, dtype=np.float64)
    n_trees = len(forest.estimators_)
    seeds = check_random_state(random_state).randint(np.iinfo(np.int32).max, size=n_trees)
    per_tree = np.zeros((n_features, n_trees))
    per_class = np.zeros((n_features, len(classes), n_trees)) if classification else None
    casewise = np.zeros((n_samples, n_features))
    n_oob_trees = np.zeros(n_samples, dtype=np.intp)
    for t, (tree, drawn) in enumerate(zip(forest.estimators_, forest.estimators_samples_,
                                          strict=True)):
        oob = np.flatnonzero(np.bincount(drawn, minlength=n_samples) == 0)
        n_oob_trees[oob] += 1
        rng = np.random.RandomState(seeds[t])
        X_oob, y_oob = X[oob], target[oob]
        original = tree.predict(X_oob) if len(oob) else np.empty(0)
        for _ in range(n_repeats):
            for j in range(n_features):
                permutation = rng.permutation(len(oob))
                if not len(oob):
                    continue
                X_permuted = X_oob.copy()
                X_permuted[:, j] = X_oob[permutation, j]
                permuted = tree.predict(X_permuted)
                if classification:
                    # Accuracy before minus accuracy after. The casewise change is
                    # randomForest's (rf.c): where the permuted prediction differs from
                    # the original, -1 if it is the true class, else +1 (so a wrong
                    # class turned into another wrong class counts +1).
                    right, right_permuted = original == y_oob, permuted == y_oob
                    per_tree[j, t] += (right.mean() - right_permuted.mean()) / n_repeats
                    for c in range(len(classes)):
                        of_class = y_oob == c
                        if of_class.any():
                            per_class[j, c, t] += (right[of_class].mean()
                                                   - right_permuted[of_class].mean()) / n_repeats
                    change = np.where(permuted == original, 0.0,
                                      np.where(right_permuted, -1.0, 1.0))
                else:
                    error = (y_oob - original) ** 2
                    error_permuted = (y_oob - permuted) ** 2
                    per_tree[j, t] += (error_permuted.mean() - error.mean()) / n_repeats
                    change = error_permuted - error
                casewise[oob, j] += change / n_repeats
    with np.errstate(invalid="ignore", divide="ignore"):
        casewise /= n_oob_trees[:, None]
    return per_tree, per_class, casewise, n_oob_trees
