"""Interventional TreeSHAP equals the shap package's TreeExplainer and the definition."""

import warnings

import lightgbm
import numpy as np
import pytest
import shap
import xgboost
from scipy.special import expit
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import sapwood
from sapwood.adapters import as_ensemble
from sapwood.importance import tree_shap
from tests.reference.naive_shap_interventional import naive_interventional_shap


def _regression(n=300, p=6, seed=0):
    X, y = make_regression(n_samples=n, n_features=p, n_informative=4, noise=1.0,
                           random_state=seed)
    X[:, 3] = np.round(X[:, 3])  # ties
    return X, y


def _binary(n=300, p=6, seed=0):
    return make_classification(n_samples=n, n_features=p, n_informative=3, n_redundant=1,
                               random_state=seed)


def _multiclass(n=300, p=6, seed=0):
    return make_classification(n_samples=n, n_features=p, n_informative=3, n_redundant=1,
                               n_classes=3, random_state=seed)


# name: (model, data, the model outputs shap explains as their names say)
MODELS = {
    "sklearn-tree-reg": (DecisionTreeRegressor(max_depth=7, random_state=0), _regression,
                         ["raw"]),
    "sklearn-forest-reg": (RandomForestRegressor(10, random_state=0), _regression, ["raw"]),
    "sklearn-tree-bin": (DecisionTreeClassifier(max_depth=6, random_state=0), _binary,
                         ["log_loss"]),
    "sklearn-forest-bin": (RandomForestClassifier(10, max_depth=8, random_state=0), _binary,
                           ["raw", "probability", "log_loss"]),
    "sklearn-forest-multi": (RandomForestClassifier(10, max_depth=8, random_state=0),
                             _multiclass, ["raw", "probability", "log_loss"]),
    "sklearn-extra-bin": (ExtraTreesClassifier(20, random_state=0), _binary, ["log_loss"]),
    "sklearn-extra-multi": (ExtraTreesClassifier(20, min_samples_leaf=3, random_state=0),
                            _multiclass, ["log_loss"]),
    "sklearn-boost-reg": (GradientBoostingRegressor(n_estimators=15, random_state=0),
                          _regression, ["raw"]),
    "sklearn-boost-bin": (GradientBoostingClassifier(n_estimators=15, random_state=0),
                          _binary, ["raw", "probability"]),
    "xgboost-reg": (xgboost.XGBRegressor(n_estimators=15, max_depth=4), _regression,
                    ["raw", "log_loss"]),
    "xgboost-bin": (xgboost.XGBClassifier(n_estimators=15, max_depth=4), _binary,
                    ["raw", "probability", "log_loss"]),
    "xgboost-multi": (xgboost.XGBClassifier(n_estimators=10, max_depth=4), _multiclass,
                      ["raw"]),
    "lightgbm-reg": (lightgbm.LGBMRegressor(n_estimators=15, verbose=-1), _regression,
                     ["raw", "log_loss"]),
    "lightgbm-bin": (lightgbm.LGBMClassifier(n_estimators=15, verbose=-1), _binary,
                     ["raw", "probability", "log_loss"]),
    "lightgbm-multi": (lightgbm.LGBMClassifier(n_estimators=10, verbose=-1), _multiclass,
                       ["raw"]),
}
CASES = [(name, output) for name in sorted(MODELS) for output in MODELS[name][2]]


def _fitted(name):
    estimator, data, _ = MODELS[name]
    X, y = data()
    return estimator.fit(X[:200], y[:200]), X, y


def _close_to_shap(ours, theirs):
    # shap's interventional kernel keeps leaf values and partial sums in float32: equal
    # to that rounding, relative to the values' size.
    theirs = np.asarray(theirs)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=0,
                               atol=1e-6 * max(1.0, float(np.abs(theirs).max())))


