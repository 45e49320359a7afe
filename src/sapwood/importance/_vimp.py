"""Ishwaran's variable importance (VIMP) of a random survival forest, out of bag.

randomForestSRC's permutation importance (Ishwaran et al. 2008, "Random survival
forests", Ann. Appl. Stat. 2(3), doi:10.1214/08-AOAS169; ``vimp``, ``importance =
"permute"``): each training row is predicted by the trees that did not draw it (its
out-of-bag trees), the forest's out-of-bag risk score being the mean of those trees'
risk scores (the cumulative hazard summed over the event times). With the error
``1 - C``, C Harrell's concordance index of that prediction over the rows with an
out-of-bag tree::

    VIMP_j = error(out-of-bag risk, x_j permuted in each tree's out-of-bag rows)
             - error(out-of-bag risk)
           = C - C^(j)

the permutation drawn anew for every tree among its own out-of-bag rows (so a row's
permuted prediction mixes as many draws as it has out-of-bag trees). It is the forest's
error that changes, not each tree's (unlike Breiman's per-tree OOB permutation,
:func:`~sapwood.importance.oob_permutation_importance`). ``n_repeats`` repeats it with
new permutations and averages.

The intervals: the concordance is no mean over rows; each row's first-order influence
on it (:class:`~sapwood.importance._engine._survival_scores.ConcordanceLoss`) gives
per-row draws whose mean is VIMP_j, as for held-out permutation by a concordance
(docs/measures.md, section 'VIMP of random survival forests (Ishwaran)'). A naive
implementation of the definition checks the numbers:
``tests/reference/naive_survival_vimp.py``.
"""

from __future__ import annotations

import numpy as np

from ._engine._result import ImportanceResult
from ._engine._survival_scores import ConcordanceLoss, survival_arrays

__all__ = ["survival_vimp"]


def survival_vimp(model, X, y, *, n_repeats=1, random_state=None, feature_names=None):
    """Ishwaran's out-of-bag VIMP of a bagged survival forest (module docstring).

    Definition: docs/measures.md, section 'VIMP of random survival forests (Ishwaran)'.

    Parameters
    ----------
    model : a fitted random survival forest (scikit-survival's ``RandomSurvivalForest``
        or ``ExtraSurvivalTrees`` with ``bootstrap=True``, sapwood's), or its
        :class:`~sapwood.TreeEnsemble`.
    X : the training rows the forest was fit on (array or DataFrame).
    y : their survival target (a structured array of event and time).
    n_repeats : permutations per tree and feature, averaged.
    random_state : seeds the permutations: for each repeat, feature and tree in that
        order, ``RandomState(random_state).permutation(n_oob)`` of the tree's out-of-bag
        rows.

    Returns
    -------
    ImportanceResult with ``method="vimp"``: ``importances`` (n_features, n_repeats) of
    C - C^(j), ``extra["oob_concordance"]`` (C) and ``extra["n_oob_rows"]``,
    ``rank_draws`` the per-row draws.
    """
    from ..adapters import as_ensemble

    ensemble = as_ensemble(model)
    if ensemble.task != "survival" or ensemble.combine != "mean":
        raise ValueError("survival_vimp needs a random survival forest; this model is a "
                         f"{ensemble.task} {ensemble.kind.family or 'model'}")
    if ensemble.bootstrap is None:
        raise ValueError("survival_vimp needs a bagged forest (bootstrap=True): its trees' "
                         "out-of-bag rows")
    names = feature_names or ([str(c) for c in X.columns] if hasattr(X, "columns") else
                              ensemble.feature_names or
                              [f"x{j}" for j in range(ensemble.n_features)])
    values = np.ascontiguousarray(ensemble.encode(X), dtype=np.float64)
    if values.shape[0] != ensemble.bootstrap.n_samples:
        raise ValueError(f"X has {values.shape[0]} rows; the forest was fit on "
                         f"{ensemble.bootstrap.n_samples} (its training rows)")
    survival_arrays(y)  # a survival target, or a clear error
    risk = ensemble.risk_model()
    trees = risk.trees
    oob = [np.flatnonzero(ensemble.bootstrap.counts(t) == 0) for t in range(len(trees))]
    leaf_risk = [tree.value.reshape(tree.node_count, -1)[:, 0] for tree in trees]
    own = [leaf_risk[t][trees[t].apply(values[rows])] for t, rows in enumerate(oob)]
    n_oob = np.zeros(values.shape[0])
    total = np.zeros(values.shape[0])
    for rows, predicted in zip(oob, own, strict=True):
        n_oob[rows] += 1
        total[rows] += predicted
    covered = n_oob > 0
    loss = ConcordanceLoss(y[covered], None)
    base, base_influence = loss.influence(total[covered] / n_oob[covered])
    uses = [set(tree.feature[tree.feature >= 0].tolist()) for tree in trees]
    rng = np.random.RandomState(random_state)
    n_features = values.shape[1]
    importances = np.zeros((n_features, n_repeats))
    draws = np.zeros((n_features, int(covered.sum())))
    for k in range(n_repeats):
        for j in range(n_features):
            permuted = total.copy()
            for t, rows in enumerate(oob):
                order = rng.permutation(rows.shape[0])  # drawn for every tree
                if j not in uses[t] or rows.shape[0] < 2:
                    continue
                shuffled = values[rows]
                shuffled[:, j] = values[rows[order], j]
                permuted[rows] += leaf_risk[t][trees[t].apply(shuffled)] - own[t]
            value, influence = loss.influence(permuted[covered] / n_oob[covered])
            importances[j, k] = base - value
            draws[j] += (base + base_influence - value - influence) / n_repeats
    params = {"n_repeats": n_repeats, "random_state": random_state if isinstance(
        random_state, int | np.integer) else None, "error": "1 - concordance_index"}
    extra = {"oob_concordance": float(base), "n_oob_rows": int(covered.sum()),
             "intervals": {"ci": f"the spread of the {n_repeats} permutations only"
                           if n_repeats > 1 else "none (one permutation per tree)",
                           "rank": "the out-of-bag rows and the permutations (one draw "
                                   "per row)"}}
    return ImportanceResult.from_draws(importances, feature_names=names, method="vimp",
                                       params=params, extra=extra, rank_draws=draws)
