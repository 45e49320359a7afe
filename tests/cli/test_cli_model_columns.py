"""``sapwood explain DATA --model FILE`` matches the data's columns to the model's
features as the library that wrote the file spells them: LightGBM stores ``unit price``
as ``unit_price``; XGBoost, CatBoost and sapwood keep names. Missing and ambiguous
columns are one-line errors naming them; columns the model does not use are left out
with a note."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.cli import main
from sapwood.cli._errors import InputError
from sapwood.report._columns import match_columns
from tests.cli._helpers import run_bad

N_ROWS = 200
# Data column -> the name LightGBM stores: spaces become underscores, everything else
# (here "<" and "=") is kept.
RESPELLED = {"unit price": "unit_price", "qty  sold today": "qty__sold_today",
             "rate<1": "rate<1", "noise": "noise"}
METHODS = ["--methods", "gain,permutation"]


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({name: rng.normal(size=N_ROWS) for name in RESPELLED})
    frame["y"] = (3 * frame["unit price"] + frame["qty  sold today"]
                  + 0.5 * frame["rate<1"] + 0.1 * rng.normal(size=N_ROWS))
    return frame


@pytest.fixture(scope="module")
def lightgbm_file(table, tmp_path_factory):
    lightgbm = pytest.importorskip("lightgbm")
    X = table[list(RESPELLED)]
    model = lightgbm.LGBMRegressor(n_estimators=8, num_leaves=4, min_child_samples=5,
                                   verbose=-1).fit(X, table["y"])
    path = tmp_path_factory.mktemp("columns") / "model.txt"
    model.booster_.save_model(path)
    return path


def explain_json(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    assert code == 0, stderr.getvalue()
    return json.loads(stdout.getvalue())


def write(frame, path):
    frame.to_csv(path, index=False)
    return str(path)


def importances(document):
    """{measure: {feature: importance}}."""
    return {name: {row["feature"]: row["importance"] for row in rows}
            for name, rows in document["measures"].items()}


@pytest.fixture(scope="module")
def with_model_names(table, lightgbm_file, tmp_path_factory):
    """The run on data whose header already has LightGBM's spelling."""
    renamed = table.rename(columns=RESPELLED)
    data = write(renamed, tmp_path_factory.mktemp("renamed") / "renamed.csv")
    return explain_json(["explain", data, "--target", "y", "--model", str(lightgbm_file),
                         "--json", *METHODS])


def test_lightgbm_stores_spaces_as_underscores(lightgbm_file):
    """What the matching rests on, checked against the installed LightGBM."""
    header = [line for line in lightgbm_file.read_text().splitlines()
              if line.startswith("feature_names=")]
    assert header == ["feature_names=" + " ".join(RESPELLED.values())]


def test_lightgbm_names_match_the_original_columns(table, lightgbm_file, with_model_names,
                                                   tmp_path):
    data = write(table, tmp_path / "data.csv")
    document = explain_json(["explain", data, "--target", "y", "--model",
                             str(lightgbm_file), "--json", *METHODS])
    found, expected = importances(document), importances(with_model_names)
    assert list(found) == list(expected) == ["gain", "permutation"]
    for name in found:
        # Named as the data names them, and the same numbers as with LightGBM's names.
        assert set(found[name]) == set(RESPELLED)
        assert {RESPELLED[f]: v for f, v in found[name].items()} == expected[name]
    assert max(found["permutation"], key=found["permutation"].get) == "unit price"
    note = [n for n in document["notes"] if n.startswith("column(s) matched")]
    assert note == ["column(s) matched to the model's features by name as LightGBM stores "
                    "a space in a name as an underscore: 'unit price' as 'unit_price', "
                    "'qty  sold today' as 'qty__sold_today'"]
    assert not any(n.startswith("column(s) matched") for n in with_model_names["notes"])


def test_other_order_and_unused_columns(table, lightgbm_file, with_model_names, tmp_path):
    shuffled = table.assign(**{"extra id": np.arange(N_ROWS)})[
        ["noise", "y", "extra id", "rate<1", "qty  sold today", "unit price"]]
    data = write(shuffled, tmp_path / "shuffled.csv")
    document = explain_json(["explain", data, "--target", "y", "--model",
                             str(lightgbm_file), "--json", *METHODS])
    found, expected = importances(document), importances(with_model_names)
    for name in found:
        assert {RESPELLED[f]: v for f, v in found[name].items()} == expected[name]
    assert document["data"]["n_features"] == len(RESPELLED)
    assert "column(s) the model does not use, left out: extra id" in document["notes"]


def test_missing_column_is_named(table, lightgbm_file, capsys, tmp_path):
    data = write(table.drop(columns=["unit price"]), tmp_path / "missing.csv")
    line = run_bad(capsys, ["explain", data, "--target", "y", "--model", str(lightgbm_file)],
                   "lacks the model's feature(s) unit_price;",
                   "LightGBM stores a space in a name as an underscore",
                   "the model's features are unit_price, qty__sold_today, rate<1, noise")
    assert "match no feature" not in line
    misspelt = write(table.rename(columns={"unit price": "unit-price"}), tmp_path / "bad.csv")
    run_bad(capsys, ["explain", misspelt, "--target", "y", "--model", str(lightgbm_file)],
            "lacks the model's feature(s) unit_price; its column(s) unit-price match no "
            "feature")


def test_ambiguous_columns_are_refused(table, lightgbm_file, capsys, tmp_path):
    both = table.assign(unit_price=table["unit price"])
    data = write(both, tmp_path / "both.csv")
    run_bad(capsys, ["explain", data, "--target", "y", "--model", str(lightgbm_file)],
            "has more than one column for the model's feature(s) unit_price (unit_price, "
            "unit price)", "LightGBM stores a space in a name as an underscore")


