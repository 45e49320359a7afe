"""export_text / export_graphviz on a TreeArrays copied from a scikit-learn tree
write exactly what scikit-learn writes for the same options."""

import pytest
from sklearn import tree as sklearn_tree

from sapwood.export import export_graphviz, export_text

TREES = ["iris_tree", "weighted_binary_tree", "digits_tree", "diabetes_tree",
         "multi_output_tree", "missing_value_tree"]

GRAPHVIZ_OPTIONS = [
    {},
    {"filled": True},
    {"filled": True, "rounded": True, "proportion": True},
    {"impurity": False, "node_ids": True, "label": "root"},
    {"label": "none", "precision": 0, "leaves_parallel": True},
    {"max_depth": 0, "filled": True},
    {"max_depth": 1, "rotate": True, "fontname": "times"},
    {"special_characters": True, "node_ids": True, "precision": 5},
    {"class_names": True, "proportion": True, "precision": 1},
]

TEXT_OPTIONS = [
    {},
    {"max_depth": 0},
    {"max_depth": 1, "spacing": 5, "decimals": 4},
    {"show_weights": True, "decimals": 0},
    {"spacing": 1, "show_weights": True},
]


@pytest.mark.parametrize("options", GRAPHVIZ_OPTIONS, ids=repr)
@pytest.mark.parametrize("fixture", TREES)
def test_graphviz_equals_sklearn(request, fixture, options):
    estimator, arrays = request.getfixturevalue(fixture)
    expected = sklearn_tree.export_graphviz(estimator, **options)
    assert export_graphviz(arrays, criterion=estimator.criterion, **options) == expected


@pytest.mark.parametrize("options", TEXT_OPTIONS, ids=repr)
@pytest.mark.parametrize("fixture", TREES)
def test_text_equals_sklearn(request, fixture, options):
    estimator, arrays = request.getfixturevalue(fixture)
    assert export_text(arrays, **options) == sklearn_tree.export_text(estimator, **options)


def test_names_equal_sklearn(iris_tree):
    estimator, arrays = iris_tree
    features = ["sepal length", 'sepal "width"', "petal length", "petal width"]
    classes = ["setosa", "versicolor", "virginica"]
    for options in ({}, {"filled": True, "special_characters": True}):
        expected = sklearn_tree.export_graphviz(estimator, feature_names=features,
                                                class_names=classes, **options)
        assert export_graphviz(arrays, feature_names=features, class_names=classes,
                               criterion="gini", **options) == expected
    expected = sklearn_tree.export_text(estimator, feature_names=features,
                                        class_names=classes, show_weights=True)
    assert export_text(arrays, feature_names=features, class_names=classes,
                       show_weights=True) == expected


@pytest.mark.parametrize("criterion", ["entropy", "log_loss"])
def test_criterion_name_equals_sklearn(criterion):
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier

    from tests.reference.sklearn_trees import tree_arrays_from_sklearn

    X, y = load_iris(return_X_y=True)
    estimator = DecisionTreeClassifier(criterion=criterion, max_depth=2).fit(X, y)
    expected = sklearn_tree.export_graphviz(estimator)
    arrays = tree_arrays_from_sklearn(estimator)
    assert export_graphviz(arrays, criterion=criterion) == expected
    assert f"{criterion} = " in expected


def test_single_node_tree_equals_sklearn():
    import numpy as np
    from sklearn.tree import DecisionTreeRegressor

    from tests.reference.sklearn_trees import tree_arrays_from_sklearn

    estimator = DecisionTreeRegressor().fit(np.zeros((5, 2)), np.full(5, 3.0))
    arrays = tree_arrays_from_sklearn(estimator)
    assert export_text(arrays) == sklearn_tree.export_text(estimator)
    for options in ({}, {"filled": True}):
        expected = sklearn_tree.export_graphviz(estimator, **options)
        assert export_graphviz(arrays, criterion="squared_error", **options) == expected


def test_out_file(tmp_path, iris_tree):
    import io

    estimator, arrays = iris_tree
    expected = sklearn_tree.export_graphviz(estimator)
    path = tmp_path / "tree.dot"
    assert export_graphviz(arrays, str(path), criterion="gini") == expected
    assert path.read_text(encoding="utf-8") == expected
    handle = io.StringIO()
    export_graphviz(arrays, handle, criterion="gini")
    assert handle.getvalue() == expected
