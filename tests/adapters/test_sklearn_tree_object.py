"""A bare scikit-learn ``Tree`` (an estimator's ``tree_``) reads as one tree whose
predictions are the estimator's: a regressor's values, a classifier's class
probabilities (classes by position, the labels being the estimator's ``classes_``).

The raw output is the stored ``value`` itself, which scikit-learn >= 1.4 returns as
``predict_proba``: equal. sapwood's ``predict_proba`` divides it by its sum (counts
before scikit-learn 1.4), which for stored fractions can move the last bit."""

import numpy as np
import pytest
from sklearn import ensemble, tree
from sklearn.tree._tree import Tree

from sapwood import load, save
from sapwood.adapters import from_model, predict, predict_proba, predict_raw
from sapwood.importance import mdi

from ._data import assert_close, make_data


def data(seed=0, n_outputs=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 5))
    signal = X[:, 0] + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=400)
    X[rng.random(X.shape) < 0.1] = np.nan  # scikit-learn's trees route NaN too
    Y = np.column_stack([signal, -signal + X[:, 3].clip(0)])[:, :n_outputs]
    return X, np.nan_to_num(Y[:, 0] if n_outputs == 1 else Y)


@pytest.mark.parametrize("n_outputs", [1, 2])
def test_a_regressors_tree_predicts_its_values(n_outputs, tmp_path):
    X, y = data(1, n_outputs)
    model = tree.DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y)
    converted = from_model(model.tree_)
    assert converted.task == "regression" and converted.kind.model == "Tree"
    np.testing.assert_array_equal(predict_raw(converted, X), model.predict(X))
    np.testing.assert_array_equal(predict(model.tree_, X), model.predict(X))
    np.testing.assert_array_equal(converted.trees[0].compute_feature_importances(),
                                  model.feature_importances_)
    save(converted, tmp_path / "tree.sapwood")
    np.testing.assert_array_equal(predict(load(tmp_path / "tree.sapwood"), X),
                                  model.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_classifiers_tree_predicts_its_probabilities(n_classes):
    X, y = data(2)
    labels = np.array(["low", "mid", "high"])[:n_classes]
    y = labels[np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))]
    model = tree.DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    converted = from_model(model.tree_)
    assert converted.task == "classification"
    assert converted.classes == tuple(range(n_classes))
    np.testing.assert_array_equal(predict_raw(converted, X), model.predict_proba(X))
    np.testing.assert_allclose(predict_proba(converted, X), model.predict_proba(X),
                               rtol=1e-15, atol=0)
    # Labels by position: the estimator's classes_ names them.
    np.testing.assert_array_equal(model.classes_[predict(converted, X)], model.predict(X))
    assert_close(mdi(model.tree_).importances_mean, model.feature_importances_,
                 rtol=1e-12, atol=1e-15)


def test_a_multi_output_classifiers_tree():
    X, y = data(3)
    Y = np.column_stack([y > 0, np.digitize(y, [-1.0, 0.0, 1.0])])
    model = tree.DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, Y)
    converted = from_model(model.tree_)
    assert converted.classes == ((0, 1), (0, 1, 2, 3))
    raw = predict_raw(converted, X)
    probas = predict_proba(converted, X)
    for k, theirs in enumerate(model.predict_proba(X)):
        np.testing.assert_array_equal(raw[:, k, :theirs.shape[1]], theirs)
        np.testing.assert_allclose(probas[k], theirs, rtol=1e-15, atol=0)


def test_the_trees_inside_ensembles():
    X, y, y_reg = make_data(4, n_features=5, nan_fraction=0.0)
    forest = ensemble.RandomForestClassifier(4, max_depth=4, random_state=0).fit(X, y)
    member = forest.estimators_[2]
    np.testing.assert_array_equal(predict_raw(member.tree_, X), member.predict_proba(X))
    boosted = ensemble.GradientBoostingRegressor(n_estimators=3, random_state=0).fit(X, y_reg)
    stage = boosted.estimators_[1, 0]
    np.testing.assert_array_equal(predict_raw(stage.tree_, X), stage.predict(X))


def test_a_one_class_classifiers_tree_reads_as_its_constant_probability():
    """The one case a Tree cannot tell: a classifier of one class stores n_classes 1,
    as a regressor does; the regression it reads as predicts its predict_proba."""
    X, _ = data(5)
    model = tree.DecisionTreeClassifier().fit(X, np.zeros(X.shape[0]))
    converted = from_model(model.tree_)
    assert converted.task == "regression"
    np.testing.assert_array_equal(predict_raw(converted, X), model.predict_proba(X)[:, 0])


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="Tree has no nodes: it was never built"):
        from_model(Tree(3, np.array([2], dtype=np.intp), 1))
    X, y = data(6)
    model = tree.DecisionTreeRegressor(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="iteration_range applies to boosting models, not "
                                         "to a Tree"):
        from_model(model.tree_, iteration_range=(0, 1))