def test_xgboost_keeps_names(table, capsys, tmp_path):
    xgboost = pytest.importorskip("xgboost")
    columns = ["unit price", "noise"]  # XGBoost refuses "<" in a name
    model = xgboost.XGBRegressor(n_estimators=5, max_depth=2).fit(table[columns], table["y"])
    path = tmp_path / "model.json"
    model.save_model(path)
    data = write(table[[*columns, "y"]], tmp_path / "data.csv")
    document = explain_json(["explain", data, "--target", "y", "--model", str(path),
                             "--json", *METHODS])
    assert set(importances(document)["permutation"]) == set(columns)
    assert not any(n.startswith("column(s)") for n in document["notes"])
    # XGBoost does not respell, so LightGBM's spelling of a column is no match.
    renamed = write(table[[*columns, "y"]].rename(columns={"unit price": "unit_price"}),
                    tmp_path / "renamed.csv")
    run_bad(capsys, ["explain", renamed, "--target", "y", "--model", str(path)],
            "lacks the model's feature(s) unit price; its column(s) unit_price match no "
            "feature; the model's features are unit price, noise")


def test_sapwood_file_keeps_names_and_errors_show_names_safely(table, capsys, tmp_path):
    hostile = "\x1b" + "z" * 80  # an escape character, and longer than names are shown
    X = table[["unit price", "noise"]].assign(**{hostile: table["rate<1"]})
    tree = sapwood.DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, table["y"])
    path = tmp_path / "tree.sapwood"
    sapwood.save(tree, path)
    data = write(X.assign(y=table["y"]), tmp_path / "data.csv")
    document = explain_json(["explain", data, "--target", "y", "--model", str(path),
                             "--json", "--methods", "mdi"])
    assert set(importances(document)["mdi"]) == set(X.columns)
    assert not any(n.startswith("column(s)") for n in document["notes"])
    lacking = write(X.drop(columns=[hostile]).assign(y=table["y"]), tmp_path / "lacking.csv")
    line = run_bad(capsys, ["explain", lacking, "--target", "y", "--model", str(path)],
                   "lacks the model's feature(s) \\x1b" + "z" * 55 + "…;")
    assert "\x1b" not in line


@pytest.mark.parametrize("library", ["xgboost", "catboost", "sapwood", "sklearn", ""])
def test_libraries_that_keep_names_match_exactly(library):
    matching = match_columns(library, ["b", "a c"], ["a c", "b", "d"], target="y")
    assert matching.columns == ["b", "a c"] and matching.unused == ["d"]
    assert matching.respelled == [] and matching.notes() == [
        "column(s) the model does not use, left out: d"]
    with pytest.raises(InputError, match="lacks the model's feature.s. a_c; its column.s. "
                                         "a c match no feature"):
        match_columns(library, ["b", "a_c"], ["a c", "b"], target="y")


def test_lightgbm_matching_rules():
    matching = match_columns("lightgbm", ["a_b", "c", "d__e"], ["d  e", "c", "a b"],
                             target="y")
    assert matching.columns == ["a b", "c", "d  e"] and matching.unused == []
    assert matching.respelled == [("a b", "a_b"), ("d  e", "d__e")]
    # An exact name beside a column respelled the same way: which one trained it is
    # not known, so nothing is guessed.
    with pytest.raises(InputError, match=r"a_b \(a_b, a b\)"):
        match_columns("lightgbm", ["a_b"], ["a b", "a_b"], target="y")


def test_missing_and_ambiguous_together():
    with pytest.raises(InputError) as error:
        match_columns("lightgbm", ["a_b", "c"], ["a b", "a_b", "c-"], target="y")
    assert str(error.value) == (
        "the data (without the target 'y') lacks the model's feature(s) c; has more than "
        "one column for the model's feature(s) a_b (a_b, a b); its column(s) c- match no "
        "feature; LightGBM stores a space in a name as an underscore; the model's features "
        "are a_b, c")


def test_one_name_twice_in_the_model_is_refused():
    with pytest.raises(InputError, match=r"the model names its feature\(s\) a more than "
                                         "once"):
        match_columns("sapwood", ["a", "b", "a"], ["a", "b"], target="y")


def test_long_lists_are_cut():
    features = [f"f{j}" for j in range(20)]
    with pytest.raises(InputError) as error:
        match_columns("xgboost", features, [], target="y")
    assert "f0, f1, f2, f3, f4, f5, f6, f7, ... (20 in all)" in str(error.value)


def test_lightgbm_keeps_other_blanks(table, tmp_path):
    """LightGBM changes spaces only: a tab or a no-break space stays in the name it
    stores, and the file's space-separated list of names still reads."""
    lightgbm = pytest.importorskip("lightgbm")
    X = table[["unit price", "noise"]].rename(columns={"noise": "tab\there nbsp\xa0here"})
    model = lightgbm.LGBMRegressor(n_estimators=4, num_leaves=4, min_child_samples=5,
                                   verbose=-1).fit(X, table["y"])
    path = tmp_path / "model.txt"
    model.booster_.save_model(path)
    assert model.booster_.feature_name() == ["unit_price", "tab\there_nbsp\xa0here"]
    assert sapwood.from_model(path).feature_names == ("unit_price", "tab\there_nbsp\xa0here")
    data = write(X.assign(y=table["y"]), tmp_path / "data.csv")
    document = explain_json(["explain", data, "--target", "y", "--model", str(path),
                             "--json", "--methods", "gain"])
    assert set(importances(document)["gain"]) == set(X.columns)
    assert ("'tab\\x09here nbsp\xa0here' as 'tab\\x09here_nbsp\xa0here'"
            in "".join(document["notes"]))
