"""
The cost-complexity pruning path (seed 003)
============================================

Seed 003 prunes with ``R_alpha(T) = R(T) + alpha |leaves(T)|`` and shows training and
test accuracy falling and rising as ``alpha`` grows. sapwood's trees give
scikit-learn's ``cost_complexity_pruning_path`` and prune with ``ccp_alpha``.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import sapwood
from sapwood.datasets import make_ground_truth

X, y, truth = make_ground_truth(n_samples=1000, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
tree = sapwood.DecisionTreeClassifier(random_state=0)
path = tree.cost_complexity_pruning_path(X_train, y_train)
print(f"{len(path.ccp_alphas)} values of alpha, from {path.ccp_alphas[0]:.2g} to "
      f"{path.ccp_alphas[-1]:.3g}")

# %%
# One tree per alpha (every fourth value, and the last): accuracy on the training and
# the held-out rows, and the number of leaves.
alphas = np.append(path.ccp_alphas[:-1:4], path.ccp_alphas[-1])
trees = [sapwood.DecisionTreeClassifier(random_state=0, ccp_alpha=a).fit(X_train, y_train)
         for a in alphas]
train = [t.score(X_train, y_train) for t in trees]
test = [t.score(X_test, y_test) for t in trees]
best = int(np.argmax(test))
print(f"best held-out accuracy {test[best]:.3f} at alpha {alphas[best]:.4f} "
      f"({trees[best].get_n_leaves()} leaves; unpruned: {trees[0].get_n_leaves()})")

fig, ax = plt.subplots()
ax.plot(alphas, train, marker="o", drawstyle="steps-post", label="train")
ax.plot(alphas, test, marker="o", drawstyle="steps-post", label="test")
ax.set_xlabel("alpha")
ax.set_ylabel("accuracy")
ax.legend()
