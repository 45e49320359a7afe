"""SAGE by permutation sampling: the exact values of an additive model (known truth),
agreement with the sage-importance package within Monte-Carlo error, the convergence
criterion, and the errors.

Tolerance: both estimates are means of independent draws, so their difference is
compared with its standard error, sqrt(se_1^2 + se_2^2), at 4 standard errors (a false
alarm about once in 16,000 features).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
)

import sapwood.importance._sage as sage_module
import sapwood.learners
from sapwood.adapters import as_ensemble
from sapwood.importance import sage

Z_LIMIT = 4.0


def _data(seed=0, n=500, p=4):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + 0.5 * X[:, 2] + rng.normal(size=n)
    return X, y


def test_additive_model_has_its_exact_values():
    """For an additive model f = sum_j g_j(x_j) (boosted stumps) with marginal
    imputation from background B, v(S) = -mean_i (e_i - sum_{j in S} a_ij)^2 with
    a_ij = g_j(x_ij) - mean_B g_j and e_i = y_i - mean_B f: a quadratic game whose
    Shapley values are SAGE_j = mean_i a_ij (2 e_i - sum_k a_ik)."""
    X, y = _data(1)
    model = GradientBoostingRegressor(max_depth=1, n_estimators=60, random_state=0)
    model.fit(X[:300], y[:300])
    X_test, y_test, background = X[300:], y[300:], X[300:340]
    base = model.predict(background).mean()
    # g_j(x_ij) - mean_B g_j: feature j of row i, the others from each background row.
    a = np.column_stack([
        np.array([model.predict(np.where(np.arange(4) == j, row, background)).mean()
                  for row in X_test]) - base for j in range(4)])
    e = y_test - base
    exact = (a * (2 * e[:, None] - a.sum(axis=1, keepdims=True))).mean(axis=0)
    result = sage(model, X_test, y_test, background=background, thresh=0.02,
                  random_state=0)
    # x3 is never split on: its draws are all exactly 0, as is its value.
    error = np.abs(result.importances_mean - exact)
    assert np.all(error <= Z_LIMIT * result.extra["std_error"] + 1e-12), (
        result.importances_mean, exact)
    assert result.importances_mean[3] == 0 and abs(exact[3]) < 1e-12
    assert result.extra["converged"]


def test_agrees_with_sage_importance_within_monte_carlo_error():
    sage_package = pytest.importorskip("sage")
    X, y = _data(2)
    labels = (y > np.median(y)).astype(int)
    model = RandomForestClassifier(n_estimators=20, min_samples_leaf=5, random_state=0)
    model.fit(X[:300], labels[:300])
    X_test, y_test, background = X[300:], labels[300:], X[300:332]
    ours = sage(model, X_test, y_test, background=background, thresh=0.05, random_state=0)
    estimator = sage_package.PermutationEstimator(
        sage_package.MarginalImputer(model, background), "cross entropy", random_state=1)
    theirs = estimator(X_test, y_test, thresh=0.05, bar=False)
    z = (ours.importances_mean - theirs.values) / np.hypot(ours.extra["std_error"],
                                                           theirs.std)
    assert np.all(np.abs(z) < Z_LIMIT), (ours.importances_mean, theirs.values)
    assert ours.params["loss"] == "log_loss"


def test_same_seed_same_draws_as_sage_importance():
    """The random stream is the sage package's (numpy's default_rng: a batch of rows by
    ``choice``, then a shuffled order per row), so with the same seed and background
    the draws, the stop and the values are the same, up to round-off."""
    sage_package = pytest.importorskip("sage")
    X, y = _data(5, n=300)
    model = GradientBoostingRegressor(max_depth=3, n_estimators=30, random_state=0)
    model.fit(X[:200], y[:200])
    background = X[200:232]
    ours = sage(model, X[200:], y[200:], background=background, thresh=0.05,
                batch_size=128, random_state=7)
    estimator = sage_package.PermutationEstimator(
        sage_package.MarginalImputer(model, background), "mse", random_state=7)
    theirs = estimator(X[200:], y[200:], thresh=0.05, batch_size=128, bar=False)
    np.testing.assert_allclose(ours.importances_mean, theirs.values, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.extra["std_error"], theirs.std, rtol=0, atol=1e-10)


def test_convergence_criterion_and_fixed_budget():
    X, y = _data(3, n=200)
    model = GradientBoostingRegressor(max_depth=2, n_estimators=20, random_state=0)
    model.fit(X, y)
    result = sage(model, X, y, n_background=16, thresh=0.05, batch_size=64, random_state=0)
    se, values = result.extra["std_error"], result.importances_mean
    assert result.extra["ratio"] == pytest.approx(se.max() / (values.max() - values.min()))
    assert result.extra["converged"] and result.extra["ratio"] < 0.05
    n = result.params["n_permutations"]
    assert n % 64 == 0 and result.importances.shape == (4, n)
    # The batch before the last had not converged: the same seed stopped one batch
    # earlier gives a larger ratio.
    if n > 64:
        earlier = sage(model, X, y, n_background=16, batch_size=64, n_permutations=n - 64,
                       random_state=0)
        assert earlier.extra["ratio"] >= 0.05
    fixed = sage(model, X, y, n_background=16, n_permutations=100, batch_size=64,
                 random_state=0)
    assert fixed.params["n_permutations"] == 100
    np.testing.assert_allclose(fixed.ci_high - fixed.importances_mean,
                               fixed.importances_mean - fixed.ci_low)
    # Each draw's values sum to the loss saved over the mean prediction on its row.
    assert fixed.extra["total"] == pytest.approx(fixed.importances.sum(axis=0).mean())


def test_errors():
    X, y = _data(4, n=60)
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="loss='log_loss' needs a classifier"):
        sage(model, X, y, loss="log_loss")
    with pytest.raises(ValueError, match="thresh"):
        sage(model, X, y, thresh=1.5)
    with pytest.raises(ValueError, match="background has 3 columns; X has 4"):
        sage(model, X, y, background=X[:, :3])
    with pytest.raises(ValueError, match="y has 59 entries but X has 60 rows"):
        sage(model, X, y[:-1])


def _models():
    X, y = _data(6, n=260, p=5)
    X[::17, 1] = np.nan  # missing values take each node's default direction
    labels = np.digitize(y, np.quantile(y, [0.4, 0.7]))
    binary = (labels > 0).astype(int)
    finite = np.nan_to_num(X)
    return [
        ("forest, 3 classes", sklearn_forest(X, labels), X, labels),
        ("sapwood forest, regression",
         sapwood.learners.RandomForestRegressor(n_estimators=12, max_depth=6,
                                                random_state=0).fit(X, y), X, y),
        ("boosted, identity link",
         GradientBoostingRegressor(n_estimators=15, random_state=0).fit(finite, y), finite, y),
        ("boosted, logistic link",
         GradientBoostingClassifier(n_estimators=15, random_state=0).fit(finite, binary),
         finite, binary),
        ("boosted, softmax link",
         GradientBoostingClassifier(n_estimators=8, random_state=0).fit(finite, labels),
         finite, labels),
        # Squared error of a classifier's labels: each hybrid row's label, then the mean.
        ("forest, 3 classes, squared error", sklearn_forest(X, labels), X, labels),
    ]


def sklearn_forest(X, labels):
    return RandomForestClassifier(n_estimators=12, max_depth=6, random_state=0).fit(X, labels)


def _refuse_walks(monkeypatch):
    """The walks' check fails: the model predicts the stacked hybrid rows instead."""

    class Refused(sage_module._TreeImputer):
        def own(self, x):
            return np.full_like(super().own(x), np.nan)

    monkeypatch.setattr(sage_module, "_TreeImputer", Refused)


