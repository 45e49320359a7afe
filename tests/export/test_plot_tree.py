"""plot_tree draws one box per shown node with the export labels (Agg backend).

It lives in sapwood.plotting; its tests stay here, next to the export fixtures and
the export_graphviz labels its boxes must repeat."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn import tree as sklearn_tree

from sapwood.export import export_graphviz
from sapwood.plotting import plot_tree
from sapwood.plotting._tree import _layout


@pytest.fixture
def ax():
    figure, axes = plt.subplots(figsize=(8, 5))
    yield axes
    plt.close(figure)


def _boxes(annotations):
    return [a for a in annotations if a.get_bbox_patch() is not None]


def _edge_labels(annotations):
    return [a.get_text() for a in annotations if a.get_bbox_patch() is None]


@pytest.mark.parametrize("fixture", ["iris_tree", "diabetes_tree", "multi_output_tree"])
def test_one_box_per_node_with_sklearns_texts(request, ax, fixture):
    estimator, arrays = request.getfixturevalue(fixture)
    annotations = plot_tree(arrays, ax, criterion=estimator.criterion, filled=True)
    boxes = _boxes(annotations)
    assert len(boxes) == arrays.node_count
    assert sorted(_edge_labels(annotations)) == ["  False", "True  "]
    # The box texts are scikit-learn's plot_tree texts for the same tree.
    figure, other = plt.subplots()
    expected = sklearn_tree.plot_tree(estimator, ax=other, filled=True)
    plt.close(figure)
    assert sorted(a.get_text() for a in boxes) == sorted(
        a.get_text() for a in expected if a.get_bbox_patch() is not None)
    assert all(a.axes is ax for a in annotations)


def test_fill_colors_match_graphviz(ax, iris_tree):
    _, arrays = iris_tree
    boxes = _boxes(plot_tree(arrays, ax, filled=True))
    dot = export_graphviz(arrays, filled=True)
    fills = [line.split('fillcolor="')[1][:7] for line in dot.splitlines() if "fillcolor" in line]
    from matplotlib.colors import to_hex

    assert [to_hex(a.get_bbox_patch().get_facecolor()) for a in boxes] == fills


def test_max_depth_draws_grey_stubs(ax, iris_tree):
    _, arrays = iris_tree
    annotations = plot_tree(arrays, ax, max_depth=1)
    texts = [a.get_text() for a in _boxes(annotations)]
    depths = arrays.compute_node_depths()
    shown = int(np.sum(depths <= 1))
    stubs = int(np.sum(depths == 2))
    assert len(texts) == shown + stubs
    assert sum("(...)" in text for text in texts) == stubs


def test_layout_keeps_children_apart_and_parents_centred(iris_tree):
    _, arrays = iris_tree
    boxes, n_columns = _layout(arrays, None)
    assert n_columns == arrays.n_leaves
    by_depth = {}
    for box in boxes:
        by_depth.setdefault(box.depth, []).append(box.x)
        if box.children:
            left, right = box.children
            assert left.x < box.x < right.x
    for xs in by_depth.values():
        assert len(set(xs)) == len(xs)


def test_single_node_and_fixed_fontsize(ax):
    from sklearn.tree import DecisionTreeRegressor

    from tests.reference.sklearn_trees import tree_arrays_from_sklearn

    estimator = DecisionTreeRegressor().fit(np.zeros((4, 1)), np.ones(4))
    annotations = plot_tree(tree_arrays_from_sklearn(estimator), ax, fontsize=7)
    assert len(annotations) == 1 and annotations[0].get_fontsize() == 7


def test_default_axes_and_automatic_font(iris_tree):
    _, arrays = iris_tree
    figure = plt.figure(figsize=(4, 3))
    try:
        annotations = plot_tree(arrays, feature_names=["a", "b", "c", "d"],
                                class_names=["x", "y", "z"], node_ids=True, rounded=True)
        assert annotations[0].axes is figure.axes[0]
        sizes = {a.get_fontsize() for a in annotations}
        assert len(sizes) == 1 and 0 < sizes.pop() < 10
        figure.canvas.draw()
    finally:
        plt.close(figure)


def test_every_picture_has_one_public_home():
    import sapwood
    import sapwood.export
    import sapwood.importance
    import sapwood.plotting
    import sapwood.selection

    assert set(sapwood.plotting.__all__) == {"plot_compare", "plot_importance", "plot_knockoffs",
                                             "plot_tree", "beeswarm", "bar", "waterfall",
                                             "dependence", "partial_dependence", "ale",
                                             "interactions"}
    for package in (sapwood, sapwood.export, sapwood.importance, sapwood.selection):
        assert [name for name in package.__all__ if name.startswith("plot")] == [], package