@pytest.mark.parametrize(("name", "output"), CASES)
def test_values_equal_shap_tree_explainer(name, output):
    model, X, y = _fitted(name)
    background, rows, labels = X[:40], X[200:240], y[200:240]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explainer = shap.TreeExplainer(model, background, feature_perturbation="interventional",
                                       model_output=output)
        if output == "log_loss":
            theirs = explainer.shap_values(rows, labels)
            expected = np.array([explainer.expected_value(label) for label in labels])
        else:
            theirs = explainer.shap_values(rows)
            expected = explainer.expected_value
    result = tree_shap(model, rows, data=background, model_output=output,
                       y=labels if output == "log_loss" else None)
    _close_to_shap(result.extra["shap_values"], theirs)
    if name == "xgboost-multi":
        # shap adds one base score to every class's expected value where XGBoost 3 keeps
        # one per class; the mean of XGBoost's own margins is the expected value.
        expected = model.predict(background, output_margin=True).mean(axis=0)
    # XGBoost's model is float32 (shap reads its base score as one).
    rtol = 1e-6 if name.startswith("xgboost") else 1e-9
    np.testing.assert_allclose(result.extra["expected_value"], expected, rtol=rtol,
                               atol=1e-12)
    assert result.params["feature_perturbation"] == "interventional"
    assert result.params["model_output"] == output


@pytest.mark.parametrize(("name", "output"), CASES)
def test_values_add_up_to_the_explained_output(name, output):
    model, X, y = _fitted(name)
    rows, labels = X[200:230], y[200:230]
    result = tree_shap(model, rows, data=X[:30], model_output=output,
                       y=labels if output == "log_loss" else None)
    margin = as_ensemble(model).raw_predict(rows).reshape(rows.shape[0], -1)
    phi = result.extra["shap_values"]
    total = phi.sum(axis=1) + result.extra["expected_value"]
    if output == "probability" and margin.shape[1] == 1:
        target = expit(margin[:, 0])
    elif output == "log_loss" and name.endswith("reg"):
        target = (margin[:, 0] - labels) ** 2
    elif output == "log_loss" and phi.ndim == 3:
        # A forest: every class probability through the logistic loss, the same label.
        target = np.logaddexp(0.0, margin) - labels[:, None] * margin
    elif output == "log_loss":
        target = np.logaddexp(0.0, margin[:, 0]) - labels * margin[:, 0]
    else:
        target = margin[:, 0] if phi.ndim == 2 else margin
    np.testing.assert_allclose(total, target, rtol=1e-9, atol=1e-9)


def test_missing_values_follow_the_trees_missing_direction():
    X, y = _binary()
    X = X.copy()
    rng = np.random.RandomState(0)
    X[rng.rand(*X.shape) < 0.15] = np.nan
    model = xgboost.XGBClassifier(n_estimators=10, max_depth=4).fit(X[:200], y[:200])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = shap.TreeExplainer(model, X[:40], feature_perturbation="interventional",
                                    model_output="probability").shap_values(X[200:240])
    ours = tree_shap(model, X[200:240], data=X[:40], model_output="probability")
    _close_to_shap(ours.extra["shap_values"], theirs)


