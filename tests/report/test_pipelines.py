"""sapwood.explain of a scikit-learn Pipeline: a fitted one is judged on the table as
its user has it (text columns as labels, not explain's codes) and every measure names
the input columns; an unfitted one is fitted on the training split like any estimator."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import sapwood
from sapwood.importance import permutation_importance


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({"size": rng.normal(size=n), "colour": rng.choice(["red", "green", "blue"], n),
                      "noise": rng.normal(size=n)})
    y = pd.Series(2 * X["size"] + 1.5 * (X["colour"] == "red") + rng.normal(0, 0.2, n),
                  name="y")
    return X, y


def _pipeline(model):
    steps = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["colour"]),
                                    (StandardScaler(), ["size", "noise"]))
    return make_pipeline(steps, model)


def test_a_fitted_pipeline_is_judged_on_its_own_labels_in_its_input_columns(table):
    X, y = table
    pipeline = _pipeline(RandomForestRegressor(20, max_depth=6, random_state=0))
    pipeline.fit(X.iloc[:160], y.iloc[:160])
    report = sapwood.explain(X.iloc[160:], y.iloc[160:], model=pipeline,
                             methods="mdi,permutation,shap")
    # The score is the pipeline's own on the labels (explain's codes would make its
    # encoder see no known colour).
    assert report.score == pytest.approx(r2_score(y.iloc[160:],
                                                  pipeline.predict(X.iloc[160:])))
    for result in report.results.values():
        assert sorted(result.feature_names) == ["colour", "noise", "size"]
    expected = permutation_importance(pipeline, X.iloc[160:], y.iloc[160:], n_repeats=5,
                                      random_state=0, scoring="r2")
    np.testing.assert_allclose(report.results["permutation"].importances,
                               expected.importances, atol=1e-12)
    assert report.model_text.startswith("Pipeline(ColumnTransformer, RandomForestRegressor")
    assert any("explained in its input columns" in note for note in report.notes)
    assert {entry["feature"] for entry in report.verdict.features} >= {"size", "colour"}


def test_an_unfitted_pipeline_is_fitted_on_the_training_split(table):
    X, y = table
    labels = np.where(y > y.median(), "high", "low")
    pipeline = _pipeline(RandomForestClassifier(15, max_depth=5, random_state=0))
    report = sapwood.explain(X, labels, model=pipeline, methods="mdi,permutation,oob")
    assert report.fitted_here
    assert list(report.results) == ["mdi", "permutation"]
    assert report.results["mdi"].feature_names == ["size", "colour", "noise"]
    assert any(note.startswith("oob importance skipped: it does not read a Pipeline")
               for note in report.notes)


def test_the_report_shows_the_users_pipeline_and_refuses_a_last_step_without_trees(table):
    import json

    from sklearn.linear_model import LinearRegression

    X, y = table
    pipeline = _pipeline(RandomForestRegressor(5, max_depth=4, random_state=0)).fit(X, y)
    report = sapwood.explain(X, y, model=pipeline, methods="mdi", test_size=0.5)
    steps = json.loads(report.to_json())["model"]["params"]["steps"]
    assert "columntransformer" in steps and "sapwood_labels" not in steps
    linear = _pipeline(LinearRegression()).fit(X, y)
    with pytest.raises(ValueError, match="its last step, LinearRegression, is not a tree"):
        sapwood.explain(X, y, model=linear)


def test_effects_of_a_pipeline_name_its_input_columns(table):
    X, y = table
    pipeline = _pipeline(RandomForestRegressor(10, max_depth=5, random_state=0))
    report = sapwood.explain(X, y, model=pipeline, methods="permutation", effects=True)
    effects = {entry["feature"]: entry for entry in report.effects["effects"]}
    assert effects["size"]["pd"] is not None and effects["size"]["ale"] is not None
    assert "numeric features" in effects["colour"]["ale_skipped"]
    pairs = {frozenset(entry["features"]) for entry in report.effects["interactions"]}
    assert pairs <= {frozenset(p) for p in [("size", "colour"), ("size", "noise"),
                                            ("colour", "noise")]}
    assert all(entry["shap"] is not None for entry in report.effects["interactions"])


def test_altmann_pvalues_refit_the_pipeline(table):
    X, y = table
    pipeline = _pipeline(RandomForestRegressor(5, max_depth=4, random_state=0))
    report = sapwood.explain(X, y, model=pipeline, methods="mdi", pvalues="altmann",
                             n_permutations=3)
    assert report.results["mdi"].feature_names == ["size", "colour", "noise"]
    assert report.results["mdi"].pvalues.shape == (3,)


def test_knockoff_selection_is_refused_for_a_pipeline(table):
    X, y = table
    pipeline = _pipeline(RandomForestRegressor(5, random_state=0))
    with pytest.raises(ValueError, match="column lists would not read"):
        sapwood.explain(X, y, model=pipeline, select="knockoffs")
