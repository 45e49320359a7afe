"""Model-X knockoffs: the sampler's moments, the filter against a brute-force
reference, and FDR control and power by simulation with known truth."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sapwood import RandomForestClassifier, RandomForestRegressor
from sapwood.importance import GaussianKnockoffs
from sapwood.importance._engine._knockoff_sampler import equicorrelated_s, estimate_covariance
from sapwood.selection import KnockoffResult, knockoffs
from sapwood.selection._knockoffs import (
    ebh,
    knockoff_evalues,
    knockoff_threshold,
    minimum_selection,
    smallest_level,
)
from tests.reference.naive_knockoffs import naive_ebh, naive_threshold


def ar1(p, rho):
    return rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))


def gaussian_rows(n, covariance, rng, mean=None):
    mean = np.zeros(len(covariance)) if mean is None else mean
    return mean + rng.standard_normal((n, len(covariance))) @ np.linalg.cholesky(covariance).T


# --- the sampler ----------------------------------------------------------------------


@pytest.mark.parametrize("construction", ["equicorrelated", "sdp"])
def test_joint_covariance_and_swap_exchangeability(construction):
    """On 200 000 rows of known N(mu, Sigma) (unequal variances), [X, X~] has mean
    [mu, mu] and covariance [[Sigma, Sigma - D], [Sigma - D, Sigma]]; swapping a set of
    features with their knockoffs leaves the second moments unchanged."""
    if construction == "sdp":
        pytest.importorskip("cvxpy")
    rng = np.random.default_rng(0)
    scale = np.array([1.0, 2.0, 0.5, 3.0, 1.0])
    covariance = ar1(5, 0.6) * np.outer(scale, scale)
    mean = np.array([1.0, -2.0, 0.0, 5.0, 0.5])
    X = gaussian_rows(200_000, covariance, rng, mean)
    sampler = GaussianKnockoffs(construction, mean=mean, covariance=covariance).fit(X)
    tilde = sampler.sample(X, random_state=1)
    joint = np.hstack([X, tilde])

    D = np.diag(sampler.s_)
    expected = np.block([[covariance, covariance - D], [covariance - D, covariance]])
    np.testing.assert_allclose(sampler.joint_covariance(), expected)
    assert np.linalg.eigvalsh(expected)[0] > -1e-8          # a covariance at all
    assert np.all(sampler.s_ > 0.1 * scale ** 2)             # knockoffs differ from X
    # Sampling error of a covariance entry: about sqrt(S_ii S_jj / n) <= 9 / 447.
    tolerance = 4 * np.sqrt(np.outer(np.diag(expected), np.diag(expected)) / X.shape[0])
    assert np.all(np.abs(np.cov(joint.T) - expected) < tolerance)
    np.testing.assert_allclose(tilde.mean(axis=0), mean, atol=4 * scale.max() / 447)

    swap = np.array([0, 2, 3])
    order = np.arange(10)
    order[swap], order[swap + 5] = swap + 5, swap
    swapped = np.cov(joint[:, order].T)
    assert np.all(np.abs(swapped - expected) < tolerance)


def test_equicorrelated_s_and_positive_definite_estimate():
    """s_j = min(1, 2 lambda_min(C)) sigma_j^2; 2 Sigma - D is PSD (with equality at
    the boundary) and the Ledoit-Wolf estimate is positive definite even for p > n
    and a constant column."""
    correlation = ar1(6, 0.7)
    lam = np.linalg.eigvalsh(correlation)[0]
    np.testing.assert_allclose(equicorrelated_s(correlation), min(1, 2 * lam))
    np.testing.assert_allclose(equicorrelated_s(np.eye(3)), 1.0)

    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 40)) * 3.0
    X[:, 5] = 2.0
    for shrinkage in ("auto", "ledoit_wolf"):
        _, covariance = estimate_covariance(X, shrinkage)
        assert np.linalg.eigvalsh(covariance)[0] > 0
    # "auto" is the sample covariance when that is positive definite.
    Y = rng.standard_normal((50, 3))
    np.testing.assert_allclose(estimate_covariance(Y)[1], np.cov(Y.T))
    assert not np.allclose(estimate_covariance(Y, "ledoit_wolf")[1], np.cov(Y.T))
    sampler = GaussianKnockoffs().fit(X)
    assert np.linalg.eigvalsh(2 * sampler.covariance_ - np.diag(sampler.s_))[0] > -1e-9
    assert np.isfinite(sampler.sample(X, random_state=0)).all()


def test_sdp_construction():
    """The SDP answer is feasible, at least as large as the equicorrelated one, equal
    to it on an equicorrelated matrix (by symmetry), and 1 for independent features."""
    pytest.importorskip("cvxpy")
    from sapwood.importance._engine._knockoff_sampler import sdp_s

    correlation = ar1(8, 0.5)
    s = sdp_s(correlation)
    assert np.all((s >= 0) & (s <= 1))
    assert np.linalg.eigvalsh(2 * correlation - np.diag(s))[0] > -1e-9
    assert s.sum() >= equicorrelated_s(correlation).sum() - 1e-6
    exchangeable = 0.3 * np.eye(5) + 0.7           # lambda_min = 0.3
    np.testing.assert_allclose(sdp_s(exchangeable), 2 * 0.3, atol=1e-4)
    np.testing.assert_allclose(sdp_s(np.eye(4)), 1.0, atol=1e-5)


def test_sampler_arguments_are_checked():
    with pytest.raises(ValueError, match="construction must be one of"):
        GaussianKnockoffs("asdp")
    with pytest.raises(ValueError, match="shrinkage must be one of"):
        GaussianKnockoffs(shrinkage="oas")
    with pytest.raises(ValueError, match="mean and covariance together"):
        GaussianKnockoffs(covariance=np.eye(2))
    with pytest.raises(ValueError, match=r"shapes \(3,\)"):
        GaussianKnockoffs(mean=[0, 0], covariance=np.eye(2)).fit(np.zeros((4, 3)))


# --- the filter -----------------------------------------------------------------------


def test_threshold_against_brute_force():
    rng = np.random.default_rng(2)
    for trial in range(300):
        p = rng.integers(1, 40)
        W = np.round(rng.normal(0.3 * (trial % 3), 1, size=p), 1)  # ties and zeros
        for fdr in (0.1, 0.2, 0.5):
            for offset in (0, 1):
                assert knockoff_threshold(W, fdr, offset) == naive_threshold(W, fdr, offset)


def test_threshold_by_hand():
    W = np.array([5, 4, 3, 2, 1, -1.5, 0, 0.5])
    # knockoff+: t=0.5: (1 + 1)/6, t=1: 2/5, t=1.5: 2/4, t=2: (1 + 0)/4, t=3: 1/3 ...
    # knockoff:  t=0.5: 1/6, t=1: 1/5, t=1.5: 1/4, t=2: 0/4 ...
    assert knockoff_threshold(W, 0.25, offset=1) == 2.0
    assert knockoff_threshold(W, 0.2, offset=1) == float("inf")
    assert knockoff_threshold(W, 0.2, offset=0) == 0.5
    assert knockoff_threshold(W, 0.1, offset=0) == 2.0
    assert knockoff_threshold([-1, -2], 0.5, offset=0) == float("inf")


def test_ebh_against_brute_force_and_knockoff_plus():
    """e-BH matches a brute-force reference; on one draw's e-values at the same level it
    selects exactly the knockoff+ set (Ren & Barber 2024, their section 3)."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        p = rng.integers(1, 30)
        W = rng.normal(0.5, 1, size=p)
        for fdr in (0.1, 0.3):
            evalues = knockoff_evalues(W, knockoff_threshold(W, fdr, 1))
            selected = ebh(evalues, fdr)
            assert list(selected) == naive_ebh(list(evalues), fdr)
            assert list(selected) == list(np.flatnonzero(W >= knockoff_threshold(W, fdr, 1)))
        averaged = rng.exponential(size=p) * rng.integers(0, 2, size=p)
        assert list(ebh(averaged, 0.2)) == naive_ebh(list(averaged), 0.2)


