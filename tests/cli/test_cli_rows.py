"""``sapwood explain DATA --row N``: one row's prediction, base value and each feature's
TreeSHAP contribution, checked against tree_shap on the same row of the same model."""

import contextlib
import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier

import sapwood
from sapwood.cli import main
from sapwood.importance import tree_shap
from tests.cli._helpers import run_bad

N_ROWS = 200


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """data.csv and a gradient-boosting classifier saved as a sapwood model file (so the
    test holds the very model the command explains)."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"income": rng.normal(size=N_ROWS), "age": rng.normal(size=N_ROWS),
                          "[bold]x$y$": rng.normal(size=N_ROWS)})
    frame.loc[::9, "age"] = np.nan
    frame["default"] = np.where(frame["income"] - 0.5 * frame["age"].fillna(0) > 0,
                                "yes", "no")
    folder = tmp_path_factory.mktemp("rows")
    data = folder / "data.csv"
    frame.to_csv(data, index=False)
    X = frame.drop(columns="default")
    model = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0)
    model.fit(X.fillna(-9.0), frame["default"])
    path = folder / "model.sapwood"
    sapwood.save(sapwood.adapters.as_ensemble(model, feature_names=list(X.columns)), path)
    return data, path, X


def _run(argv):
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(argv)
    return code, stdout.getvalue()


def test_printed_rows_equal_tree_shap_on_the_same_row(files):
    data, model_file, X = files
    code, out = _run(["explain", str(data), "--target", "default", "--model", str(model_file),
                      "--methods", "permutation", "--row", "17", "--row", "3"])
    assert code == 0
    ensemble = sapwood.load(model_file)
    for position in (17, 3):
        result = tree_shap(ensemble, X.iloc[[position]])
        phi = result.extra["shap_values"][0]
        base = result.extra["expected_value"]
        block = out[out.index(f"Row {position} of "):]
        header = block.splitlines()[0]
        assert "log-odds of class 'yes'" in header
        # The row's own target, to read the prediction against.
        truth = pd.read_csv(data)["default"].iloc[position]
        assert f"; its target: {truth}): " in header
        numbers = re.search(r"prediction (\S+) \(probability (\S+)\) = base value (\S+)", block)
        prediction = base + phi.sum()
        assert float(numbers[1]) == pytest.approx(prediction, rel=1e-5)
        assert float(numbers[2]) == pytest.approx(1 / (1 + np.exp(-prediction)), rel=1e-3)
        assert float(numbers[3]) == pytest.approx(base, rel=1e-5)
        # One table line per feature, largest |contribution| first, names as written.
        lines = [line for line in block.splitlines() if line.startswith("│")][:3]
        cells = [[cell.strip() for cell in line.strip("│").split("│")] for line in lines]
        order = np.argsort(-np.abs(phi), kind="stable")
        assert [row[0] for row in cells] == [X.columns[j] for j in order]
        # Printed on one scale: equal up to half a unit in the last decimal shown.
        decimals = len(cells[0][2].split(".")[1])
        np.testing.assert_allclose([float(row[2]) for row in cells], phi[order], rtol=0,
                                   atol=0.5 * 10.0 ** -decimals + 1e-12)
        values = X.iloc[position]
        assert [row[1] for row in cells] == [
            "missing" if np.isnan(values.iloc[j]) else f"{values.iloc[j]:.6g}" for j in order]


def test_json_rows_hold_the_exact_numbers(files):
    data, model_file, X = files
    code, out = _run(["explain", str(data), "--target", "default", "--model", str(model_file),
                      "--methods", "permutation", "--row", "9", "--json"])
    assert code == 0
    (row,) = json.loads(out)["rows"]
    result = tree_shap(sapwood.load(model_file), X.iloc[[9]])
    phi = result.extra["shap_values"][0]
    assert row["row"] == 9 and row["output"] == "log-odds of class 'yes'"
    assert row["target"] == pd.read_csv(data)["default"].iloc[9]
    assert row["base_value"] == pytest.approx(result.extra["expected_value"], abs=1e-12)
    assert row["prediction"] == pytest.approx(row["base_value"] + phi.sum(), abs=1e-12)
    by_name = {entry["feature"]: entry for entry in row["contributions"]}
    for j, name in enumerate(X.columns):
        assert by_name[name]["contribution"] == pytest.approx(phi[j], abs=1e-12)
    assert by_name["age"]["value"] == "missing"  # row 9 is one of every 9th: age missing


def test_category_labels_and_the_split_the_row_is_in(tmp_path):
    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame({"x": rng.uniform(size=n),
                          "colour": rng.choice(["red", "green", "blue"], size=n)})
    frame["y"] = frame["x"] + (frame["colour"] == "red") + 0.1 * rng.normal(size=n)
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    code, out = _run(["explain", str(path), "--target", "y", "--model", "tree",
                      "--methods", "mdi", "--row", "4", "--json"])
    assert code == 0
    (row,) = json.loads(out)["rows"]
    values = {entry["feature"]: entry["value"] for entry in row["contributions"]}
    assert values["colour"] == frame["colour"].iloc[4]
    assert row["output"] == "prediction"
    assert sum(e["contribution"] for e in row["contributions"]) == pytest.approx(
        row["prediction"] - row["base_value"])
    from sklearn.model_selection import train_test_split

    _, held_out = train_test_split(frame, test_size=0.25, random_state=0)
    assert row["held_out"] == (4 in held_out.index)


def test_report_has_the_beeswarm_and_each_rows_waterfall(files, tmp_path):
    data, model_file, _ = files
    report = tmp_path / "report.html"
    code, _ = _run(["explain", str(data), "--target", "default", "--model", str(model_file),
                    "--methods", "shap", "--row", "2", "--row", "5", "--report", str(report),
                    "--quiet"])
    assert code == 0
    text = report.read_text(encoding="utf-8")
    section = text[text.index("<summary>SHAP pictures</summary>"):]
    assert section.count("<img alt='SHAP beeswarm'") == 1
    assert section.count("<img alt='waterfall'") == 2
    assert "<h3>Row 2 of " in section and "<h3>Row 5 of " in section
    # The hostile column name is text in the HTML too.
    assert "[bold]x$y$" in section and "<bold>" not in section


def test_rows_outside_the_file_are_bad_input(capsys, files):
    data, model_file, _ = files
    run_bad(capsys, ["explain", str(data), "--target", "default", "--row", str(N_ROWS)],
            f"--row {N_ROWS}", f"positions 0 to {N_ROWS - 1}")
    run_bad(capsys, ["explain", str(data), "--target", "default", "--row", "-1"],
            "--row", "must be a row position")


def test_lightgbm_categories_in_another_order_than_the_datas_sorted_labels(tmp_path):
    # LightGBM codes a pandas category by its position among the column's categories
    # (red, green, blue here); the CLI codes a CSV's text column by its sorted labels
    # (blue, green, red). The explained rows must show each row's own label and its
    # contributions must be LightGBM's own for that row.
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(5)
    n = 300
    colour = pd.Categorical(rng.choice(["red", "green", "blue"], size=n),
                            categories=["red", "green", "blue"])
    frame = pd.DataFrame({"x": rng.uniform(size=n), "colour": colour})
    effect = {"red": 2.0, "green": 0.0, "blue": -1.0}
    frame["y"] = (frame["x"] + frame["colour"].map(effect).astype(float)
                  + 0.1 * rng.normal(size=n))
    model = lightgbm.LGBMRegressor(n_estimators=20, num_leaves=4, min_child_samples=5,
                                   min_data_per_group=5, cat_smooth=1, verbose=-1)
    model.fit(frame[["x", "colour"]], frame["y"])
    model_path = tmp_path / "model.txt"
    model.booster_.save_model(model_path)
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    positions = [int(np.flatnonzero(frame["colour"] == label)[0])
                 for label in ("red", "green", "blue")]
    argv = ["explain", str(data), "--target", "y", "--model", str(model_path),
            "--methods", "gain", "--json"]
    for position in positions:
        argv += ["--row", str(position)]
    code, out = _run(argv)
    assert code == 0
    document = json.loads(out)
    # The encoding the rows' codes are read with is the model's, in the model's order.
    assert document["data"]["encoded"]["colour"] == ["red", "green", "blue"]
    rows = document["rows"]
    own = model.booster_.predict(frame[["x", "colour"]].iloc[positions], pred_contrib=True)
    for position, row, contributions in zip(positions, rows, own, strict=True):
        assert row["row"] == position
        values = {entry["feature"]: entry["value"] for entry in row["contributions"]}
        assert values["colour"] == frame["colour"].iloc[position]
        phi = {entry["feature"]: entry["contribution"] for entry in row["contributions"]}
        assert phi["colour"] == pytest.approx(contributions[1], abs=1e-9)
        assert abs(contributions[1]) > 0.1  # the model does split on the categories
        assert phi["x"] == pytest.approx(contributions[0], abs=1e-9)
        assert row["base_value"] == pytest.approx(contributions[2], abs=1e-9)
