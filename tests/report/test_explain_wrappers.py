"""explain on model forms that hold tree models: the score and permutation through the
wrapper's own predictions (equal to scikit-learn's permutation_importance on it), the
tree measures on the trees it holds, with a note, or skipped with the reason."""

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import TransformedTargetRegressor
from sklearn.ensemble import (
    RandomForestClassifier,
    RandomForestRegressor,
    StackingClassifier,
    VotingClassifier,
)
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV
from sklearn.multioutput import MultiOutputClassifier

import sapwood
from sapwood import importance
from sapwood._errors import InputError

N_TRAIN, N_TEST = 240, 120
N_REPEATS = 5  # explain's permutation repeats


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    n = N_TRAIN + N_TEST
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "noise": rng.normal(size=n)})
    label = (X["a"] + 0.5 * X["b"] + 0.3 * rng.normal(size=n) > 0).astype(int)
    value = np.exp(1 + 0.8 * X["a"] + 0.3 * X["b"] + 0.1 * rng.normal(size=n))
    return X, label, value


def _split(X, y):
    return X.iloc[:N_TRAIN], y.iloc[:N_TRAIN], X.iloc[N_TRAIN:], y.iloc[N_TRAIN:]


def _permutation(report):
    result = report.results["permutation"]
    return dict(zip(result.feature_names, result.importances_mean, strict=True))


def _sklearn_permutation(model, X, y, scoring):
    direct = permutation_importance(model, X, y, scoring=scoring, n_repeats=N_REPEATS,
                                    random_state=0)
    return dict(zip(X.columns, direct.importances_mean, strict=True))


def _forest(cls=RandomForestClassifier, **params):
    return cls(n_estimators=10, random_state=0, **params)


def test_a_search_is_explained_as_its_best_estimator(rows):
    X, _, value = rows
    X_train, y_train, X_test, y_test = _split(X, value)
    # The search's own score is an error: the report's R² must not be it.
    search = GridSearchCV(_forest(RandomForestRegressor), {"max_depth": [2, 6]}, cv=2,
                          scoring="neg_mean_squared_error").fit(X_train, y_train)
    methods = ["mdi", "permutation"]
    # One thread: scikit-learn's forest adds its trees' predictions in the order its
    # threads finish, which moves the last bit between two calls.
    report = sapwood.explain(X_test, y_test, model=search, methods=methods, n_jobs=1)
    best = sapwood.explain(X_test, y_test, model=search.best_estimator_, methods=methods,
                           n_jobs=1)
    assert report.score == best.score == pytest.approx(
        r2_score(y_test, search.predict(X_test)), abs=1e-12)
    for name in methods:
        np.testing.assert_array_equal(report.results[name].importances_mean,
                                      best.results[name].importances_mean)
    assert report.model_text.startswith("GridSearchCV best_estimator_: RandomForestRegressor")
    assert any("best_estimator_ (RandomForestRegressor, max_depth=" in note
               for note in report.notes)


def test_an_unfitted_search_is_fitted_on_the_training_rows(rows):
    X, label, _ = rows
    search = GridSearchCV(_forest(), {"max_depth": [2, 4]}, cv=2)
    report = sapwood.explain(X, label, model=search)
    assert report.fitted_here and set(report.results) == {"mdi", "permutation"}
    assert report.model_text.startswith("GridSearchCV best_estimator_:")


def test_a_calibrated_classifier(rows):
    X, label, _ = rows
    X_train, y_train, X_test, y_test = _split(X, label)
    model = CalibratedClassifierCV(_forest(), cv=3).fit(X_train, y_train)
    report = sapwood.explain(X_test, y_test, model=model, methods=["mdi", "permutation", "oob"])
    # The score and permutation through its calibrated probabilities: scikit-learn's.
    assert report.score == pytest.approx(-np.mean(
        (model.predict_proba(X_test)[:, 1] - y_test) ** 2), abs=1e-12)
    assert _permutation(report) == pytest.approx(
        _sklearn_permutation(model, X_test, y_test, "neg_brier_score"), abs=1e-12)
    # MDI of its fold models' trees, read as one forest.
    folds = sapwood.adapters._wrappers.unwrap(model, sapwood.from_model).trees
    np.testing.assert_allclose(report.results["mdi"].importances_mean,
                               importance.mdi(folds).importances_mean, rtol=1e-12)
    assert any("calibrated probabilities" in note and "3 base estimators" in note
               for note in report.notes)
    # A measure that reads the trees with the target is skipped, saying why.
    assert "oob" not in report.results
    assert any(note.startswith("oob importance skipped: it reads the trees together with "
                               "the target") for note in report.notes)


