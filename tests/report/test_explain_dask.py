"""sapwood.explain on a Dask DataFrame: the split by a seeded draw per partition, the fit
in memory (on the cluster through joblib's Dask backend), the held-out score and
permutation importance block by block, equal to the in-memory numbers on the same rows,
on a real local cluster of two workers."""

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

import sapwood
from sapwood import RandomForestClassifier
from sapwood.importance import permutation_importance
from sapwood.report import _dask

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

FEATURES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def client():
    # A free port for the dashboard: parallel test processes each start a cluster.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def frame():
    X, y = make_classification(n_samples=2000, n_features=3, n_informative=2,
                               n_redundant=0, n_clusters_per_class=1, random_state=0)
    X[::23, 2] = np.nan  # missing feature values travel with their rows
    return pd.DataFrame(X, columns=FEATURES).assign(y=y)


def _split(table, test_size, seed):
    """The documented split: per partition, default_rng([seed, partition]) draws each
    row's uniform number; the rows below test_size are held out."""
    held = []
    for number, part in enumerate(table.partitions):
        n = len(part)
        held.append(np.random.default_rng([seed, number]).random(n) < test_size)
    return np.concatenate(held)


def _forest():
    return RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0)


def _same_trees(model, expected):
    assert len(model.estimators_) == len(expected.estimators_)
    for tree, other in zip(model.estimators_, expected.estimators_, strict=True):
        for field in ("feature", "threshold", "value", "children_left", "missing_go_to_left"):
            np.testing.assert_array_equal(getattr(tree.tree_, field),
                                          getattr(other.tree_, field))


def test_a_table_that_fits_gives_the_in_memory_numbers(client, frame):
    table = dd.from_pandas(frame, npartitions=3)
    with joblib.parallel_config(backend="dask"):  # the trees are grown on the cluster
        report = sapwood.explain(table[FEATURES], table["y"], model=_forest(),
                                 random_state=3)
    held = _split(table, 0.25, 3)
    train, test = frame[~held].reset_index(drop=True), frame[held].reset_index(drop=True)
    assert (report.n_train, report.n_test) == (len(train), len(test))
    pd.testing.assert_frame_equal(report.data.X.iloc[:report.n_train], train[FEATURES])
    pd.testing.assert_frame_equal(report.data.X.loc[report.held_out_index].reset_index(
        drop=True), test[FEATURES])

    # Judged by the Brier score, as in memory; its sums over blocks equal the in-memory
    # mean up to the order of a float sum, the accuracy beside it (a count) exactly.
    expected = sapwood.explain(test[FEATURES], test["y"], X_train=train[FEATURES],
                               y_train=train["y"], model=_forest(), random_state=3)
    _same_trees(report.model, expected.model)
    assert report.score_name == expected.score_name == "neg_brier_score"
    np.testing.assert_allclose(report.score, expected.score, rtol=1e-12)
    assert report.accuracy == expected.accuracy
    np.testing.assert_allclose(report.baseline.score, expected.baseline.score, rtol=1e-12)
    perm, in_memory = report.results["permutation"], expected.results["permutation"]
    assert perm.params["evaluator"] == "dask"
    np.testing.assert_allclose(perm.importances, in_memory.importances, rtol=0, atol=1e-13)
    np.testing.assert_allclose(perm.extra["baseline_score"],
                               in_memory.extra["baseline_score"], rtol=1e-12)
    np.testing.assert_array_equal(perm.rank_draws, in_memory.rank_draws)
    np.testing.assert_array_equal(report.results["mdi"].importances_mean,
                                  expected.results["mdi"].importances_mean)
    for ours, theirs in zip(report.verdict.features, expected.verdict.features, strict=True):
        assert ours.keys() == theirs.keys()
        for key, value in ours.items():
            if isinstance(value, float):
                np.testing.assert_allclose(value, theirs[key], rtol=1e-12, err_msg=key)
            else:
                assert value == theirs[key], key
    assert [w.message for w in report.warnings] == [w.message for w in expected.warnings]
    notes = " ".join(report.notes)
    assert "3 partitions" in notes and "block by block" in notes
    assert "joblib's Dask backend" in notes and "scored by accuracy" not in notes
    assert "Verdict (permutation importance" in str(report)
    assert f'"n_test": {len(test)}' in report.to_json()



