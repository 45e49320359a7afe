"""
MDI by hand: the loan table's impurity decreases (seed 003)
============================================================

Seed 003 grows an entropy tree on a 7-row loan table and computes each feature's
impurity importance by hand: the information gain of every split,
``IG = N_t/N E_t - N_tl/N_t E_tl - N_tr/N_t E_tr``, summed per feature and normalised.
sapwood's :func:`~sapwood.importance.mdi` keeps that table as ``result.trace``.
"""

import numpy as np

import sapwood
from sapwood.datasets import load_loan
from sapwood.export import export_text
from sapwood.importance import mdi
from sapwood.plotting import plot_tree

X, y = load_loan(7, return_X_y=True)
tree = sapwood.DecisionTreeClassifier(criterion="entropy", max_depth=3,
                                      random_state=0).fit(X, y)
print(export_text(tree, feature_names=list(X.columns)))

# %%
# The impurity-decrease table: one row per split, the seed's hand table.
result = mdi(tree)
columns = ["node", "feature", "threshold", "w", "impurity", "w_left", "impurity_left",
           "w_right", "impurity_right", "decrease"]
print(result.trace[columns].round(4).to_string(index=False))

# %%
# The seed's arithmetic, from the class counts: income splits 7 rows (4 approved, 3
# not) into 3 and 4; existloan splits those 4 into 3 and 1.


def entropy(counts):
    p = np.asarray(counts, dtype=float)
    p = p[p > 0] / p.sum()
    return float(-(p * np.log2(p)).sum())


ig_income = 7 / 7 * entropy([4, 3]) - 3 / 7 * entropy([3, 0]) - 4 / 7 * entropy([1, 3])
ig_existloan = 4 / 7 * entropy([1, 3]) - 1 / 4 * entropy([0, 1]) - 3 / 4 * entropy([3, 0])
by_hand = np.array([0.0, ig_income, ig_existloan])
print("by hand  ", np.round(by_hand / by_hand.sum(), 4))
print("sapwood  ", np.round(result.importances_mean, 4))

# %%
# The tree the seed draws with Graphviz, drawn by matplotlib.
plot_tree(tree, feature_names=list(X.columns))
