"""CPI: the deltas against a row-by-row loop, the three tests against scipy and an
exact enumeration, and validity (uniform null p-values) and power by simulation."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.svm import SVC

from sapwood import RandomForestClassifier, RandomForestRegressor
from sapwood.importance import GaussianKnockoffs, ImportanceResult, cpi
from sapwood.importance._cpi import one_sided_pvalues
from tests.reference.naive_knockoffs import naive_cpi_deltas


def ar1(p, rho):
    return rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))


def _data(seed, n=400, p=5, rho=0.6):
    """AR(1) Gaussian X; y = x0 + x1 + noise. x2 is null given the others yet
    correlated with x1 (the case a marginal test gets wrong)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) @ np.linalg.cholesky(ar1(p, rho)).T
    y = X[:, 0] + X[:, 1] + rng.standard_normal(n)
    return X, y


def test_deltas_against_row_by_row_loop():
    X, y = _data(0, n=60, p=3)
    model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X[:30], y[:30])
    result = cpi(model, X[30:], y[30:], sampler="permutation", n_repeats=2,
                 random_state=4)
    expected = naive_cpi_deltas(model, X[30:], y[30:], lambda t, f: (t - f) ** 2, 2, 4)
    np.testing.assert_allclose(result.importances, expected, atol=1e-12)
    assert isinstance(result, ImportanceResult) and result.method == "cpi"
    np.testing.assert_allclose(result.importances_mean, expected.mean(axis=1), atol=1e-12)
    half = stats.t.ppf(0.975, 29) * expected.std(axis=1, ddof=1) / np.sqrt(30)
    np.testing.assert_allclose(result.ci_low, expected.mean(axis=1) - half, atol=1e-12)
    np.testing.assert_allclose(result.ci_high, expected.mean(axis=1) + half, atol=1e-12)
    baseline = np.mean((model.predict(X[30:]) - y[30:]) ** 2)
    assert result.extra["loss"] == pytest.approx(baseline)


def test_knockoff_deltas_use_one_draw_per_repeat():
    """Each repeat replaces column j by column j of one knockoff draw of all of X (seed
    ``rng.randint(2**31 - 1)``); a one-column group is that column."""
    X, y = _data(1, n=200)
    model = LinearRegression().fit(X[:100], y[:100])
    held_X, held_y = X[100:], y[100:]
    result = cpi(model, held_X, held_y, random_state=5)
    rng = np.random.RandomState(5)
    tilde = GaussianKnockoffs().fit(held_X).sample(held_X, int(rng.randint(2**31 - 1)))
    base = (model.predict(held_X) - held_y) ** 2
    for j in range(5):
        replaced = held_X.copy()
        replaced[:, j] = tilde[:, j]
        np.testing.assert_allclose(result.importances[j],
                                   (model.predict(replaced) - held_y) ** 2 - base)
    grouped = cpi(model, held_X, held_y, feature_groups={"first": [0], "pair": [2, 3]},
                  random_state=5)
    assert grouped.feature_names == ["first", "pair"]
    np.testing.assert_allclose(grouped.importances[0], result.importances[0])
    both = held_X.copy()
    both[:, [2, 3]] = tilde[:, [2, 3]]
    np.testing.assert_allclose(grouped.importances[1],
                               (model.predict(both) - held_y) ** 2 - base)


def test_known_distribution_sampler():
    """A GaussianKnockoffs carrying the true mean and covariance is used as given (not
    refitted to the held-out rows)."""
    X, y = _data(6, n=200)
    model = LinearRegression().fit(X[:100], y[:100])
    known = GaussianKnockoffs(mean=np.zeros(5), covariance=ar1(5, 0.6))
    result = cpi(model, X[100:], y[100:], sampler=known, random_state=2)
    assert result.params["sampler"] == "gaussian_equicorrelated"
    rng = np.random.RandomState(2)
    tilde = GaussianKnockoffs(mean=np.zeros(5), covariance=ar1(5, 0.6)).fit(
        X[100:]).sample(X[100:], int(rng.randint(2**31 - 1)))
    replaced = X[100:].copy()
    replaced[:, 3] = tilde[:, 3]
    np.testing.assert_allclose(result.importances[3], (model.predict(replaced) - y[100:]) ** 2
                               - (model.predict(X[100:]) - y[100:]) ** 2)


def test_pvalues_match_scipy_and_exact_sign_flips():
    rng = np.random.default_rng(2)
    deltas = rng.normal(0.3, 1, size=(4, 12))
    deltas[3] = 0.0
    t = one_sided_pvalues(deltas, "t", None, 0)
    expected = stats.ttest_1samp(deltas[:3], 0, axis=1, alternative="greater").pvalue
    np.testing.assert_allclose(t[:3], expected)
    wilcoxon = one_sided_pvalues(deltas, "wilcoxon", None, 0)
    np.testing.assert_allclose(wilcoxon[:3], [stats.wilcoxon(d, alternative="greater").pvalue
                                              for d in deltas[:3]])
    assert t[3] == wilcoxon[3] == 1.0           # an unused feature: no evidence
    # Fisher's test against all 2^12 sign patterns, within Monte-Carlo error.
    B = 4000
    fisher = one_sided_pvalues(deltas, "fisher", np.random.RandomState(0), B)
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=12)))
    exact = [np.mean(signs @ d / 12 >= d.mean() - 1e-12) for d in deltas]
    for got, want in zip(fisher, exact, strict=True):
        assert abs(got - want) <= 4 * np.sqrt(want * (1 - want) / B) + 2 / B
    assert fisher[3] == 1.0


