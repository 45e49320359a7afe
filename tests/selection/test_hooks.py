"""scikit-learn's selectors with sapwood's measures: ImportanceGetter in RFE, RFECV and
SelectFromModel; BorutaSelector as a transformer (check_estimator, Pipeline, grid search)."""

import numpy as np
import pytest
from sklearn.feature_selection import RFE, RFECV, SelectFromModel
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from sapwood import RandomForestClassifier, RandomForestRegressor
from sapwood.datasets import make_ground_truth
from sapwood.importance import (
    MEASURES,
    ImportanceResult,
    Measure,
    mdi,
    oob_permutation_importance,
    permutation_importance,
    registered,
    tree_shap,
    ufi,
)
from sapwood.selection import BorutaSelector, ImportanceGetter, boruta
from sapwood.selection._hooks import _ranking

N_TRAIN = 400


@pytest.fixture(scope="module")
def data():
    """Ground truth: inf_1..inf_5 informative, inf_4_copy a copy of inf_4, three noise
    columns; the first N_TRAIN rows to fit on, the rest held out."""
    X, y, truth = make_ground_truth(n_samples=600, task="regression", random_state=0)
    noise = [name for name, kind in truth.items() if kind == "noise"]
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:], noise


def _forest(**kwargs):
    return RandomForestRegressor(n_estimators=30, random_state=0, **kwargs)


def _getter(measure, data):
    """The getter with the rows the measure reads: held-out ones for permutation, the
    training rows for out-of-bag importance, none for MDI."""
    X, y, X_test, y_test, _ = data
    if measure == "permutation":
        return ImportanceGetter(measure, X_test, y_test, random_state=0)
    if measure == "oob":
        return ImportanceGetter(measure, X, y, random_state=0)
    return ImportanceGetter(measure)


# -- the getter's numbers are the measure's -------------------------------------------


def test_getter_equals_the_measures(data):
    X, y, X_test, y_test, _ = data
    forest = _forest().fit(X, y)
    expected = {
        "permutation": permutation_importance(forest, X_test, y_test, n_repeats=5,
                                              random_state=0),
        "mdi": mdi(forest),
        "oob": oob_permutation_importance(forest, X, y, random_state=0),
    }
    for measure, result in expected.items():
        got = _getter(measure, data)(forest)
        np.testing.assert_array_equal(got, result.importances_mean, err_msg=measure)


@pytest.mark.parametrize("measure", list(MEASURES))
def test_every_registered_measure_gives_values_or_says_why_not(data, measure):
    """On a bagged forest, with held-out rows for held-out measures and the training
    rows for the rest (and for conditional, which reads a bagged forest's out-of-bag
    rows): one finite value per feature, or an error naming the measure (split gain
    and Friedman's importance are for boosting libraries' models)."""
    X, y, X_test, y_test, _ = data
    forest = _forest().fit(X, y)
    held_out = MEASURES[measure].rows == "held-out"
    rows = (X_test, y_test) if held_out else (X, y)
    getter = ImportanceGetter(measure, *rows, random_state=0)
    if measure == "gain":  # the measure's own check, before it runs
        with pytest.raises(ValueError, match=r"^ImportanceGetter\('gain'\) does not apply "
                                             "to RandomForestRegressor: this model records "
                                             "no split gains"):
            getter(forest)
        return
    if measure == "friedman":
        with pytest.raises(ValueError, match=r"^ImportanceGetter\('friedman'\) on "
                                             "RandomForestRegressor: "):
            getter(forest)
        return
    if measure == "vimp":  # a survival forest's
        with pytest.raises(ValueError, match=r"^ImportanceGetter\('vimp'\) does not apply "
                                             "to RandomForestRegressor"):
            getter(forest)
        return
    values = getter(forest)
    assert values.shape == (X.shape[1],) and np.isfinite(values).all()
    expected = {"shap": lambda: tree_shap(forest, X_test),
                "ufi": lambda: ufi(forest, X, y)}
    if measure in expected:
        np.testing.assert_array_equal(values, expected[measure]().importances_mean)


def test_getter_options_and_api_names(data):
    X, y, X_test, y_test, _ = data
    forest = _forest().fit(X, y)
    getter = ImportanceGetter("permutation", X_test, y_test, random_state=1, n_repeats=3,
                              scoring="neg_mean_absolute_error")
    expected = permutation_importance(forest, X_test, y_test, n_repeats=3, random_state=1,
                                      scoring="neg_mean_absolute_error")
    np.testing.assert_array_equal(getter(forest), expected.importances_mean)
    # "oob_permutation" is the out-of-bag measure's name in compare and boruta.
    np.testing.assert_array_equal(
        ImportanceGetter("oob_permutation", X, y, random_state=0)(forest),
        oob_permutation_importance(forest, X, y, random_state=0).importances_mean)


