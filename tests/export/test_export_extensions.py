"""What the exporters add beyond scikit-learn: `<` splits, missing-value routing,
ensembles, estimators' own names, and clear errors."""

import dataclasses

import numpy as np
import pytest

from sapwood import TreeArrays, TreeEnsemble
from sapwood.export import export_graphviz, export_text


def _stump(operator=0, missing_go_to_left=0, threshold=3.5, n_classes=1):
    """x0 split at ``threshold``; leaves 1 (left) and 2 (right)."""
    if n_classes == 1:
        value = np.array([2.0, 1.0, 4.0]).reshape(3, 1, 1)
    else:
        value = np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]).reshape(3, 1, 2)
    return TreeArrays(
        children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[0, -2, -2],
        threshold=[threshold, -2.0, -2.0], impurity=[0.5, 0.0, 0.0],
        n_node_samples=[4, 2, 2], weighted_n_node_samples=[4.0, 2.0, 2.0], value=value,
        missing_go_to_left=[missing_go_to_left, 0, 0], operator=[operator, 0, 0],
        n_features=2)


def test_less_than_operator_in_text():
    text = export_text(_stump(operator=1), feature_names=["age", "income"])
    assert text.splitlines() == [
        "|--- age <  3.50", "|   |--- value: [1.00]",
        "|--- age >= 3.50", "|   |--- value: [4.00]"]


def test_less_than_operator_in_graphviz():
    assert 'label="x[0] < 3.5\\nimpurity' in export_graphviz(_stump(operator=1))
    html = export_graphviz(_stump(operator=1), special_characters=True)
    assert "x<SUB>0</SUB> &lt; 3.5<br/>" in html
    assert "x<SUB>0</SUB> &le; 3.5<br/>" in export_graphviz(_stump(), special_characters=True)


@pytest.mark.parametrize("operator", [0, 1])
def test_missing_direction_is_shown_only_on_request(operator):
    left = _stump(operator=operator, missing_go_to_left=1)
    right = _stump(operator=operator, missing_go_to_left=0)
    assert export_text(left) == export_text(right)
    assert "missing" not in export_text(left) + export_graphviz(left)
    op = "<" if operator else "<="
    left_lines = export_text(left, show_missing=True).splitlines()
    right_lines = export_text(right, show_missing=True).splitlines()
    assert left_lines[0].endswith("3.50 or missing") and not left_lines[2].endswith("missing")
    assert right_lines[2].endswith("3.50 or missing") and not right_lines[0].endswith("missing")
    # DOT shows the condition for the left (True) edge; NaN fails a comparison, so
    # only a left-going default changes it.
    assert f"x[0] {op} 3.5 or missing\\n" in export_graphviz(left, show_missing=True)
    assert f"x[0] {op} 3.5\\n" in export_graphviz(right, show_missing=True)


def test_missing_only_split_reads_as_a_missing_test(missing_value_tree):
    _, arrays = missing_value_tree
    text = export_text(arrays, show_missing=True, feature_names=["a", "b"])
    assert text.splitlines()[0] == "|--- a is not missing"
    assert "|--- a is missing" in text
    assert "inf" not in text
    # Node 1 learnt to send NaN left.
    assert "|   |--- b <= -0.01 or missing" in text
    assert 'label="a is not missing\\n' in export_graphviz(arrays, feature_names=["a", "b"],
                                                          show_missing=True)


def _ensemble(classes=("no", "yes")):
    trees = (_stump(n_classes=2), _stump(threshold=7.25, n_classes=2))
    return TreeEnsemble(trees=trees, task="classification", n_features=2,
                        classes=classes, feature_names=("age", "income"))


# Flat labels, or one label sequence per output as multi-output estimators keep them.
@pytest.mark.parametrize("classes", [("no", "yes"), (("no", "yes"),),
                                     (np.array(["no", "yes"]),)])
def test_ensemble_tree_index_and_names(classes):
    ensemble = _ensemble(classes)
    first = export_text(ensemble)
    assert first.splitlines()[0] == "|--- age <= 3.50"
    assert "class: no" in first and "class: yes" in first
    second = export_text(ensemble, tree_index=1)
    assert second.splitlines()[0] == "|--- age <= 7.25"
    dot = export_graphviz(ensemble, tree_index=1, class_names=["n", "y"])
    assert 'label="age <= 7.25' in dot and "class = n" in dot
    with pytest.raises(ValueError, match="'tree_index' parameter must be an int in the "
                                         r"range \[0, 1\]. Got 2"):
        export_text(ensemble, tree_index=2)


@dataclasses.dataclass
class _FakeEstimator:
    """What the exporters read from a fitted sapwood estimator."""

    ensemble: TreeEnsemble
    criterion: str = "entropy"
    feature_names_in_: np.ndarray = dataclasses.field(
        default_factory=lambda: np.array(["height", "weight"], dtype=object))
    classes_: np.ndarray = dataclasses.field(default_factory=lambda: np.array([3, 8]))

    def to_ensemble(self):
        return self.ensemble


def test_estimator_defaults_from_its_attributes():
    bare = TreeEnsemble(trees=(_stump(n_classes=2),), task="classification", n_features=2)
    estimator = _FakeEstimator(bare)
    text = export_text(estimator)
    assert text.splitlines()[0] == "|--- height <= 3.50"
    assert "class: 3" in text and "class: 8" in text
    dot = export_graphviz(estimator, class_names=["three", "eight"])
    assert 'label="height <= 3.5\\nentropy = 0.5' in dot and "class = three" in dot
    # The ensemble record's own names win over the estimator's.
    assert export_text(_FakeEstimator(_ensemble())).startswith("|--- age <= 3.50")


def test_bad_arguments_name_the_parameter():
    stump = _stump(n_classes=2)
    with pytest.raises(ValueError, match="'feature_names' parameter must have one entry per "
                                         r"feature \(2\). Got 3"):
        export_text(stump, feature_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="'class_names' parameter"):
        export_graphviz(stump, class_names=["a"])
    with pytest.raises(ValueError, match="'max_depth' parameter"):
        export_graphviz(stump, max_depth=-1)
    with pytest.raises(ValueError, match="'label' parameter"):
        export_graphviz(stump, label="some")
    with pytest.raises(ValueError, match="'spacing' parameter"):
        export_text(stump, spacing=0)
    with pytest.raises(TypeError, match="cannot read a model of type list"):
        export_text([1, 2])


def test_sapwood_estimator_exports_like_sklearn():
    """A fitted sapwood tree prints as scikit-learn prints the same tree, with the
    DataFrame's column names as default feature names."""
    from sklearn import tree as sklearn_tree
    from sklearn.datasets import load_iris

    from sapwood import DecisionTreeClassifier as cls

    X, y = load_iris(return_X_y=True, as_frame=True)
    model = cls(max_depth=3, random_state=0).fit(X, y)
    reference = sklearn_tree.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    names = list(X.columns)
    assert export_text(model) == sklearn_tree.export_text(reference, feature_names=names)
    assert export_graphviz(model, filled=True) == sklearn_tree.export_graphviz(
        reference, feature_names=names, filled=True)
