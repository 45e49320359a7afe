"""Model forms that hold tree models (sapwood.adapters._wrappers): from_model reads those
whose trees give their predictions, exactly as the wrapper predicts, and refuses the
others with the reason; unwrap says what explain reads of each."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import TransformedTargetRegressor
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    RandomForestClassifier,
    RandomForestRegressor,
    StackingRegressor,
    VotingClassifier,
)
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, RandomizedSearchCV
from sklearn.multioutput import MultiOutputRegressor
from sklearn.preprocessing import StandardScaler

import sapwood
from sapwood.adapters import as_ensemble, predict_proba
from sapwood.adapters._wrappers import unwrap


@pytest.fixture(scope="module")
def classification():
    return make_classification(n_samples=200, n_features=5, n_informative=3, random_state=0)


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(n_samples=200, n_features=4, noise=1.0, random_state=0)
    return X, y - y.min() + 1.0  # positive: a log transform applies


def _forest(n_estimators=8, **params):
    return RandomForestClassifier(n_estimators=n_estimators, random_state=0, **params)


@pytest.mark.parametrize("search", [
    lambda: GridSearchCV(_forest(), {"max_depth": [2, 4]}, cv=2),
    lambda: RandomizedSearchCV(_forest(), {"max_depth": [2, 3, 4]}, n_iter=2, cv=2,
                               random_state=0),
    lambda: HalvingGridSearchCV(_forest(), {"max_depth": [2, 4]}, cv=2, random_state=0,
                                min_resources=50),
], ids=["grid", "randomized", "halving"])
def test_a_search_reads_as_its_best_estimator(classification, search):
    X, y = classification
    model = search().fit(X, y)
    ensemble = sapwood.from_model(model)
    assert ensemble.n_trees == len(model.best_estimator_.estimators_)
    np.testing.assert_allclose(predict_proba(ensemble, X), model.predict_proba(X),
                               rtol=0, atol=1e-12)
    assert as_ensemble(model).n_trees == ensemble.n_trees
    assert "best_estimator_" in unwrap(model, sapwood.from_model).note


def test_a_search_without_refit_is_refused(classification):
    X, y = classification
    model = GridSearchCV(_forest(), {"max_depth": [2, 4]}, cv=2, refit=False).fit(X, y)
    with pytest.raises(ValueError, match="refit=False"):
        sapwood.from_model(model)


def test_sapwood_estimators_read_in_from_model(classification):
    X, y = classification
    model = sapwood.learners.RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    ensemble = sapwood.from_model(model)
    np.testing.assert_array_equal(predict_proba(ensemble, X), model.predict_proba(X))
    with pytest.raises(ValueError, match="iteration_range"):
        sapwood.from_model(model, iteration_range=(0, 2))


def test_a_balanced_forest_reads_as_the_forest_it_is(classification):
    imblearn = pytest.importorskip("imblearn.ensemble")
    X, y = classification
    model = imblearn.BalancedRandomForestClassifier(
        n_estimators=8, bootstrap=True, sampling_strategy="all", replacement=True,
        random_state=0).fit(X, y)
    ensemble = sapwood.from_model(model)
    np.testing.assert_allclose(predict_proba(ensemble, X), model.predict_proba(X),
                               rtol=0, atol=1e-12)
    # Its trees' rows are under-sampled first: scikit-learn's record of the bootstrap
    # does not regenerate them, so no out-of-bag rows are claimed.
    assert ensemble.bootstrap is None and not ensemble.kind.bagged
    assert ensemble.kind.library == "imblearn"


def test_a_calibrated_classifier_is_refused_and_its_fold_models_merge(classification):
    X, y = classification
    model = CalibratedClassifierCV(_forest(), cv=3).fit(X, y)
    with pytest.raises(TypeError, match="calibrated"):
        sapwood.from_model(model)
    wrapped = unwrap(model, sapwood.from_model)
    assert not wrapped.exact and wrapped.estimator is model
    # The fold models' trees as one forest: the mean of their uncalibrated probabilities.
    folds = [part.estimator for part in model.calibrated_classifiers_]
    mean = np.mean([fold.predict_proba(X) for fold in folds], axis=0)
    assert wrapped.trees.n_trees == 3 * 8
    np.testing.assert_allclose(predict_proba(wrapped.trees, X), mean, rtol=0, atol=1e-12)
    assert "3 base estimators" in wrapped.note


def test_a_transformed_target(regression):
    X, y = regression
    plain = TransformedTargetRegressor(RandomForestRegressor(n_estimators=4, random_state=0))
    plain.fit(X, y)
    assert np.array_equal(sapwood.from_model(plain).predict(X), plain.predict(X))
    logged = TransformedTargetRegressor(RandomForestRegressor(n_estimators=4, random_state=0),
                                        func=np.log, inverse_func=np.exp).fit(X, y)
    with pytest.raises(TypeError, match="inverse log"):
        sapwood.from_model(logged)
    wrapped = unwrap(logged, sapwood.from_model)
    assert wrapped.trees is logged.regressor_ and "transformed target" in wrapped.note
    scaled = TransformedTargetRegressor(RandomForestRegressor(n_estimators=4),
                                        transformer=StandardScaler()).fit(X, y)
    assert "StandardScaler" in unwrap(scaled, sapwood.from_model).note


def test_a_quantile_forest_gives_its_trees_mean_only_when_asked(regression):
    quantile_forest = pytest.importorskip("quantile_forest")
    X, y = regression
    model = quantile_forest.RandomForestQuantileRegressor(n_estimators=6, random_state=0)
    model.fit(X, y)
    with pytest.raises(TypeError, match="quantile 0.5"):
        as_ensemble(model)
    with pytest.warns(UserWarning, match="trees' mean"):
        ensemble = sapwood.from_model(model)
    np.testing.assert_allclose(ensemble.predict(X), model.predict(X, quantiles="mean"),
                               rtol=1e-12, atol=1e-9)
    assert not unwrap(model, sapwood.from_model).read_by_default


def test_votes_stacks_and_multi_output_models_are_refused(classification, regression):
    X, y = classification
    vote = VotingClassifier([("a", _forest(4)), ("b", _forest(4, max_depth=2))],
                            voting="soft").fit(X, y)
    with pytest.raises(TypeError, match="a vote of 2 models"):
        sapwood.from_model(vote)
    assert unwrap(vote, sapwood.from_model).trees is None
    Xr, yr = regression
    stack = StackingRegressor([("a", RandomForestRegressor(n_estimators=3))], cv=2).fit(Xr, yr)
    with pytest.raises(TypeError, match="a stack of 1 models"):
        sapwood.from_model(stack)
    multi = MultiOutputRegressor(RandomForestRegressor(n_estimators=3)).fit(
        Xr, np.column_stack([yr, -yr]))
    with pytest.raises(ValueError, match=r"estimators_\[k\]"):
        sapwood.from_model(multi)


def test_forms_inside_forms(classification):
    X, y = classification
    search = GridSearchCV(CalibratedClassifierCV(_forest(), cv=2),
                          {"method": ["sigmoid", "isotonic"]}, cv=2).fit(X, y)
    wrapped = unwrap(search, sapwood.from_model)
    assert not wrapped.exact and wrapped.estimator is search.best_estimator_
    assert "best_estimator_" in wrapped.note and "calibrated" in wrapped.note
    with pytest.raises(TypeError, match="calibrated"):
        sapwood.from_model(search)