def test_getter_finds_a_dataframe_estimators_columns_by_name(data):
    X, y, X_test, y_test, _ = data
    columns = ["inf_2", "noise_id", "inf_1"]
    forest = _forest().fit(X[columns], y)
    getter = ImportanceGetter("permutation", X_test, y_test, random_state=0)
    expected = permutation_importance(forest, X_test[columns], y_test, n_repeats=5,
                                      random_state=0)
    np.testing.assert_array_equal(getter(forest), expected.importances_mean)
    np.testing.assert_array_equal(getter.columns_, [X.columns.get_loc(c) for c in columns])


def test_rfe_with_the_getter_is_rfe_with_the_measure_called_directly(data):
    """RFE passes the getter a model fit on the remaining columns of an array; the
    getter follows RFE's steps. The same elimination written out, with the measure
    called on the right columns each step, gives the same ranking."""
    X, y, X_test, y_test, _ = data
    X, X_test = X.to_numpy(), X_test.to_numpy()
    n_select, step = 2, 2
    rfe = RFE(_forest(), n_features_to_select=n_select, step=step,
              importance_getter=_getter("permutation", data)).fit(X, y)

    support = np.ones(X.shape[1], dtype=bool)
    ranking = np.ones(X.shape[1], dtype=int)
    while support.sum() > n_select:
        features = np.flatnonzero(support)
        model = _forest().fit(X[:, features], y)
        importances = permutation_importance(model, X_test[:, features], y_test,
                                             n_repeats=5, random_state=0).importances_mean
        ranks = np.argsort(importances ** 2, kind="stable")
        support[features[ranks][:min(step, support.sum() - n_select)]] = False
        ranking[~support] += 1
    np.testing.assert_array_equal(rfe.ranking_, ranking)
    np.testing.assert_array_equal(rfe.support_, support)
    assert ranking.max() == 5  # four elimination steps were followed


def _column_means(model, inputs):
    """A made-up measure: each column's mean over the rows it is given."""
    means = np.asarray(inputs.X_test, dtype=float).mean(axis=0)
    return ImportanceResult(means, np.zeros_like(means), [f"c{j}" for j in range(len(means))],
                            "column_means")


def test_getter_follows_rfe_by_squared_importances():
    """RFE drops the smallest squared importances, negatives included: the getter
    drops the same columns, and the measure sees them (column means -5, 1, -0.5, 3, 2,
    -4 give RFE's order 2, 1, 4, 3; the raw order would drop column 0 first)."""
    means = np.array([-5.0, 1.0, -0.5, 3.0, 2.0, -4.0])
    X = np.random.default_rng(0).normal(size=(50, 6)) + means
    y = np.arange(50.0)
    with registered(Measure("column_means", "tests.column_means", "column means",
                            _column_means, needs={"held-out"})):
        getter = ImportanceGetter("column_means", X, y)
        rfe = RFE(LinearRegression(), n_features_to_select=2, step=1,
                  importance_getter=getter).fit(X, y)
        np.testing.assert_array_equal(rfe.ranking_, [1, 4, 5, 2, 3, 1])
        np.testing.assert_array_equal(getter.columns_, [0, 3, 5])
        np.testing.assert_array_equal(getter._last, X[:, [0, 3, 5]].mean(axis=0))


# -- selection on data with known truth ------------------------------------------------


@pytest.mark.parametrize("measure", ["permutation", "mdi", "oob"])
def test_rfe_keeps_the_signal(data, measure):
    X, y, _, _, noise = data
    rfe = RFE(_forest(), n_features_to_select=5,
              importance_getter=_getter(measure, data)).fit(X, y)
    kept = list(rfe.get_feature_names_out())
    assert len(kept) == 5 and not set(kept) & set(noise), kept
    # the noise goes first: it ranks worst
    noise_ranks = rfe.ranking_[[X.columns.get_loc(c) for c in noise]]
    assert sorted(noise_ranks) == [3, 4, 5]


@pytest.mark.parametrize("measure", ["permutation", "mdi", "oob"])
def test_select_from_model_keeps_the_signal(data, measure):
    X, y, _, _, noise = data
    selector = SelectFromModel(_forest(), importance_getter=_getter(measure, data)).fit(X, y)
    kept = list(selector.get_feature_names_out())
    assert kept and not set(kept) & set(noise), kept
    assert selector.transform(X).shape == (len(X), len(kept))


@pytest.mark.parametrize("measure", ["permutation", "mdi"])
def test_rfecv_drops_the_noise(data, measure):
    X, y, _, _, noise = data
    rfecv = RFECV(_forest(), cv=3, importance_getter=_getter(measure, data)).fit(X, y)
    kept = list(rfecv.get_feature_names_out())
    assert {"inf_1", "inf_2"} <= set(kept) and not set(kept) & set(noise), kept


def test_rfecv_with_training_rows_measures_says_why_it_fails(data):
    X, y, _, _, _ = data
    rfecv = RFECV(_forest(), cv=3, importance_getter=_getter("oob", data))
    with pytest.raises(ValueError, match=r"ImportanceGetter\('oob'\).*X has 400 rows; the "
                                         r"forest was fit on 26[67]"):
        rfecv.fit(X, y)


