"""Obviously-correct Ishwaran's VIMP of a scikit-survival random survival forest
(test-only).

randomForestSRC's definition, literally: each tree's out-of-bag rows (those its
bootstrap did not draw, from scikit-learn's own ``_generate_unsampled_indices``), each
row's out-of-bag risk the mean over its out-of-bag trees of the tree's cumulative
hazard summed over the event times (the tree's own ``tree_.predict``); the error is
1 - Harrell's concordance (scikit-survival's ``concordance_index_censored``) over the
rows with an out-of-bag tree. For each repeat, feature and tree, in that order, the
tree's out-of-bag rows are copied, the feature permuted among them with
``RandomState(seed).permutation(n_oob)``, and every tree predicts them again; VIMP is
the permuted error minus the error.
"""

from __future__ import annotations

import numpy as np

__all__ = ["naive_survival_vimp"]


def naive_survival_vimp(forest, X, y, n_repeats=1, random_state=None):
    """VIMP per feature and repeat, shape (n_features, n_repeats), and the out-of-bag
    concordance."""
    from sklearn.ensemble._bootstrap import _get_n_samples_bootstrap
    from sklearn.ensemble._forest import _generate_unsampled_indices
    from sksurv.metrics import concordance_index_censored

    X = np.asarray(X, dtype=np.float32)
    n_samples, n_features = X.shape
    event, time = y[y.dtype.names[0]], y[y.dtype.names[1]]
    n_draws = _get_n_samples_bootstrap(n_samples, forest.max_samples, None)
    oob = [_generate_unsampled_indices(tree.random_state, n_samples, n_draws, None)
           for tree in forest.estimators_]

    def tree_risk(tree, rows):
        return tree.tree_.predict(rows)[:, forest.is_event_time_, 0].sum(axis=1)

    def error(risks):
        total, count = np.zeros(n_samples), np.zeros(n_samples)
        for rows, risk in zip(oob, risks, strict=True):
            total[rows] += risk
            count[rows] += 1
        seen = count > 0
        return 1.0 - concordance_index_censored(event[seen], time[seen],
                                                total[seen] / count[seen])[0]

    base_risks = [tree_risk(tree, X[rows]) for tree, rows in zip(forest.estimators_, oob,
                                                                 strict=True)]
    base = error(base_risks)
    rng = np.random.RandomState(random_state)
    vimp = np.zeros((n_features, n_repeats))
    for k in range(n_repeats):
        for j in range(n_features):
            risks = []
            for tree, rows in zip(forest.estimators_, oob, strict=True):
                order = rng.permutation(rows.shape[0])
                shuffled = X[rows].copy()
                shuffled[:, j] = X[rows[order], j]
                risks.append(tree_risk(tree, shuffled))
            vimp[j, k] = error(risks) - base
    return vimp, 1.0 - base
