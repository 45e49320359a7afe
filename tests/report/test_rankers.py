"""explain on rankers: scored by NDCG@10 within queries (scikit-learn's ndcg_score per
query, averaged), never R²; queries from groups=, or refused; a split keeps queries
whole."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import ndcg_score

import sapwood
from sapwood._errors import InputError

xgboost = pytest.importorskip("xgboost")
lightgbm = pytest.importorskip("lightgbm")

RNG = np.random.default_rng(0)
N_QUERIES, PER_QUERY = 40, 8
FRAME = pd.DataFrame({"a": RNG.normal(size=N_QUERIES * PER_QUERY),
                      "b": RNG.normal(size=N_QUERIES * PER_QUERY),
                      "query": np.repeat(np.arange(N_QUERIES), PER_QUERY)})
FRAME["rel"] = np.clip(np.round(1.2 * FRAME.a + 1 + RNG.normal(scale=0.5, size=len(FRAME))),
                       0, 4).astype(int)
TRAIN, TEST = FRAME[FRAME["query"] < 25], FRAME[FRAME["query"] >= 25]


@pytest.fixture(scope="module")
def rankers():
    xgb = xgboost.XGBRanker(n_estimators=10, n_jobs=1).fit(
        TRAIN[["a", "b"]], TRAIN.rel, qid=TRAIN["query"])
    lgb = lightgbm.LGBMRanker(n_estimators=10, min_child_samples=5, verbose=-1, n_jobs=1).fit(
        TRAIN[["a", "b"]], TRAIN.rel, group=TRAIN.groupby("query").size().to_numpy())
    return {"XGBRanker": xgb, "LGBMRanker": lgb, "XGBoost Booster": xgb.get_booster(),
            "LightGBM Booster": lgb.booster_}


def _own_ndcg(model, frame, k=10):
    features = frame[["a", "b"]]
    output = (model.predict(xgboost.DMatrix(features))
              if isinstance(model, xgboost.Booster) else model.predict(features))
    return np.mean([ndcg_score([frame.rel[frame["query"] == q]],
                               [output[(frame["query"] == q).to_numpy()]], k=k)
                    for q in frame["query"].unique()])


@pytest.mark.parametrize("kind", ["XGBRanker", "LGBMRanker", "XGBoost Booster",
                                  "LightGBM Booster"])
def test_scored_by_ndcg_within_queries(rankers, kind):
    model = rankers[kind]
    report = sapwood.explain(TEST, "rel", model=model, groups="query", methods="permutation")
    assert report.score_name == "NDCG@10"
    assert report.score == pytest.approx(_own_ndcg(model, TEST), abs=1e-12)
    assert "query" not in report.results["permutation"].feature_names
    assert report.baseline.beaten
    assert report.verdict.to_dict()  # a verdict over new queries is given


def test_groups_as_labels_and_the_constant_baseline(rankers):
    model = rankers["XGBRanker"]
    labels = TEST["query"].map(lambda q: f"q{q}").to_numpy()
    report = sapwood.explain(TEST.drop(columns="query"), "rel", model=model, groups=labels,
                             methods="permutation")
    assert report.score == pytest.approx(_own_ndcg(model, TEST), abs=1e-12)
    tied = np.mean([ndcg_score([TEST.rel[TEST["query"] == q]], [np.zeros(PER_QUERY)], k=10)
                    for q in TEST["query"].unique()])
    assert report.baseline.score == pytest.approx(tied, abs=1e-12)


def test_refused_without_queries(rankers):
    with pytest.raises(InputError, match=r"^the model ranks \(objective rank:ndcg\).*groups="):
        sapwood.explain(TEST.drop(columns="query"), "rel", model=rankers["XGBRanker"])
    with pytest.raises(InputError, match="scoring='r2'"):
        sapwood.explain(TEST, "rel", model=rankers["XGBRanker"], groups="query",
                        scoring="r2")


def test_a_split_keeps_each_query_on_one_side(rankers):
    report = sapwood.explain(FRAME, "rel", model=rankers["LGBMRanker"], groups="query",
                             test_size=0.3, methods="permutation")
    ranker = report.model
    held = set(ranker.queries.loc[report.held_out_index])
    trained = set(ranker.queries.drop(report.held_out_index))
    assert held and trained and not held & trained
    assert report.n_test == PER_QUERY * len(held)


@pytest.mark.parametrize("kind", ["XGBRanker", "LGBMRanker"])
def test_an_unfitted_ranker_is_trained_on_whole_queries(kind):
    model = (xgboost.XGBRanker(n_estimators=5, n_jobs=1) if kind == "XGBRanker" else
             lightgbm.LGBMRanker(n_estimators=5, min_child_samples=5, verbose=-1, n_jobs=1))
    report = sapwood.explain(FRAME, "rel", model=model, groups="query", test_size=0.25,
                             methods="permutation")
    assert report.data.task == "regression"  # relevance labels, not classes
    ranker = report.model
    held = ranker.queries.loc[report.held_out_index]
    assert not set(held) & set(ranker.queries.drop(report.held_out_index))
    rows = FRAME.loc[report.held_out_index]
    assert report.score == pytest.approx(_own_ndcg(ranker.model, rows), abs=1e-12)
    assert report.n_train == len(FRAME) - len(rows)
    # A row asked for by its position is that row after the reordering.
    explained = sapwood.explain(FRAME, "rel", model=model, groups="query", test_size=0.25,
                                methods="permutation", rows=[5])
    assert explained.rows[0].target == FRAME.rel.iloc[5]
    assert explained.rows[0].result.extra["data"]["a"].iloc[0] == FRAME.a.iloc[5]
    assert explained.rows[0].held_out == (FRAME.index[5] in explained.held_out_index)


def test_trained_on_x_train_queries():
    """X_train and X with the query column: the ranker is trained on X_train's queries
    and judged on X's."""
    model = lightgbm.LGBMRanker(n_estimators=5, min_child_samples=5, verbose=-1, n_jobs=1)
    report = sapwood.explain(TEST.drop(columns="rel"), TEST.rel, model=model,
                             X_train=TRAIN.drop(columns="rel"), y_train=TRAIN.rel,
                             groups="query", methods="permutation")
    own = lightgbm.LGBMRanker(n_estimators=5, min_child_samples=5, verbose=-1, n_jobs=1).fit(
        TRAIN[["a", "b"]], TRAIN.rel, group=TRAIN.groupby("query").size().to_numpy())
    assert report.score == pytest.approx(_own_ndcg(own, TEST), abs=1e-12)
    with pytest.raises(InputError, match="X_train's queries"):
        sapwood.explain(TEST[["a", "b"]], TEST.rel, model=model, X_train=TRAIN[["a", "b"]],
                        y_train=TRAIN.rel, groups=TEST["query"].to_numpy())