@pytest.mark.parametrize("case", range(6))
def test_tree_walks_equal_the_models_own_predictions(case, monkeypatch):
    """The walks (:mod:`sapwood._kernels._sage`) against the model predicting the
    stacked hybrid rows (the sage package's way), same seed: the same draws up to
    round-off (the linear models' background mean is taken of the trees' sums), with
    a background of more than 64 rows (two words of bits)."""
    name, model, X, y = _models()[case]
    kwargs = dict(n_background=70, n_permutations=96, batch_size=48, random_state=3,
                  loss="squared_error" if "squared error" in name else None)
    walked = sage(model, X, y, **kwargs)
    assert walked.extra["evaluator"] == "trees", name

    _refuse_walks(monkeypatch)
    predicted = sage(model, X, y, **kwargs)
    assert predicted.extra["evaluator"] == "predict"
    np.testing.assert_allclose(walked.importances, predicted.importances, rtol=0,
                               atol=1e-12, err_msg=name)


def test_a_tree_ensemble_and_threads_give_the_same_values():
    _, model, X, y = _models()[0]
    one = sage(model, X, y, n_background=40, n_permutations=64, batch_size=32,
               random_state=0)
    ensemble = sage(as_ensemble(model), X, y, n_background=40, n_permutations=64,
                    batch_size=32, random_state=0)
    two = sage(model, X, y, n_background=40, n_permutations=64, batch_size=32,
               random_state=0, n_jobs=2)
    assert ensemble.extra["evaluator"] == "trees"
    np.testing.assert_allclose(ensemble.importances, one.importances, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(two.importances, one.importances)


def test_no_warnings_for_a_model_fitted_on_a_frame(monkeypatch):
    """A model fitted on a DataFrame: neither the check nor the stacked predictions
    make scikit-learn warn about feature names (issue 41: 374 warnings)."""
    X, y = _data(7, n=200)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(4)])
    model = sapwood.learners.RandomForestClassifier(n_estimators=8, max_depth=4,
                                                    random_state=0)
    model.fit(frame, (y > 0).astype(int))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sage(model, frame, (y > 0).astype(int), n_background=16, n_permutations=32,
             batch_size=32, random_state=0)
        _refuse_walks(monkeypatch)
        result = sage(model, frame, (y > 0).astype(int), n_background=16,
                      n_permutations=32, batch_size=32, random_state=0)
    assert result.extra["evaluator"] == "predict"
