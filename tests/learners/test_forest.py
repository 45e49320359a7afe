"""Random forests and extra-trees: tree-by-tree parity with scikit-learn 1.9, in-bag
counts, OOB estimates, parallelism (threads and Dask) and the estimator API."""

import pickle

import joblib
import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import balanced_accuracy_score, mean_absolute_error
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

import sapwood
from sapwood.importance import mdi
from sapwood.learners import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from tests.reference.sklearn_parity import tree_differences

PAIRS = {
    "rf_classifier": (RandomForestClassifier, ske.RandomForestClassifier),
    "rf_regressor": (RandomForestRegressor, ske.RandomForestRegressor),
    "et_classifier": (ExtraTreesClassifier, ske.ExtraTreesClassifier),
    "et_regressor": (ExtraTreesRegressor, ske.ExtraTreesRegressor),
}

pytestmark = [
    pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores:UserWarning"),
    pytest.mark.filterwarnings("ignore:Value `\"friedman_mse\"` for `criterion`:FutureWarning"),
]

SAMPLE_WEIGHT_EQUIVALENCE = {
    "check_sample_weight_equivalence_on_dense_data":
        "bootstrap draws with weights are not row repetition (scikit-learn xfails it too)",
}


def _data(name, n=240, seed=0, nan=False):
    if name.endswith("classifier"):
        X, y = make_classification(n, 7, n_informative=4, n_classes=3, random_state=seed)
    else:
        X, y = make_regression(n, 7, n_informative=4, noise=5.0, random_state=seed)
    if nan:
        rng = np.random.default_rng(seed)
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def _fit_both(name, X, y, sample_weight=None, **params):
    ours, theirs = PAIRS[name]
    a = ours(**params).fit(X, y, sample_weight=sample_weight)
    b = theirs(**params).fit(X, y, sample_weight=sample_weight)
    return a, b


def assert_same_forest(a, b, X):
    assert len(a.estimators_) == len(b.estimators_)
    for t, (ta, tb) in enumerate(zip(a.estimators_, b.estimators_, strict=True)):
        assert ta.random_state == tb.random_state, t
        assert tree_differences(ta.tree_, tb.tree_) == [], t
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if hasattr(b, "predict_proba"):
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    np.testing.assert_array_equal(a.apply(X), b.apply(X))
    for ia, ib in zip(a.estimators_samples_, b.estimators_samples_, strict=True):
        np.testing.assert_array_equal(ia, ib)
    if hasattr(b, "oob_score_"):
        assert a.oob_score_ == b.oob_score_
        for name in ("oob_decision_function_", "oob_prediction_"):
            if hasattr(b, name):
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@parametrize_with_checks(
    [RandomForestClassifier(n_estimators=5, random_state=0),
     RandomForestRegressor(n_estimators=5, random_state=0),
     ExtraTreesClassifier(n_estimators=5, random_state=0),
     ExtraTreesRegressor(n_estimators=5, random_state=0)],
    expected_failed_checks=lambda est: SAMPLE_WEIGHT_EQUIVALENCE if est.bootstrap else {})
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("seed", [0, 7, 2024])
def test_forest_equals_scikit_learn_tree_by_tree(name, seed):
    X, y = _data(name, seed=seed)
    bootstrap = name.startswith("rf")
    a, b = _fit_both(name, X, y, n_estimators=12, random_state=seed, max_depth=8,
                     oob_score=bootstrap)
    assert_same_forest(a, b, X)


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("params", [
    {"bootstrap": True, "oob_score": True, "max_samples": 100},
    {"bootstrap": True, "max_samples": 0.6},
    {"bootstrap": False, "max_features": 0.5},
    {"bootstrap": True, "min_samples_leaf": 3, "max_leaf_nodes": 20, "ccp_alpha": 0.001},
    {"bootstrap": True, "min_weight_fraction_leaf": 0.05, "oob_score": True},
], ids=["max_samples_int_oob", "max_samples_float", "no_bootstrap", "leaf_options",
        "min_weight_fraction"])
def test_options_equal_scikit_learn(name, params):
    X, y = _data(name, seed=3)
    a, b = _fit_both(name, X, y, n_estimators=8, random_state=3, **params)
    assert_same_forest(a, b, X)


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("bootstrap", [True, False])
def test_sample_weights_and_missing_values_equal_scikit_learn(name, bootstrap):
    X, y = _data(name, seed=5, nan=True)
    weight = np.random.default_rng(5).uniform(0.0, 3.0, size=X.shape[0])
    weight[:10] = 0.0
    a, b = _fit_both(name, X, y, sample_weight=weight, n_estimators=8, random_state=5,
                     bootstrap=bootstrap, oob_score=bootstrap)
    assert_same_forest(a, b, X)