def _simulate(seed, n=300, p=30, k=10, rho=0.3, linear=True):
    rng = np.random.default_rng(seed)
    X = gaussian_rows(n, ar1(p, rho), rng)
    truth = np.sort(rng.choice(p, size=k, replace=False))
    signs = rng.choice([-1.0, 1.0], size=k)
    if linear:
        y = X[:, truth] @ signs + rng.standard_normal(n)
    else:
        y = (np.sin(2 * X[:, truth]) + 0.5 * X[:, truth] ** 2) @ np.abs(signs) \
            + 0.5 * rng.standard_normal(n)
    return X, y, truth


def _fdp_and_power(result, truth):
    selected = set(result.selected_indices.tolist())
    false = len(selected - set(truth.tolist()))
    return false / max(1, len(selected)), len(selected & set(truth.tolist())) / len(truth)


def _null_signs(result, truth):
    null = np.setdiff1d(np.arange(result.W.shape[1]), truth)
    W = result.W[:, null].ravel()
    return np.sum(W > 0), np.sum(W < 0)


def _simulation(seeds, statistic, linear, n_estimators, fdr=0.2, known=False):
    fdp, power, positive, negative = [], [], 0, 0
    for seed in seeds:
        X, y, truth = _simulate(seed, linear=linear)
        sampler = GaussianKnockoffs(mean=np.zeros(30), covariance=ar1(30, 0.3)) if known \
            else "gaussian"
        result = knockoffs(X, y, fdr=fdr, statistic=statistic, random_state=seed,
                           knockoff_sampler=sampler,
                           estimator=RandomForestRegressor(n_estimators=n_estimators,
                                                           max_features=0.5))
        f, w = _fdp_and_power(result, truth)
        fdp.append(f)
        power.append(w)
        up, down = _null_signs(result, truth)
        positive, negative = positive + up, negative + down
    return np.array(fdp), np.array(power), positive, negative


