"""Writes the hand-made part of the reader corpus (run from the repository root with the
project's venv, ``python -m tests.adapters.fuzz_corpus.make_corpus``; the files are
checked in, so the suite does not run this). Each file is
one known attack, made small; ``make fuzz`` adds ``found-*`` files beside them."""

import io
import json
import struct
import zipfile
from pathlib import Path

import lightgbm
import numpy as np
import pandas as pd
import xgboost

import sapwood
from tests.adapters._data import catboost_document

HERE = Path(__file__).parent
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3))


def ubjson_null_arrays(size=8_000):
    # Typed arrays of nulls (zero bytes each), each declaring as many elements as bytes
    # remain: quadratic work for a reader that materialises them.
    body = bytearray(b"{i\x07learner[")
    while len(body) < size:
        body += b"[$Z#l" + struct.pack(">i", size - len(body) - 10)
    return bytes(body + b"]}")


def lightgbm_text(n_classes):
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0) if n_classes == 3 else (X[:, 0] > 0)
    return lightgbm.LGBMClassifier(n_estimators=2, num_leaves=4, verbose=-1).fit(
        X, y.astype(int)).booster_.model_to_string()


def sapwood_header(n_features):
    buffer = io.BytesIO()
    sapwood.save(sapwood.DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0]), buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".json"):
                header = json.loads(data)
                header["n_features"] = n_features
                data = json.dumps(header).encode()
            target.writestr(info, data)
    return out.getvalue()


def categorical_files():
    """Category sets that reach past what the file holds: a LightGBM tree whose
    cat_boundaries end past cat_threshold, an XGBoost tree whose categories_segments
    point past its categories, a sapwood tree whose set's word count exceeds its words."""
    files = {}
    codes = rng.integers(0, 40, size=(400, 1)).astype(float)
    data = np.hstack([codes, rng.normal(size=(400, 1))])
    y = 5.0 * (codes[:, 0] % 3 == 0) + 0.1 * data[:, 1]
    text = lightgbm.LGBMRegressor(n_estimators=2, num_leaves=4, min_data_per_group=5,
                                  cat_smooth=1, max_cat_to_onehot=2, verbose=-1).fit(
        data, y, categorical_feature=[0]).booster_.model_to_string()
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("cat_boundaries="))
    bounds = lines[at].split("=")[1].split()
    lines[at] = "cat_boundaries=" + " ".join(bounds[:-1] + ["2000000000"])
    files["refused-lightgbm-cat-boundaries.txt"] = "\n".join(lines).encode()
    frame = pd.DataFrame({"c": pd.Categorical(codes[:, 0].astype(int)), "x": data[:, 1]})
    model = xgboost.XGBRegressor(n_estimators=2, max_depth=2, enable_categorical=True,
                                 max_cat_to_onehot=1).fit(frame, y)
    document = json.loads(bytes(model.get_booster().save_raw(raw_format="json")))
    tree = next(t for t in document["learner"]["gradient_booster"]["model"]["trees"]
                if t["categories_nodes"])
    tree["categories_segments"][0] = 2**40
    files["refused-xgboost-categories-segments.json"] = json.dumps(document).encode()
    buffer = io.BytesIO()
    sapwood.save(lightgbm.LGBMRegressor(n_estimators=2, num_leaves=4, min_data_per_group=5,
                                        cat_smooth=1, max_cat_to_onehot=2, verbose=-1).fit(
        data, y, categorical_feature=[0]), buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == "cat_bitsets.npy":
                words = np.load(io.BytesIO(content))
                words[0] = 2**31  # the first set's word count
                stream = io.BytesIO()
                np.save(stream, words)
                content = stream.getvalue()
            target.writestr(info, content)
    files["refused-sapwood-category-words.sapwood"] = out.getvalue()
    return files


def xgboost_document():
    model = xgboost.XGBRegressor(n_estimators=2, max_depth=2).fit(X, X[:, 0])
    return json.loads(bytes(model.get_booster().save_raw(raw_format="json")))


def catboost_files():
    files = {}
    # 100 classes over 20 one-leaf trees: 2,000 trees of the format from 4 KB.
    trees = [{"leaf_values": [0] * 100, "leaf_weights": [1], "splits": []}] * 20
    files["refused-catboost-classes.json"] = catboost_document(100, trees)
    split = {"border": 0.0, "float_feature_index": 0, "split_type": "FloatFeature"}
    trees = [{"leaf_values": [0.5, 1.5], "leaf_weights": [1, 1], "splits": [split] * 60}]
    files["refused-catboost-depth.json"] = catboost_document(1, trees)
    trees = [{"leaf_values": [0.5, float("nan")], "leaf_weights": [1, 1], "splits": [split]}]
    files["refused-catboost-leaf-nan.json"] = catboost_document(1, trees)
    return {name: json.dumps(document, separators=(",", ":")).encode()
            for name, document in files.items()}


def main():
    files = {}
    files["refused-ubjson-null-arrays.ubj"] = ubjson_null_arrays()
    three = lightgbm_text(3)
    files["refused-lightgbm-num-class.txt"] = three.replace(
        "num_class=3", "num_class=100000000").encode()
    files["refused-lightgbm-max-feature-idx.txt"] = three.replace(
        "max_feature_idx=2", "max_feature_idx=2000000000").encode()
    files["refused-lightgbm-sigmoid-0.txt"] = lightgbm_text(2).replace(
        "binary sigmoid:1", "binary sigmoid:0").encode()
    files["refused-sapwood-n-features.sapwood"] = sapwood_header(2**31 - 1)
    document = xgboost_document()
    document["learner"]["gradient_booster"]["model"]["trees"][1]["default_left"][0] = 2
    files["refused-xgboost-default-left.json"] = json.dumps(document).encode()
    document = xgboost_document()
    document["learner"]["learner_model_param"]["num_class"] = "100000000"
    files["refused-xgboost-num-class.json"] = json.dumps(document).encode()
    # Found by make fuzz: Python's json reads Infinity, and int(inf) is an OverflowError.
    document["learner"]["learner_model_param"]["num_class"] = float("inf")
    files["refused-xgboost-num-class-infinite.json"] = json.dumps(document).encode()
    files.update(catboost_files())
    files.update(categorical_files())
    for name, data in files.items():
        (HERE / name).write_bytes(data)
        print(name, len(data))


if __name__ == "__main__":
    main()
