"""
Out-of-bag importance and its z-scores on iris (seed 002)
==========================================================

Seed 002 explains a forest's MDI on iris and the out-of-bag (OOB) accuracy drop: each
tree is scored on the rows its bootstrap left out, before and after shuffling a
feature. :func:`~sapwood.importance.oob_permutation_importance` is R randomForest's
``importance(type=1)``: per tree the drop, then the mean ``PI``, its standard error
``SD`` over trees and ``z = PI / SD``.
"""

import sapwood
from sapwood.datasets import load_iris
from sapwood.importance import mdi, oob_permutation_importance

X, y = load_iris(return_X_y=True)
forest = sapwood.RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
print(mdi(forest).to_frame()[["feature", "importance"]].round(4).to_string(index=False))

# %%
# The OOB accuracy drop per feature, with randomForest's z-scores.
result = oob_permutation_importance(forest, X, y, random_state=0)
frame = result.to_frame()[["feature", "importance", "std"]]
frame["z"] = result.extra["zscore"][[result.feature_names.index(f) for f in frame.feature]]
print(frame.round(4).to_string(index=False))
