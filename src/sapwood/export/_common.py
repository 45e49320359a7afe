"""What every exporter shares: finding the tree, naming things, node labels, colours.

All exporters read only the tree format. A node label is built from a
:class:`Marks` table so that the same code writes plain DOT, DOT with HTML-like
labels and matplotlib text.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .._format import LEAF, OP_CAT, OP_LT, TreeArrays
from ..adapters import as_ensemble

__all__ = ["DOT_HTML_MARKS", "DOT_MARKS", "PLOT_MARKS", "FillColors", "LabelOptions", "Marks",
           "TreeView", "category_set", "check_display_options", "check_names", "class_colors",
           "format_number", "node_label", "resolve_tree"]


@dataclass(frozen=True)
class TreeView:
    """One tree with what the exporters need to print it."""

    tree: TreeArrays
    feature_names: list | None
    class_names: list | None
    criterion: str
    is_classifier: bool
    # The ensemble's category labels per feature (TreeEnsemble.categories), or None.
    categories: tuple | None = None


def resolve_tree(model, tree_index: int = 0, criterion: str | None = None) -> TreeView:
    """Pick one tree of ``model`` and the names that go with it.

    ``model`` is a :class:`TreeArrays`, a :class:`TreeEnsemble` or anything
    :func:`sapwood.adapters.as_ensemble` accepts. Feature and class names come from
    the ensemble record, else from the estimator's ``feature_names_in_`` /
    ``classes_``. The impurity is labelled with ``criterion``, else the estimator's
    ``criterion``, else ``"impurity"`` (the format does not record the criterion).
    """
    if isinstance(model, TreeArrays):
        tree, ensemble = model, None
    else:
        ensemble = as_ensemble(model)
        if ensemble.task == "survival":
            # Each node shown with its risk score, not its functions over every time.
            ensemble = ensemble.risk_model()
        if not isinstance(tree_index, int | np.integer) or not (
                0 <= tree_index < ensemble.n_trees):
            raise ValueError(f"The 'tree_index' parameter must be an int in the range "
                             f"[0, {ensemble.n_trees - 1}]. Got {tree_index!r} instead.")
        tree = ensemble.trees[tree_index]
    feature_names = _first_present(
        None if ensemble is None else ensemble.feature_names,
        getattr(model, "feature_names_in_", None))
    class_names = _first_present(
        None if ensemble is None else _single_output_classes(ensemble.classes),
        _single_output_classes(getattr(model, "classes_", None)))
    if criterion is None:
        criterion = getattr(model, "criterion", None)
        criterion = criterion if isinstance(criterion, str) else "impurity"
    # Boosting trees of a classifier hold scalar margins, so they print as regression
    # trees; a tree holding per-class fractions prints as a classification tree.
    is_classifier = tree.max_n_classes > 1 or (
        ensemble is not None and ensemble.task == "classification"
        and ensemble.combine == "mean")
    return TreeView(tree, feature_names, class_names, criterion, is_classifier,
                    None if ensemble is None else ensemble.categories)


# Categories listed in a categorical split's label before the rest are counted.
_SHOWN_CATEGORIES = 10


def category_set(view: TreeView, node: int) -> str:
    """The categories categorical split ``node`` sends left, as ``{a, b}``: the
    model's labels where it records them, else the codes; a long set is cut short
    with a count of the rest."""
    codes = view.tree.categories_left(node)
    feature = int(view.tree.feature[node])
    labels = None if view.categories is None else view.categories[feature]
    names = [str(labels[c]) if labels is not None and c < len(labels) else str(c)
             for c in codes[:_SHOWN_CATEGORIES]]
    if codes.shape[0] > _SHOWN_CATEGORIES:
        names.append(f"... {codes.shape[0] - _SHOWN_CATEGORIES} more")
    return "{" + ", ".join(names) + "}"


def _single_output_classes(classes):
    """The class labels of output 0, whether ``classes`` is flat (``(a, b)``) or one
    sequence per output (``((a, b),)``, as multi-output estimators hold them)."""
    if classes is None or len(classes) == 0:
        return None
    first = classes[0]
    if isinstance(first, str | bytes) or np.ndim(first) == 0:
        return classes
    return first


def _first_present(*candidates):
    for candidate in candidates:
        if candidate is not None:
            return list(candidate)
    return None


def check_names(names, expected: int, parameter: str, what: str):
    """Return ``names`` as a list, or raise naming ``parameter`` if its length is wrong."""
    if names is None:
        return None
    names = list(names)
    if len(names) != expected:
        raise ValueError(f"The '{parameter}' parameter must have one entry per {what} "
                         f"({expected}). Got {len(names)} instead.")
    return names


def format_number(value, precision: int) -> str:
    """``value`` rounded half-to-even at ``precision`` decimals, shortest repr.

    numpy's rounding (scale, round, unscale) is what scikit-learn's exporters print;
    Python's ``round`` rounds the exact binary value instead and differs on e.g. 2.675.
    """
    return repr(float(np.round(np.float64(value), precision)))


_LABELS = ("all", "root", "none")


def check_display_options(max_depth, label, precision):
    """Raise naming the parameter if a display option shared by DOT and plot is bad."""
    if max_depth is not None and (not isinstance(max_depth, Integral) or max_depth < 0):
        raise ValueError("The 'max_depth' parameter must be an int in the range [0, inf) "
                         f"or None. Got {max_depth!r} instead.")
    if label not in _LABELS:
        raise ValueError(f"The 'label' parameter must be one of {_LABELS}. "
                         f"Got {label!r} instead.")
    if not isinstance(precision, Integral) or precision < 0:
        raise ValueError("The 'precision' parameter must be an int in the range [0, inf). "
                         f"Got {precision!r} instead.")


@dataclass(frozen=True)
class Marks:
    """The characters a node label is written with (plain DOT, HTML DOT or matplotlib)."""

    node_id: str = "#"
    sub_open: str = "["
    sub_close: str = "]"
    le: str = "<="
    lt: str = "<"
    newline: str = "\\n"
    open: str = '"'
    close: str = '"'
    escape_quotes: bool = True


DOT_MARKS = Marks()
DOT_HTML_MARKS = Marks("&#35;", "<SUB>", "</SUB>", "&le;", "&lt;", "<br/>", "<", ">")
PLOT_MARKS = Marks(newline="\n", open="", close="", escape_quotes=False)


@dataclass(frozen=True)
class LabelOptions:
    """The display options shared by ``export_graphviz`` and ``plot_tree``."""

    feature_names: list | None
    class_names: list | bool | None
    label: str = "all"
    impurity: bool = True
    node_ids: bool = False
    proportion: bool = False
    precision: int = 3
    show_missing: bool | str = False

    @classmethod
    def checked(cls, view: TreeView, feature_names, class_names, **options):
        """Options with the names checked against the tree (defaults from the model)."""
        tree = view.tree
        return cls(
            feature_names=check_names(
                view.feature_names if feature_names is None else feature_names,
                tree.n_features, "feature_names", "feature"),
            class_names=class_names if class_names is None or class_names is True
            else check_names(class_names, tree.max_n_classes, "class_names", "class"),
            **options)


def split_condition(view: TreeView, node: int, name: str, precision: int,
                    marks: Marks, show_missing) -> str:
    """The condition under which a row goes to the left child, as one label line.

    ``show_missing``: True says where missing values go at every split; ``"auto"`` only
    at a split that separates the missing values and nothing else (scikit-learn's
    threshold ``+inf``); False writes every split as scikit-learn does."""
    tree = view.tree
    threshold = tree.threshold[node]
    goes_left_when_missing = bool(tree.missing_go_to_left[node])
    if tree.operator[node] == OP_CAT:
        condition = f"{name} in {_escape(category_set(view, node), marks)}"
        return condition + (" or missing" if show_missing and goes_left_when_missing else "")
    if show_missing and np.isposinf(threshold) and not goes_left_when_missing:
        # scikit-learn's "all present values left, missing values right" split.
        return f"{name} is not missing"
    operator = marks.lt if tree.operator[node] == OP_LT else marks.le
    condition = f"{name} {operator} {format_number(threshold, precision)}"
    # A missing value compares false, so only a left-going default needs saying.
    if show_missing and not isinstance(show_missing, str) and goes_left_when_missing:
        condition += " or missing"
    return condition


def node_label(view: TreeView, node: int, options: LabelOptions, marks: Marks) -> str:
    """The text of one node box: id, split, impurity, samples, value, class."""
    tree = view.tree
    show_names = options.label == "all" or (options.label == "root" and node == 0)
    lines = []
    if options.node_ids:
        lines.append(("node " if show_names else "") + marks.node_id + str(node))
    if tree.children_left[node] != LEAF:
        feature = int(tree.feature[node])
        if options.feature_names is not None:
            name = _escape(str(options.feature_names[feature]), marks)
        else:
            name = f"x{marks.sub_open}{feature}{marks.sub_close}"
        lines.append(split_condition(view, node, name, options.precision, marks,
                                     options.show_missing))
    if options.impurity:
        lines.append((f"{view.criterion} = " if show_names else "")
                     + format_number(tree.impurity[node], options.precision))
    if options.proportion:
        share = 100.0 * tree.n_node_samples[node] / float(tree.n_node_samples[0])
        samples = format_number(share, 1) + "%"
    else:
        samples = str(int(tree.n_node_samples[node]))
    lines.append(("samples = " if show_names else "") + samples)
    lines.append(("value = " if show_names else "") + _value_text(view, node, options, marks))
    class_index = _majority_class(view, node)
    if options.class_names is not None and class_index is not None:
        if options.class_names is True:
            class_name = f"y{marks.sub_open}{class_index}{marks.sub_close}"
        else:
            class_name = _escape(str(options.class_names[class_index]), marks)
        lines.append(("class = " if show_names else "") + class_name)
    return marks.open + marks.newline.join(lines) + marks.close


def _escape(text: str, marks: Marks) -> str:
    return text.replace('"', '\\"') if marks.escape_quotes else text


def _majority_class(view: TreeView, node: int):
    tree = view.tree
    if not view.is_classifier or tree.n_outputs != 1:
        return None
    return int(np.argmax(tree.value[node, 0]))


def _value_text(view: TreeView, node: int, options: LabelOptions, marks: Marks) -> str:
    tree = view.tree
    value = tree.value[node]
    if view.is_classifier and not options.proportion:
        # Classification trees store class fractions; show weighted class counts.
        value = value * tree.weighted_n_node_samples[node]
    if view.is_classifier and not options.proportion and np.all(np.mod(value, 1) == 0):
        rows = [[str(int(v)) for v in row] for row in value]
    else:
        rows = [[format_number(v, options.precision) for v in row] for row in value]
    if tree.n_outputs == 1:
        if not view.is_classifier and len(rows[0]) == 1:
            return rows[0][0]
        return _bracket(rows[0], marks.newline)
    inner = [_bracket(row, marks.newline) for row in rows]
    return "[" + marks.newline.join(inner) + "]"


def _bracket(items: list, newline: str, width: int = 75) -> str:
    """``[a, b, c]``, broken into lines where numpy would wrap the printed array.

    scikit-learn prints values through numpy's array printer (each item shown as
    ``b'...'``, lines of at most 75 characters with room kept for a closing
    bracket), and a wrapped line loses its comma. Matching that keeps DOT output
    identical to scikit-learn's for many-class trees.
    """
    lines = [[]]
    length = 1  # the opening bracket, or the one-space indent of a wrapped line
    for position, item in enumerate(items):
        word = len(item) + 3  # b'...'
        if position > 0:
            length += 1
            if length + word > width - 1:
                lines.append([])
                length = 1
        lines[-1].append(item)
        length += word
    return "[" + newline.join(", ".join(line) for line in lines) + "]"


def class_colors(n: int) -> list:
    """``n`` RGB colours with hues spread evenly from 25 degrees (saturation 0.75,
    value 0.9): the palette scikit-learn fills class nodes with."""
    saturation, brightness = 0.75, 0.9
    chroma = saturation * brightness
    offset = brightness - chroma
    colors = []
    for hue in np.arange(25, 385, 360.0 / n).astype(int):
        sector = hue / 60.0
        second = chroma * (1 - abs((sector % 2) - 1))
        # Hue sectors 0-5 of the HSV hexagon; sector 6 (hue >= 360) wraps to 0.
        r, g, b = [(chroma, second, 0), (second, chroma, 0), (0, chroma, second),
                   (0, second, chroma), (second, 0, chroma), (chroma, 0, second),
                   (chroma, second, 0)][int(sector)]
        colors.append([int(255 * (r + offset)), int(255 * (g + offset)),
                       int(255 * (b + offset))])
    return colors


class FillColors:
    """Node fill colours: majority class tinted by purity for classification, one
    hue by value for regression, one hue by (negated) impurity for multi-output."""

    def __init__(self, view: TreeView):
        tree = view.tree
        self.view = view
        self.rgb = class_colors(tree.max_n_classes)
        self.bounds = None
        if tree.n_outputs != 1:
            self.bounds = (-np.max(tree.impurity), -np.min(tree.impurity))
        elif not view.is_classifier and len(np.unique(tree.value)) != 1:
            self.bounds = (np.min(tree.value), np.max(tree.value))

    def __call__(self, node: int) -> str:
        tree = self.view.tree
        if self.bounds is None:
            if tree.n_outputs != 1 or not self.view.is_classifier:
                # Every node has the same value: nothing to contrast, so white.
                return "#ffffff"
            fractions = tree.value[node, 0]
            color = self.rgb[int(np.argmax(fractions))]
            top = sorted(fractions, reverse=True)
            alpha = 0.0 if len(top) == 1 or top[1] == 1 else (top[0] - top[1]) / (1 - top[1])
        else:
            color = self.rgb[0]
            value = -tree.impurity[node] if tree.n_outputs != 1 else tree.value[node, 0, 0]
            low, high = self.bounds
            alpha = 0.0 if high == low else (value - low) / (high - low)
        channels = [int(round(alpha * c + (1 - alpha) * 255, 0)) for c in color]
        return "#{:02x}{:02x}{:02x}".format(*channels)