def test_a_transformed_target(rows):
    X, _, value = rows
    X_train, y_train, X_test, y_test = _split(X, value)
    model = TransformedTargetRegressor(_forest(RandomForestRegressor), func=np.log,
                                       inverse_func=np.exp).fit(X_train, y_train)
    report = sapwood.explain(X_test, y_test, model=model, methods=["mdi", "permutation"])
    assert report.score == pytest.approx(model.score(X_test, y_test), abs=1e-12)
    assert _permutation(report) == pytest.approx(
        _sklearn_permutation(model, X_test, y_test, None), abs=1e-12)
    np.testing.assert_allclose(report.results["mdi"].importances_mean,
                               model.regressor_.feature_importances_, rtol=1e-6)
    assert any("explain the transformed target" in note for note in report.notes)


def test_a_quantile_forest_reads_its_trees_only_when_asked(rows):
    quantile_forest = pytest.importorskip("quantile_forest")
    X, _, value = rows
    X_train, y_train, X_test, y_test = _split(X, value)
    model = quantile_forest.RandomForestQuantileRegressor(n_estimators=10, random_state=0)
    model.fit(X_train, y_train)
    report = sapwood.explain(X_test, y_test, model=model)
    assert report.score == pytest.approx(r2_score(y_test, model.predict(X_test)), abs=1e-12)
    assert _permutation(report) == pytest.approx(
        _sklearn_permutation(model, X_test, y_test, None), abs=1e-12)
    assert "mdi" not in report.results
    assert any("mdi importance skipped" in note and "sapwood.from_model(model)" in note
               for note in report.notes)
    with pytest.warns(UserWarning, match="trees' mean"):
        mean = sapwood.from_model(model)
    asked = sapwood.explain(X_test, y_test, model=mean)
    assert "mdi" in asked.results


def test_a_vote_and_a_stack(rows):
    X, label, _ = rows
    X_train, y_train, X_test, y_test = _split(X, label)
    vote = VotingClassifier([("a", _forest()), ("b", _forest(max_depth=3))],
                            voting="soft").fit(X_train, y_train)
    report = sapwood.explain(X_test, y_test, model=vote, methods=["mdi", "permutation"])
    assert _permutation(report) == pytest.approx(
        _sklearn_permutation(vote, X_test, y_test, "neg_brier_score"), abs=1e-12)
    assert "mdi" not in report.results
    assert any("need one tree ensemble" in note for note in report.notes)
    assert report.model_text == "VotingClassifier of 2 models"
    stack = StackingClassifier([("a", _forest())], final_estimator=LogisticRegression(),
                               cv=2).fit(X_train, y_train)
    report = sapwood.explain(X_test, y_test, model=stack, methods=["shap", "permutation"])
    assert set(report.results) == {"permutation"}


def test_a_balanced_forest(rows):
    imblearn = pytest.importorskip("imblearn.ensemble")
    X, label, _ = rows
    X_train, y_train, X_test, y_test = _split(X, label)
    model = imblearn.BalancedRandomForestClassifier(
        n_estimators=10, sampling_strategy="all", replacement=True, bootstrap=True,
        random_state=0).fit(X_train, y_train)
    report = sapwood.explain(X_test, y_test, model=model, X_train=X_train, y_train=y_train,
                             methods=["mdi", "permutation", "oob"])
    assert _permutation(report) == pytest.approx(
        _sklearn_permutation(model, X_test, y_test, "neg_brier_score"), abs=1e-12)
    np.testing.assert_allclose(report.results["mdi"].importances_mean,
                               model.feature_importances_, rtol=1e-6)
    # Its trees' rows were under-sampled before the bootstrap: no out-of-bag rows known.
    assert "oob" not in report.results
    assert any(note.startswith("oob importance skipped") and "no bootstrap record" in note
               for note in report.notes)


def test_a_multi_output_model_is_refused_in_one_line(rows):
    X, label, _ = rows
    model = MultiOutputClassifier(_forest()).fit(X, np.column_stack([label, 1 - label]))
    with pytest.raises(InputError, match=r"2 outputs.*estimators_\[k\]"):
        sapwood.explain(X, label, model=model)
