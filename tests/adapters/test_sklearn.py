"""scikit-learn models: converted trees predict what scikit-learn predicts, and
native_importance reproduces feature_importances_."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from sklearn import ensemble, tree
from sklearn.linear_model import LinearRegression

from sapwood import FormatError
from sapwood.adapters import as_ensemble, from_model, predict, predict_proba, predict_raw
from sapwood.importance._gain import native_importance

from ._data import assert_close, datasets, make_data

CLASSIFIERS = {
    "tree": lambda: tree.DecisionTreeClassifier(max_depth=6, random_state=0),
    "extra_tree": lambda: tree.ExtraTreeClassifier(random_state=0),
    "forest": lambda: ensemble.RandomForestClassifier(8, max_depth=5, random_state=0),
    "extra_trees": lambda: ensemble.ExtraTreesClassifier(8, random_state=0),
    "hist_gb": lambda: ensemble.HistGradientBoostingClassifier(max_iter=8, random_state=0),
}
REGRESSORS = {
    "tree": lambda: tree.DecisionTreeRegressor(max_depth=6, random_state=0),
    "forest": lambda: ensemble.RandomForestRegressor(8, max_depth=5, random_state=0),
    "extra_trees": lambda: ensemble.ExtraTreesRegressor(8, random_state=0),
    "hist_gb": lambda: ensemble.HistGradientBoostingRegressor(max_iter=8, random_state=0),
    "hist_gb_poisson": lambda: ensemble.HistGradientBoostingRegressor(
        max_iter=8, loss="poisson", random_state=0),
}
# GradientBoosting* does not accept NaN.
GB_CLASSIFIERS = {
    "log_loss": lambda: ensemble.GradientBoostingClassifier(n_estimators=8, max_depth=2,
                                                            random_state=0),
    "exponential": lambda: ensemble.GradientBoostingClassifier(
        n_estimators=8, max_depth=2, loss="exponential", random_state=0),
}
GB_REGRESSORS = {
    loss: (lambda loss=loss: ensemble.GradientBoostingRegressor(
        n_estimators=8, max_depth=2, loss=loss, subsample=0.8, random_state=0))
    for loss in ("squared_error", "absolute_error", "huber", "quantile")
}
SETTINGS = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def check_classifier(model, X):
    converted = from_model(model)
    assert_close(predict_proba(converted, X), model.predict_proba(X))
    np.testing.assert_array_equal(predict(converted, X), model.predict(X))
    if hasattr(model, "decision_function"):
        scale = 2.0 if getattr(model, "loss", None) == "exponential" else 1.0
        assert_close(predict_raw(converted, X), scale * model.decision_function(X))
    if hasattr(model, "feature_importances_"):
        assert_close(native_importance(model).importances_mean, model.feature_importances_,
                     atol=1e-12)


def check_regressor(model, X):
    converted = from_model(model)
    assert_close(predict(converted, X), model.predict(X))
    if hasattr(model, "feature_importances_"):
        assert_close(native_importance(model).importances_mean, model.feature_importances_,
                     atol=1e-12)


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("n_classes", [2, 3])
@SETTINGS
@given(data=datasets)
def test_classifiers_predict_like_sklearn(name, n_classes, data):
    X, _, y_reg = data
    y = np.digitize(y_reg, np.quantile(y_reg, np.linspace(0, 1, n_classes + 1)[1:-1]))
    check_classifier(CLASSIFIERS[name]().fit(X, y), X)


@pytest.mark.parametrize("name", sorted(REGRESSORS))
@SETTINGS
@given(data=datasets)
def test_regressors_predict_like_sklearn(name, data):
    X, _, y = data
    if name.endswith("poisson"):
        y = np.exp(y / 4)
    check_regressor(REGRESSORS[name]().fit(X, y), X)


@pytest.mark.parametrize("name", sorted(GB_CLASSIFIERS))
@pytest.mark.parametrize("n_classes", [2, 3])
@SETTINGS
@given(data=datasets)
def test_gradient_boosting_classifiers(name, n_classes, data):
    X, _, y_reg = data
    if name == "exponential" and n_classes == 3:
        return  # scikit-learn's exponential loss is binary only
    X = np.nan_to_num(X)
    y = np.digitize(y_reg, np.quantile(y_reg, np.linspace(0, 1, n_classes + 1)[1:-1]))
    check_classifier(GB_CLASSIFIERS[name]().fit(X, y), X)


@pytest.mark.parametrize("name", sorted(GB_REGRESSORS))
@SETTINGS
@given(data=datasets)
def test_gradient_boosting_regressors(name, data):
    X, _, y = data
    X = np.nan_to_num(X)
    check_regressor(GB_REGRESSORS[name]().fit(X, y), X)


def test_string_labels_feature_names_and_float64_input_near_thresholds():
    pd = pytest.importorskip("pandas")
    X, y, _ = make_data(1, n_features=3, n_levels=4)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    labels = np.array(["no", "yes"])[y]
    model = ensemble.RandomForestClassifier(5, random_state=0).fit(frame, labels)
    converted = from_model(model)
    assert converted.feature_names == ("a", "b", "c")
    assert converted.classes == ("no", "yes")
    # float64 values straddling float32-rounded thresholds route as scikit-learn does.
    thresholds = np.concatenate([t.threshold[t.feature >= 0] for t in converted.trees])
    thresholds = thresholds[np.isfinite(thresholds)]
    probe = np.repeat(X[:1], thresholds.size * 3, axis=0)
    probe[:, 0] = np.concatenate([np.nextafter(thresholds, -np.inf), thresholds,
                                  np.nextafter(thresholds, np.inf)])
    probe = pd.DataFrame(probe, columns=["a", "b", "c"])
    np.testing.assert_array_equal(converted.predict_proba(probe.to_numpy()),
                                  model.predict_proba(probe))


def test_multi_output_forests():
    X, y, y_reg = make_data(2, n_features=4, nan_fraction=0.1)
    Y = np.column_stack([y, (y_reg > 0).astype(int) + (y_reg > 1)])
    classifier = ensemble.RandomForestClassifier(6, random_state=0).fit(X, Y)
    converted = from_model(classifier)
    for ours, theirs in zip(predict_proba(converted, X), classifier.predict_proba(X),
                            strict=True):
        assert_close(ours, theirs)
    np.testing.assert_array_equal(predict(converted, X), classifier.predict(X))
    regressor = ensemble.ExtraTreesRegressor(6, random_state=0).fit(X, np.column_stack(
        [y_reg, -y_reg]))
    assert_close(predict(from_model(regressor), X), regressor.predict(X))


def test_iteration_range_matches_staged_predictions():
    X, y, y_reg = make_data(3)
    model = ensemble.GradientBoostingClassifier(n_estimators=6, random_state=0).fit(
        np.nan_to_num(X), y)
    staged = list(model.staged_decision_function(np.nan_to_num(X)))
    converted = from_model(model, iteration_range=(0, 3))
    assert_close(predict_raw(converted, np.nan_to_num(X)), staged[2].ravel())
    hist = ensemble.HistGradientBoostingRegressor(max_iter=6).fit(X, y_reg)
    staged = list(hist.staged_predict(X))
    assert_close(predict(from_model(hist, iteration_range=(0, 4)), X), staged[3])
    with pytest.raises(ValueError, match="iteration_range"):
        from_model(model, iteration_range=(0, 99))
    forest = ensemble.RandomForestRegressor(2).fit(X, y_reg)
    with pytest.raises(ValueError, match="iteration_range"):
        from_model(forest, iteration_range=(0, 1))
    zero_init = ensemble.GradientBoostingRegressor(n_estimators=3, init="zero").fit(
        np.nan_to_num(X), y_reg)
    assert_close(predict(from_model(zero_init), np.nan_to_num(X)),
                 zero_init.predict(np.nan_to_num(X)))


def test_as_ensemble_accepts_foreign_models_and_keeps_its_old_behaviour():
    X, y, _ = make_data(4)
    model = tree.DecisionTreeClassifier(random_state=0).fit(X, y)
    converted = as_ensemble(model)
    assert as_ensemble(converted) is converted
    single = as_ensemble(converted.trees[0])
    assert single.n_trees == 1 and single.task == "regression"
    with pytest.raises(TypeError, match="LinearRegression"):
        as_ensemble(LinearRegression().fit(np.nan_to_num(X), y))


def test_refusals_name_the_problem():
    X, y, _ = make_data(5, nan_fraction=0.0)
    with pytest.raises(ValueError, match="not fitted"):
        from_model(tree.DecisionTreeClassifier())
    with pytest.raises(TypeError, match="AdaBoostClassifier"):
        from_model(ensemble.AdaBoostClassifier(n_estimators=2).fit(X, y))
    with pytest.raises(ValueError, match="init"):
        from_model(ensemble.GradientBoostingRegressor(
            n_estimators=2, init=LinearRegression()).fit(X, y))
    # Categorical splits are read (tests/adapters/test_categorical_models.py).
    with pytest.raises(FormatError, match="not a model file"):
        from_model(__file__)


def test_hist_gradient_boosting_has_no_impurity_importance():
    X, y, _ = make_data(6)
    model = ensemble.HistGradientBoostingClassifier(max_iter=3).fit(X, y)
    with pytest.raises(ValueError, match="impurit"):
        native_importance(model, "impurity")
    total_gain = native_importance(model, "total_gain").importances_mean
    # The split gains scikit-learn's own predictor nodes record, summed per feature.
    expected = np.zeros(X.shape[1])
    for iteration in model._predictors:
        for predictor in iteration:
            nodes = predictor.nodes
            split = ~nodes["is_leaf"].astype(bool)
            np.add.at(expected, nodes["feature_idx"][split], nodes["gain"][split])
    np.testing.assert_allclose(total_gain, expected, rtol=1e-12, atol=1e-12)
    assert expected.sum() > 0


def test_the_kind_of_model_and_its_bootstrap_draws_are_recorded():
    X, y, y_reg = make_data(31, n_features=4)
    X0 = np.nan_to_num(X)
    expected = {
        "DecisionTreeClassifier": ("tree", "gini", False, True),
        "RandomForestClassifier": ("forest", "gini", True, True),
        "ExtraTreesClassifier": ("forest", "gini", False, True),
        "GradientBoostingClassifier": ("boosting", "log_loss", False, True),
        "HistGradientBoostingClassifier": ("boosting", "log_loss", False, False),
    }
    for model in (tree.DecisionTreeClassifier(max_depth=3),
                  ensemble.RandomForestClassifier(4, max_depth=3, random_state=0,
                                                  max_samples=0.5),
                  ensemble.ExtraTreesClassifier(4, max_depth=3),
                  ensemble.GradientBoostingClassifier(n_estimators=3),
                  ensemble.HistGradientBoostingClassifier(max_iter=3)):
        kind = from_model(model.fit(X0, y)).kind
        name = type(model).__name__
        assert (kind.library, kind.model) == ("sklearn", name)
        assert (kind.family, kind.objective, kind.bagged, kind.node_impurity) == (
            expected[name]), name
    forest = ensemble.RandomForestClassifier(4, max_depth=3, random_state=0,
                                             max_samples=0.5).fit(X0, y)
    bootstrap = from_model(forest).bootstrap
    assert bootstrap.n_draws == len(y) // 2
    for t, drawn in enumerate(forest.estimators_samples_):
        np.testing.assert_array_equal(bootstrap.indices(t), drawn)
        np.testing.assert_array_equal(bootstrap.counts(t), np.bincount(drawn, minlength=len(y)))
    unbagged = ensemble.RandomForestClassifier(2, bootstrap=False).fit(X0, y)
    assert from_model(unbagged).bootstrap is None