@pytest.mark.parametrize("class_weight", ["balanced_subsample", "balanced",
                                          {0: 1.0, 1: 3.0, 2: 0.5}])
@pytest.mark.parametrize("name", ["rf_classifier", "et_classifier"])
@pytest.mark.parametrize("bootstrap", [True, False])
def test_class_weight_equals_scikit_learn(class_weight, name, bootstrap):
    X, y = make_classification(200, 6, n_informative=3, n_classes=3, weights=[0.6, 0.3],
                               random_state=1)
    a, b = _fit_both(name, X, y, n_estimators=6, random_state=2, bootstrap=bootstrap,
                     class_weight=class_weight, oob_score=bootstrap)
    assert_same_forest(a, b, X)


@pytest.mark.parametrize("criterion", ["entropy", "absolute_error", "poisson", "friedman_mse"])
def test_criteria_equal_scikit_learn(criterion):
    name = "rf_classifier" if criterion == "entropy" else "rf_regressor"
    X, y = _data(name, n=120, seed=4)
    if criterion == "poisson":
        y = np.exp(y / np.abs(y).max())
    a, b = _fit_both(name, X, y, n_estimators=4, random_state=4, criterion=criterion,
                     max_depth=5, oob_score=True)
    assert_same_forest(a, b, X)


@pytest.mark.parametrize("name", ["rf_classifier", "rf_regressor"])
def test_multi_output_equals_scikit_learn(name):
    if name == "rf_classifier":
        X, y = make_classification(200, 6, random_state=0)
        y = np.column_stack([y, (X[:, 0] > 0).astype(int)])
    else:
        X, y = make_regression(200, 6, n_targets=2, random_state=0)
    a, b = _fit_both(name, X, y, n_estimators=6, random_state=0, oob_score=True)
    assert_same_forest(a, b, X)


def test_callable_oob_score_gets_what_scikit_learn_passes():
    X, y = _data("rf_classifier", seed=2)
    a, b = _fit_both("rf_classifier", X, y, n_estimators=10, random_state=2,
                     oob_score=balanced_accuracy_score)
    assert a.oob_score_ == b.oob_score_
    a, b = _fit_both("rf_regressor", *_data("rf_regressor", seed=2), n_estimators=10,
                     random_state=2, oob_score=mean_absolute_error)
    assert a.oob_score_ == b.oob_score_


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_sequential_equals_parallel(name):
    X, y = _data(name, seed=11)
    ours, _ = PAIRS[name]
    one = ours(n_estimators=10, random_state=11, n_jobs=1).fit(X, y)
    two = ours(n_estimators=10, random_state=11, n_jobs=2).fit(X, y)
    assert_same_forest(two, one, X)


def test_warm_start_equals_cold_fit():
    X, y = _data("rf_classifier", seed=6)
    warm = RandomForestClassifier(n_estimators=4, random_state=6, warm_start=True,
                                  oob_score=True).fit(X, y)
    warm.set_params(n_estimators=9).fit(X, y)
    cold = RandomForestClassifier(n_estimators=9, random_state=6, oob_score=True).fit(X, y)
    assert_same_forest(warm, cold, X)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        warm.fit(X, y)
    with pytest.raises(ValueError, match="must be larger or equal"):
        warm.set_params(n_estimators=3).fit(X, y)


