"""LightGBM models and text files: raw scores, predictions, split / gain importances,
and the mapping of LightGBM's three missing-value types onto the tree format."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sapwood import FormatError
from sapwood.adapters import from_model, predict, predict_proba, predict_raw
from sapwood.adapters._lightgbm import _ZERO, _routing
from sapwood.importance._gain import native_importance

from ._data import assert_close, datasets, make_data

lgb = pytest.importorskip("lightgbm")

SETTINGS = settings(max_examples=5, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
COMMON = {"n_estimators": 8, "num_leaves": 7, "min_child_samples": 3, "verbose": -1,
          "n_jobs": 1, "random_state": 0}
REGRESSION = {
    "regression": lambda y: y,
    "huber": lambda y: y,
    "quantile": lambda y: y,
    "poisson": lambda y: np.exp(y / 4),
    "gamma": lambda y: np.exp(y / 4),
    "tweedie": lambda y: np.exp(y / 4),
    "cross_entropy": lambda y: 1 / (1 + np.exp(-y)),
}
# LightGBM's missing handling options: missing type NaN (default), None, Zero.
MISSING = {"nan": {}, "none": {"use_missing": False}, "zero": {"zero_as_missing": True}}


def convert_or_refuse(model):
    """The converted model, or None when LightGBM's zero-as-missing split cannot be
    represented (the refusal must name the feature)."""
    try:
        return from_model(model)
    except ValueError as error:
        assert "zero_as_missing" in str(error) and "feature" in str(error)
        return None


def check_importances(model):
    for kind in ("split", "gain"):
        assert_close(native_importance(model, kind).importances_mean,
                     model.booster_.feature_importance(kind), atol=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("missing", sorted(MISSING))
@SETTINGS
@given(data=datasets)
def test_classifier(n_classes, missing, data):
    X, _, y_reg = data
    y = np.digitize(y_reg, np.quantile(y_reg, np.linspace(0, 1, n_classes + 1)[1:-1]))
    model = lgb.LGBMClassifier(**COMMON, **MISSING[missing]).fit(X, y)
    converted = convert_or_refuse(model)
    if converted is None:
        return
    assert_close(predict_raw(converted, X), model.predict(X, raw_score=True))
    assert_close(predict_proba(converted, X), model.predict_proba(X))
    np.testing.assert_array_equal(predict(converted, X), model.predict(X))
    check_importances(model)


@pytest.mark.parametrize("objective", sorted(REGRESSION))
@SETTINGS
@given(data=datasets, missing=st.sampled_from(sorted(MISSING)))
def test_regressor(objective, data, missing):
    X, _, y = data
    model = lgb.LGBMRegressor(objective=objective, **COMMON, **MISSING[missing]).fit(
        X, REGRESSION[objective](y))
    converted = convert_or_refuse(model)
    if converted is None:
        return
    assert_close(predict_raw(converted, X), model.predict(X, raw_score=True))
    assert_close(predict(converted, X), model.predict(X))
    check_importances(model)


def test_random_forest_and_sigmoid_scaling():
    X, y, y_reg = make_data(14, n_features=4, zero_fraction=0.1)
    forest = lgb.LGBMRegressor(boosting_type="rf", subsample=0.6, subsample_freq=1,
                               **COMMON).fit(X, y_reg)
    converted = from_model(forest)
    assert_close(predict(converted, X), forest.predict(X))
    # LightGBM's raw_score of a random forest is the sum of the trees; sapwood's margin
    # is their average (what the prediction is).
    assert_close(predict_raw(converted, X) * converted.n_trees,
                 forest.predict(X, raw_score=True))
    steep = lgb.LGBMClassifier(sigmoid=2.5, **COMMON).fit(X, y)
    converted = from_model(steep)
    assert_close(predict_proba(converted, X), steep.predict_proba(X))
    assert_close(predict_raw(converted, X), 2.5 * steep.predict(X, raw_score=True))


def test_text_file_and_booster_match(tmp_path):
    X, y, _ = make_data(15, n_features=4, n_classes=3)
    model = lgb.LGBMClassifier(**COMMON).fit(X, y)
    path = tmp_path / "model.txt"
    model.booster_.save_model(path)
    from_file = from_model(path)
    assert from_file.feature_names == tuple(f"Column_{j}" for j in range(4))
    assert_close(predict_raw(from_file, X), model.predict(X, raw_score=True))
    loaded = lgb.Booster(model_file=path)
    assert_close(predict_raw(from_model(loaded), X), loaded.predict(X, raw_score=True))
    # The text file rounds split gains to 6 significant digits; LightGBM reading the
    # file sees the same rounded numbers.
    assert_close(native_importance(path, "gain").importances_mean,
                 loaded.feature_importance("gain"), atol=1e-9)


def test_zero_as_missing_converts_where_representable():
    converted = 0
    for seed in range(8):
        X, _, y = make_data(seed, n_features=3, zero_fraction=0.2, nan_fraction=0.1)
        model = lgb.LGBMRegressor(**dict(COMMON, n_estimators=3, num_leaves=4),
                                  zero_as_missing=True).fit(X, y)
        ensemble = convert_or_refuse(model)
        if ensemble is not None:
            converted += 1
            assert_close(predict(ensemble, X), model.predict(X))
    assert converted >= 2


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
def test_early_stopping_keeps_the_best_iteration():
    X, y, _ = make_data(16, n_samples=300, nan_fraction=0.0)
    X_valid, y_valid, _ = make_data(17, n_samples=200, nan_fraction=0.0)
    model = lgb.LGBMClassifier(n_estimators=80, learning_rate=0.8, verbose=-1, n_jobs=1).fit(
        X, y, eval_set=[(X_valid, 1 - y_valid)],
        callbacks=[lgb.early_stopping(2, verbose=False)])
    assert 0 < model.best_iteration_ < 80
    converted = from_model(model)
    assert converted.n_trees == model.best_iteration_
    assert_close(predict_raw(converted, X), model.predict(X, raw_score=True))
    check_importances(model)
    everything = from_model(model, iteration_range=(0, 0))
    assert_close(predict_raw(everything, X),
                 model.predict(X, raw_score=True, num_iteration=-1))


def test_constant_target_gives_single_leaf_trees():
    X, _, _ = make_data(18)
    model = lgb.LGBMRegressor(**COMMON).fit(X, np.full(len(X), 3.0))
    converted = from_model(model)
    assert all(tree.node_count == 1 for tree in converted.trees)
    assert_close(predict(converted, X), model.predict(X))


def test_refusals_name_the_problem():
    X, y, _ = make_data(19, n_features=3, nan_fraction=0.0)
    X[:, 2] = np.arange(len(X)) % 5
    # Categorical splits are read (tests/adapters/test_categorical_models.py).
    linear = lgb.LGBMRegressor(**COMMON, linear_tree=True).fit(X, X[:, 0] * 3)
    with pytest.raises(ValueError, match="linear trees"):
        from_model(linear)
    ova = lgb.LGBMClassifier(**COMMON, objective="multiclassova").fit(X, y + (X[:, 2] > 2))
    with pytest.raises(ValueError, match="multiclassova"):
        from_model(ova)


def lightgbm_decision(x, threshold, decision_type):
    """LightGBM's NumericalDecision (tree.h), written out as the reference."""
    missing_type = (decision_type >> 2) & 3
    if np.isnan(x) and missing_type != 2:
        x = 0.0
    if (missing_type == 1 and -_ZERO <= x <= _ZERO) or (missing_type == 2 and np.isnan(x)):
        return bool(decision_type & 2)
    return x <= threshold


