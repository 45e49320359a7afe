"""scikit-learn's IsolationForest: the raw output is the mean path length the shap
package explains, from which score_samples and decision_function follow, and TreeSHAP
equals shap's TreeExplainer."""

import numpy as np
import pytest
import shap
from sklearn.ensemble import IsolationForest

import sapwood
from sapwood.adapters import from_model, predict, predict_raw
from sapwood.adapters._sklearn import average_path_length
from sapwood.importance import (
    mdi,
    native_importance,
    oob_permutation_importance,
    permutation_importance,
    tree_shap,
)

from ._data import make_data

SETTINGS = {
    "default": {},
    "feature_subsets": {"max_features": 0.6},
    "two_features_bootstrap": {"max_features": 2, "bootstrap": True, "max_samples": 90},
    "contamination": {"contamination": 0.1, "max_samples": 1.0},
}


def _fit(name, nan_fraction=0.1, n_levels=10):
    X, _, _ = make_data(3, n_samples=500, n_features=5, nan_fraction=nan_fraction,
                        n_levels=n_levels)
    model = IsolationForest(n_estimators=15, random_state=0, **SETTINGS[name]).fit(X[:300])
    return model, X[300:]


def _path_length(model, X):
    """The mean path length, recovered from scikit-learn's score_samples."""
    return -np.log2(-model.score_samples(X)) * average_path_length([model.max_samples_])[0]


def test_average_path_length_is_the_harmonic_approximation():
    n = np.array([0, 1, 2, 3, 10, 256])
    harmonic = np.log(n[3:] - 1.0) + np.euler_gamma
    expected = np.r_[0.0, 0.0, 1.0, 2 * harmonic - 2 * (n[3:] - 1.0) / n[3:]]
    np.testing.assert_allclose(average_path_length(n), expected, rtol=1e-15)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_raw_output_is_the_mean_path_length(name):
    model, X = _fit(name)
    ensemble = from_model(model)
    raw = predict_raw(ensemble, X)
    assert raw.shape == (X.shape[0],)
    np.testing.assert_array_equal(predict(ensemble, X), raw)
    # The documented relation to scikit-learn's scores.
    scale = average_path_length([model.max_samples_])[0]
    score = -(2.0 ** (-raw / scale))
    np.testing.assert_allclose(score, model.score_samples(X), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(score - model.offset_, model.decision_function(X),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(raw, _path_length(model, X), rtol=1e-9)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_tree_shap_equals_shap_tree_explainer(name):
    # Continuous data: on tied data an isolation tree's random threshold can equal a
    # row's value, and shap then routes that row unlike scikit-learn (its values stop
    # adding up to the model's output); sapwood routes as scikit-learn does (next test).
    model, X = _fit(name, n_levels=0)
    explainer = shap.TreeExplainer(model)
    result = tree_shap(model, X)
    np.testing.assert_allclose(result.extra["shap_values"], explainer.shap_values(X),
                               rtol=1e-9, atol=1e-9)
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    np.testing.assert_allclose(total, _path_length(model, X), rtol=1e-9)
    if not model.bootstrap:
        # With bootstrap draws shap's expected value weighs the leaves by their distinct
        # rows but its SHAP values by the draws, so that shap's own values do not add
        # up; sapwood's expected value is the one they add up to (checked above).
        np.testing.assert_allclose(result.extra["expected_value"],
                                   np.squeeze(explainer.expected_value), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_tree_shap_adds_up_to_the_path_length_on_tied_data(name):
    model, X = _fit(name)
    result = tree_shap(model, X)
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    np.testing.assert_allclose(total, _path_length(model, X), rtol=1e-9)


def test_the_kind_and_feature_names_are_recorded():
    pd = pytest.importorskip("pandas")
    X, _, _ = make_data(0, n_samples=200, n_features=3, nan_fraction=0.0)
    frame = pd.DataFrame(X, columns=["a", "b c", "d"])
    model = IsolationForest(n_estimators=5, random_state=0).fit(frame)
    ensemble = from_model(model)
    assert ensemble.feature_names == ("a", "b c", "d")
    assert ensemble.task == "regression" and ensemble.combine == "mean"
    kind = ensemble.kind
    assert (kind.library, kind.model, kind.objective, kind.family) == (
        "sklearn", "IsolationForest", "path_length", "forest")
    assert not kind.node_impurity and not kind.bagged and ensemble.bootstrap is None


def test_a_saved_isolation_forest_predicts_the_same(tmp_path):
    model, X = _fit("feature_subsets")
    sapwood.save(model, tmp_path / "iforest.sapwood")
    loaded = from_model(tmp_path / "iforest.sapwood")
    np.testing.assert_array_equal(predict_raw(loaded, X), predict_raw(model, X))
    assert loaded.kind == from_model(model).kind


def test_permutation_needs_a_scorer_and_runs_with_one():
    model, X = _fit("default", nan_fraction=0.0)
    labels = model.predict(X)
    with pytest.raises(ValueError, match="needs the 'scoring' parameter.*roc_auc"):
        permutation_importance(model, X, labels)
    ours = permutation_importance(model, X, labels, scoring="roc_auc", n_repeats=3,
                                  random_state=0)
    assert ours.params["evaluator"] == "generic"
    from sklearn.inspection import permutation_importance as sklearn_permutation

    theirs = sklearn_permutation(model, X, labels, scoring="roc_auc", n_repeats=3,
                                 random_state=0)
    np.testing.assert_array_equal(ours.importances, theirs.importances)


def test_it_has_no_native_importance_nor_mdi():
    model, _ = _fit("default")
    with pytest.raises(ValueError, match="no native importance"):
        native_importance(model)
    with pytest.raises(ValueError, match="tree_shap or permutation_importance"):
        mdi(model)


def test_the_command_line_scores_a_saved_isolation_forest_by_roc_auc(tmp_path):
    import contextlib
    import io
    import json

    pd = pytest.importorskip("pandas")
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    from sapwood.cli import main

    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "noise"])
    frame.loc[:40, "a"] += 4.0
    model = IsolationForest(n_estimators=20, random_state=0).fit(frame)
    frame["label"] = model.predict(frame)
    sapwood.save(model, tmp_path / "iforest.sapwood")
    frame.to_csv(tmp_path / "data.csv", index=False)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["explain", str(tmp_path / "data.csv"), "--target", "label", "--model",
                     str(tmp_path / "iforest.sapwood"), "--methods", "shap,permutation",
                     "--json"])
    assert code == 0, stderr.getvalue()
    document = json.loads(stdout.getvalue())
    X_test, y_test = train_test_split(frame[["a", "b", "noise"]], frame["label"],
                                      test_size=0.25, random_state=0)[1::2]
    assert document["model"]["score_name"] == "ROC AUC"
    assert document["model"]["score"] == pytest.approx(
        roc_auc_score(y_test, model.decision_function(X_test)), abs=1e-12)
    permutation = {row["feature"]: row["importance"]
                   for row in document["measures"]["permutation"]}
    theirs = permutation_importance(model, X_test, y_test, scoring="roc_auc", n_repeats=5,
                                    random_state=0)
    assert permutation == pytest.approx(dict(zip(X_test.columns, theirs.importances_mean,
                                                 strict=True)), abs=1e-12)


