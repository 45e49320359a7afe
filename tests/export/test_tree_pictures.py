"""Tree pictures a new user can read: the text keeps its size however large the tree
(the figure grows instead), boxes name the class, and a split that only separates the
missing values says so instead of ``<= inf``."""

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from sapwood import DecisionTreeClassifier, DecisionTreeRegressor
from sapwood.cli import main
from sapwood.plotting import plot_tree


def _box_texts(annotations):
    return [a.get_text() for a in annotations if a.get_bbox_patch() is not None]


def test_a_missing_only_split_reads_as_a_missing_test(missing_value_tree):
    _, arrays = missing_value_tree
    figure, ax = plt.subplots()
    try:
        root = _box_texts(plot_tree(arrays, ax, feature_names=["a", "b"]))[0]
        assert root.splitlines()[0] == "a is not missing"
        texts = "\n".join(_box_texts(plot_tree(arrays, ax, feature_names=["a", "b"])))
        assert "inf" not in texts and "or missing" not in texts  # "auto": only that split
        texts = "\n".join(_box_texts(plot_tree(arrays, ax, feature_names=["a", "b"],
                                               show_missing=True)))
        assert "b <= -0.006 or missing" in texts
        # scikit-learn's text on request.
        root = _box_texts(plot_tree(arrays, ax, feature_names=["a", "b"],
                                    show_missing=False))[0]
        assert root.splitlines()[0] == "a <= inf"
        with pytest.raises(ValueError, match="'show_missing' parameter must be"):
            plot_tree(arrays, ax, show_missing="yes")
    finally:
        plt.close(figure)


def test_boxes_name_the_class():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200)})
    y = np.where(X["x"] > 0.3, "yes", "no")
    model = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    figure, ax = plt.subplots()
    try:
        texts = _box_texts(plot_tree(model, ax))
        assert [text.splitlines()[-1] for text in texts] == [
            "class = no", "class = no", "class = yes"]
        assert all("class" not in text for text in _box_texts(plot_tree(model, ax,
                                                                         class_names=None)))
    finally:
        plt.close(figure)


def _deep_tree(depth):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4))
    y = X[:, 0] * X[:, 1] + X[:, 2] + rng.normal(size=3000)
    return DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, y)


def test_scale_figure_keeps_the_text_size_and_grows_the_figure():
    sizes = []
    for depth in (2, 7):
        figure, ax = plt.subplots(figsize=(6, 4))
        try:
            annotations = plot_tree(_deep_tree(depth), ax, scale="figure")
            assert {a.get_fontsize() for a in annotations} == {plt.rcParams["font.size"]}
            figure.canvas.draw()
            boxes = [a.get_bbox_patch().get_window_extent() for a in annotations
                     if a.get_bbox_patch() is not None]
            assert not any(first.overlaps(second) for i, first in enumerate(boxes)
                           for second in boxes[i + 1:])
            sizes.append(figure.get_size_inches())
        finally:
            plt.close(figure)
    (small_width, small_height), (large_width, large_height) = sizes
    assert large_width > 10 * small_width and large_height > 2 * small_height
    # The default still shrinks the text into the Axes, as scikit-learn does.
    figure, ax = plt.subplots(figsize=(6, 4))
    try:
        annotations = plot_tree(_deep_tree(7), ax)
        assert annotations[0].get_fontsize() < 2 and tuple(figure.get_size_inches()) == (6, 4)
        with pytest.raises(ValueError, match="'scale' parameter must be one of"):
            plot_tree(_deep_tree(2), ax, scale="axes")
    finally:
        plt.close(figure)


@pytest.fixture
def missing_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"income": rng.normal(size=n), "age": rng.normal(size=n)})
    default = rng.integers(0, 2, n)
    frame.loc[default == 1, "income"] = np.nan  # missing income: default
    frame["default"] = np.where(default == 1, "yes", "no")
    path = tmp_path / "loans.csv"
    frame.to_csv(path, index=False)
    return path


def test_cli_tree_says_missing_and_names_classes(capsys, missing_csv, tmp_path):
    assert main(["tree", str(missing_csv), "--target", "default"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == ["|--- income is not missing", "|   |--- class: no"]
    assert "inf" not in out
    dot = tmp_path / "tree.dot"
    assert main(["tree", str(missing_csv), "--target", "default", "--out", str(dot)]) == 0
    text = dot.read_text()
    assert 'label="income is not missing\\n' in text and "class = yes" in text


def test_cli_drawings_grow_with_the_tree(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(
        y=X[:, 0] * X[:, 1] + X[:, 2] + rng.normal(size=2000))
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    widths = []
    for depth in (2, 6):
        out = tmp_path / f"tree{depth}.svg"
        assert main(["tree", str(data), "--target", "y", "--max-depth", str(depth), "--out",
                     str(out), "--quiet"]) == 0
        widths.append(float(re.search(r'<svg [^>]*width="([\d.]+)pt"', out.read_text())[1]))
    # 4 leaves against 64: the figure, not the text, makes room (about 16 times as wide).
    assert widths[1] > 8 * widths[0]
