"""Forests bootstrapped by groups (fit(..., groups=)): each tree draws whole groups, so
its out-of-bag rows are whole groups; a model file records no draws for them."""

import numpy as np
import pytest

import sapwood

N_UNITS, PER = 30, 5


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    groups = np.repeat([f"u{i}" for i in range(N_UNITS)], PER)
    X = rng.normal(size=(N_UNITS * PER, 3))
    y = X[:, 0] + rng.normal(size=N_UNITS * PER)
    forest = sapwood.RandomForestRegressor(n_estimators=8, random_state=0)
    return forest.fit(X, y, groups=groups), X, y, groups


def test_each_tree_draws_whole_groups(fitted):
    forest, _, _, groups = fitted
    for t in range(len(forest)):
        counts = forest.bootstrap_counts(t).reshape(N_UNITS, PER)
        assert (counts == counts[:, :1]).all()  # a group's rows drawn alike
        assert counts[:, 0].sum() == N_UNITS  # as many groups drawn as there are
    ensemble = forest.to_ensemble()
    assert np.array_equal(ensemble.bootstrap.counts(3), forest.bootstrap_counts(3))


def test_oob_importance_reads_the_group_draws(fitted):
    forest, X, y, _ = fitted
    result = sapwood.importance.oob_permutation_importance(forest, X, y, random_state=0)
    assert result.importances_mean[0] > result.importances_mean[1:].max()


def test_a_model_file_records_no_group_draws(fitted, tmp_path):
    forest, X, _, _ = fitted
    path = tmp_path / "forest.sapwood"
    sapwood.save(forest, path)
    loaded = sapwood.load(path)
    assert loaded.bootstrap is None
    assert np.array_equal(loaded.predict(X), forest.to_ensemble().predict(X))


@pytest.mark.parametrize("params", [{"bootstrap": False}, {"max_samples": 50}])
def test_groups_need_a_full_bootstrap(params, fitted):
    _, X, y, groups = fitted
    with pytest.raises(ValueError, match="needs bootstrap=True and max_samples=None"):
        sapwood.RandomForestRegressor(n_estimators=2, **params).fit(X, y, groups=groups)