def test_fdr_and_power_small_simulation():
    """Six datasets (AR(1) rho = 0.3, 10 of 30 features linear in y, n = 300): the
    selections find most of the truth with few false ones, and null features do not
    beat their knockoffs more often than they lose; with the true covariance the
    signs of the null W are fair coins. The full check of the FDR is the slow
    simulation below."""
    fdp, power, positive, negative = _simulation(range(6), "mdi", True, 50)
    assert power.mean() >= 0.8
    assert fdp.mean() <= 0.2 + 0.15      # six runs: a loose bound, see the slow test
    assert _not_favoured(positive, negative)
    _, power, positive, negative = _simulation(range(6), "mdi", True, 50, known=True)
    assert power.mean() >= 0.8
    assert stats.binomtest(positive, positive + negative).pvalue > 0.001


def _not_favoured(positive, negative):
    """Null features beat their knockoffs no more often than a fair coin would (the
    direction that would break the FDR). With the covariance estimated from the same
    rows they lose slightly more often (552 against 648 in the slow MDI simulation):
    conservative."""
    return stats.binomtest(positive, positive + negative, alternative="greater").pvalue \
        > 0.001


@pytest.mark.slow
@pytest.mark.parametrize(("statistic", "linear"), [("mdi", True), ("oob_permutation", True),
                                                   ("permutation", False)])
def test_fdr_controlled_in_simulation(statistic, linear):
    """Knockoff+ at q = 0.2 over 60 datasets: mean FDP <= q plus 2.5 Monte-Carlo
    standard errors, power >= 0.7 (linear) / 0.5 (non-linear), and null features not
    favoured over their knockoffs."""
    runs = 60
    fdp, power, positive, negative = _simulation(range(100, 100 + runs), statistic,
                                                 linear, 100)
    margin = 2.5 * fdp.std(ddof=1) / np.sqrt(runs)
    assert fdp.mean() <= 0.2 + margin, (fdp.mean(), margin)
    assert power.mean() >= (0.7 if linear else 0.5), power.mean()
    assert _not_favoured(positive, negative)


# --- the function ---------------------------------------------------------------------


def test_result_and_determinism():
    X, y, truth = _simulate(7, n=200, p=12, k=6)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(12)])
    forest = RandomForestRegressor(n_estimators=30)
    first = knockoffs(frame, y, fdr=0.3, statistic="mdi", estimator=forest, random_state=0)
    again = knockoffs(frame, y, fdr=0.3, statistic="mdi", estimator=forest, random_state=0)
    assert isinstance(first, KnockoffResult)
    np.testing.assert_array_equal(first.W, again.W)
    assert first.W.shape == (1, 12) and first.Z.shape == (1, 24)
    np.testing.assert_allclose(first.W[0], first.Z[0, :12] - first.Z[0, 12:])
    assert first.threshold[0] == knockoff_threshold(first.W[0], 0.3, 1)
    assert first.selected == [f"f{j}" for j in first.selected_indices]
    assert first.support.sum() == len(first.selected)
    assert set(first.selected_indices) <= set(truth) | set(np.flatnonzero(first.W[0] > 0))
    assert list(first.to_frame().columns) == ["feature", "W", "frequency", "selected"]
    assert "selected at FDR 0.3" in repr(first)


