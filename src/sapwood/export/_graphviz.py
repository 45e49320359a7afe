"""A tree as Graphviz DOT text."""

from __future__ import annotations

import os

from .._format import LEAF
from ._common import (
    DOT_HTML_MARKS,
    DOT_MARKS,
    FillColors,
    LabelOptions,
    check_display_options,
    node_label,
    resolve_tree,
)

__all__ = ["export_graphviz"]


def export_graphviz(model, out_file=None, *, max_depth=None, feature_names=None,
                    class_names=None, label="all", filled=False, leaves_parallel=False,
                    impurity=True, node_ids=False, proportion=False, rotate=False,
                    rounded=False, special_characters=False, precision=3,
                    fontname="helvetica", tree_index=0, criterion=None,
                    show_missing=False) -> str:
    """Describe one tree in Graphviz DOT.

    On a tree whose operators are all ``<=`` and with ``show_missing=False`` the text
    is exactly what ``sklearn.tree.export_graphviz`` writes for the same options.

    Parameters
    ----------
    model : TreeArrays, TreeEnsemble or fitted sapwood estimator
        Anything :func:`sapwood.adapters.as_ensemble` accepts, or a bare tree.
    out_file : str, path or file-like, optional
        Also write the DOT text there (a path is written as UTF-8).
    max_depth : int, optional
        Deepest level drawn; deeper subtrees become a ``(...)`` node.
    feature_names : sequence of str, optional
        Defaults to the model's feature names, else ``x[0], x[1], ...``.
    class_names : sequence of str or True, optional
        Names of the classes in order; ``True`` writes ``y[k]``. Without it the class
        line is left out (as in scikit-learn).
    label : {"all", "root", "none"}, default="all"
        Which nodes name their lines (``gini =``, ``samples =``...).
    filled : bool, default=False
        Colour nodes: majority class tinted by purity (classification), value
        (regression) or impurity (multi-output).
    leaves_parallel : bool, default=False
        Draw all leaves on the bottom rank.
    impurity : bool, default=True
        Show each node's impurity.
    node_ids : bool, default=False
        Show each node's id.
    proportion : bool, default=False
        Show samples as a percentage of the root's and values as fractions.
    rotate : bool, default=False
        Draw left to right instead of top-down.
    rounded : bool, default=False
        Rounded boxes.
    special_characters : bool, default=False
        HTML-like labels (``&le;``, subscripts) for PostScript output.
    precision : int, default=3
        Decimals of thresholds, impurities and values.
    fontname : str, default="helvetica"
    tree_index : int, default=0
        Which tree of an ensemble to draw.
    criterion : str, optional
        Name printed before the impurity; defaults to the estimator's ``criterion``,
        else ``"impurity"`` (the tree format does not record it).
    show_missing : bool, default=False
        Say where missing values go: a split that sends them left reads
        ``x <= 3.5 or missing`` (a missing value fails the comparison, so a
        right-going default needs no words), and scikit-learn's "present left,
        missing right" split (threshold ``+inf``) reads ``x is not missing``.
        Off by default because the format stores a direction at every split even
        when training saw no missing values, so it cannot tell a learnt direction
        from a default one.

    Returns
    -------
    str
        The DOT text (also when ``out_file`` is given).

    Notes
    -----
    A split with operator ``<`` (XGBoost) prints ``x < 3.5``; the left edge of the
    root is labelled True, the right one False.
    """
    view = resolve_tree(model, tree_index, criterion)
    tree = view.tree
    check_display_options(max_depth, label, precision)
    options = LabelOptions.checked(
        view, feature_names, class_names, label=label, impurity=impurity, node_ids=node_ids,
        proportion=proportion, precision=precision, show_missing=show_missing)
    marks = DOT_HTML_MARKS if special_characters else DOT_MARKS
    colors = FillColors(view) if filled else None

    out = ["digraph Tree {\n", "node [shape=box"]
    styles = [name for name, on in (("filled", filled), ("rounded", rounded)) if on]
    if styles:
        out.append(f', style="{", ".join(styles)}", color="black"')
    out.append(f', fontname="{fontname}"] ;\n')
    if leaves_parallel:
        out.append("graph [ranksep=equally, splines=polyline] ;\n")
    out.append(f'edge [fontname="{fontname}"] ;\n')
    if rotate:
        out.append("rankdir=LR ;\n")

    # Graphviz ranks: internal nodes by depth, leaves (and cut-off nodes) together.
    ranks = {"leaves": []}
    # The root's left edge is "True"; the label angles mirror when rotated.
    angle = -45 if rotate else 45
    stack = [(0, None, 0)]
    while stack:
        node, parent, depth = stack.pop()
        is_leaf = tree.children_left[node] == LEAF
        shown = max_depth is None or depth <= max_depth
        if shown:
            if is_leaf:
                ranks["leaves"].append(str(node))
            else:
                ranks.setdefault(str(depth), []).append(str(node))
            out.append(f"{node} [label={node_label(view, node, options, marks)}")
            if colors is not None:
                out.append(f', fillcolor="{colors(node)}"')
            out.append("] ;\n")
        else:
            ranks["leaves"].append(str(node))
            out.append(f'{node} [label="(...)"')
            if colors is not None:
                out.append(', fillcolor="#C0C0C0"')
            out.append("] ;\n")
        if parent is not None:
            out.append(f"{parent} -> {node}")
            if parent == 0 and shown:
                if node == tree.children_left[0]:
                    out.append(f' [labeldistance=2.5, labelangle={angle}, headlabel="True"]')
                else:
                    out.append(f' [labeldistance=2.5, labelangle={-angle}, '
                               'headlabel="False"]')
            out.append(" ;\n")
        if shown and not is_leaf:
            # Right pushed first so the left subtree is written first (pre-order).
            stack.append((int(tree.children_right[node]), node, depth + 1))
            stack.append((int(tree.children_left[node]), node, depth + 1))

    if leaves_parallel:
        for rank in sorted(ranks):
            out.append("{rank=same ; " + "; ".join(ranks[rank]) + "} ;\n")
    out.append("}")
    text = "".join(out)
    if out_file is not None:
        _write(out_file, text)
    return text


def _write(out_file, text):
    if isinstance(out_file, str | os.PathLike):
        with open(out_file, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        out_file.write(text)
