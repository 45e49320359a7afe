"""Hostile model files cost in proportion to their size: each attack is refused with a
FormatError, measured in a fresh process for its time and the growth of its peak
memory (generous bounds: a regression to quadratic time or a multi-GB allocation
fails them; a slow machine does not)."""

import io
import json
import struct
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import sapwood
from sapwood.adapters import as_ensemble

from ._data import catboost_document

MAX_SECONDS = 20
# Growth of the process's peak memory during the load (importing sapwood, and Numba
# compiling on an empty cache, come before and do not count).
MAX_GROWTH_MB = 300


def load_in_subprocess(path):
    """(exception name, message, seconds, growth of peak RSS in MB) of
    sapwood.from_model(path) in a fresh process."""
    script = textwrap.dedent(f"""
        import json, resource, time
        import sapwood
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        try:
            sapwood.from_model({str(path)!r})
            outcome = ("loaded", "")
        except Exception as error:
            outcome = (type(error).__name__, str(error))
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps([*outcome, seconds, (after - before) / 1024]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_refused(path, phrase):
    kind, message, seconds, growth = load_in_subprocess(path)
    assert kind == "FormatError" and phrase in message, (kind, message)
    assert seconds < MAX_SECONDS and growth < MAX_GROWTH_MB, (seconds, growth)


def test_ubjson_arrays_of_nulls_cost_linear_time(tmp_path):
    # 60 KB of typed arrays of nulls, each declaring as many elements as bytes remain.
    # An object, as XGBoost writes, so that the file is taken for UBJSON.
    size = 60_000
    body = bytearray(b"{i\x07learner[")
    while len(body) < size:
        body += b"[$Z#l" + struct.pack(">i", size - len(body) - 10)
    body += b"]}"
    path = tmp_path / "bomb.ubj"
    path.write_bytes(bytes(body))
    check_refused(path, "than the file has bytes")


@pytest.fixture(scope="module")
def lightgbm_text():
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    booster = lightgbm.LGBMClassifier(n_estimators=2, verbose=-1).fit(X, y).booster_
    return booster.model_to_string()


def test_lightgbm_class_count_must_match_its_trees(tmp_path, lightgbm_text):
    assert "num_class=3" in lightgbm_text
    path = tmp_path / "model.txt"
    path.write_text(lightgbm_text.replace("num_class=3", "num_class=100000000"))
    check_refused(path, "num_class=100000000")
    path.write_text(lightgbm_text.replace("max_feature_idx=2", "max_feature_idx=2000000000"))
    check_refused(path, "features")


def test_a_sapwood_header_cannot_declare_features_beyond_its_size(tmp_path):
    X = np.random.default_rng(0).normal(size=(50, 3))
    model = sapwood.DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0])
    buffer = io.BytesIO()
    sapwood.save(model, buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".json"):
                header = json.loads(data)
                header["n_features"] = 2**31 - 1
                data = json.dumps(header).encode()
            target.writestr(info, data)
    path = tmp_path / "model.sapwood"
    path.write_bytes(out.getvalue())
    check_refused(path, "n_features")


# -- values the native libraries never write -------------------------------------------

def test_xgboost_default_left_must_be_a_boolean(tmp_path):
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    model = xgboost.XGBRegressor(n_estimators=2, max_depth=2).fit(X, X[:, 0])
    path = tmp_path / "model.json"
    model.save_model(path)
    document = json.loads(path.read_text())
    trees = document["learner"]["gradient_booster"]["model"]["trees"]
    trees[1]["default_left"][0] = 2
    path.write_text(json.dumps(document))
    with pytest.raises(sapwood.FormatError, match="tree 1: default_left must be 0 or 1.*node 0"):
        sapwood.from_model(path)


@pytest.mark.parametrize("layout", ["dart", "gbtree"])
@pytest.mark.parametrize(("weight", "phrase"), [
    (-0.5, "tree_weights must be finite and non-negative"),
    (float("nan"), "tree_weights must be finite and non-negative"),
    (1e300, "tree_weights must be finite and non-negative"),  # past float32
    ("heavy", "weight_drop holds values that are not float64"),
    (None, "tree_info / weight_drop do not have one entry per tree"),
])
def test_xgboost_dart_weights_must_be_one_finite_weight_per_tree(tmp_path, layout, weight,
                                                                   phrase):
    """DART weights beside the trees (XGBoost < 3.3, booster "dart") or in the tree
    model (XGBoost >= 3.3, booster "gbtree")."""
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    model = xgboost.XGBRegressor(n_estimators=3, max_depth=2, booster="dart",
                                 rate_drop=0.5).fit(X, X[:, 0])
    path = tmp_path / "model.json"
    model.save_model(path)
    document = json.loads(path.read_text())
    booster = document["learner"]["gradient_booster"]
    if layout == "gbtree":  # XGBoost >= 3.3 writes them this way
        booster.update(name="gbtree", model=booster["gbtree"]["model"])
        booster["model"]["weight_drop"] = booster.pop("weight_drop")
        del booster["gbtree"]
    weights = booster["weight_drop"] if layout == "dart" else booster["model"]["weight_drop"]
    if weight is None:
        weights.pop()
    else:
        weights[1] = weight
    path.write_text(json.dumps(document))
    with pytest.raises(sapwood.FormatError, match=phrase):
        sapwood.from_model(path)


@pytest.mark.parametrize("sigmoid", ["0", "-1", "inf", "nan"])
def test_lightgbm_sigmoid_must_be_positive(tmp_path, sigmoid):
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    text = lightgbm.LGBMClassifier(n_estimators=2, verbose=-1).fit(
        X, (X[:, 0] > 0).astype(int)).booster_.model_to_string()
    assert "objective=binary sigmoid:1" in text
    path = tmp_path / "model.txt"
    path.write_text(text.replace("binary sigmoid:1", f"binary sigmoid:{sigmoid}"))
    with pytest.raises(sapwood.FormatError, match="sigmoid"):
        sapwood.from_model(path)


def test_the_format_refuses_what_no_library_writes():
    X = np.random.default_rng(0).normal(size=(60, 2))
    ensemble = as_ensemble(sapwood.DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0]))
    fields = dict(trees=ensemble.trees, n_features=2, combine="sum")
    with pytest.raises(sapwood.FormatError, match="tree 0 has -0.5"):
        sapwood.TreeEnsemble(task="regression", tree_weights=[-0.5], **fields)
    with pytest.raises(sapwood.FormatError, match="finite"):
        sapwood.TreeEnsemble(task="regression", tree_weights=[np.inf], **fields)
    with pytest.raises(sapwood.FormatError, match="regression cannot have the softmax"):
        sapwood.TreeEnsemble(task="regression", link="softmax", **fields)


def test_catboost_counts_must_be_backed_by_the_file(tmp_path):
    path = tmp_path / "model.json"
    # 100 KB of one-leaf trees for 1,000 classes: 50,000 trees of the format, each far
    # dearer than its two bytes of leaf value.
    trees = [{"leaf_values": [0] * 1000, "leaf_weights": [1], "splits": []}] * 50
    path.write_text(json.dumps(catboost_document(1000, trees), separators=(",", ":")))
    check_refused(path, "bytes of leaf values per tree and class")
    # 60 splits declare 2**60 leaves; the file holds two.
    split = {"border": 0.0, "float_feature_index": 0, "split_type": "FloatFeature"}
    trees = [{"leaf_values": [0.5, 1.5], "leaf_weights": [1, 1], "splits": [split] * 60}]
    path.write_text(json.dumps(catboost_document(1, trees)))
    check_refused(path, "leaf_values has 2 entries; 60 splits")