def test_statistic_sees_features_and_knockoffs_in_place():
    """A callable statistic gets [X, X~] with the columns of some features traded with
    their knockoffs; Z is put back in place: Z_j is feature j's own value."""
    X, y, _ = _simulate(8, n=150, p=6, k=2)
    seen = []

    def correlation(model, both, target):
        seen.append(both.to_numpy())
        return np.abs([np.corrcoef(both.iloc[:, c], target)[0, 1]
                       for c in range(both.shape[1])])

    result = knockoffs(X, y, statistic=correlation, random_state=3,
                       estimator=RandomForestRegressor(n_estimators=2))
    expected = np.abs([np.corrcoef(X[:, j], y)[0, 1] for j in range(6)])
    np.testing.assert_allclose(result.Z[0, :6], expected)
    shown = seen[0]
    in_place = [np.array_equal(shown[:, j], X[:, j]) for j in range(6)]
    traded = [np.array_equal(shown[:, j + 6], X[:, j]) for j in range(6)]
    assert np.all(np.logical_xor(in_place, traded)) and any(traded) and any(in_place)


def test_derandomised_draws():
    """Four draws' e-values averaged and selected by e-BH. (With n = 300 the draws
    of this dataset disagree enough that the averaged e-values select nothing: e-BH
    needs the selected to agree across draws.)"""
    X, y, truth = _simulate(9, n=500, p=30, k=10)
    forest = RandomForestRegressor(n_estimators=40, max_features=0.5)
    result = knockoffs(X, y, fdr=0.2, statistic="mdi", estimator=forest, n_draws=4,
                       draw_fdr=0.2, random_state=0)
    assert result.W.shape == (4, 30) and result.threshold.shape == (4,)
    means = np.mean([knockoff_evalues(w, t) for w, t in zip(result.W, result.threshold,
                                                            strict=True)], axis=0)
    np.testing.assert_allclose(result.evalues, means)
    assert list(result.selected_indices) == naive_ebh(list(means), 0.2)
    assert len(set(result.selected_indices) & set(truth)) >= 8
    assert result.params["draw_fdr"] == 0.2
    assert "evalue" in result.to_frame().columns
    with pytest.raises(ValueError, match="needs offset=1"):
        knockoffs(X, y, offset=0, n_draws=2)


def test_plain_knockoff_offset_zero_selects_at_least_knockoff_plus():
    X, y, _ = _simulate(10, n=200, p=20, k=5)
    forest = RandomForestRegressor(n_estimators=30)
    plus = knockoffs(X, y, statistic="mdi", estimator=forest, random_state=1)
    plain = knockoffs(X, y, statistic="mdi", estimator=forest, offset=0, random_state=1)
    np.testing.assert_array_equal(plus.W, plain.W)
    assert set(plus.selected_indices) <= set(plain.selected_indices)


def test_categorical_refused_binary_classification_accepted():
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"a": rng.normal(size=100), "b": rng.integers(0, 2, 100) == 1,
                          "c": rng.choice(["u", "v"], size=100)})
    y = (frame["a"] > 0).astype(int)
    with pytest.raises(ValueError, match=r"non-numeric columns \['c'\].*One-hot"):
        knockoffs(frame, y)
    result = knockoffs(frame[["a", "b"]], y, statistic="mdi", random_state=0,
                       estimator=RandomForestClassifier(n_estimators=10))
    assert result.W.shape == (1, 2)
    with pytest.raises(ValueError, match="same number of rows"):
        knockoffs(frame[["a"]], y[:50])
    with pytest.raises(ValueError, match="statistic"):
        knockoffs(frame[["a", "b"]], y, statistic="no_such_measure")
    with pytest.raises(ValueError, match="one finite importance per column"):
        knockoffs(frame[["a", "b"]], y, statistic=lambda m, X, y: np.zeros(2),
                  estimator=RandomForestClassifier(n_estimators=2))


def test_sdp_sampler_by_name_and_by_object():
    pytest.importorskip("cvxpy")
    X, y, _ = _simulate(12, n=150, p=8, k=4, rho=0.5)
    forest = RandomForestRegressor(n_estimators=10)
    by_name = knockoffs(X, y, statistic="mdi", estimator=forest, random_state=0,
                        knockoff_sampler="gaussian_sdp")
    by_object = knockoffs(X, y, statistic="mdi", estimator=forest, random_state=0,
                          knockoff_sampler=GaussianKnockoffs("sdp"))
    assert by_name.params["knockoff_sampler"] == "sdp"
    np.testing.assert_allclose(by_name.W, by_object.W)
    equi = knockoffs(X, y, statistic="mdi", estimator=forest, random_state=0)
    assert not np.allclose(by_name.W, equi.W)


