"""
Permutation importance, 30 repeats (seed 003)
==============================================

Seed 003 ends with scikit-learn's permutation importance of its loan tree,
``n_repeats=30, random_state=0``, and prints ``income 0.462 +/- 0.180, existloan
0.195 +/- 0.078, car 0.000 +/- 0.000``. sapwood uses scikit-learn's random stream,
so the same arguments give the same permutations and the same numbers.
"""

from sklearn.inspection import permutation_importance as sklearn_permutation_importance

import sapwood
from sapwood.datasets import load_loan
from sapwood.importance import permutation_importance
from sapwood.plotting import plot_importance

X, y = load_loan(7, return_X_y=True)
tree = sapwood.DecisionTreeClassifier(criterion="entropy", max_depth=3,
                                      random_state=0).fit(X, y)
result = permutation_importance(tree, X, y, n_repeats=30, random_state=0)
for i in result.importances_mean.argsort()[::-1]:
    print(f"{result.feature_names[i]}  {result.importances_mean[i]:.3f} "
          f"+/- {result.importances_std[i]:.3f}")

# %%
# scikit-learn's own function on the same tree gives the same draws.
reference = sklearn_permutation_importance(tree, X, y, n_repeats=30, random_state=0)
print("equal to scikit-learn:", (reference.importances == result.importances).all())

# %%
# With 7 rows the repeats scatter widely; the bars show the 95% intervals.
plot_importance(result)
