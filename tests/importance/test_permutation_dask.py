"""Permutation importance of Dask collections equals the in-memory numbers: the same
permutations, scored block by block on a real local cluster (two worker processes)."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import make_scorer, r2_score

from sapwood import RandomForestClassifier, RandomForestRegressor
from sapwood.importance import permutation_importance

dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local, \
            distributed.Client(local) as client:
        yield client


@pytest.fixture(scope="module")
def classifier():
    X, y = make_classification(n_samples=900, n_features=5, n_informative=3, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    X[::17, 2] = np.nan  # missing values follow each split's missing direction
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    forest = RandomForestClassifier(15, max_depth=6, random_state=0).fit(frame, y)
    return forest, frame, y


@pytest.fixture(scope="module")
def regressor():
    X, y = make_regression(n_samples=700, n_features=4, noise=5.0, random_state=1)
    weight = np.random.RandomState(1).uniform(0.5, 2.0, size=700)
    forest = RandomForestRegressor(12, max_depth=6, random_state=0).fit(X, y)
    return forest, X, y, weight


def _same(result, expected, rtol=0.0):
    assert result.feature_names == expected.feature_names
    assert result.params["evaluator"] == "dask"
    assert result.params["seed"] == expected.params["seed"]
    if rtol == 0.0:
        np.testing.assert_array_equal(result.importances, expected.importances)
        np.testing.assert_array_equal(result.extra["baseline_score"],
                                      expected.extra["baseline_score"])
    else:
        scale = np.abs(expected.extra["baseline_score"])
        np.testing.assert_allclose(result.importances / scale, expected.importances / scale,
                                   rtol=0, atol=rtol)
        np.testing.assert_allclose(result.extra["baseline_score"],
                                   expected.extra["baseline_score"], rtol=rtol)


def test_counts_on_a_cluster_equal_the_in_memory_scores_bit_for_bit(cluster, classifier):
    forest, frame, y = classifier
    X, Y = dd.from_pandas(frame, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=3)
    expected = permutation_importance(forest, frame, y, n_repeats=3, random_state=7)
    _same(permutation_importance(forest, X, Y, n_repeats=3, random_state=7), expected)

    groups = {"ab": ["a", "b"], "c": ["c"], "de": ["d", 4]}
    scoring = ["accuracy", "balanced_accuracy"]
    expected = permutation_importance(forest, frame, y, scoring=scoring, n_repeats=3,
                                      random_state=3, feature_groups=groups)
    result = permutation_importance(forest, X, Y, scoring=scoring, n_repeats=3,
                                    random_state=3, feature_groups=groups)
    assert list(result) == scoring
    for name in scoring:
        _same(result[name], expected[name])
    assert result["accuracy"].feature_names == ["ab", "c", "de"]


def test_sums_on_a_cluster_equal_the_in_memory_scores(cluster, regressor):
    forest, X, y, weight = regressor
    blocks = da.from_array(X, chunks=(150, 2))  # blocks split the columns too
    scoring = ["r2", "neg_mean_squared_error", "neg_root_mean_squared_error",
               "neg_mean_absolute_error"]
    for w in [None, weight]:
        expected = permutation_importance(forest, X, y, scoring=scoring, n_repeats=3,
                                          random_state=5, sample_weight=w)
        result = permutation_importance(
            forest, blocks, da.from_array(y, chunks=200), scoring=scoring, n_repeats=3,
            random_state=5, sample_weight=None if w is None else da.from_array(w, 100))
        for name in scoring:
            _same(result[name], expected[name], rtol=1e-12)


def test_probability_losses_on_a_cluster_equal_the_in_memory_scores(cluster, classifier):
    # The Brier score and log loss read predict_proba block by block: multiclass, and a
    # yes/no target as text (the Brier score with the second label positive), with and
    # without weights.
    forest, frame, y = classifier
    scoring = ["neg_brier_score", "neg_log_loss", "accuracy"]
    weight = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    binary = np.where(y == 1, "yes", "no").astype(object)
    two = RandomForestClassifier(10, max_depth=5, random_state=0).fit(frame, binary)
    for model, labels in ((forest, y), (two, binary)):
        for w in (None, weight):
            expected = permutation_importance(model, frame, labels, scoring=scoring,
                                              n_repeats=2, random_state=4, sample_weight=w)
            result = permutation_importance(
                model, dd.from_pandas(frame, npartitions=3),
                dd.from_pandas(pd.Series(labels), npartitions=2), scoring=scoring,
                n_repeats=2, random_state=4,
                sample_weight=None if w is None else da.from_array(w, chunks=300))
            for name in scoring:
                _same(result[name], expected[name], rtol=1e-12)
    with pytest.raises(ValueError, match="neg_brier_score out of core .* other labels: "
                                         r"\['maybe'\]"):
        permutation_importance(two, dd.from_pandas(frame, 2),
                               dd.from_pandas(pd.Series(np.where(y == 2, "maybe", binary)),
                                              2), scoring="neg_brier_score", n_repeats=1)


def test_any_model_with_predict_and_an_in_memory_y():
    # scikit-learn's boosting (no tree format evaluator) scored by its own R^2, with the
    # local threaded scheduler.
    X, y = make_regression(n_samples=300, n_features=3, random_state=2)
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    expected = permutation_importance(model, X, y, n_repeats=2, random_state=0)
    result = permutation_importance(model, da.from_array(X, chunks=70), y, n_repeats=2,
                                    random_state=0)
    _same(result, expected, rtol=1e-12)


def test_scorers_that_do_not_add_up_over_blocks_are_refused(classifier):
    forest, frame, y = classifier
    X, Y = dd.from_pandas(frame, npartitions=2), da.from_array(y, chunks=450)
    with pytest.raises(ValueError, match=r"\['roc_auc_ovr'\] does not decompose.*'r2'"):
        permutation_importance(forest, X, Y, scoring="roc_auc_ovr")
    with pytest.raises(ValueError, match="scoring for Dask input must be"):
        permutation_importance(forest, X, Y, scoring=make_scorer(r2_score))
    with pytest.raises(ValueError, match="max_samples must be 1.0 for Dask input.*0.5"):
        permutation_importance(forest, X, Y, max_samples=0.5)
    with pytest.raises(ValueError, match="numeric columns only.*'name'"):
        permutation_importance(forest, dd.from_pandas(frame.assign(name="x"), 2), Y)
    with pytest.raises(ValueError, match="y must hold one value per row of X"):
        permutation_importance(forest, X, da.from_array(y[:100], chunks=50))
    with pytest.raises(ValueError, match="y holds other labels: \\[7\\]"):
        permutation_importance(forest, X, da.from_array(np.where(y == 2, 7, y), 450),
                               scoring="balanced_accuracy", n_repeats=1)

    class OwnScore(RandomForestClassifier):
        def score(self, X, y, sample_weight=None):
            return 0.0

    own = OwnScore(3, random_state=0).fit(frame, y)
    with pytest.raises(ValueError, match="scoring=None uses the model's own score"):
        permutation_importance(own, X, Y)


def test_importing_sapwood_does_not_import_dask():
    code = ("import sys, sapwood, sapwood.importance; "
            "print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
