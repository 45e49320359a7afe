"""Build sapwood's tree format field for field from fitted scikit-learn trees (tests only).

The adapters package does this for users; tests that need a scikit-learn tree in the
format without depending on the adapters use these helpers.
"""

import numpy as np

from sapwood import TreeArrays, TreeEnsemble


def tree_arrays_from_sklearn(estimator) -> TreeArrays:
    """A fitted scikit-learn tree estimator (or its ``tree_``) as TreeArrays."""
    tree = getattr(estimator, "tree_", estimator)
    return TreeArrays(
        children_left=tree.children_left, children_right=tree.children_right,
        feature=tree.feature, threshold=tree.threshold, impurity=tree.impurity,
        n_node_samples=tree.n_node_samples,
        weighted_n_node_samples=tree.weighted_n_node_samples, value=tree.value,
        missing_go_to_left=tree.missing_go_to_left,
        operator=np.zeros(tree.node_count, dtype=np.uint8), n_features=tree.n_features)


def ensemble_from_sklearn(model, feature_names=None) -> TreeEnsemble:
    """A fitted scikit-learn decision tree or forest as a TreeEnsemble (combine="mean")."""
    estimators = getattr(model, "estimators_", [model])
    trees = [tree_arrays_from_sklearn(est) for est in np.ravel(estimators)]
    classes = getattr(model, "classes_", None)
    if feature_names is None and hasattr(model, "feature_names_in_"):
        feature_names = list(model.feature_names_in_)
    return TreeEnsemble(
        trees=trees, task="classification" if classes is not None else "regression",
        n_features=model.n_features_in_, combine="mean",
        classes=None if classes is None else (classes,),
        feature_names=None if feature_names is None else tuple(feature_names))