def test_every_background_row_is_used_as_shap_uses_them_given_a_masker():
    # shap.TreeExplainer(model, data) keeps a sample of 100 rows of a larger background;
    # sapwood uses all it is given, as shap does through a masker that keeps them all.
    model, X, _ = _fitted("xgboost-bin")
    background = np.concatenate([X[:200], X[240:]])  # 260 rows
    masker = shap.maskers.Independent(background, max_samples=background.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explainer = shap.TreeExplainer(model, masker, feature_perturbation="interventional",
                                       model_output="probability")
        theirs = explainer.shap_values(X[200:220])
    result = tree_shap(model, X[200:220], data=background, model_output="probability")
    _close_to_shap(result.extra["shap_values"], theirs)
    np.testing.assert_allclose(result.extra["expected_value"], explainer.expected_value,
                               rtol=1e-6)


@pytest.mark.parametrize(("data", "output", "n_trees"), [
    (_multiclass, "probability", 8), (_binary, "log_loss", 20), (_multiclass, "log_loss", 20)])
def test_sapwood_forest_equals_shap_on_the_same_scikit_learn_forest(data, output, n_trees):
    X, y = data()
    ours = sapwood.RandomForestClassifier(n_estimators=n_trees, random_state=0).fit(X, y)
    theirs = RandomForestClassifier(n_estimators=n_trees, random_state=0).fit(X, y)
    rows, labels = X[200:300], (y[200:300] if output == "log_loss" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explainer = shap.TreeExplainer(theirs, X[:100], feature_perturbation="interventional",
                                       model_output=output)
        reference = explainer.shap_values(rows, labels)
    result = tree_shap(ours, rows, data=X[:100], model_output=output, y=labels)
    _close_to_shap(result.extra["shap_values"], reference)
    if output == "log_loss":
        expected = np.array([explainer.expected_value(label) for label in labels])
        assert result.extra["expected_value"].shape == (100, len(np.unique(y)))
        np.testing.assert_allclose(result.extra["expected_value"], expected, rtol=1e-9,
                                   atol=1e-12)


# Tiny models, every value checked against the brute-force definition.
def _tiny(kind):
    X, y = make_classification(n_samples=120, n_features=4, n_informative=3, n_redundant=0,
                               random_state=1)
    X[:, 2] = np.round(X[:, 2])
    if kind == "tree":
        return sapwood.DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, y), X, y
    if kind == "boost-reg":
        return sapwood.GradientBoostingRegressor(n_estimators=5, max_depth=3,
                                                 random_state=0).fit(X, X[:, 0] + y), X, y
    if kind == "forest":
        return sapwood.RandomForestClassifier(n_estimators=4, max_depth=4,
                                              random_state=0).fit(X, y), X, y
    if kind == "forest-multi":
        y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
        return sapwood.RandomForestClassifier(n_estimators=4, max_depth=4,
                                              random_state=0).fit(X, y), X, y
    return sapwood.GradientBoostingClassifier(n_estimators=5, max_depth=3,
                                              random_state=0).fit(X, y), X, y


@pytest.mark.parametrize(("kind", "output"), [("tree", "raw"), ("forest", "raw"),
                                              ("forest", "probability"), ("boost", "raw"),
                                              ("boost", "probability"),
                                              ("boost", "log_loss"),
                                              ("boost-reg", "log_loss"),
                                              ("forest", "log_loss"),
                                              ("forest-multi", "log_loss")])
def test_values_equal_the_brute_force_definition(kind, output):
    model, X, y = _tiny(kind)
    ensemble = as_ensemble(model)
    rows, background, labels = X[:12], X[60:75], y[:12]
    transform = None
    if output == "probability" and kind == "boost":
        def transform(margin, label):
            return expit(margin)
    elif output == "log_loss" and kind == "boost-reg":
        def transform(margin, label):
            return (margin - label) ** 2
    elif output == "log_loss":
        def transform(margin, label):
            return np.logaddexp(0.0, margin) - label * margin
    n_columns = ensemble.raw_predict(rows[:1]).reshape(1, -1).shape[1]
    if transform is None or n_columns == 1:
        reference = naive_interventional_shap(ensemble.raw_predict, rows, background,
                                              transform, labels.astype(float))
    else:
        # A forest's loss: each class column rescaled on its own, with the same label.
        reference = np.concatenate([naive_interventional_shap(
            lambda hybrids, c=c: ensemble.raw_predict(hybrids).reshape(len(hybrids), -1)
            [:, c:c + 1], rows, background, transform, labels.astype(float))
            for c in range(n_columns)], axis=2)
    result = tree_shap(model, rows, data=background, model_output=output,
                       y=labels if output == "log_loss" else None)
    phi = result.extra["shap_values"]
    np.testing.assert_allclose(phi.reshape(reference.shape), reference, rtol=1e-12,
                               atol=1e-13)


def test_a_row_alone_gets_the_numbers_it_gets_in_a_batch_and_on_any_thread_count():
    # Leaves are tabulated for many rows and read group by group for few: the same
    # additions in the same order, so the same numbers to the last bit.
    X, y = _regression()
    model = RandomForestRegressor(10, max_depth=6, random_state=0).fit(X[:200], y[:200])
    batch = tree_shap(model, X[200:], data=X[:50]).extra["shap_values"]
    alone = np.concatenate([tree_shap(model, X[200 + i:201 + i], data=X[:50])
                            .extra["shap_values"] for i in range(0, 100, 7)])
    np.testing.assert_array_equal(alone, batch[::7])
    threaded = tree_shap(model, X[200:], data=X[:50], n_jobs=2).extra["shap_values"]
    np.testing.assert_array_equal(threaded, batch)


@pytest.mark.parametrize("output", ["raw", "probability"])
def test_masks_told_apart_by_sorting_give_the_same_values(monkeypatch, output):
    # Leaves with more than _DENSE_FEATURES path features sort the rows' masks instead
    # of using an array of 2^d slots: force that path on every leaf.
    import sapwood.importance._engine._shap_interventional as module

    model, X, _ = _fitted("xgboost-bin")
    dense = tree_shap(model, X[200:240], data=X[:40], model_output=output)
    monkeypatch.setattr(module, "_DENSE_FEATURES", 0)
    sorted_ = tree_shap(model, X[200:240], data=X[:40], model_output=output)
    np.testing.assert_allclose(sorted_.extra["shap_values"], dense.extra["shap_values"],
                               rtol=1e-12, atol=1e-14)


def test_auto_is_interventional_with_data_and_path_dependent_without():
    model, X, _ = _fitted("sklearn-forest-reg")
    with_data = tree_shap(model, X[200:210], data=X[:20])
    assert with_data.params["feature_perturbation"] == "interventional"
    assert with_data.params["n_background"] == 20
    without = tree_shap(model, X[200:210])
    assert without.params["feature_perturbation"] == "tree_path_dependent"
    explicit = tree_shap(model, X[200:210], data=X[:20], feature_perturbation="interventional")
    np.testing.assert_array_equal(explicit.extra["shap_values"],
                                  with_data.extra["shap_values"])


@pytest.mark.parametrize(("name", "kwargs", "message"), [
    ("sklearn-forest-reg", {"feature_perturbation": "interventional"}, "needs background"),
    ("sklearn-forest-reg", {"feature_perturbation": "conditional"}, "feature_perturbation must"),
    ("sklearn-forest-reg", {"model_output": "margin"}, "model_output must"),
    ("sklearn-forest-reg", {"model_output": "probability", "data": True}, "probability"),
    ("sklearn-forest-reg", {"model_output": "log_loss", "data": True, "y": True},
     "log_loss"),
    ("sklearn-forest-reg", {"model_output": "probability"}, "raw output only"),
    ("sklearn-forest-reg", {"data": True, "feature_perturbation": "tree_path_dependent"},
     "interventional' only"),
    ("sklearn-forest-reg", {"data": True, "interactions": True}, "interactions=True"),
    ("xgboost-bin", {"model_output": "log_loss", "data": True}, "needs y"),
    ("xgboost-bin", {"data": "empty"}, "data has no rows"),
    ("xgboost-bin", {"data": True, "y": True}, "y is used only"),
    ("lightgbm-multi", {"model_output": "probability", "data": True}, "softmax"),
    ("lightgbm-multi", {"model_output": "log_loss", "data": True, "y": True}, "log_loss"),
    ("sklearn-forest-bin", {"model_output": "log_loss", "data": True}, "needs y"),
])
def test_unsupported_combinations_are_refused_with_the_reason(name, kwargs, message):
    model, X, y = _fitted(name)
    kwargs = dict(kwargs)
    if kwargs.get("data") is True:
        kwargs["data"] = X[:20]
    elif kwargs.get("data") == "empty":
        kwargs["data"] = X[:0]
    if kwargs.get("y") is True:
        kwargs["y"] = y[200:210]
    with pytest.raises(ValueError, match=message):
        tree_shap(model, X[200:210], **kwargs)


def test_log_loss_labels_are_the_classifier_s_classes():
    X, y = _binary()
    labels = np.where(y == 1, "yes", "no")
    model = xgboost.XGBClassifier(n_estimators=5, max_depth=3).fit(X[:200], y[:200])
    numeric = tree_shap(model, X[200:220], data=X[:20], model_output="log_loss",
                        y=y[200:220])
    ensemble = as_ensemble(model)
    assert tuple(ensemble.classes) == (0, 1)
    with pytest.raises(ValueError, match="not one of the model's classes"):
        tree_shap(model, X[200:220], data=X[:20], model_output="log_loss",
                  y=labels[200:220])
    assert numeric.extra["expected_value"].shape == (20,)


def test_forest_log_loss_reads_labels_as_class_indices():
    # shap reads a label as its number; sapwood as its class's index, the same number
    # for classes 0 .. k-1 and defined for any labels.
    X, y = _multiclass()
    names = np.array(["ash", "birch", "cedar"])[y]
    numeric = RandomForestClassifier(10, max_depth=6, random_state=0).fit(X[:200], y[:200])
    named = RandomForestClassifier(10, max_depth=6, random_state=0).fit(X[:200], names[:200])
    ours = tree_shap(numeric, X[200:230], data=X[:30], model_output="log_loss", y=y[200:230])
    theirs = tree_shap(named, X[200:230], data=X[:30], model_output="log_loss",
                       y=names[200:230])
    np.testing.assert_array_equal(theirs.extra["shap_values"], ours.extra["shap_values"])
    np.testing.assert_array_equal(theirs.extra["expected_value"], ours.extra["expected_value"])
    assert theirs.extra["output_names"] == ["ash", "birch", "cedar"]
    with pytest.raises(ValueError, match="not one of the model's classes"):
        tree_shap(named, X[200:230], data=X[:30], model_output="log_loss", y=y[200:230])


def test_forest_probabilities_split_by_a_rounding_count_as_equal():
    # A forest's class probability is a mean of leaf fractions: the same probability
    # reached through different leaves can come out of the sums a rounding apart. shap
    # (whose sums keep this tie) rescales such a pair by 1, as equal margins; the
    # quotient of the two few-ulp differences would be noise.
    X, y = _multiclass()
    model = RandomForestClassifier(20, max_depth=8, random_state=0).fit(X[:200], y[:200])
    rows, background, labels = X[200:300], X[:100], y[200:300]
    ensemble = as_ensemble(model)
    margins = [ensemble.raw_predict(part).reshape(len(part), -1)
               for part in (rows, background)]
    gap = np.abs(margins[0][:, None] - margins[1][None])
    assert np.any((gap > 0) & (gap < 1e-14))  # the case this test is about
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = shap.TreeExplainer(model, background, feature_perturbation="interventional",
                                    model_output="log_loss").shap_values(rows, labels)
    ours = tree_shap(model, rows, data=background, model_output="log_loss", y=labels)
    _close_to_shap(ours.extra["shap_values"], theirs)


def test_multi_output_forest_log_loss_is_refused():
    X, y = _binary()
    model = RandomForestClassifier(5, max_depth=4, random_state=0).fit(
        X[:200], np.column_stack([y[:200], 1 - y[:200]]))
    with pytest.raises(ValueError, match="single-output classifier"):
        tree_shap(model, X[200:210], data=X[:20], model_output="log_loss", y=y[200:210])
