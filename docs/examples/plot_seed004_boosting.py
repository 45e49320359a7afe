"""
Friedman's importance of boosted trees (seed 004)
==================================================

Seed 004 reads scikit-learn's ``compute_feature_importances``: for gradient boosting,
Friedman's (2001) squared improvement of a split,
``i² = w_L w_R / (w_L + w_R) (mean_L - mean_R)²``, is the squared-error node decrease
``w I - w_L I_L - w_R I_R``. :func:`~sapwood.importance.friedman_importance` keeps the
per-split improvements in its trace.
"""

import numpy as np
from sklearn.datasets import load_diabetes

import sapwood
from sapwood.importance import friedman_importance, mdi

X, y = load_diabetes(return_X_y=True, as_frame=True)
booster = sapwood.GradientBoostingRegressor(n_estimators=15, max_depth=3,
                                            random_state=0).fit(X, y)
result = friedman_importance(booster, scale="relative_influence")
print(result.to_frame()[["feature", "importance"]].head(5).round(2).to_string(index=False))

# %%
# The improvement of each split of the first tree, both ways.
tree = booster.to_ensemble().trees[0]
split = np.flatnonzero(tree.children_left >= 0)
left, right = tree.children_left[split], tree.children_right[split]
w, imp, mean = tree.weighted_n_node_samples, tree.impurity, tree.value[:, 0, 0]
friedman = w[left] * w[right] / (w[left] + w[right]) * (mean[left] - mean[right]) ** 2
decrease = w[split] * imp[split] - w[left] * imp[left] - w[right] * imp[right]
print(np.round(friedman, 1))
print(np.round(decrease, 1))
print("MDI equals scikit-learn's definition:",
      np.allclose(mdi(booster).importances_mean, booster.feature_importances_,
                  rtol=1e-12))