# -- errors ----------------------------------------------------------------------------


def test_getter_errors_name_the_measure_and_the_reason(data):
    X, y, X_test, y_test, _ = data
    with pytest.raises(ValueError, match="'measure' parameter of ImportanceGetter.*'nope'"):
        ImportanceGetter("nope")
    with pytest.raises(ValueError, match=r"ImportanceGetter\('permutation'\) needs X"):
        ImportanceGetter("permutation")
    with pytest.raises(ValueError, match=r"ImportanceGetter\('permutation'\) needs y"):
        ImportanceGetter("permutation", X_test)
    with pytest.raises(ValueError, match=r"ImportanceGetter\('conditional'\).*X has 200 rows"):
        ImportanceGetter("conditional", X_test, y_test)(_forest().fit(X, y))
    unbagged = _forest(bootstrap=False).fit(X, y)
    with pytest.raises(ValueError, match=r"ImportanceGetter\('oob'\).*bootstrap=False"):
        ImportanceGetter("oob", X, y)(unbagged)
    # The drop-column measure refits a clone of the estimator it is given.
    drop = ImportanceGetter("drop", X, y)
    assert drop(_forest(n_jobs=1).fit(X, y)).shape == (X.shape[1],)
    subset = _forest().fit(X.to_numpy()[:, :3], y)
    with pytest.raises(ValueError, match=r"estimator has 3 features and X has 9 columns"):
        ImportanceGetter("permutation", X_test, y_test)(subset)
    with pytest.raises(ValueError, match="fitted estimator with n_features_in_"):
        ImportanceGetter("mdi")(_forest())


# -- BorutaSelector --------------------------------------------------------------------


def _small_boruta(**kwargs):
    return BorutaSelector(estimator=RandomForestRegressor(n_estimators=20), max_rounds=15,
                          random_state=0, **kwargs)


@pytest.mark.parametrize("as_array", [False, True])
def test_boruta_selector_equals_boruta(data, as_array):
    X, y, _, _, _ = data
    data_X = X.to_numpy() if as_array else X
    selector = _small_boruta().fit(data_X, y)
    result = boruta(data_X, y, estimator=RandomForestRegressor(n_estimators=20),
                    max_rounds=15, random_state=0)
    np.testing.assert_array_equal(selector.result_.decision, result.decision)
    np.testing.assert_array_equal(selector.result_.hits, result.hits)
    np.testing.assert_array_equal(selector.result_.history.to_numpy(),
                                  result.history.to_numpy())
    np.testing.assert_array_equal(selector.support_, result.decision == "confirmed")
    np.testing.assert_array_equal(selector.support_weak_, result.decision == "tentative")
    # boruta names an array's columns x0, x1, ... as scikit-learn does
    assert list(selector.get_feature_names_out()) == result.confirmed
    np.testing.assert_array_equal(selector.transform(data_X),
                                  np.asarray(data_X)[:, selector.support_])
    assert result.confirmed and set(result.rejected) & {"noise_id", "noise_binary",
                                                        "noise_lowcard", "x6", "x7", "x8"}


def test_boruta_selector_ranking():
    decision = np.array(["confirmed", "rejected", "tentative", "rejected", "rejected"])
    assert list(_ranking(decision, np.array([5, 3, 0, 7, 3]))) == [1, 4, 2, 3, 4]
    assert list(_ranking(decision[[0, 2]], np.array([5, 0]))) == [1, 2]


def test_boruta_selector_in_a_pipeline_and_a_grid_search(data):
    X, y, X_test, y_test, noise = data
    pipeline = Pipeline([("boruta", _small_boruta()),
                         ("model", RandomForestRegressor(n_estimators=20, random_state=0))])
    search = GridSearchCV(pipeline, {"boruta__measure": ["mdi", "oob_permutation"]}, cv=2)
    search.fit(X, y)
    assert search.best_params_["boruta__measure"] in ("mdi", "oob_permutation")
    best = search.best_estimator_
    kept = list(best[:-1].get_feature_names_out())
    assert kept and not set(kept) & set(noise), kept
    assert best.predict(X_test).shape == y_test.shape
    assert best.named_steps["model"].n_features_in_ == len(kept)


def test_boruta_selector_reports_boruta_errors():
    X, y = np.zeros((10, 2)), np.arange(10.0)
    with pytest.raises(ValueError, match="'measure' parameter of BorutaSelector"):
        BorutaSelector(measure=3).fit(X, y)
    with pytest.raises(ValueError,
                       match="'measure' parameter of BorutaSelector.*'mdi'.*got 'permutation'"):
        BorutaSelector(measure="permutation").fit(X, y)


@parametrize_with_checks([BorutaSelector(estimator=RandomForestClassifier(n_estimators=10),
                                         max_rounds=10, random_state=0)])
def test_boruta_selector_passes_scikit_learns_checks(estimator, check):
    check(estimator)

