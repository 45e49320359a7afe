"""sapwood._splits: the random, by-group and time-ordered split, the cross-fitting folds
and the group-level draws, each against scikit-learn or a direct count."""

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from sapwood._errors import InputError
from sapwood._splits import (
    RowPlan,
    folds,
    group_draws,
    holdout,
    labels,
    plan_from,
    resample_groups,
)

N = 200


@pytest.fixture(scope="module")
def panel():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(40), 5)
    y = rng.integers(0, 2, size=N)
    return groups, y


def test_a_random_split_is_train_test_split_stratified(panel):
    _, y = panel
    train, test = holdout(N, 0.25, 3, y=y)
    expected = train_test_split(np.arange(N), test_size=0.25, random_state=3, stratify=y)
    assert np.array_equal(train, expected[0]) and np.array_equal(test, expected[1])


@pytest.mark.parametrize("classes", [False, True])
def test_a_group_split_keeps_each_group_on_one_side(panel, classes):
    groups, y = panel
    plan = RowPlan(groups=groups)
    train, test = holdout(N, 0.25, 0, plan=plan, y=y if classes else None)
    assert not set(groups[train]) & set(groups[test])
    assert len(train) + len(test) == N
    assert len(set(groups[test])) == 10  # a quarter of the 40 groups


def test_a_time_split_holds_out_the_latest_rows_ties_together():
    order = np.repeat(np.arange(20.0), 10)[np.random.default_rng(1).permutation(N)]
    train, test = holdout(N, 0.23, 0, plan=RowPlan(order=order))
    assert order[train].max() < order[test].min()
    assert len(test) == 50  # the cut at year 15 takes all of its 10 rows (46 asked)


def test_a_time_split_needs_earlier_rows():
    with pytest.raises(InputError, match="no earlier rows"):
        holdout(10, 0.25, 0, plan=RowPlan(order=np.zeros(10)))


def test_random_folds_hold_every_row_out_once(panel):
    _, y = panel
    held = np.concatenate([test for _, test in folds(N, 5, 0, y=y)])
    assert np.array_equal(np.sort(held), np.arange(N))


def test_group_folds_hold_every_group_out_once_and_whole(panel):
    groups, y = panel
    found = folds(N, 5, 0, y=y, plan=RowPlan(groups=groups))
    held = np.concatenate([test for _, test in found])
    assert np.array_equal(np.sort(held), np.arange(N))
    for train, test in found:
        assert not set(groups[train]) & set(groups[test])


def test_forward_chaining_trains_on_the_past_only():
    order = np.repeat(np.arange(12.0), 10)
    found = folds(120, 3, 0, plan=RowPlan(order=order))
    assert len(found) == 3
    for train, test in found:
        assert order[train].max() < order[test].min()
    held = np.concatenate([test for _, test in found])
    assert len(held) == len(set(held)) == 90  # every row after the first block, once


def test_group_draws_keep_the_mean_and_give_the_cluster_standard_error():
    rng = np.random.default_rng(2)
    groups = rng.integers(0, 30, size=300)
    draws = rng.normal(size=(2, 300)) + rng.normal(size=30)[groups]
    pooled = group_draws(draws, groups)
    assert pooled.shape == (2, 30)
    assert pooled.mean(axis=1) == pytest.approx(draws.mean(axis=1))
    # The cluster-robust standard error of the mean, written out.
    sums = np.array([[row[groups == g].sum() for g in np.unique(groups)] for row in draws])
    centred = sums - draws.mean(axis=1)[:, None] * np.bincount(groups)[None, :]
    cluster = np.sqrt(30 / 29 * (centred ** 2).sum(axis=1)) / 300
    assert pooled.std(axis=1, ddof=1) / np.sqrt(30) == pytest.approx(cluster)


def test_resampling_groups_brings_whole_groups():
    groups = np.repeat(np.arange(6), [1, 2, 3, 4, 5, 6])
    rows = resample_groups(groups, np.random.default_rng(0))
    drawn = pd.Series(groups[rows]).value_counts()
    assert all(count % (g + 1) == 0 for g, count in drawn.items())


def test_plan_from_takes_the_columns_out_of_the_features():
    X = pd.DataFrame({"firm": list("aabbccdd"), "year": [1, 2] * 4, "x": range(8)})
    rest, plan = plan_from(X, "firm", "year")
    assert list(rest.columns) == ["x"]
    assert plan.kind == "time" and plan.groups_name == "firm" and plan.order_name == "year"
    assert list(plan.groups) == [0, 0, 1, 1, 2, 2, 3, 3]


@pytest.mark.parametrize("groups, order_by, phrase", [
    ("frim", None, "did you mean 'firm'"),
    (["a"] * 3, None, "3 labels and the data 8 rows"),
    (None, "firm", "dates, datetimes or numbers"),
])
def test_plan_from_names_bad_input(groups, order_by, phrase):
    X = pd.DataFrame({"firm": list("aabbccdd"), "x": range(8)})
    with pytest.raises(InputError, match=phrase):
        plan_from(X, groups, order_by)


def test_missing_labels_are_refused():
    with pytest.raises(InputError, match="1 missing label"):
        labels(["a", None, "b"], 3, "groups")


def test_the_group_draws_standard_error_is_the_group_bootstrap_s():
    # What group_draws' interval stands for: resampling whole groups.
    rng = np.random.default_rng(5)
    groups = np.repeat(np.arange(60), rng.integers(2, 9, 60))
    values = rng.normal(size=60)[groups] + rng.normal(size=len(groups))
    analytic = group_draws(values[None, :], groups)[0].std(ddof=1) / np.sqrt(60)
    boot = np.random.default_rng(6)
    means = [values[resample_groups(groups, boot)].mean() for _ in range(2000)]
    assert np.std(means) == pytest.approx(analytic, rel=0.1)
    rowwise = values.std(ddof=1) / np.sqrt(len(values))
    assert analytic > 1.4 * rowwise  # rows of one group are alike: wider than by rows
