"""Ishwaran's out-of-bag VIMP of a random survival forest against a naive
implementation of randomForestSRC's definition (tests/reference)."""

import numpy as np
import pytest

from sapwood.importance import survival_vimp
from tests.reference.naive_survival_vimp import naive_survival_vimp

sksurv = pytest.importorskip("sksurv")


@pytest.fixture(scope="module")
def forest():
    from sksurv.ensemble import RandomSurvivalForest
    from sksurv.util import Surv

    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, 4))
    time = rng.exponential(np.exp(-(X[:, 0] - 0.7 * X[:, 1])))
    censor = rng.exponential(2.0, 160)
    y = Surv.from_arrays(time <= censor, np.round(np.minimum(time, censor), 3) + 0.001)
    model = RandomSurvivalForest(n_estimators=12, min_samples_leaf=6, random_state=0,
                                 n_jobs=1).fit(X, y)
    return model, X, y


def test_vimp_equals_the_naive_definition(forest):
    model, X, y = forest
    ours = survival_vimp(model, X, y, n_repeats=2, random_state=3)
    theirs, concordance = naive_survival_vimp(model, X, y, n_repeats=2, random_state=3)
    assert ours.extra["oob_concordance"] == pytest.approx(concordance, rel=1e-12)
    np.testing.assert_allclose(ours.importances, theirs, rtol=1e-9, atol=1e-12)
    # The signal features first; per-row draws whose mean is the importance.
    assert set(np.argsort(-ours.importances_mean)[:2]) == {0, 1}
    np.testing.assert_allclose(ours.rank_draws.mean(axis=1), ours.importances_mean,
                               atol=1e-12)


def test_refuses_what_it_cannot_measure(forest):
    from sklearn.ensemble import RandomForestRegressor

    model, X, y = forest
    regressor = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y["time"])
    with pytest.raises(ValueError, match="random survival forest"):
        survival_vimp(regressor, X, y)
    with pytest.raises(ValueError, match="training rows"):
        survival_vimp(model, X[:100], y[:100])
