"""A fitted Pipeline in its input columns, against the references: shap's TreeExplainer
on the last step, its values summed over each input column's derived columns (1e-6);
scikit-learn's permutation_importance on the whole pipeline (the same numbers: the
shuffled derived block is the transformed shuffled column); the last step's
feature_importances_ summed."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
)

from sapwood.adapters import read_pipeline
from sapwood.importance import (
    drop_column_importance,
    mdi,
    native_importance,
    permutation_importance,
    tree_shap,
)


def _table(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"size": rng.normal(size=n), "colour": rng.choice(list("rgb"), n),
                      "age": rng.normal(size=n), "city": rng.choice(list("pqst"), n),
                      "noise": rng.normal(size=n), "unused": rng.normal(size=n)})
    X.loc[::9, "age"] = np.nan
    signal = 2 * X["size"] + (X["colour"] == "r") + 0.5 * X["city"].isin(["p", "q"])
    return X, signal + 0.3 * rng.normal(size=n)


def _steps(onehot=True):
    encoder = (OneHotEncoder(handle_unknown="ignore", sparse_output=False) if onehot
               else OrdinalEncoder())
    return ColumnTransformer([
        ("categories", encoder, ["colour", "city"]),
        ("numbers", make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()),
         ["size", "age"]),
        ("rest", "passthrough", ["noise"]),
    ], remainder="drop")


@pytest.fixture(scope="module")
def data():
    return _table()


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return make_pipeline(_steps(), RandomForestRegressor(12, max_depth=6, random_state=0)
                         ).fit(X, y)


def _shap_summed(pipeline, X):
    """shap's values of the last step on the derived columns, summed per input unit."""
    shap = pytest.importorskip("shap")
    model = read_pipeline(pipeline)
    derived = model.transform(X)
    values = shap.TreeExplainer(model.final).shap_values(derived, check_additivity=False)
    values = values if values.ndim == 2 else values[..., -1]
    _, _, columns = model.columns.groups(X.columns)
    return np.column_stack([values[:, c].sum(axis=1) if c.size else np.zeros(len(X))
                            for c in columns])


def test_shap_values_are_shaps_summed_per_input_column(data, forest):
    X, _ = data
    result = tree_shap(forest, X.iloc[:40])
    assert result.feature_names == list(X.columns)
    np.testing.assert_allclose(result.extra["shap_values"], _shap_summed(forest, X.iloc[:40]),
                               atol=1e-6)
    # Additivity kept: the input columns' values add up to the prediction.
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    np.testing.assert_allclose(total, forest.predict(X.iloc[:40]), atol=1e-9)
    assert result.importances_mean[list(X.columns).index("unused")] == 0
    derived = tree_shap(forest, X.iloc[:40], transformed=True)
    assert derived.feature_names == list(forest[0].get_feature_names_out())


def test_permutation_is_scikit_learns_on_the_whole_pipeline(data, forest):
    X, y = data
    ours = permutation_importance(forest, X, y, n_repeats=4, random_state=3)
    theirs = sklearn_permutation_importance(forest, X, y, n_repeats=4, random_state=3)
    assert ours.feature_names == list(X.columns)
    assert ours.params["evaluator"] == "tree" and ours.params["columns"] == "input"
    # Each input column's derived block shuffled with the row permutation
    # scikit-learn shuffles the column with: the same scores.
    np.testing.assert_allclose(ours.importances, theirs.importances, rtol=0, atol=1e-12)


def test_mdi_and_gain_are_the_derived_columns_summed(data, forest):
    X, _ = data
    result = mdi(forest, feature_names=list(X.columns))
    read = read_pipeline(forest)
    _, _, columns = read.columns.groups(X.columns)
    expected = [read.final.feature_importances_[c].sum() for c in columns]
    np.testing.assert_allclose(result.importances_mean, expected, rtol=1e-12)
    assert result.feature_names == list(X.columns)
    assert np.isclose(result.importances_mean.sum(), 1)
    derived = mdi(forest, transformed=True)
    assert derived.feature_names == list(forest[0].get_feature_names_out())
    assert native_importance(forest).feature_names == list(X.columns)