@given(threshold=st.sampled_from([-1.5, -2 * _ZERO, -_ZERO, -1e-36, 0.0, 1e-36, _ZERO,
                                  2 * _ZERO, 0.75]),
       default_left=st.booleans(), missing_type=st.sampled_from([0, 1, 2]))
@settings(max_examples=60, deadline=None)
def test_missing_types_route_exactly_as_lightgbm(threshold, default_left, missing_type):
    decision = np.array([missing_type << 2 | (2 if default_left else 0)])
    try:
        new_threshold, operator, missing_left = _routing(np.array([threshold]), decision,
                                                         np.array([0]), ["x"])
    except ValueError as error:
        assert missing_type == 1 and "'x'" in str(error)
        return
    probes = [np.nan, 0.0, -0.0, 1e-36, -1e-36, _ZERO, -_ZERO, np.nextafter(_ZERO, 1),
              np.nextafter(-_ZERO, -1), threshold, np.nextafter(threshold, 1),
              np.nextafter(threshold, -1), -3.0, 3.0]
    for x in probes:
        if np.isnan(x):
            ours = bool(missing_left[0])
        elif operator[0] == 0:
            ours = x <= new_threshold[0]
        else:
            ours = x < new_threshold[0]
        assert ours == lightgbm_decision(x, threshold, decision[0]), x


def test_damaged_text_raises_format_error(tmp_path):
    X, y, _ = make_data(20)
    model = lgb.LGBMRegressor(**COMMON).fit(X, y)
    text = model.booster_.model_to_string()
    rng = np.random.default_rng(1)
    lines = text.splitlines()
    for trial in range(80):
        damaged = list(lines)
        position = int(rng.integers(0, len(damaged)))
        if trial % 3 == 0:
            damaged = damaged[:position]
        elif trial % 3 == 1:
            damaged[position] = damaged[position].replace("=", "=x", 1)
        else:
            key, _, values = damaged[position].partition("=")
            damaged[position] = key + "=" + " ".join(values.split()[:-1])
        path = tmp_path / "damaged.txt"
        path.write_text("\n".join(damaged))
        try:
            from_model(path)
        except (FormatError, ValueError):
            pass


def test_the_kind_of_model_is_recorded():
    X, y, y_reg = make_data(15, n_features=4)
    kind = from_model(lgb.LGBMClassifier(**COMMON).fit(X, y)).kind
    assert (kind.library, kind.model, kind.objective, kind.family) == (
        "lightgbm", "LGBMClassifier", "binary sigmoid:1", "boosting")
    assert kind.library_version and not kind.bagged and not kind.node_impurity
    forest = from_model(lgb.LGBMRegressor(boosting_type="rf", subsample=0.6,
                                          subsample_freq=1, **COMMON).fit(X, y_reg))
    assert forest.kind.family == "forest" and forest.bootstrap is None
