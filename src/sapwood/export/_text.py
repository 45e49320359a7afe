"""A tree as indented text rules."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._format import LEAF, OP_CAT, OP_LT
from ._common import category_set, check_names, resolve_tree

__all__ = ["export_text"]


def export_text(model, *, feature_names=None, class_names=None, max_depth=10, spacing=3,
                decimals=2, show_weights=False, tree_index=0, show_missing=False) -> str:
    """The rules of one tree as indented text, one line per branch.

    On a tree whose operators are all ``<=`` and with ``show_missing=False`` the text
    is exactly what ``sklearn.tree.export_text`` writes for the same options::

        |--- petal width (cm) <= 0.80
        |   |--- class: 0
        |--- petal width (cm) >  0.80
        |   |--- value: [1.50]

    Parameters
    ----------
    model : TreeArrays, TreeEnsemble or fitted sapwood estimator
        Anything :func:`sapwood.adapters.as_ensemble` accepts, or a bare tree.
    feature_names : sequence of str, optional
        Defaults to the model's feature names, else ``feature_0, feature_1, ...``.
    class_names : sequence, optional
        Names of the classes in order; defaults to the model's classes, else the
        class indices.
    max_depth : int, default=10
        Levels below the root shown; deeper branches read
        ``truncated branch of depth k``.
    spacing : int, default=3
        Width of one indentation step.
    decimals : int, default=2
        Decimals of thresholds, weights and values.
    show_weights : bool, default=False
        Print each classification leaf's weighted class counts.
    tree_index : int, default=0
        Which tree of an ensemble to print.
    show_missing : bool, default=False
        Append ``or missing`` to the branch missing values take, and print
        scikit-learn's "present left, missing right" split (threshold ``+inf``) as
        ``is not missing`` / ``is missing``. Off by default: the format stores a
        direction at every split even when training saw no missing values.

    Returns
    -------
    str

    Notes
    -----
    A split with operator ``<`` (XGBoost) prints ``x <  3.50`` on the left branch and
    ``x >= 3.50`` on the right one; a categorical split ``colour in {red, blue}`` and
    ``colour not in {red, blue}`` (the model's category labels where it records them,
    else the codes).
    """
    view = resolve_tree(model, tree_index)
    tree = view.tree
    for name, value, low in (("max_depth", max_depth, 0), ("spacing", spacing, 1),
                             ("decimals", decimals, 0)):
        if not isinstance(value, Integral) or value < low:
            raise ValueError(f"The '{name}' parameter must be an int in the range "
                             f"[{low}, inf). Got {value!r} instead.")
    names = check_names(view.feature_names if feature_names is None else feature_names,
                        tree.n_features, "feature_names", "feature")
    if names is None:
        names = [f"feature_{j}" for j in range(tree.n_features)]
    classes = None
    if view.is_classifier:
        default = view.class_names or list(range(tree.max_n_classes))
        classes = check_names(default if class_names is None else class_names,
                              tree.max_n_classes, "class_names", "class")

    depths = tree.compute_node_depths()
    lines = []

    def leaf(node, indent):
        if view.is_classifier:
            # A multi-output leaf has no single class; print the first output's index.
            value = tree.value[node, 0] if tree.n_outputs == 1 else tree.value[node, :, 0]
            index = int(np.argmax(value))
            name = classes[index] if tree.n_outputs == 1 else index
            text = f" class: {name}"
            if show_weights:
                weights = value * tree.weighted_n_node_samples[node]
                text = " weights: " + _listing(weights, decimals) + text
        else:
            value = tree.value[node, 0] if tree.n_outputs == 1 else tree.value[node, :, 0]
            text = " value: " + _listing(value, decimals)
        lines.append(indent + text)

    stack = [(0, 1)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            lines.append(item)
            continue
        node, depth = item
        indent = ("|" + " " * spacing) * depth
        indent = indent[:-spacing] + "-" * spacing
        if depth > max_depth + 1:
            below = _subtree_depth(tree, node, depths)
            if below == 1:
                leaf(node, indent)
            else:
                lines.append(f"{indent} truncated branch of depth {below}")
        elif tree.children_left[node] == LEAF:
            leaf(node, indent)
        else:
            left_text, right_text = _branch_conditions(view, node, names[tree.feature[node]],
                                                       decimals, show_missing)
            # Pushed in reverse: left line, left subtree, right line, right subtree.
            stack.append((int(tree.children_right[node]), depth + 1))
            stack.append(f"{indent} {right_text}")
            stack.append((int(tree.children_left[node]), depth + 1))
            lines.append(f"{indent} {left_text}")
    return "".join(line + "\n" for line in lines)


def _branch_conditions(view, node, name, decimals, show_missing):
    tree = view.tree
    threshold = tree.threshold[node]
    missing_left = bool(tree.missing_go_to_left[node])
    if tree.operator[node] == OP_CAT:
        # Every value outside the set (also negative or unseen codes) goes right.
        categories = category_set(view, node)
        left, right = f"{name} in {categories}", f"{name} not in {categories}"
    elif show_missing and np.isposinf(threshold) and not missing_left:
        return f"{name} is not missing", f"{name} is missing"
    else:
        value = f"{threshold:.{decimals}f}"
        # Operators padded to equal width so both branches line up.
        left_op, right_op = ("<  ", ">= ") if tree.operator[node] == OP_LT else ("<= ", ">  ")
        left, right = f"{name} {left_op}{value}", f"{name} {right_op}{value}"
    if show_missing:
        if missing_left:
            left += " or missing"
        else:
            right += " or missing"
    return left, right


def _listing(values, decimals):
    return "[" + ", ".join(f"{v:.{decimals}f}" for v in values) + "]"


def _subtree_depth(tree, node, depths):
    """Levels in the subtree under ``node``, counting ``node`` itself as 1."""
    deepest = depths[node]
    stack = [node]
    while stack:
        current = stack.pop()
        deepest = max(deepest, depths[current])
        if tree.children_left[current] != LEAF:
            stack.extend((tree.children_left[current], tree.children_right[current]))
    return int(deepest - depths[node] + 1)
