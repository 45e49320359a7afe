"""
The answer in one call: ``sapwood.explain``
===========================================

:func:`sapwood.explain` fits a model on a training split, scores it on the held-out rows
beside a constant model, runs the importance measures there, checks for identifiers,
leakage and correlated groups, and gives a verdict resting on 95% intervals over new
rows. Here on data whose answers are known (:func:`sapwood.datasets.make_ground_truth`:
five informative columns, a noisy copy of ``inf_4`` and three of noise, one of them an
ID).
"""

import matplotlib.pyplot as plt

import sapwood
from sapwood.datasets import make_ground_truth

X, y, truth = make_ground_truth(n_samples=2000, task="classification", random_state=0)
report = sapwood.explain(X, y, methods="mdi,permutation,shap", n_jobs=2)

# %%
# In a terminal, ``print(report)`` gives one screen, the verdict first:
print(report)

# %%
# In a notebook, the report shows itself: the verdict card, the picture, the warnings,
# then each measure's details folded.
report  # noqa: B018 (shown: the notebook display)

# %%
# The same verdict as a table, one row per feature, and as a picture:
print(report.to_frame()[["status", "low", "high", "mdi_rank", "shap_rank"]])
ax = report.plot()
plt.tight_layout()