def test_a_classifier_of_histogram_boosting_and_feature_groups(data):
    X, y = data
    labels = np.where(y > y.median(), "high", "low")
    pipeline = make_pipeline(_steps(onehot=False),
                             HistGradientBoostingClassifier(max_iter=15, random_state=0)
                             ).fit(X, labels)
    result = tree_shap(pipeline, X.iloc[:40])
    np.testing.assert_allclose(result.extra["shap_values"], _shap_summed(pipeline, X.iloc[:40]),
                               atol=1e-6)
    groups = {"place": ["city", "colour"], "body": ["size", "age"]}
    ours = permutation_importance(pipeline, X, labels, n_repeats=3, random_state=0,
                                  feature_groups=groups)
    assert ours.feature_names == ["place", "body"]
    # The groups shuffled together in the whole pipeline, row permutation by row
    # permutation (scikit-learn's generic loop, through sapwood's generic evaluator).
    whole = permutation_importance(_Opaque(pipeline), X, labels, n_repeats=3,
                                   random_state=0, feature_groups=groups)
    np.testing.assert_allclose(ours.importances, whole.importances, atol=1e-12)


class _Opaque(ClassifierMixin, BaseEstimator):
    """A pipeline hidden behind predict / predict_proba / score: read as any model."""

    def __init__(self, pipeline):
        self.pipeline = pipeline
        self.classes_ = pipeline.classes_

    def fit(self, X, y):
        return self

    def predict(self, X):
        return self.pipeline.predict(X)

    def predict_proba(self, X):
        return self.pipeline.predict_proba(X)

    def score(self, X, y):
        return self.pipeline.score(X, y)


def test_a_step_not_known_to_be_row_wise_runs_the_whole_pipeline(data):
    X, y = data
    numbers = X[["size", "noise", "unused"]]
    pipeline = make_pipeline(FunctionTransformer(np.tanh, feature_names_out="one-to-one"),
                             RandomForestRegressor(8, max_depth=5, random_state=0)
                             ).fit(numbers, y)
    with pytest.warns(UserWarning, match="each shuffle runs the whole pipeline"):
        ours = permutation_importance(pipeline, numbers, y, n_repeats=3, random_state=1)
    theirs = sklearn_permutation_importance(pipeline, numbers, y, n_repeats=3, random_state=1)
    assert ours.params["columns"] == "input, whole pipeline"
    np.testing.assert_allclose(ours.importances, theirs.importances, atol=1e-12)


def test_polynomial_terms_report_the_columns_they_join(data):
    X, y = data
    numbers = X[["size", "noise", "unused"]]
    steps = ColumnTransformer([("poly", PolynomialFeatures(2, interaction_only=True),
                                ["size", "noise"])], remainder="passthrough")
    pipeline = make_pipeline(steps, RandomForestRegressor(8, max_depth=5, random_state=0)
                             ).fit(numbers, y)
    for result in (mdi(pipeline, feature_names=list(numbers.columns)),
                   tree_shap(pipeline, numbers.iloc[:20]),
                   permutation_importance(pipeline, numbers, y, n_repeats=2, random_state=0)):
        assert result.feature_names == ["size & noise", "unused"]
    # A group taking one of the joined columns: the whole pipeline per shuffle, exact.
    alone = permutation_importance(pipeline, numbers, y, n_repeats=2, random_state=0,
                                   feature_groups={"size": ["size"]})
    assert alone.params["columns"] == "input, whole pipeline"
    theirs = sklearn_permutation_importance(pipeline, numbers, y, n_repeats=2, random_state=0)
    np.testing.assert_allclose(alone.importances[0], theirs.importances[0], atol=1e-12)


def test_groups_is_the_former_name_of_feature_groups(data, forest):
    X, y = data
    groups = {"place": ["city", "colour"]}
    with pytest.warns(FutureWarning, match=r"feature_groups=\.\.\."):
        old = permutation_importance(forest, X, y, n_repeats=2, random_state=0, groups=groups)
    new = permutation_importance(forest, X, y, n_repeats=2, random_state=0,
                                 feature_groups=groups)
    np.testing.assert_array_equal(old.importances, new.importances)
    with pytest.raises(TypeError, match="once"):
        permutation_importance(forest, X, y, groups=groups, feature_groups=groups)
    numbers, target = X[["size", "noise", "unused"]], y
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        drop_column_importance(RandomForestRegressor(5, random_state=0), numbers, target,
                               cv=2, feature_groups={"both": ["size", "noise"]})
    with pytest.warns(FutureWarning, match="drop_column_importance"):
        drop_column_importance(RandomForestRegressor(5, random_state=0), numbers, target,
                               cv=2, groups={"both": ["size", "noise"]})


