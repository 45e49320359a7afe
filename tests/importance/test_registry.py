"""The measure registry: its records say true things about the measures, and the
names compare, altmann_pvalues and boruta accept come from it."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import sapwood
from sapwood import importance
from sapwood.importance import MEASURES, Measure, MeasureInputs
from sapwood.importance._registry import NEEDS, ROWS, replace


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 4)), columns=["a", "b", "c", "d"])
    y = (X["a"] + 0.5 * X["b"] + 0.3 * rng.normal(size=120) > 0).astype(int)
    return X[:90], y[:90], X[90:], y[90:]


def _model(name):
    if name == "gain":
        xgboost = pytest.importorskip("xgboost")
        return xgboost.XGBClassifier(n_estimators=5, max_depth=2)
    if name == "friedman":
        return sapwood.GradientBoostingClassifier(n_estimators=5, random_state=0)
    return sapwood.RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)


def test_every_record_names_a_public_function_and_valid_fields():
    assert list(MEASURES) == ["mdi", "gain", "friedman", "permutation", "drop",
                              "conditional", "air", "oob", "ufi", "shap", "mdi_plus", "cpi", "sage"]
    api_names = []
    for name, measure in MEASURES.items():
        assert measure.name == name
        assert callable(getattr(importance, measure.function)), measure.function
        assert measure.function in importance.__all__
        assert measure.rows in ROWS and set(measure.needs) <= NEEDS
        assert not measure.fallback or measure.fallback in MEASURES
        assert ("estimator" in measure.needs) == bool(measure.refits) == \
               (measure.rows == "refit")
        assert not measure.janitza or measure.centred
        api_names += list(measure.names)
    assert len(api_names) == len(set(api_names))


@pytest.mark.parametrize("name", list(MEASURES))
def test_the_flags_describe_the_results(name, data):
    X, y, X_test, y_test = data
    measure = MEASURES[name]
    model = _model(name)
    inputs = MeasureInputs(X_train=X, y_train=y, X_test=X_test, y_test=y_test,
                           random_state=0, estimator=clone(model), max_rows=None,
                           # drop-column has draws (folds) by cross-validation only
                           cv=3 if name == "drop" else None)
    model.fit(X, y)
    assert measure.why_not(model, inputs, **measure.options) is None
    result = measure.run(model, inputs, **measure.options)
    has_intervals = result.ci_low is not None and bool(np.isfinite(result.ci_low).any())
    assert has_intervals == measure.intervals
    assert (result.rank_intervals() is not None) == measure.rank_intervals
    assert ("zscore" in result.extra) == measure.zscore
    if measure.janitza:
        # Importances of irrelevant features scatter around zero: negatives possible.
        assert result.importances_mean.min() < 0.5 * result.importances_mean.max()
    if not measure.centred:
        assert (result.importances_mean >= 0).all() or name == "ufi"
    _draws_order_as_the_importance(result)


def _draws_order_as_the_importance(result):
    """Rank intervals come from the draws' means: they must rank the features as the
    importance does (a monotone transform of the mean, as Friedman's square root, is
    fine; another average is not)."""
    if result.importances is None or result.importances.shape[1] < 2:
        return
    by_draws = pd.Series(result.importances.mean(axis=1)).rank(method="min")
    by_importance = pd.Series(result.importances_mean).rank(method="min")
    assert (by_draws == by_importance).all(), (result.method, by_draws, by_importance)


@pytest.mark.parametrize("combine", ["forest", "boosting"])
def test_mdi_draws_average_to_the_importance(combine, data):
    X, y, _, _ = data
    model = (sapwood.RandomForestClassifier(n_estimators=8, random_state=0) if combine ==
             "forest" else sapwood.GradientBoostingClassifier(n_estimators=20, random_state=0))
    result = importance.mdi(model.fit(X, y))
    np.testing.assert_allclose(result.importances.mean(axis=1), result.importances_mean,
                               rtol=1e-12)
    _draws_order_as_the_importance(result)


def test_predicates_give_reasons():
    X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0] * 5, "b": [1.0, 0.0] * 10})
    y = (X["a"] > 1).astype(int)
    tree = sapwood.DecisionTreeClassifier(max_depth=2).fit(X, y)
    no_test = MeasureInputs(X_train=X, y_train=y)
    assert "needs out-of-sample rows" in MEASURES["conditional"].why_not(
        tree, no_test, **MEASURES["conditional"].options)
    assert "needs an unfitted estimator" in MEASURES["drop"].why_not(tree, no_test)
    assert MEASURES["mdi"].why_not(tree, no_test) is None
    xgboost = pytest.importorskip("xgboost")
    booster = xgboost.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y)
    assert "records no node impurities" in MEASURES["mdi"].why_not(booster, no_test)


def test_a_measure_record_checks_its_fields():
    with pytest.raises(ValueError, match="'rows' field of Measure must be one of"):
        Measure("x", "mdi", "x", lambda model, inputs: None, rows="test")
    with pytest.raises(ValueError, match=r"'needs' field .* got \['X'\]"):
        Measure("x", "mdi", "x", lambda model, inputs: None, rows="train",
                needs=frozenset({"X"}))
    with pytest.raises(TypeError, match="register takes a Measure"):
        importance.register("mdi")
    with pytest.raises(ValueError, match="no measure named 'nothing'"):
        importance.unregister("nothing")
    with pytest.raises(TypeError):
        del importance.MEASURES["mdi"]


def test_the_names_each_function_accepts_come_from_the_registry(data):
    X, y, X_test, y_test = data
    from sapwood.importance._compare import _api_names
    from sapwood.importance._pvalues import _altmann_names
    from sapwood.selection._boruta import _named_importances

    # Each measure by the command line's name and by its long names (one measure, one
    # name everywhere; the long names stay as aliases).
    assert sorted(_api_names()) == sorted([
        "mdi", "gain", "native", "friedman", "permutation", "drop", "drop_column",
        "conditional", "conditional_permutation", "air", "impurity_corrected", "oob",
        "oob_permutation", "ufi", "unbiased_mdi", "shap", "tree_shap", "mdi_plus", "cpi",
        "sage"])
    assert _altmann_names() == sorted([
        "mdi", "friedman", "permutation", "conditional", "conditional_permutation", "air",
        "impurity_corrected", "oob", "oob_permutation", "ufi", "unbiased_mdi", "mdi_plus"])
    assert sorted(_named_importances()) == sorted([
        "mdi", "gain", "native", "friedman", "oob", "oob_raw", "oob_permutation",
        "oob_permutation_raw", "ufi", "unbiased_mdi", "mdi_plus"])
    # "native" is the library's default kind, "gain" its split gain: two measures.
    model = sapwood.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    table = importance.compare(model, X, y, methods=["native"])
    np.testing.assert_array_equal(table["importance"],
                                  importance.native_importance(model).importances_mean)


def test_replacing_a_measure_keeps_the_registry_order():
    order = list(MEASURES)
    original = MEASURES["permutation"]
    swapped = dataclasses.replace(original, label="swapped")
    assert replace(swapped) is original
    try:
        assert list(MEASURES) == order and MEASURES["permutation"] is swapped
    finally:
        replace(original)
    assert list(MEASURES) == order and MEASURES["permutation"] is original
    with pytest.raises(ValueError, match="no measure named 'nothing'"):
        replace(dataclasses.replace(original, name="nothing"))
    with pytest.raises(ValueError, match="already taken by another measure"):
        replace(dataclasses.replace(original, api_names={"mdi": {}}))

