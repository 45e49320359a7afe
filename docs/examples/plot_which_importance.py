"""
Which importance should I trust?
================================

A guide built on data whose answers are known. :func:`sapwood.datasets.make_ground_truth`
generates five informative columns (``inf_1`` .. ``inf_5``; ``inf_5`` is binary), a
noisy copy of ``inf_4``, and three columns of pure noise: binary, four levels, and an
ID-like column with one distinct value per row (``noise_id``). A forest is fit on 75%
of the rows; every measure below then ranks the nine columns, and we can check each
ranking against the truth.
"""

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.model_selection import train_test_split

import sapwood
from sapwood.datasets import make_ground_truth
from sapwood.importance import compare
from sapwood.plotting import plot_compare

X, y, truth = make_ground_truth(n_samples=2000, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
forest = sapwood.RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=2)
forest.fit(X_train, y_train)
print(f"accuracy: training {forest.score(X_train, y_train):.3f}, "
      f"held out {forest.score(X_test, y_test):.3f}")

# %%
# Five measures side by side
# --------------------------
# A training-data measure (MDI), out-of-bag ones (OOB permutation, UFI), and held-out
# ones (permutation importance and TreeSHAP on the test rows).
methods = ["mdi", "ufi", "oob_permutation", "permutation", "tree_shap"]
table = compare(forest, X_train, y_train, methods=methods, X_test=X_test, y_test=y_test,
                random_state=0)
ranks = table.pivot(index="feature", columns="method", values="rank")[methods]
ranks.insert(0, "truth", pd.Series(truth))
print(ranks.sort_values("permutation").to_string())

# %%
plot_compare(table)
plt.tight_layout()

# %%
# What the table says
# -------------------
# * **MDI** (impurity importance) is measured on the training rows a fully grown
#   forest has memorised, and it rewards features with many split points: the ID
#   column ``noise_id`` outranks the binary but informative ``inf_5``. Use it to see
#   how the trees were built, not what the model needs on new data.
# * **UFI** (unbiased MDI) recomputes the impurity decreases on the out-of-bag rows,
#   which removes MDI's bias: ``noise_id`` falls to the bottom. **OOB permutation**
#   importance agrees; both need a bagged forest.
# * **Permutation importance on held-out rows** answers "how much does the model's
#   score drop without this feature's information, on new data". It is the measure
#   to report, with its interval (``result.to_frame()`` has 95% intervals for the
#   importance and for the rank). Correlated features share the credit: ``inf_4`` and
#   its copy each look smaller than the pair is; permute them together with
#   ``groups={"inf_4 and copy": ["inf_4", "inf_4_copy"]}``.
# * **TreeSHAP** explains each prediction; its mean magnitude ranks like permutation
#   here, but it measures how much predictions move, not how much the score depends
#   on the feature, so noise can get a nonzero share.
#
# The ``sapwood`` command applies these rules and writes the verdict with its
# warnings; the gallery's MDI bias page shows it on this data.
