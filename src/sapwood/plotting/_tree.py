"""A tree drawn with matplotlib: the boxes hold :func:`sapwood.export.export_graphviz`'s
labels (the label text comes from :mod:`sapwood.export._common`, shared with the text
and DOT exports, so the three views of a tree never disagree)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._format import LEAF
from .._text import visible
from ..export._common import (
    PLOT_MARKS,
    FillColors,
    LabelOptions,
    check_display_options,
    node_label,
    resolve_tree,
)

__all__ = ["plot_tree"]

_TRUNCATED = "\n  (...)  \n"


@dataclass
class _Box:
    node: int
    depth: int
    truncated: bool
    x: float = 0.0
    children: list = field(default_factory=list)


def _layout(tree, max_depth):
    """Boxes in pre-order with x positions: leaves (and cut-off stubs) take the next
    free column from left to right, a parent sits midway between its children.

    This keeps subtrees from overlapping and siblings in order; it spends more width
    than a Reingold-Tilford layout on unbalanced trees, which is fine for the shallow
    trees people draw.
    """
    root = _Box(0, 0, False)
    boxes, stack, next_column = [], [root], 0
    while stack:
        box = stack.pop()
        boxes.append(box)
        expand = (not box.truncated and tree.children_left[box.node] != LEAF)
        if expand:
            cut = max_depth is not None and box.depth + 1 > max_depth
            box.children = [_Box(int(child), box.depth + 1, cut) for child in
                             (tree.children_left[box.node], tree.children_right[box.node])]
            stack.extend(reversed(box.children))
    # Leaves in pre-order are left-to-right; parents are placed after their children.
    for box in boxes:
        if not box.children:
            box.x = next_column
            next_column += 1
    for box in reversed(boxes):
        if box.children:
            box.x = (box.children[0].x + box.children[1].x) / 2
    return boxes, next_column


def plot_tree(model, ax=None, *, max_depth=None, feature_names=None, class_names=None,
              label="all", filled=False, impurity=True, node_ids=False, proportion=False,
              rounded=False, precision=3, fontsize=None, tree_index=0, criterion=None,
              show_missing=False):
    """Draw one tree with matplotlib, one box per node.

    Boxes hold the same lines as :func:`sapwood.export.export_graphviz` writes (split, impurity,
    samples, value, class); arrows join parents to children and the root's two edges
    are marked True (left) and False (right). Nodes below ``max_depth`` are drawn as
    one grey ``(...)`` box.

    Parameters
    ----------
    model : TreeArrays, TreeEnsemble or fitted sapwood estimator
    ax : matplotlib Axes, optional
        Drawn into (after clearing); defaults to the current Axes.
    max_depth, feature_names, class_names, label, filled, impurity, node_ids, \
proportion, precision, tree_index, criterion, show_missing
        As in :func:`sapwood.export.export_graphviz`.
    rounded : bool, default=False
        Rounded boxes.
    fontsize : float, optional
        Text size; by default the largest size at which the widest box still fits
        its column and the tallest its level.

    Returns
    -------
    list of matplotlib.text.Annotation
        Every annotation drawn: one per box (a box's arrow belongs to it) and the
        True/False edge labels. ``annotations[0].axes`` is the Axes.
    """
    import matplotlib.pyplot as plt  # lazy: see the package docstring

    view = resolve_tree(model, tree_index, criterion)
    tree = view.tree
    check_display_options(max_depth, label, precision)
    options = LabelOptions.checked(
        view, feature_names, class_names, label=label, impurity=impurity, node_ids=node_ids,
        proportion=proportion, precision=precision, show_missing=show_missing)
    colors = FillColors(view) if filled else None

    if ax is None:
        ax = plt.gca()
    ax.clear()
    ax.set_axis_off()
    boxes, n_columns = _layout(tree, max_depth)
    n_levels = max(box.depth for box in boxes) + 1

    def position(box):
        return (box.x + 0.5) / n_columns, 1.0 - (box.depth + 0.5) / n_levels

    text_kwargs = {"xycoords": "axes fraction"}
    if fontsize is not None:
        text_kwargs["fontsize"] = fontsize
    parents = {child.node: box for box in boxes for child in box.children}
    annotations, box_annotations = [], []
    for box in boxes:
        bbox = {"boxstyle": "round" if rounded else "square"}
        if box.truncated:
            text, bbox["fc"] = _TRUNCATED, "grey"
        else:
            text = node_label(view, box.node, options, PLOT_MARKS)
            bbox["fc"] = colors(box.node) if colors is not None else ax.get_facecolor()
        xy = position(box)
        parent = parents.get(box.node)
        # Feature and class names are data: no mathtext, control characters escaped.
        text = "\n".join(visible(line) for line in text.split("\n"))
        kwargs = dict(ha="center", va="center", bbox=bbox, parse_math=False,
                      zorder=100 - 10 * box.depth, **text_kwargs)
        if parent is None:
            annotation = ax.annotate(text, xy, **kwargs)
        else:
            arrow = {"arrowstyle": "<-", "edgecolor": plt.rcParams["text.color"]}
            annotation = ax.annotate(text, position(parent), xytext=xy,
                                     textcoords="axes fraction", arrowprops=arrow, **kwargs)
        annotations.append(annotation)
        box_annotations.append(annotation)
        if parent is not None and parent.node == 0 and not box.truncated:
            px, py = position(parent)
            middle = ((px + xy[0]) / 2, (py + xy[1]) / 2)
            is_left = box is parent.children[0]
            annotations.append(ax.annotate("True  " if is_left else "  False", middle,
                                           ha="right" if is_left else "left",
                                           zorder=100 - 10 * box.depth, **text_kwargs))
    if fontsize is None:
        _fit_font(ax, box_annotations, annotations, n_columns, n_levels)
    return annotations


def _fit_font(ax, box_annotations, annotations, n_columns, n_levels):
    """Scale every text so the widest box fits a column and the tallest a level."""
    renderer = ax.figure.canvas.get_renderer()
    for annotation in box_annotations:
        annotation.update_bbox_position_size(renderer)
    extents = [a.get_bbox_patch().get_window_extent(renderer) for a in box_annotations]
    widest = max(extent.width for extent in extents)
    tallest = max(extent.height for extent in extents)
    axes_box = ax.get_window_extent(renderer)
    scale = min(axes_box.width / n_columns / widest, axes_box.height / n_levels / tallest)
    size = box_annotations[0].get_fontsize() * scale
    for annotation in annotations:
        annotation.set_fontsize(size)
