"""``sapwood explain --model FILE`` with the files scikit-learn models are kept in:
joblib and pickle (loaded with a note that loading runs code), skops (its safe loader;
types from outside the model libraries refused by name), a ZIP that is not a sapwood
file (said so), and an early-stopped XGBoost file (its best iteration, --all-trees)."""

import contextlib
import io
import json
import pickle
import zipfile

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.inspection import permutation_importance
from sklearn.model_selection import GridSearchCV, train_test_split

from sapwood.cli import _warmup, main
from sapwood.cli._model_files import MODEL_FILE_HELP, load_model_file
from tests.cli._helpers import run_bad

N_ROWS = 200
TEST_SIZE = 0.25


@pytest.fixture(autouse=True)
def no_compile_ahead(monkeypatch):
    # These tests are about loading files: no second process compiling kernels ahead.
    monkeypatch.setenv(_warmup.AHEAD_VARIABLE, "0")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """data.csv and a GridSearchCV fitted on the rows the CLI trains on (its split at
    --test-size 0.25, --seed 0), saved with joblib, pickle and skops."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.normal(size=N_ROWS), "b": rng.normal(size=N_ROWS),
                          "noise": rng.normal(size=N_ROWS)})
    frame["y"] = (frame["a"] + 0.5 * frame["b"] + 0.3 * rng.normal(size=N_ROWS) > 0)
    frame["y"] = frame["y"].astype(int)
    folder = tmp_path_factory.mktemp("files")
    data = folder / "data.csv"
    frame.to_csv(data, index=False)
    X, y = frame[["a", "b", "noise"]], frame["y"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=TEST_SIZE,
                                                        random_state=0, stratify=y)
    model = GridSearchCV(RandomForestClassifier(n_estimators=10, random_state=0),
                         {"max_depth": [2, 4]}, cv=2).fit(X_train, y_train)
    joblib.dump(model, folder / "model.joblib")
    with open(folder / "model.pkl", "wb") as stream:
        pickle.dump(model, stream)
    return folder, data, model, X_test, y_test


def explain_json(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    assert code == 0, stderr.getvalue()
    return json.loads(stdout.getvalue()), stderr.getvalue()


def _check_document(document, model, X_test, y_test):
    assert document["model"]["trained_here"] is False
    assert document["model"]["name"].startswith(
        "GridSearchCV best_estimator_: RandomForestClassifier(n_estimators=10")
    got = {row["feature"]: row["importance"] for row in document["measures"]["permutation"]}
    direct = permutation_importance(model, X_test, y_test, scoring="neg_brier_score",
                                    n_repeats=5, random_state=0)
    assert got == pytest.approx(dict(zip(X_test.columns, direct.importances_mean,
                                         strict=True)), abs=1e-12)


def test_joblib_and_pickle_files_load_with_a_note(saved):
    folder, data, model, X_test, y_test = saved
    path = folder / "model.joblib"
    document, err = explain_json(["explain", str(data), "--target", "y", "--model",
                                  str(path), "--json"])
    _check_document(document, model, X_test, y_test)
    note = (f"{path} is a joblib file: loading it ran whatever code it holds, so load only "
            "model files you made or trust")
    assert document["notes"][0].startswith(note)
    assert note in err
    # A pickle file is loaded the same way (the command then runs as above).
    loaded, notes = load_model_file(folder / "model.pkl")
    np.testing.assert_array_equal(loaded.predict_proba(X_test), model.predict_proba(X_test))
    assert notes[0].startswith(f"{folder / 'model.pkl'} is a pickle file: loading it ran")


def test_skops_files_load_safely(saved, tmp_path):
    sio = pytest.importorskip("skops.io")
    folder, data, model, X_test, y_test = saved
    path = tmp_path / "model.skops"
    sio.dump(model, path)
    document, _ = explain_json(["explain", str(data), "--target", "y", "--model", str(path),
                                "--json"])
    _check_document(document, model, X_test, y_test)
    assert not any("ran whatever code" in note for note in document["notes"])
    # skops' archive under another name is still read as one.
    renamed = tmp_path / "model.zip"
    renamed.write_bytes(path.read_bytes())
    loaded, notes = load_model_file(renamed)
    np.testing.assert_array_equal(loaded.predict_proba(X_test), model.predict_proba(X_test))
    assert notes == []


def test_skops_types_from_elsewhere_are_refused_by_name(saved, tmp_path, capsys):
    sio = pytest.importorskip("skops.io")
    import collections

    folder, data, *_ = saved
    path = tmp_path / "odd.skops"
    sio.dump({"counts": collections.Counter("aab")}, path)
    run_bad(capsys, ["explain", str(data), "--target", "y", "--model", str(path)],
            "holds types sapwood does not trust", "collections.Counter")
    path = tmp_path / "dict.skops"
    sio.dump({"a": 1}, path)
    run_bad(capsys, ["explain", str(data), "--target", "y", "--model", str(path)],
            "holds a dict, not a model")


def test_a_zip_that_is_no_sapwood_file_is_said_so(saved, tmp_path, capsys):
    folder, data, *_ = saved
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hello")
    line = run_bad(capsys, ["explain", str(data), "--target", "y", "--model", str(path)],
                   "is a ZIP archive but not a sapwood model file")
    assert "archive members are wrong" not in line


def test_a_damaged_pickle_is_one_line(saved, tmp_path, capsys):
    folder, data, *_ = saved
    path = tmp_path / "broken.pkl"
    path.write_bytes(b"\x80\x04not a pickle")
    run_bad(capsys, ["explain", str(data), "--target", "y", "--model", str(path)],
            f"cannot load model file {path}")


def test_an_early_stopped_xgboost_file_and_all_trees(saved, tmp_path, capsys):
    xgb = pytest.importorskip("xgboost")
    folder, data, *_ = saved
    frame = pd.read_csv(data)
    X, y = frame[["a", "b", "noise"]], frame["y"]
    model = xgb.XGBClassifier(n_estimators=60, learning_rate=0.8, max_depth=2,
                              early_stopping_rounds=3, n_jobs=1, random_state=0)
    model.fit(X[:100], y[:100], eval_set=[(X[100:], y[100:])], verbose=False)
    path = tmp_path / "stopped.json"
    model.save_model(path)
    best, total = model.best_iteration + 1, model.get_booster().num_boosted_rounds()
    assert best < total
    document, _ = explain_json(["explain", str(data), "--target", "y", "--model", str(path),
                                "--json", "--methods", "gain"])
    assert (f"({best} trees, objective binary:logistic; {best} of {total} iterations"
            in document["model"]["name"])
    document, _ = explain_json(["explain", str(data), "--target", "y", "--model", str(path),
                                "--json", "--methods", "gain", "--all-trees"])
    assert f"({total} trees, objective binary:logistic)" in document["model"]["name"]
    run_bad(capsys, ["explain", str(data), "--target", "y", "--all-trees"],
            "--all-trees", "--model MODEL_FILE")


def test_the_help_lists_every_format(capsys):
    assert main(["explain", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in (".sapwood", ".json", ".ubj", ".txt", ".cbm", ".joblib", ".pkl", ".skops"):
        assert name in MODEL_FILE_HELP and name in out


def test_all_trees_of_a_pickled_early_stopped_model(saved, tmp_path):
    xgb = pytest.importorskip("xgboost")
    folder, data, *_ = saved
    frame = pd.read_csv(data)
    X, y = frame[["a", "b", "noise"]], frame["y"]
    model = xgb.XGBClassifier(n_estimators=60, learning_rate=0.8, max_depth=2,
                              early_stopping_rounds=3, n_jobs=1, random_state=0)
    model.fit(X[:100], y[:100], eval_set=[(X[100:], y[100:])], verbose=False)
    path = tmp_path / "stopped.joblib"
    joblib.dump(model, path)
    # As it is: the estimator, which predicts with its best iteration.
    loaded, _ = load_model_file(path)
    assert loaded.best_iteration == model.best_iteration
    # --all-trees: every tree, read into the tree format.
    whole, _ = load_model_file(path, all_trees=True)
    assert whole.ensemble.n_trees == model.get_booster().num_boosted_rounds()
