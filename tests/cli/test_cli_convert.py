"""``sapwood convert MODEL_FILE OUT``: XGBoost, LightGBM and sapwood files in, a sapwood
model file out, one summary line; damaged input is one line on stderr and exit code 2."""

import subprocess
import sys

import numpy as np
import pytest

import sapwood
from sapwood.cli import main
from tests.cli._helpers import run_bad


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def xgboost_files(data, tmp_path_factory):
    xgboost = pytest.importorskip("xgboost")
    X, y = data
    folder = tmp_path_factory.mktemp("xgb")
    model = xgboost.XGBClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    model.save_model(folder / "model.json")
    model.save_model(folder / "model.ubj")
    return model, folder / "model.json", folder / "model.ubj"


@pytest.fixture(scope="module")
def lightgbm_file(data, tmp_path_factory):
    lightgbm = pytest.importorskip("lightgbm")
    X, y = data
    path = tmp_path_factory.mktemp("lgb") / "model.txt"
    model = lightgbm.LGBMRegressor(n_estimators=4, num_leaves=5, min_child_samples=5,
                                   verbose=-1).fit(X, X[:, 0] * 2 + X[:, 2])
    model.booster_.save_model(path)
    return model, path


def convert_ok(capsys, source, out):
    code = main(["convert", str(source), str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert len(lines) == 1
    return lines[0]


@pytest.mark.parametrize("which", ["json", "ubj"])
def test_xgboost_file(capsys, data, xgboost_files, tmp_path, which):
    model, json_path, ubj_path = xgboost_files
    source = json_path if which == "json" else ubj_path
    out = tmp_path / "model.sapwood"
    line = convert_ok(capsys, source, out)
    assert line == (f"Converted {source} to {out}: 5 trees, 4 features, classification "
                    "(2 classes); source XGBoost Booster (objective binary:logistic)")
    loaded = sapwood.load(out)
    X, _ = data
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_allclose(loaded.predict_proba(X), model.predict_proba(X), rtol=1e-6)
    assert [p.name for p in tmp_path.iterdir()] == ["model.sapwood"]


def test_lightgbm_file_and_sapwood_round_trip(capsys, data, lightgbm_file, tmp_path):
    model, source = lightgbm_file
    first = tmp_path / "first.sapwood"
    line = convert_ok(capsys, source, first)
    assert line.startswith(f"Converted {source} to {first}: 4 trees, 4 features, regression;"
                           " source LightGBM Booster (objective regression")
    # A sapwood file converts to an identical file.
    second = tmp_path / "second.sapwood"
    convert_ok(capsys, first, second)
    assert second.read_bytes() == first.read_bytes()
    X, _ = data
    np.testing.assert_allclose(sapwood.load(second).predict(X), model.predict(X), rtol=1e-6)


@pytest.mark.parametrize("damage", ["truncated", "bit flips", "garbage", "empty"])
def test_corrupted_xgboost_file(capsys, xgboost_files, tmp_path, damage):
    _, json_path, _ = xgboost_files
    raw = json_path.read_bytes()
    if damage == "truncated":
        content = raw[: len(raw) // 2]
    elif damage == "bit flips":
        content = raw.replace(b'"split_indices"', b'"split_indicez"')
    elif damage == "garbage":
        content = bytes(range(256)) * 4
    else:
        content = b""
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    out = tmp_path / "out.sapwood"
    run_bad(capsys, ["convert", str(bad), str(out)], str(bad))
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.json"]


def test_corrupted_sapwood_file(capsys, lightgbm_file, tmp_path):
    good = tmp_path / "good.sapwood"
    sapwood.save(sapwood.from_model(lightgbm_file[1]), good)
    bad = tmp_path / "bad.sapwood"
    bad.write_bytes(good.read_bytes()[:-200])
    run_bad(capsys, ["convert", str(bad), str(tmp_path / "out.sapwood")],
            "cannot read model file", "not a valid sapwood model file")


def test_not_a_model(capsys, tmp_path):
    csv = tmp_path / "data.csv"
    csv.write_text("a,b\n1,2\n")
    run_bad(capsys, ["convert", str(csv), str(tmp_path / "out.sapwood")],
            "is not a model file sapwood knows")


def test_missing_input_and_bad_output(capsys, xgboost_files, tmp_path):
    run_bad(capsys, ["convert", str(tmp_path / "nope.json"), str(tmp_path / "o.sapwood")],
            "model file not found")
    run_bad(capsys, ["convert", str(xgboost_files[1]), str(tmp_path / "no" / "o.sapwood")],
            "does not exist")
    run_bad(capsys, ["convert", str(xgboost_files[1]), str(tmp_path)], "is a directory")


def test_subprocess(xgboost_files, tmp_path):
    out = tmp_path / "m.sapwood"
    good = subprocess.run([sys.executable, "-m", "sapwood.cli", "convert",
                           str(xgboost_files[1]), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stderr
    assert good.stdout.startswith(f"Converted {xgboost_files[1]} to {out}: 5 trees")
    bad = subprocess.run([sys.executable, "-m", "sapwood.cli", "convert", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert len(bad.stderr.splitlines()) == 1 and "Traceback" not in bad.stderr
