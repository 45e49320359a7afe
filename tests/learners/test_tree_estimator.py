"""DecisionTreeClassifier / DecisionTreeRegressor as scikit-learn estimators."""

import numpy as np
import pandas as pd
import pytest
import sklearn.tree as sk
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

import sapwood


@parametrize_with_checks([sapwood.DecisionTreeClassifier(random_state=0),
                          sapwood.DecisionTreeRegressor(random_state=0)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture
def classification():
    return make_classification(200, 6, n_informative=3, random_state=0)


def test_pandas_column_names_are_kept(classification):
    X, y = classification
    frame = pd.DataFrame(X, columns=[f"col_{j}" for j in range(6)])
    model = sapwood.DecisionTreeClassifier(random_state=0).fit(frame, y)
    np.testing.assert_array_equal(model.feature_names_in_, frame.columns)
    assert model.to_ensemble().feature_names == tuple(frame.columns)
    trace = sapwood.importance.mdi(model).trace
    assert set(trace["feature"]) <= set(frame.columns)


def test_apply_decision_path_and_proba_equal_scikit_learn(classification):
    X, y = classification
    ours = sapwood.DecisionTreeClassifier(max_depth=5, random_state=3).fit(X, y)
    theirs = sk.DecisionTreeClassifier(max_depth=5, random_state=3).fit(X, y)
    np.testing.assert_array_equal(ours.apply(X), theirs.apply(X))
    assert (ours.decision_path(X) != theirs.decision_path(X)).nnz == 0
    np.testing.assert_array_equal(ours.predict_proba(X), theirs.predict_proba(X))
    assert ours.get_depth() == theirs.get_depth()
    assert ours.get_n_leaves() == theirs.get_n_leaves()


@pytest.mark.parametrize("model", ["classifier", "regressor"])
def test_cost_complexity_pruning_path_equals_scikit_learn(model):
    if model == "classifier":
        X, y = make_classification(300, 5, random_state=1)
        ours, theirs = sapwood.DecisionTreeClassifier, sk.DecisionTreeClassifier
    else:
        X, y = make_regression(300, 5, noise=10, random_state=1)
        ours, theirs = sapwood.DecisionTreeRegressor, sk.DecisionTreeRegressor
    a = ours(random_state=0).cost_complexity_pruning_path(X, y)
    b = theirs(random_state=0).cost_complexity_pruning_path(X, y)
    np.testing.assert_array_equal(a.ccp_alphas, b.ccp_alphas)
    np.testing.assert_array_equal(a.impurities, b.impurities)


def test_friedman_mse_grows_the_squared_error_tree():
    X, y = make_regression(150, 4, random_state=0)
    a = sapwood.DecisionTreeRegressor(criterion="friedman_mse", random_state=0).fit(X, y)
    b = sapwood.DecisionTreeRegressor(criterion="squared_error", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    assert a.get_params()["criterion"] == "friedman_mse"


@pytest.mark.parametrize("param,value,fragment", [
    ("max_depth", 0, "'max_depth' parameter of DecisionTreeClassifier must be"),
    ("criterion", "gain", "'criterion' parameter of DecisionTreeClassifier must be a str among"),
    ("min_samples_leaf", 0.0, "Got 0.0 instead"),
    ("max_features", "all", "'max_features' parameter"),
])
def test_bad_parameters_name_parameter_allowed_values_and_value(classification, param, value,
                                                                 fragment):
    X, y = classification
    with pytest.raises(InvalidParameterError, match=fragment):
        sapwood.DecisionTreeClassifier(**{param: value}).fit(X, y)


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match="negative"):
        sapwood.DecisionTreeRegressor(criterion="poisson").fit([[0.0], [1.0]], [-1.0, 2.0])
    with pytest.raises(ValueError, match="infinity"):
        sapwood.DecisionTreeClassifier().fit([[np.inf], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="y has 3 entries but X has 2 rows"):
        sapwood.DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1, 1])
    model = sapwood.DecisionTreeClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match="features"):
        model.predict([[0.0]])


def test_works_in_pipelines_and_grid_search(classification):
    X, y = classification
    search = GridSearchCV(make_pipeline(StandardScaler(), sapwood.DecisionTreeClassifier(
        random_state=0)), {"decisiontreeclassifier__max_depth": [2, 4]}, cv=3)
    search.fit(X, y)
    assert search.best_score_ > 0.7
    # The same trees as scikit-learn's, so the same search.
    reference = GridSearchCV(make_pipeline(StandardScaler(), sk.DecisionTreeClassifier(
        random_state=0)), {"decisiontreeclassifier__max_depth": [2, 4]}, cv=3).fit(X, y)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  reference.cv_results_["mean_test_score"])
    assert search.best_params_ == reference.best_params_


def test_string_labels_and_importances_sum_to_one(classification):
    X, y = classification
    labels = np.array(["no", "yes"])[y]
    model = sapwood.DecisionTreeClassifier(random_state=0).fit(X, labels)
    assert set(model.predict(X)) <= {"no", "yes"}
    assert model.feature_importances_.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("make", [
    lambda: sapwood.DecisionTreeClassifier(), lambda: sapwood.RandomForestClassifier(
        n_estimators=2), lambda: sapwood.GradientBoostingClassifier(n_estimators=2)])
def test_rows_that_disagree_are_named(make):
    X = np.random.default_rng(0).normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="y has 10 entries but X has 50 rows"):
        make().fit(X, y[:10])
    with pytest.raises(ValueError, match="sample_weight has 3 entries but X has 50 rows"):
        make().fit(X, y, sample_weight=np.ones(3))


def test_a_tree_deeper_than_the_builders_first_stack_equals_scikit_learn():
    # Each split cuts off the largest target as a right leaf, so the depth-first
    # builder's stack holds one pending right child per level: past 64 levels it grows.
    X = np.arange(150, dtype=float).reshape(-1, 1)
    y = 2.0 ** np.arange(150)
    ours = sapwood.DecisionTreeRegressor(random_state=0).fit(X, y)
    theirs = sk.DecisionTreeRegressor(random_state=0).fit(X, y)
    assert ours.get_depth() == theirs.get_depth() > 64
    ours_tree = ours.to_ensemble().trees[0]
    np.testing.assert_array_equal(ours_tree.children_left, theirs.tree_.children_left)
    np.testing.assert_array_equal(ours_tree.threshold, theirs.tree_.threshold)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
