"""
MDI recomputed from the tree arrays (seed 000)
===============================================

Seed 000 recomputes ``feature_importances_`` of a regression tree and of a forest
from the tree arrays: for each split node t add
``n_t/n (I_t - n_tl/n_t I_tl - n_tr/n_t I_tr)`` to its feature, normalise per tree,
average over trees. The seed uses the Boston housing data, which scikit-learn no
longer ships; the diabetes data (also bundled, also regression) takes its place.
sapwood's tree format has the same arrays, so the seed's loop runs on it unchanged.
"""

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

import sapwood
from sapwood.importance import mdi

X, y = load_diabetes(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
forest = sapwood.RandomForestRegressor(n_estimators=10, random_state=42).fit(X_train,
                                                                             y_train)


def seed000_importances(trees):
    total = np.zeros(trees[0].n_features)
    for tree in trees:
        fi = np.zeros(tree.n_features)
        n = tree.weighted_n_node_samples[0]
        for idx, feat in enumerate(tree.feature):
            if feat < 0:
                continue
            left, right = tree.children_left[idx], tree.children_right[idx]
            nt = tree.weighted_n_node_samples[idx]
            ntl = tree.weighted_n_node_samples[left]
            ntr = tree.weighted_n_node_samples[right]
            fi[feat] += (nt / n) * (tree.impurity[idx] - ntl / nt * tree.impurity[left]
                                    - ntr / nt * tree.impurity[right])
        total += fi / fi.sum()
    return total / len(trees)


by_hand = seed000_importances(forest.to_ensemble().trees)
result = mdi(forest)
for name, hand, value in zip(X.columns, by_hand, result.importances_mean, strict=True):
    print(f"{name:>4}  by hand {hand:.6f}  sapwood {value:.6f}")
print("largest difference:", np.abs(by_hand - result.importances_mean).max())