def test_a_level_knockoff_plus_cannot_reach_is_said():
    # With p features the knockoff+ estimate is at least 1/p: at fdr 0.1, 8 features
    # can never be selected, and the user is told why rather than handed an empty set.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 8))
    y = X[:, 0] + 0.1 * rng.standard_normal(200)
    with pytest.warns(UserWarning, match=r"selects nothing here.*1/8 = 0.125 > 0.1"):
        result = knockoffs(X, y, fdr=0.1, statistic="mdi", random_state=0,
                           estimator=RandomForestRegressor(n_estimators=10))
    assert result.selected == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        knockoffs(X, y, fdr=0.2, statistic="mdi", random_state=0,
                  estimator=RandomForestRegressor(n_estimators=10))


def test_discrete_columns_are_named_as_not_exchangeable_with_their_knockoffs():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"level": rng.integers(0, 4, 300).astype(float),
                      "flag": rng.integers(0, 2, 300).astype(float),
                      "amount": rng.standard_normal(300)})
    with pytest.warns(UserWarning, match=r"level, flag have at most 10 distinct values"):
        GaussianKnockoffs().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GaussianKnockoffs().fit(X[["amount"]].assign(other=rng.standard_normal(300)))


def test_the_fewest_features_knockoff_plus_can_select():
    # m = ceil(offset / q): the smallest selection with no W_j <= -t reaching the level.
    assert [minimum_selection(q) for q in (0.1, 0.2, 0.25, 0.3, 0.05, 0.5)] == [
        10, 5, 4, 4, 20, 2]
    assert minimum_selection(0.1, offset=0) == 1
    rng = np.random.default_rng(0)
    for q in (0.1, 0.15, 0.2, 0.3):
        m = minimum_selection(q)
        for _ in range(200):
            W = rng.standard_normal(12) + rng.integers(0, 3)
            T = knockoff_threshold(W, q, 1)
            if np.isfinite(T):
                assert np.sum(W >= T) >= m       # a selection is never smaller than m
            if np.sum(W > 0) < m:
                assert T == float("inf")         # fewer than m positive W: nothing
            # The smallest level at which knockoff+ selects, exactly where it starts.
            lowest = smallest_level(W)
            if np.isfinite(lowest):
                assert np.isfinite(knockoff_threshold(W, lowest, 1))
                assert knockoff_threshold(W, lowest * (1 - 1e-9), 1) == float("inf")
    # W = (3, 2, 1, -0.5): at t = 1 (1 + 0) / 3; at t = 0.5 (1 + 1) / 3.
    assert smallest_level([3, 2, 1, -0.5]) == pytest.approx(1 / 3)


def test_an_empty_selection_says_why_and_what_to_do():
    # Issue 41: ten features at FDR 0.1 selected nothing with "Threshold T = inf" and no
    # word that knockoff+ cannot select fewer than 1/q features.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 10))
    y = X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(200)
    forest = RandomForestRegressor(n_estimators=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reachable in principle (10 >= 1/0.1): no warning
        result = knockoffs(X, y, fdr=0.1, statistic="mdi", random_state=0, estimator=forest)
    assert result.selected == [] and result.threshold[0] == float("inf")
    positive = int(np.sum(result.W[0] > 0))
    assert positive < 10
    reason = result.reason
    assert reason.startswith("knockoff+ at FDR 0.1 selects at least 10 features or none")
    assert f"only {positive} of the 10 features have W_j > 0" in reason
    lowest = smallest_level(result.W[0])
    assert f"raise fdr to at least {lowest:.3g}" in reason
    assert "use offset=0" in reason and "more features" in reason
    assert reason in repr(result)
    # At the level the reason names, knockoff+ selects; offset=0 selects at 0.1 too.
    assert knockoffs(X, y, fdr=lowest + 1e-9, statistic="mdi", random_state=0,
                     estimator=forest).reason is None
    plain = knockoffs(X, y, fdr=0.1, statistic="mdi", random_state=0, estimator=forest,
                      offset=0)
    assert {"x0", "x1"} <= set(plain.selected) and plain.reason is None


def test_derandomised_draws_that_cannot_select_say_so():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((150, 6))
    y = X[:, 0] + 0.3 * rng.standard_normal(150)
    with pytest.warns(UserWarning, match="selects nothing here"):  # 1/6 > draw_fdr 0.05
        result = knockoffs(X, y, fdr=0.1, statistic="mdi", random_state=0, n_draws=2,
                           estimator=RandomForestRegressor(n_estimators=10))
    assert result.selected == []
    assert result.reason.startswith("knockoff+ at draw_fdr 0.05 selects at least 20")
    assert "from 6 it can never select at this level" in result.reason
    assert "raise draw_fdr (up to fdr) or fdr" in result.reason
