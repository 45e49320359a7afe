"""Outputs that cannot hurt: files written whole or not at all, never over an input,
strict JSON, and values too large for the arithmetic refused with the reason."""

import errno
import json

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.cli import main
from tests.cli._helpers import run_bad


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    frame["y"] = (frame["a"] > 0).astype(int)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def test_a_report_never_overwrites_the_data(capsys, csv, tmp_path):
    before = csv.read_bytes()
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--report", str(csv)],
            "--report", "is the input file")
    # However the path is spelt.
    spelt = tmp_path / "." / "data.csv"
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--report", str(spelt)],
            "is the input file")
    assert csv.read_bytes() == before


def test_a_report_never_overwrites_the_model(capsys, csv, tmp_path):
    model = tmp_path / "model.sapwood"
    sapwood.save(sapwood.DecisionTreeClassifier(max_depth=2).fit(
        pd.read_csv(csv)[["a", "b"]], pd.read_csv(csv)["y"]), model)
    before = model.read_bytes()
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--model", str(model),
                     "--report", str(model)], "is the input file")
    run_bad(capsys, ["convert", str(model), str(model)], "OUT", "is the input file")
    assert model.read_bytes() == before


def test_a_drawing_never_overwrites_the_data(capsys, tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "data.svg"  # a data file that happens to have a drawing's suffix
    pd.DataFrame({"a": rng.normal(size=50), "y": rng.integers(0, 2, 50)}).to_csv(
        path, index=False)
    before = path.read_bytes()
    run_bad(capsys, ["tree", str(path), "--target", "y", "--out", str(path)],
            "--out", "is the input file")
    assert path.read_bytes() == before


def test_a_save_that_fails_part_way_leaves_the_old_model(tmp_path, monkeypatch):
    X = np.random.default_rng(0).normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "model.sapwood"
    sapwood.save(sapwood.DecisionTreeClassifier(max_depth=2).fit(X, y), path)
    before = path.read_bytes()
    bigger = sapwood.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", full_disk)
    with pytest.raises(OSError, match="No space left"):
        sapwood.save(bigger, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.sapwood"]  # no temporary left
    monkeypatch.undo()
    sapwood.save(bigger, path)
    assert sapwood.load(path).n_trees == 5


def test_a_failed_report_leaves_the_old_one(capsys, csv, tmp_path, monkeypatch):
    from sapwood import _files

    report = tmp_path / "r.html"
    report.write_text("the previous report")
    real_fsync = _files.os.fsync

    def fsync_fails(descriptor):
        real_fsync(descriptor)
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(_files.os, "fsync", fsync_fails)
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--methods", "mdi", "--report",
                     str(report)], "cannot write", "File too large")
    assert report.read_text() == "the previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "r.html"]


@pytest.mark.parametrize("column, value, phrases", [
    ("y", 1e300, ["target column 'y' has values up to", "rescale it"]),
    ("y", np.inf, ["target column 'y' has 1 infinite value(s)"]),
    ("b", np.inf, ["feature column 'b' has 1 infinite or too large value(s)"]),
    ("b", 1e39, ["feature column 'b'", "float32 range"]),
])
def test_values_beyond_the_arithmetic_exit_2(capsys, tmp_path, column, value, phrases):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=100), "b": rng.normal(size=100)})
    frame["y"] = frame["a"] * 3 + rng.normal(size=100)
    if np.isinf(value):
        frame.loc[7, column] = value
    else:
        frame[column] = frame[column] * value
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    run_bad(capsys, ["explain", str(path), "--target", "y"], *phrases)


def test_json_is_strict(capsys, csv, monkeypatch):
    from sapwood.report import _explain as _run

    # A score that is not a finite number (R² of a constant held-out target is NaN).
    monkeypatch.setattr(_run, "score_model", lambda *args: float("nan"))
    assert main(["explain", str(csv), "--target", "y", "--methods", "mdi", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "NaN" not in out and "Infinity" not in out
    document = json.loads(out, parse_constant=lambda name: pytest.fail(name))
    assert document["model"]["score"] is None
    assert any("not a finite number" in note for note in document["notes"])