@pytest.mark.parametrize("max_features", [1.0, 0.6])
def test_interventional_tree_shap_equals_shap(max_features):
    # Continuous data (no ties at a threshold, where shap routes differently).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    model = IsolationForest(n_estimators=20, max_features=max_features,
                            random_state=0).fit(X)
    background = X[:50]
    explainer = shap.TreeExplainer(model, data=background,
                                   feature_perturbation="interventional")
    result = tree_shap(model, X[:20], data=background)
    # shap agrees to about 1e-7 of a path length near 12; the values add up to
    # scikit-learn's path length to 1e-9 (below).
    np.testing.assert_allclose(result.extra["shap_values"], explainer.shap_values(X[:20]),
                               rtol=0, atol=1e-6)
    assert result.extra["expected_value"] == pytest.approx(explainer.expected_value, abs=1e-6)
    total = result.extra["expected_value"] + result.extra["shap_values"].sum(axis=1)
    np.testing.assert_allclose(total, _path_length(model, X[:20]), rtol=0, atol=1e-9)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_out_of_bag_importance_says_an_anomaly_detector_has_no_oob_error(bootstrap):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    model = IsolationForest(n_estimators=5, bootstrap=bootstrap, random_state=0).fit(X)
    with pytest.raises(ValueError, match="anomaly detector.*no out-of-bag error"):
        oob_permutation_importance(model, X, np.ones(120))


def test_the_command_line_says_why_mdi_and_gain_do_not_apply(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    from sapwood.cli import main

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    model = IsolationForest(n_estimators=5, bootstrap=True, random_state=0).fit(frame)
    frame["label"] = model.predict(frame)
    sapwood.save(model, tmp_path / "iforest.sapwood")
    frame.to_csv(tmp_path / "data.csv", index=False)
    assert main(["explain", str(tmp_path / "data.csv"), "--target", "label", "--model",
                 str(tmp_path / "iforest.sapwood"), "--methods", "mdi,oob,permutation"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "mdi importance skipped: an anomaly detector's trees split at random" in err
    assert "oob importance skipped: IsolationForest is an anomaly detector" in err
    # No promise of a split-gain importance the model does not have.
    assert "instead" not in err and "gain importance skipped" not in err
