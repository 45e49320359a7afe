"""The numbers `sapwood explain` prints are the library's: every default measure, run
through the command line on a forest, equals the public function called on the CLI's own
split with the CLI's settings (and `sapwood tree` prints `export_text` of the same tree)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss

import sapwood
from sapwood import export, importance
from sapwood.cli import main
from sapwood.importance._registry import N_REPEATS
from sapwood.report._models import build_model
from tests.cli.test_cli_measures import by_feature, run_json, split_of

SEED = 0


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    rng = np.random.default_rng(11)
    n = 240
    frame = pd.DataFrame({"a": rng.uniform(size=n), "b": rng.normal(size=n),
                          "c": rng.integers(0, 4, size=n).astype(float),
                          "noise": rng.uniform(size=n)})
    frame["y"] = ((frame["a"] + 0.5 * frame["b"] + 0.2 * frame["c"]
                   + 0.3 * rng.normal(size=n)) > 0.9).astype(int)
    path = tmp_path_factory.mktemp("values") / "data.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def cli_and_library(csv):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "rf",
                            "--max-depth", "4", "--methods", "mdi,permutation,oob,ufi,shap",
                            "--max-rows", "all", "--json"])
    X_train, X_test, y_train, y_test = split_of(csv)
    model = build_model("rf", "classification", max_depth=4, random_state=SEED)
    model.fit(X_train, y_train)
    expected = {
        "mdi": importance.mdi(model),
        "permutation": importance.permutation_importance(
            model, X_test, y_test, n_repeats=N_REPEATS, random_state=SEED,
            scoring="neg_brier_score"),
        "oob": importance.oob_permutation_importance(model, X_train, y_train,
                                                     random_state=SEED),
        "ufi": importance.ufi(model, X_train, y_train),
        "shap": importance.tree_shap(model, X_test),
    }
    return document, expected, model, (X_test, y_test)


@pytest.mark.parametrize("name", ["mdi", "permutation", "oob", "ufi", "shap"])
def test_each_measure_equals_the_library_call(cli_and_library, name):
    document, expected, _, _ = cli_and_library
    rows = document["measures"][name]
    want = expected[name]
    assert by_feature(rows) == pytest.approx(
        dict(zip(want.feature_names, want.importances_mean, strict=True)), rel=1e-9,
        abs=1e-12)
    assert by_feature(rows, "std") == pytest.approx(
        dict(zip(want.feature_names, want.importances_std, strict=True)), rel=1e-9,
        abs=1e-12)


def test_the_model_block_describes_the_forest_the_library_builds(cli_and_library):
    document, _, model, (X_test, y_test) = cli_and_library
    described = document["model"]
    assert described["params"] == model.get_params()
    assert (described["n_train"], described["n_test"]) == (180, 60)
    # sapwood explain's score for a classifier: the Brier score, the accuracy beside it.
    assert described["score_name"] == "neg_brier_score"
    assert described["score"] == pytest.approx(
        -brier_score_loss(y_test, model.predict_proba(X_test)[:, 1]), abs=1e-12)
    assert described["accuracy"] == pytest.approx(model.score(X_test, y_test), abs=1e-12)


def test_tree_prints_export_text_of_the_tree_it_grows(csv, capsys):
    assert main(["tree", str(csv), "--target", "y", "--max-depth", "3"]) == 0
    printed = capsys.readouterr().out
    frame = pd.read_csv(csv)
    X, y = frame.drop(columns="y"), frame["y"]
    grown = sapwood.DecisionTreeClassifier(max_depth=3, random_state=SEED).fit(X, y)
    want = export.export_text(grown, feature_names=list(X.columns), max_depth=3)
    assert want in printed


def test_shap_on_a_row_sample_explains_the_rows_pandas_samples(csv):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "rf",
                            "--max-depth", "4", "--methods", "shap", "--max-rows", "30",
                            "--json"])
    X_train, X_test, y_train, _ = split_of(csv)
    model = build_model("rf", "classification", max_depth=4, random_state=SEED)
    model.fit(X_train, y_train)
    want = importance.tree_shap(model, X_test.sample(n=30, random_state=SEED))
    assert by_feature(document["measures"]["shap"]) == pytest.approx(
        dict(zip(want.feature_names, want.importances_mean, strict=True)), rel=1e-9)
    assert document["rows_explained"]["shap"] == {"n_rows": 30, "n_rows_available": 60}
