"""``sapwood explain DATA --model MODEL_FILE``: a saved XGBoost, LightGBM or sapwood
model, scored and permuted on the held-out split of DATA; MDI skipped for trees without
impurities, the library's split gain shown instead."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import IsolationForest
from sklearn.inspection import permutation_importance
from sklearn.metrics import get_scorer
from sklearn.model_selection import train_test_split

import sapwood
from sapwood import importance
from sapwood.cli import main
from sapwood.importance import native_importance
from tests.cli._helpers import run_bad

N_ROWS = 240
TEST_SIZE = 0.25


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.normal(size=N_ROWS), "b": rng.normal(size=N_ROWS),
                          "noise": rng.normal(size=N_ROWS)})
    frame["y"] = 2 * frame["a"] + frame["b"] + 0.1 * rng.normal(size=N_ROWS)
    frame["label"] = (frame["a"] + 0.5 * frame["b"] > 0).astype(int)
    return frame


@pytest.fixture(scope="module")
def files(table, tmp_path_factory):
    """data.csv (features a, b, noise; target y) and an XGBoost regressor trained on the
    rows the CLI will use for training (its split: --test-size 0.25, --seed 0)."""
    xgboost = pytest.importorskip("xgboost")
    folder = tmp_path_factory.mktemp("loaded")
    data = folder / "data.csv"
    table[["a", "b", "noise", "y"]].to_csv(data, index=False)
    X, y = table[["a", "b", "noise"]], table["y"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=TEST_SIZE,
                                                        random_state=0)
    model = xgboost.XGBRegressor(n_estimators=20, max_depth=3, random_state=0)
    model.fit(X_train, y_train)
    model_path = folder / "model.json"
    model.save_model(model_path)
    return data, model_path, model, X_test, y_test


def explain_json(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    assert code == 0, stderr.getvalue()
    return json.loads(stdout.getvalue()), stderr.getvalue()


def test_xgboost_model_file_end_to_end(files, tmp_path):
    data, model_path, model, X_test, y_test = files
    report = tmp_path / "report.html"
    document, err = explain_json(["explain", str(data), "--target", "y", "--model",
                                  str(model_path), "--json", "--report", str(report)])
    assert document["model"]["trained_here"] is False
    assert document["model"]["name"] == (
        f"XGBoost Booster (20 trees, objective reg:squarederror) from {model_path}")
    assert document["model"]["n_test"] == len(X_test) == N_ROWS * TEST_SIZE
    assert document["model"]["score"] == pytest.approx(model.score(X_test, y_test), abs=1e-6)
    # MDI is skipped with a note; the library's split gain takes its place.
    assert list(document["measures"]) == ["gain", "permutation"]
    assert any(note.startswith("MDI skipped: this model records no node impurities")
               for note in document["notes"])
    assert "MDI skipped" in err
    gain = {row["feature"]: row["importance"] for row in document["measures"]["gain"]}
    expected = native_importance(model, "gain")
    assert gain == pytest.approx(dict(zip(expected.feature_names,
                                          expected.importances_mean, strict=True)))
    # Permutation importance ran on the held-out rows, with the loaded model.
    permutation = {row["feature"]: row["importance"]
                   for row in document["measures"]["permutation"]}
    direct = permutation_importance(model, X_test, y_test, n_repeats=5, random_state=0)
    assert permutation == pytest.approx(dict(zip(X_test.columns, direct.importances_mean,
                                                 strict=True)), abs=1e-6)
    assert permutation["a"] > permutation["b"] > abs(permutation["noise"])
    text = report.read_text(encoding="utf-8")
    assert "MDI skipped" in text and 'src="data:image/png;base64,' in text
    assert "impurity = " not in text  # boosted trees carry no impurity to draw


def test_tables_name_the_loaded_model(files, capsys):
    data, model_path, *_ = files
    assert main(["explain", str(data), "--target", "y", "--model", str(model_path),
                 "--methods", "mdi", "--details"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1].startswith(
        f"Model: XGBoost Booster (20 trees, objective reg:squarederror) from {model_path}, "
        "loaded, held-out R² ")
    assert "gain: the library's own split-gain importance" in out
    assert "note: the model was not trained here" in err


def test_columns_in_another_order_are_aligned(files, table, tmp_path):
    _, model_path, *_ = files
    shuffled = tmp_path / "shuffled.csv"
    table[["noise", "y", "b", "a"]].to_csv(shuffled, index=False)
    document, _ = explain_json(["explain", str(shuffled), "--target", "y", "--model",
                                str(model_path), "--methods", "gain", "--json"])
    assert document["measures"]["gain"][0]["feature"] == "a"


def test_lightgbm_classifier_and_sapwood_file(table, tmp_path):
    lightgbm = pytest.importorskip("lightgbm")
    data = tmp_path / "data.csv"
    table[["a", "b", "noise", "label"]].to_csv(data, index=False)
    X = table[["a", "b", "noise"]]
    model = lightgbm.LGBMClassifier(n_estimators=10, num_leaves=5, min_child_samples=5,
                                    verbose=-1).fit(X, table["label"])
    text_path = tmp_path / "model.txt"
    model.booster_.save_model(text_path)
    sapwood_path = tmp_path / "model.sapwood"
    assert main(["convert", str(text_path), str(sapwood_path), "--quiet"]) == 0
    for path in (text_path, sapwood_path):
        document, _ = explain_json(["explain", str(data), "--target", "label", "--model",
                                    str(path), "--json"])
        assert document["data"]["task"] == "classification"
        assert document["model"]["score_name"] == "neg_brier_score"
        assert document["model"]["accuracy"] > 0.8
        assert list(document["measures"]) == ["gain", "permutation"]


def test_sapwood_forest_file_keeps_mdi(table, tmp_path):
    data = tmp_path / "data.csv"
    table[["a", "b", "noise", "y"]].to_csv(data, index=False)
    forest = sapwood.DecisionTreeRegressor(max_depth=4, random_state=0)
    forest.fit(table[["a", "b", "noise"]].to_numpy(), table["y"].to_numpy())
    path = tmp_path / "tree.sapwood"
    sapwood.save(forest, path)
    document, _ = explain_json(["explain", str(data), "--target", "y", "--model", str(path),
                                "--json"])
    assert list(document["measures"]) == ["mdi", "permutation"]
    assert document["model"]["name"] == f"sapwood model (1 trees) from {path}"


def test_data_without_the_model_features(files, table, capsys, tmp_path):
    _, model_path, *_ = files
    other = tmp_path / "other.csv"
    table[["a", "noise", "y"]].to_csv(other, index=False)
    run_bad(capsys, ["explain", str(other), "--target", "y", "--model", str(model_path)],
            "lacks the model's feature(s) b", "the model's features are a, b, noise")


def test_task_conflict_and_unknown_labels(files, table, capsys, tmp_path):
    data, model_path, *_ = files
    run_bad(capsys, ["explain", str(data), "--target", "y", "--model", str(model_path),
                     "--task", "classification"], "is a regression model")
    pytest.importorskip("xgboost")
    import xgboost

    labelled = tmp_path / "labelled.csv"
    X = table[["a", "b", "noise"]]
    X.assign(label=np.where(table["label"] == 1, "yes", "no")).to_csv(labelled, index=False)
    classifier = tmp_path / "classifier.json"
    xgboost.XGBClassifier(n_estimators=3, max_depth=2).fit(X, table["label"]).save_model(
        classifier)
    run_bad(capsys, ["explain", str(labelled), "--target", "label", "--model",
                     str(classifier)], "values the model does not predict (no, yes)")


def test_corrupted_model_file(files, capsys, tmp_path):
    data, model_path, *_ = files
    bad = tmp_path / "bad.json"
    bad.write_bytes(model_path.read_bytes()[:500])
    run_bad(capsys, ["explain", str(data), "--target", "y", "--model", str(bad)],
            f"cannot read model file {bad}")


def test_loaded_anomaly_detector_has_intervals_over_the_rows_and_a_verdict(tmp_path):
    # Outliers far out in "a" only (label -1, inliers 1, as scikit-learn's predict).
    rng = np.random.default_rng(2)
    n = 1200
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "noise": rng.normal(size=n)})
    outlier = rng.uniform(size=n) < 0.1
    X.loc[outlier, "a"] = (rng.choice([-1, 1], size=outlier.sum())
                           * rng.uniform(3, 5, size=outlier.sum()))
    y = np.where(outlier, -1, 1)
    X_train, X_test, _, y_test = train_test_split(X, y, test_size=TEST_SIZE, random_state=0)
    model = IsolationForest(n_estimators=50, random_state=0).fit(X_train)
    path = tmp_path / "isolation.sapwood"
    sapwood.save(model, path)
    data = tmp_path / "data.csv"
    X.assign(y=y).to_csv(data, index=False)
    document, _ = explain_json(["explain", str(data), "--target", "y", "--model", str(path),
                                "--json"])
    # The score and the importances are scikit-learn's roc_auc scorer's on the estimator.
    assert document["model"]["score_name"] == "ROC AUC"
    assert document["model"]["score"] == pytest.approx(
        get_scorer("roc_auc")(model, X_test, y_test), abs=1e-12)
    direct = importance.permutation_importance(model, X_test, y_test, scoring="roc_auc",
                                               n_repeats=5, random_state=0)
    got = {row["feature"]: row["importance"] for row in document["measures"]["permutation"]}
    assert got == pytest.approx(dict(zip(direct.feature_names, direct.importances_mean,
                                         strict=True)), abs=1e-12)
    # DeLong's per-row draws: the verdict's intervals cover the held-out rows, and it
    # decides (without them every feature would be uncertain).
    assert document["intervals"]["permutation"]["rank"].startswith("the held-out rows")
    verdict = document["verdict"]
    assert "over the held-out rows and the shuffles" in verdict["lines"][0]
    assert verdict["relies_on"] == ["a"]
    assert sorted(verdict["uncertain"]) == ["b", "noise"]  # 300 rows: too few to rule out