def test_losses_and_classifiers():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 3))
    y = (X[:, 0] + 0.5 * rng.standard_normal(300) > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X[:150], y[:150])
    result = cpi(forest, X[150:], y[150:], random_state=0)
    assert result.params["loss"] == "log_loss"
    proba = np.clip(forest.predict_proba(X[150:])[np.arange(150), y[150:]], 1e-15, 1)
    assert result.extra["loss"] == pytest.approx(-np.log(proba).mean())
    assert result.pvalues[0] < 0.001 and result.importances_mean[0] > 0
    zero_one = cpi(forest, X[150:], y[150:], loss="zero_one", test="fisher",
                   random_state=0)
    assert zero_one.extra["loss"] == pytest.approx(np.mean(forest.predict(X[150:])
                                                           != y[150:]))
    no_proba = SVC().fit(X[:150], y[:150])
    assert cpi(no_proba, X[150:], y[150:], random_state=0).params["loss"] == "zero_one"
    custom = cpi(forest, X[150:], y[150:], random_state=0,
                 loss=lambda m, X, y: (m.predict(X) != y) * 2.0)
    np.testing.assert_allclose(custom.importances, 2 * zero_one.importances)
    with pytest.raises(ValueError, match="one loss per row"):
        cpi(forest, X[150:], y[150:], loss=lambda m, X, y: np.zeros(3))


def test_dataframes_and_refusals():
    X, y = _data(4, n=200)
    frame = pd.DataFrame(X, columns=list("abcde")).assign(e=lambda f: (f.e > 0).astype(int))
    model = LinearRegression().fit(frame[:100], y[:100])
    result = cpi(model, frame[100:], y[100:], feature_groups={"ab": ["a", "b"]}, random_state=0)
    assert result.feature_names == ["ab"] and result.pvalues[0] < 1e-3
    permuted = cpi(model, frame[100:], y[100:], sampler="permutation", random_state=0)
    assert permuted.feature_names == list("abcde")
    texts = frame.assign(e=np.where(frame.e > 0, "u", "v"))
    with pytest.raises(ValueError, match=r"non-numeric columns \['e'\]"):
        cpi(model, texts[100:], y[100:])
    with pytest.raises(ValueError, match="single-output"):
        cpi(model, frame[100:], np.c_[y[100:], y[100:]])
    with pytest.raises(ValueError, match="test"):
        cpi(model, frame[100:], y[100:], test="z")


def _null_pvalues(seeds, make_model, n=400, test="t"):
    """Per dataset: the p-value of the null x2 and of the relevant x1, with a model
    fitted on one half and CPI on the other."""
    null, relevant = [], []
    for seed in seeds:
        X, y = _data(seed, n=n)
        half = n // 2
        model = make_model(seed).fit(X[:half], y[:half])
        result = cpi(model, X[half:], y[half:], test=test, random_state=seed)
        null.append(result.pvalues[2])
        relevant.append(result.pvalues[1])
    return np.array(null), np.array(relevant)


def test_null_pvalues_uniform_and_power_linear_model():
    """200 datasets, least squares: the null feature's p-values are uniform
    (Kolmogorov-Smirnov) and reject at 5% at the nominal rate within the binomial
    Monte-Carlo margin; the relevant feature is found every time."""
    null, relevant = _null_pvalues(range(200), lambda seed: LinearRegression())
    assert stats.kstest(null, "uniform").pvalue > 0.001
    rate = np.mean(null <= 0.05)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 200)
    assert np.mean(relevant <= 0.05) >= 0.95


def test_permutation_sampler_is_marginal():
    """The contrast: a logistic model leaning on a null feature correlated with a
    relevant one. The permutation sampler breaks the correlation and calls it
    important far more often than the knockoff sampler does."""
    found = {"knockoff": 0, "permutation": 0}
    for seed in range(30):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((400, 2)) @ np.linalg.cholesky(ar1(2, 0.9)).T
        y = (X[:, 0] + 0.3 * rng.standard_normal(400) > 0).astype(int)
        model = LogisticRegression(C=0.01).fit(X[:200], y[:200])
        for sampler in found:
            found[sampler] += cpi(model, X[200:], y[200:], sampler=sampler,
                                  random_state=seed).pvalues[1] <= 0.05
    assert found["permutation"] >= 20 and found["knockoff"] <= 6


@pytest.mark.slow
@pytest.mark.parametrize("test", ["t", "fisher", "wilcoxon"])
def test_null_pvalues_uniform_and_power_forest(test):
    """150 datasets, random forest: the null feature's p-values are close to uniform
    (5% rejections within the Monte-Carlo margin), power on the relevant feature."""
    null, relevant = _null_pvalues(
        range(150), lambda seed: RandomForestRegressor(n_estimators=50, random_state=seed),
        test=test)
    assert np.mean(null <= 0.05) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 150)
    assert stats.kstest(null, "uniform").pvalue > 0.001
    assert np.mean(relevant <= 0.05) >= 0.9
