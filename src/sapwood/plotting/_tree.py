"""A tree drawn with matplotlib: the boxes hold :func:`sapwood.export.export_graphviz`'s
labels (the label text comes from :mod:`sapwood.export._common`, shared with the text
and DOT exports, so the three views of a tree never disagree)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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
_SCALES = ("font", "figure")
# With scale="figure": a column is this many times the widest box, a level this many
# times the tallest (the arrows run through the rest).
_COLUMN_ROOM = 1.1
_LEVEL_ROOM = 1.6


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


def plot_tree(model, ax=None, *, max_depth=None, feature_names=None, class_names="auto",
              label="all", filled=False, impurity=True, node_ids=False, proportion=False,
              rounded=False, precision=3, fontsize=None, tree_index=0, criterion=None,
              show_missing="auto", scale="font"):
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
    max_depth, feature_names, label, filled, impurity, node_ids, proportion, precision, \
tree_index, criterion
        As in :func:`sapwood.export.export_graphviz`.
    class_names : "auto", list, True or None, default="auto"
        ``"auto"``: a ``class = ...`` line with the model's class names where it knows
        them (none otherwise); a list names the classes in order; True and None as in
        :func:`sapwood.export.export_graphviz` (``y[k]``, no line).
    show_missing : "auto", bool, default="auto"
        ``"auto"``: a split that separates the missing values from all others (threshold
        ``+inf``) reads ``x is not missing``, other splits as scikit-learn writes them;
        True: every split also says where missing values go (``or missing``); False:
        scikit-learn's text everywhere (``x <= inf``).
    rounded : bool, default=False
        Rounded boxes.
    fontsize : float, optional
        Text size in points. By default: with ``scale="font"`` the largest size at
        which the widest box still fits its column and the tallest its level; with
        ``scale="figure"`` matplotlib's default size (10 points).
    scale : {"font", "figure"}, default="font"
        What gives way when the tree is large. ``"font"``: the Axes keeps its size and
        the text shrinks to fit (scikit-learn's behaviour; a large tree becomes
        unreadable). ``"figure"``: the text keeps its size and the Axes' figure is
        resized so that every box fits, growing with the tree (save it as SVG or PDF
        and zoom).

    Returns
    -------
    list of matplotlib.text.Annotation
        Every annotation drawn: one per box (a box's arrow belongs to it) and the
        True/False edge labels. ``annotations[0].axes`` is the Axes.
    """
    import matplotlib.pyplot as plt  # lazy: see the package docstring

    if scale not in _SCALES:
        raise ValueError(f"The 'scale' parameter must be one of {_SCALES}. Got {scale!r} "
                         "instead.")
    if not (isinstance(show_missing, bool | np.bool_) or (
            isinstance(show_missing, str) and show_missing == "auto")):
        raise ValueError("The 'show_missing' parameter must be 'auto', True or False. Got "
                         f"{show_missing!r} instead.")
    view = resolve_tree(model, tree_index, criterion)
    tree = view.tree
    check_display_options(max_depth, label, precision)
    if isinstance(class_names, str) and class_names == "auto":
        class_names = view.class_names if view.is_classifier else None
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
    if scale == "figure":
        _fit_figure(ax, box_annotations, n_columns, n_levels)
    elif fontsize is None:
        _fit_font(ax, box_annotations, annotations, n_columns, n_levels)
    return annotations


def _box_extents(ax, box_annotations):
    """The widest and the tallest box, and the Axes' width and height (pixels)."""
    renderer = ax.figure.canvas.get_renderer()
    for annotation in box_annotations:
        annotation.update_bbox_position_size(renderer)
    extents = [a.get_bbox_patch().get_window_extent(renderer) for a in box_annotations]
    axes_box = ax.get_window_extent(renderer)
    return (max(extent.width for extent in extents),
            max(extent.height for extent in extents), axes_box.width, axes_box.height)


def _fit_figure(ax, box_annotations, n_columns, n_levels):
    """Resize the figure so that, text kept at its size, the widest box fits its
    column with a little room beside it and the tallest its level with room for the
    arrows."""
    widest, tallest, width, height = _box_extents(ax, box_annotations)
    figure = ax.figure
    inches_wide, inches_high = figure.get_size_inches()
    figure.set_size_inches(inches_wide * n_columns * widest * _COLUMN_ROOM / width,
                           inches_high * n_levels * tallest * _LEVEL_ROOM / height)


def _fit_font(ax, box_annotations, annotations, n_columns, n_levels):
    """Scale every text so the widest box fits a column and the tallest a level."""
    widest, tallest, width, height = _box_extents(ax, box_annotations)
    scale = min(width / n_columns / widest, height / n_levels / tallest)
    size = box_annotations[0].get_fontsize() * scale
    for annotation in annotations:
        annotation.set_fontsize(size)