def test_inbag_counts_are_the_bootstrap_and_zeros_the_oob_rows():
    X, y = _data("rf_regressor", seed=8)
    forest = RandomForestRegressor(n_estimators=6, random_state=8, max_samples=150).fit(X, y)
    counts = forest.inbag_counts_
    assert counts.shape == (6, X.shape[0])
    np.testing.assert_array_equal(counts.sum(axis=1), 150)
    for t, tree in enumerate(forest.estimators_):
        np.testing.assert_array_equal(counts[t], forest.bootstrap_counts(t))
        np.testing.assert_array_equal(
            counts[t], np.bincount(forest.estimators_samples_[t], minlength=X.shape[0]))
        # The counts are the tree's sample weights: its root holds their total.
        assert tree.tree_.weighted_n_node_samples[0] == counts[t].sum()
        assert tree.tree_.n_node_samples[0] == np.count_nonzero(counts[t])
    no_bootstrap = ExtraTreesRegressor(n_estimators=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(no_bootstrap.inbag_counts_, 1)


def test_oob_prediction_is_the_mean_over_trees_that_did_not_see_the_row():
    X, y = _data("rf_regressor", n=100, seed=9)
    forest = RandomForestRegressor(n_estimators=15, random_state=9, oob_score=True).fit(X, y)
    X32 = X.astype(np.float32)
    per_tree = np.stack([tree.tree_.predict(X32)[:, 0, 0] for tree in forest.estimators_])
    oob = forest.inbag_counts_ == 0
    expected = (per_tree * oob).sum(axis=0) / oob.sum(axis=0)
    np.testing.assert_allclose(forest.oob_prediction_, expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["rf_classifier", "et_regressor"])
def test_mdi_and_to_ensemble_read_the_same_forest(name):
    X, y = _data(name, seed=10)
    forest = PAIRS[name][0](n_estimators=8, random_state=10, max_depth=4).fit(X, y)
    ensemble = forest.to_ensemble()
    assert ensemble.combine == "mean" and ensemble.n_trees == 8
    result = mdi(forest)
    np.testing.assert_array_equal(result.importances_mean, forest.feature_importances_)
    contributions = result.trace.groupby("feature")["contribution"].sum()
    np.testing.assert_allclose(contributions.reindex(result.feature_names).fillna(0.0),
                               forest.feature_importances_, rtol=1e-12, atol=1e-15)
    raw = ensemble.raw_predict(X)
    if name.endswith("classifier"):
        np.testing.assert_allclose(raw[:, 0, :], forest.predict_proba(X), rtol=1e-12)
    else:
        np.testing.assert_allclose(raw[:, 0, 0], forest.predict(X), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pickle_round_trip(name):
    X, y = _data(name, seed=12)
    forest = PAIRS[name][0](n_estimators=5, random_state=12).fit(X, y)
    again = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(again.predict(X), forest.predict(X))
    np.testing.assert_array_equal(again.inbag_counts_, forest.inbag_counts_)


def test_estimators_are_fitted_sapwood_trees():
    X, y = _data("rf_classifier", seed=13)
    forest = RandomForestClassifier(n_estimators=3, random_state=13).fit(X, y)
    assert all(isinstance(t, sapwood.DecisionTreeClassifier) for t in forest.estimators_)
    # As in scikit-learn, the trees are fit on encoded classes 0..K-1.
    tree = forest.estimators_[0]
    np.testing.assert_array_equal(tree.classes_, [0.0, 1.0, 2.0])
    assert set(tree.predict(X)) <= {0.0, 1.0, 2.0}
    assert forest[0] is tree and len(forest) == 3


def test_verbose_reports_each_tree(capsys):
    X, y = _data("rf_regressor", n=60)
    RandomForestRegressor(n_estimators=3, random_state=0, verbose=2, n_jobs=1).fit(X, y)
    assert "building tree 3 of 3" in capsys.readouterr().out


@pytest.mark.parametrize("params,error,fragment", [
    ({"bootstrap": False, "max_samples": 10}, ValueError, "`max_sample` cannot be set"),
    ({"bootstrap": False, "oob_score": True}, ValueError, "only available if bootstrap=True"),
    ({"n_estimators": 0}, InvalidParameterError, "'n_estimators' parameter of "
                                                  "RandomForestClassifier must be"),
    ({"class_weight": "even"}, InvalidParameterError, "'class_weight' parameter"),
])
def test_bad_parameters(params, error, fragment):
    X, y = _data("rf_classifier", n=50)
    with pytest.raises(error, match=fragment):
        RandomForestClassifier(**params).fit(X, y)


def test_dask_backend_grows_the_same_forest():
    distributed = pytest.importorskip("distributed")
    X, y = _data("rf_classifier", n=300, seed=14)
    local = RandomForestClassifier(n_estimators=8, random_state=14, n_jobs=2).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        remote = RandomForestClassifier(n_estimators=8, random_state=14, n_jobs=2).fit(X, y)
    assert_same_forest(remote, local, X)


def test_the_tree_format_records_kind_and_bootstrap_draws():
    from sapwood import ModelKind

    X, y = make_classification(120, 4, random_state=3)
    weight = np.random.RandomState(3).rand(len(y))
    forest = RandomForestClassifier(n_estimators=4, max_samples=0.8, random_state=3).fit(
        X, y, sample_weight=weight)
    ensemble = forest.to_ensemble()
    assert ensemble.kind == ModelKind(library="sapwood", model="RandomForestClassifier",
                                      objective="gini", library_version=sapwood.__version__,
                                      family="forest", bagged=True)
    for t in range(4):
        np.testing.assert_array_equal(ensemble.bootstrap.counts(t), forest.bootstrap_counts(t))
    np.testing.assert_array_equal(ensemble.bootstrap.sample_weight, forest._sample_weight)
    unbagged = ExtraTreesRegressor(n_estimators=2).fit(X, X[:, 0]).to_ensemble()
    assert unbagged.bootstrap is None and not unbagged.kind.bagged