def test_beyond_the_limits_samples_are_read_and_all_held_out_rows_scored(client, frame,
                                                                          monkeypatch):
    monkeypatch.setattr(_dask, "MAX_TRAIN_ROWS", 600)
    monkeypatch.setattr(_dask, "MAX_HELD_OUT_ROWS", 150)
    frame = frame.assign(y=np.where(frame["y"] == 1, "yes", "no"))  # labels as text
    table = dd.from_pandas(frame[["a", "b", "y"]], npartitions=4)
    model = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0)
    report = sapwood.explain(table, "y", model=model, random_state=1)
    held = _split(table, 0.25, 1)
    n_held = int(held.sum())
    assert (report.n_train, report.n_test) == (600, n_held)
    assert len(report.held_out_index) == 150
    notes = " ".join(report.notes)
    assert f"a seeded sample of 600 of the {len(frame) - n_held} training rows" in notes
    assert f"a seeded sample of 150 of the {n_held} held-out rows" in notes
    # The samples are rows of their side of the split.
    rows = frame[["a", "b"]].to_numpy()
    sample = report.data.X.to_numpy()
    position = {tuple(row): i for i, row in enumerate(rows)}
    places = np.array([position[tuple(row)] for row in sample])
    assert not held[places[:600]].any() and held[places[600:]].all()

    # Every held-out row is scored and permuted: the in-memory numbers on all of them.
    test = frame[held]
    expected = permutation_importance(report.model, test[["a", "b"]], test["y"],
                                      scoring=["neg_brier_score", "accuracy"], n_repeats=5,
                                      random_state=1)
    perm = report.results["permutation"]
    np.testing.assert_allclose(perm.importances, expected["neg_brier_score"].importances,
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(report.score, expected["neg_brier_score"].extra[
        "baseline_score"], rtol=1e-12)
    assert report.accuracy == expected["accuracy"].extra["baseline_score"]
    # The intervals over new rows: the sample's per-row spread around these importances.
    np.testing.assert_allclose(perm.rank_draws.mean(axis=1), perm.importances_mean,
                               atol=1e-12)
    assert "150 held-out rows in memory" in perm.extra["intervals"]["rank"]


def test_tables_read_from_files_give_the_in_memory_numbers(frame, tmp_path):
    # Dask plans a column read from files apart from the features: the target must
    # still reach its own rows, the same on every run.
    frame = frame.assign(id=np.arange(len(frame)))
    for number, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[rows].to_csv(tmp_path / f"part{number}.csv", index=False)
    held = np.concatenate([np.random.default_rng([3, number]).random(len(rows)) < 0.25
                           for number, rows in enumerate(np.array_split(
                               np.arange(len(frame)), 3))])
    train, test = frame[~held], frame[held]
    expected = sapwood.explain(test[FEATURES], test["y"], X_train=train[FEATURES],
                               y_train=train["y"], model=_forest(), random_state=3,
                               methods=["mdi"])
    table = dd.read_csv(str(tmp_path / "part*.csv"))
    for y in (table["y"], "y", table["y"]):
        X = table[FEATURES + (["y"] if isinstance(y, str) else [])]
        report = sapwood.explain(X, y, model=_forest(), random_state=3, methods=["mdi"])
        np.testing.assert_allclose(report.score, expected.score, rtol=1e-12)
        assert report.accuracy == expected.accuracy
    with pytest.raises(ValueError, match=r"y must be partitioned as X, .*got \[1000, "
                                         r"1000\] rows per partition against X's "):
        sapwood.explain(dd.from_pandas(frame[FEATURES], npartitions=3),
                        dd.from_pandas(frame["y"], npartitions=2))


def test_bad_input_is_named(frame):
    table = dd.from_pandas(frame, npartitions=2)
    short = dd.from_pandas(frame["y"].iloc[:-5], npartitions=2)
    with pytest.raises(ValueError, match="y has 1995 rows and its features 2000"):
        sapwood.explain(table[FEATURES], short)
    with pytest.raises(ValueError, match=r"y='Y': not a column of X \(did you mean 'y'\?\)"):
        sapwood.explain(table, "Y")
    with pytest.raises(ValueError, match=r"must be numbers or booleans \(.*\); not numeric: d\."):
        sapwood.explain(table.assign(d="text"), "y")
    with pytest.raises(ValueError, match="scoring must be None or one of accuracy, .*got "
                                         "'roc_auc'"):
        sapwood.explain(table, "y", scoring="roc_auc")
    with pytest.raises(ValueError, match="rows: explaining rows by position is not offered"):
        sapwood.explain(table, "y", rows=[3])
    with pytest.raises(ValueError, match="test_size=0 with a Dask DataFrame"):
        sapwood.explain(table, "y", test_size=0)
    with pytest.raises(ValueError, match="X must be a Dask DataFrame or array when y is"):
        sapwood.explain(frame[FEATURES], dd.from_pandas(frame["y"], npartitions=2))
