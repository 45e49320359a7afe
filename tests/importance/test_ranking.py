"""NDCG over queries and permutation within queries (sapwood.importance._engine._ranking),
against scikit-learn's ndcg_score."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import ndcg_score

from sapwood.importance._engine._ranking import (
    Ranker,
    is_ranking_objective,
    ndcg_by_query,
    query_permutation_importance,
)

RNG = np.random.default_rng(3)
N_QUERIES, PER_QUERY = 12, 7
QUERIES = np.repeat([f"q{i}" for i in range(N_QUERIES)], PER_QUERY)
X = pd.DataFrame({"a": RNG.normal(size=QUERIES.size), "b": RNG.normal(size=QUERIES.size)})
Y = np.clip(np.round(X.a.to_numpy() + 1 + RNG.normal(scale=0.5, size=QUERIES.size)), 0, 3)


class Linear:
    """A ranker that records every table it is asked to predict."""

    def __init__(self):
        self.seen = []

    def predict(self, X):
        self.seen.append(X.copy())
        return X["a"].to_numpy() + 0.3 * X["b"].to_numpy()


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [3, 10, None])
def test_ndcg_by_query_is_scikit_learns_per_query(k, ties):
    # The queries interleaved: rows of a query need not be contiguous.
    order = RNG.permutation(QUERIES.size)
    output = X.a.to_numpy() + RNG.normal(size=QUERIES.size)
    if ties:  # tied outputs share their positions' discounts
        output = np.round(output)
    labels = Y.copy()
    labels[QUERIES == "q0"] = 0  # a query of irrelevant rows scores 0
    got = ndcg_by_query(labels[order], output[order], QUERIES[order], k)
    expected = [ndcg_score(labels[QUERIES == q][None, :], output[QUERIES == q][None, :],
                           k=k) for q in pd.unique(QUERIES[order])]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_single_row_queries_are_left_out_and_gains_must_not_be_negative():
    got = ndcg_by_query([1, 0, 2], [0.1, 0.2, 0.3], ["x", "y", "y"])
    assert got.shape == (1,)
    with pytest.raises(ValueError, match="must not be negative"):
        ndcg_by_query([1, -1], [0.1, 0.2], ["x", "x"])


def test_ranker_score_reads_the_queries_of_the_rows_given():
    ranker = Ranker(Linear(), pd.Series(QUERIES, index=X.index), k=5)
    rows = X.index[PER_QUERY * 2:PER_QUERY * 5]  # queries q2..q4
    expected = np.mean([ndcg_score(Y[QUERIES == q][None, :],
                                   (X.a + 0.3 * X.b)[QUERIES == q].to_numpy()[None, :], k=5)
                        for q in ("q2", "q3", "q4")])
    assert ranker.score(X.loc[rows], Y[rows]) == pytest.approx(expected, abs=1e-15)
    assert ranker.score_name == "NDCG@5"


def test_permutation_within_queries_keeps_rows_paired():
    """Every shuffled table moves a column's values only among the rows of each query;
    the other columns, each row's query and its label stay as they were."""
    model = Linear()
    ranker = Ranker(model, pd.Series(QUERIES, index=X.index))
    result = query_permutation_importance(ranker, X, Y, n_repeats=3, random_state=0)
    shuffled = model.seen[1:]
    assert len(shuffled) == 2 * 3
    moved = 0
    for number, table in enumerate(shuffled):
        column = "a" if number < 3 else "b"
        other = "b" if column == "a" else "a"
        assert table.index.equals(X.index)
        pd.testing.assert_series_equal(table[other], X[other])
        for q in np.unique(QUERIES):
            rows = QUERIES == q
            assert sorted(table[column][rows]) == sorted(X[column][rows])
        moved += int((table[column] != X[column]).sum())
    assert moved > 0
    # The importance is the drop in mean NDCG, the draws the queries'.
    assert result.importances.shape == (2, 3)
    assert result.rank_draws.shape == (2, N_QUERIES)
    np.testing.assert_allclose(result.rank_draws.mean(axis=1), result.importances_mean,
                               atol=1e-12)
    assert result.importances_mean[0] > result.importances_mean[1] > -0.05


def test_ranking_objectives():
    for objective in ("rank:ndcg", "rank:pairwise", "rank:map", "lambdarank", "rank_xendcg"):
        assert is_ranking_objective(objective)
    for objective in ("reg:squarederror", "regression", None, "binary"):
        assert not is_ranking_objective(objective)