@pytest.mark.slow
@pytest.mark.parametrize("library", ["gb", "lightgbm", "xgboost", "forest-classifier"])
def test_shap_values_of_other_models_summed(data, library):
    X, y = data
    if library == "gb":
        model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    elif library == "lightgbm":
        lightgbm = pytest.importorskip("lightgbm")
        model = lightgbm.LGBMRegressor(n_estimators=20, verbose=-1, random_state=0)
    elif library == "xgboost":
        xgboost = pytest.importorskip("xgboost")
        model = xgboost.XGBRegressor(n_estimators=20, max_depth=4, random_state=0)
    else:
        model = RandomForestClassifier(10, max_depth=6, random_state=0)
        y = np.where(y > y.median(), 1, 0)
    steps = _steps()
    if library == "gb":
        steps.set_params(numbers=make_pipeline(SimpleImputer(), StandardScaler()))
    pipeline = make_pipeline(steps, model).fit(X, y)
    result = tree_shap(pipeline, X.iloc[:50])
    values = result.extra["shap_values"]
    values = values if values.ndim == 2 else values[..., -1]
    np.testing.assert_allclose(values, _shap_summed(pipeline, X.iloc[:50]), atol=1e-6)
    ours = permutation_importance(pipeline, X, y, n_repeats=3, random_state=2)
    theirs = sklearn_permutation_importance(pipeline, X, y, n_repeats=3, random_state=2)
    np.testing.assert_allclose(ours.importances, theirs.importances, atol=1e-9)


def test_feature_groups_sum_shap_values_of_any_model(data, forest):
    X, y = data
    numbers = X[["size", "noise", "unused"]]
    model = RandomForestRegressor(8, max_depth=5, random_state=0).fit(numbers, y)
    plain = tree_shap(model, numbers.iloc[:30], interactions=True)
    grouped = tree_shap(model, numbers.iloc[:30], interactions=True,
                        feature_groups={"both": ["size", "noise"], "unused": ["unused"]})
    assert grouped.feature_names == ["both", "unused"]
    phi = plain.extra["shap_values"]
    np.testing.assert_allclose(grouped.extra["shap_values"],
                               np.column_stack([phi[:, :2].sum(axis=1), phi[:, 2]]),
                               atol=1e-12)
    pairs = grouped.extra["interaction_values"]
    np.testing.assert_allclose(pairs.sum(axis=2), grouped.extra["shap_values"], atol=1e-9)
    through_pipeline = tree_shap(forest, X.iloc[:30], feature_groups={"place": ["city",
                                                                                 "colour"]})
    summed = tree_shap(forest, X.iloc[:30]).extra["shap_values"]
    columns = list(X.columns)
    np.testing.assert_allclose(
        through_pipeline.extra["shap_values"][:, 0],
        summed[:, columns.index("city")] + summed[:, columns.index("colour")], atol=1e-12)


def test_drop_column_refits_the_last_step_without_an_input_columns_block(data):
    X, y = data
    train, test = slice(0, 110), slice(110, None)

    def pipeline(columns):
        steps = ColumnTransformer(
            [("categories", OneHotEncoder(handle_unknown="ignore", sparse_output=False),
              [c for c in ("colour", "city") if c in columns]),
             ("numbers", StandardScaler(), [c for c in ("size", "noise") if c in columns])])
        return make_pipeline(steps, RandomForestRegressor(8, max_depth=5, random_state=0))

    columns = ["size", "colour", "city", "noise"]
    result = drop_column_importance(pipeline(columns), X[columns][train], y[train],
                                    X[columns][test], y[test])
    assert result.feature_names == columns
    # The definition: the pipeline rebuilt without the column, refit, scored.
    full = pipeline(columns).fit(X[columns][train], y[train]).score(X[columns][test], y[test])
    for name, importance in zip(columns, result.importances_mean, strict=True):
        kept = [c for c in columns if c != name]
        without = pipeline(kept).fit(X[kept][train], y[train]).score(X[kept][test], y[test])
        assert importance == pytest.approx(full - without, abs=1e-12)
    with pytest.raises(ValueError, match="X_test"):
        drop_column_importance(pipeline(columns), X[columns], y, cv=2)
