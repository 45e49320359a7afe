"""The survival scores against scikit-survival's metrics, and held-out permutation by
them against scikit-learn's ``permutation_importance`` on a scikit-survival forest."""

import numpy as np
import pytest

from sapwood.importance import permutation_importance
from sapwood.importance._engine._survival_scores import (
    SurvivalScorer,
    brier_scores,
    concordance_index,
    concordance_index_ipcw,
    evaluation_times,
    integrated_brier_score,
    kaplan_meier,
)

metrics = pytest.importorskip("sksurv.metrics")
Surv = pytest.importorskip("sksurv.util").Surv
kaplan_meier_estimator = pytest.importorskip("sksurv.nonparametric").kaplan_meier_estimator
brier_score = metrics.brier_score
concordance_index_censored = metrics.concordance_index_censored
sksurv_ipcw = metrics.concordance_index_ipcw
sksurv_ibs = metrics.integrated_brier_score


def target(n, censored, seed, scale=10.0):
    """Rounded times (ties in time) with about the share ``censored`` censored."""
    rng = np.random.default_rng(seed)
    time = np.round(rng.exponential(scale, n), 0) + 1
    event = rng.random(n) >= censored
    if not event.any():
        event[0] = True
    return Surv.from_arrays(event, time)


@pytest.mark.parametrize("censored", [0.0, 0.5, 0.9])
def test_concordances_equal_scikit_survival(censored):
    y, y_train = target(200, censored, 1), target(150, censored, 2, scale=14.0)
    # Ties in risk too; the training rows reach past the scored ones (as scikit-survival
    # needs for Uno's weights).
    y_train["time"][0] = y["time"].max() + 1
    risk = np.round(np.random.default_rng(3).normal(size=200), 1)
    event, time = y["event"], y["time"]
    assert concordance_index(y, risk) == pytest.approx(
        concordance_index_censored(event, time, risk)[0], rel=1e-12)
    assert concordance_index_ipcw(y_train, y, risk) == pytest.approx(
        sksurv_ipcw(y_train, y, risk)[0], rel=1e-12)
    tau = np.quantile(time, 0.7)
    assert concordance_index_ipcw(y_train, y, risk, tau=tau) == pytest.approx(
        sksurv_ipcw(y_train, y, risk, tau=tau)[0], rel=1e-12)


@pytest.mark.parametrize("censored", [0.0, 0.5, 0.9])
def test_brier_scores_equal_scikit_survival(censored):
    y, y_train = target(150, censored, 4), target(120, censored, 5, scale=14.0)
    y_train["time"][0] = y["time"].max() + 1
    times = evaluation_times(y)
    survival = np.random.default_rng(6).random((150, times.shape[0]))
    np.testing.assert_allclose(brier_scores(y_train, y, survival, times),
                               brier_score(y_train, y, survival, times)[1], rtol=1e-12)
    assert integrated_brier_score(y_train, y, survival, times) == pytest.approx(
        sksurv_ibs(y_train, y, survival, times), rel=1e-12)


def test_kaplan_meier_equals_scikit_survival():
    y = target(100, 0.4, 7)
    for reverse in (False, True):
        ours = kaplan_meier(y["event"], y["time"], reverse=reverse)
        theirs = kaplan_meier_estimator(y["event"], y["time"], reverse=reverse)
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-13)


def test_refusals_name_the_problem():
    y = target(20, 0.0, 8)
    with pytest.raises(ValueError, match="every row is censored"):
        concordance_index(Surv.from_arrays(np.zeros(20, bool), y["time"]), np.ones(20))
    with pytest.raises(ValueError, match="scoring must be one of"):
        SurvivalScorer("c_index")


def test_influence_is_the_leave_one_out_change():
    """The per-row influence of the concordance is its first-order jackknife: (n - 1)
    times the change when the row is left out, to the order of 1/n."""
    from sapwood.importance._engine._survival_scores import ConcordanceLoss

    y = target(120, 0.4, 9)
    risk = -np.log(y["time"]) + np.random.default_rng(10).normal(size=120)
    value, influence = ConcordanceLoss(y, None).influence(risk)
    assert abs(influence.mean()) < 1e-12
    n = 120
    jackknife = np.array([(n - 1) * (value - concordance_index(np.delete(y, k),
                                                                np.delete(risk, k)))
                          for k in range(n)])
    assert np.corrcoef(influence, jackknife)[0, 1] > 0.99
    np.testing.assert_allclose(influence, jackknife, atol=0.05)


@pytest.fixture(scope="module")
def forest():
    from sksurv.datasets import load_whas500
    from sksurv.ensemble import RandomSurvivalForest

    X, y = load_whas500()
    X = X.astype(float)
    model = RandomSurvivalForest(n_estimators=8, min_samples_leaf=8, random_state=0,
                                 n_jobs=1).fit(X.iloc[:350], y[:350])
    return model, X.iloc[350:], y[350:], y[:350]


def _sksurv_scorer(name, y_train):
    event, time = y_train.dtype.names

    def score(model, X, y):
        if name == "concordance_index":
            return concordance_index_censored(y[event], y[time], model.predict(X))[0]
        if name == "concordance_index_ipcw":
            return sksurv_ipcw(y_train, y, model.predict(X))[0]
        times = evaluation_times(y)
        survival = np.vstack([f(times) for f in model.predict_survival_function(X)])
        return -sksurv_ibs(y_train, y, survival, times)
    return score


@pytest.mark.parametrize("name", ["concordance_index", "concordance_index_ipcw",
                                  "neg_integrated_brier_score"])
def test_permutation_equals_scikit_learns_with_the_same_seed(forest, name):
    from sklearn.inspection import permutation_importance as sklearn_permutation

    model, X, y, y_train = forest
    scorer = SurvivalScorer(name, y_train=y_train)
    ours = permutation_importance(model, X, y, scoring=scorer, n_repeats=3, random_state=0)
    theirs = sklearn_permutation(model, X, y, scoring=_sksurv_scorer(name, y_train),
                                 n_repeats=3, random_state=0)
    np.testing.assert_allclose(ours.importances, theirs.importances, rtol=1e-9, atol=1e-12)
    assert ours.params["scoring"] == name
    # The concordances read the risk score, which the tree-aware evaluator permutes (a
    # forest of each node's risk); the Brier score reads the model's survival function.
    assert ours.params["evaluator"] == ("generic" if name == "neg_integrated_brier_score"
                                        else "tree")
    # Per-row draws whose mean is the importance: the verdict's intervals over new rows.
    np.testing.assert_allclose(ours.rank_draws.mean(axis=1), ours.importances_mean,
                               atol=1e-12)


def test_scoring_by_name_is_the_scored_rows_own_censoring(forest):
    model, X, y, _ = forest
    result = permutation_importance(model, X, y, scoring="concordance_index_ipcw",
                                    n_repeats=2, random_state=1)
    assert result.extra["baseline_score"] == pytest.approx(sksurv_ipcw(y, y,
                                                                       model.predict(X))[0])
