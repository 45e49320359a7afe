"""Structure-aware fuzzing of every model reader: damaged versions of real files either
load or raise FormatError (a ValueError), never anything else, each within a deadline.

Hypothesis runs derandomised (the same cases on every run, so CI is repeatable); the
short run here is part of ``make test``, ``make fuzz`` runs many more cases. Each case
runs under an address-space limit (about 1 GB beyond what the worker maps) and a hard
time limit (``tests/_bounds.py``): a MemoryError is a failure, a hang kills the worker.
What a run finds is kept in ``fuzz_corpus/`` (``make fuzz`` writes ``found-*`` files
there); every corpus file is loaded on every run, and the hand-made ``refused-*`` files
(the known attacks, ``fuzz_corpus/make_corpus.py``) must be refused.
"""

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sapwood
from sapwood._format import FormatError
from sapwood.adapters._ubjson import loads

from .._bounds import bounded, corpus, keep_if_found

CORPUS = Path(__file__).parent / "fuzz_corpus"

# make fuzz sets SAPWOOD_FUZZ_EXAMPLES (and a fresh seed stream with SAPWOOD_FUZZ_RANDOM=1).
FUZZ = settings(derandomize=not os.environ.get("SAPWOOD_FUZZ_RANDOM"),
                max_examples=int(os.environ.get("SAPWOOD_FUZZ_EXAMPLES", "60")), deadline=5000,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _loads_or_refuses(read, data, kind, suffix):
    """Load ``data`` within the bounds; anything but success or FormatError/ValueError
    (a MemoryError above all) fails the case, and is kept when fuzzing with a corpus."""
    try:
        with bounded():
            read(data)
    except (FormatError, ValueError):
        pass
    except BaseException:
        keep_if_found(kind, data, suffix)
        raise


def _from_bytes(tmp_path_factory, name):
    return lambda data: sapwood.from_model(_write(tmp_path_factory, data, name))


@pytest.mark.parametrize("path", corpus(CORPUS), ids=lambda p: p.name)
def test_corpus(path, tmp_path_factory):
    data = path.read_bytes()
    if path.name.startswith("refused-"):
        with bounded(), pytest.raises(FormatError):
            _from_bytes(tmp_path_factory, "m" + path.suffix)(data)
    else:
        _loads_or_refuses(_from_bytes(tmp_path_factory, "m" + path.suffix), data,
                          path.stem, path.suffix)


@pytest.fixture(scope="module")
def sapwood_bytes():
    X = np.random.default_rng(0).normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    buffer = io.BytesIO()
    sapwood.save(sapwood.RandomForestClassifier(n_estimators=3, max_depth=3,
                                                random_state=0).fit(X, y), buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def xgboost_json():
    xgboost = pytest.importorskip("xgboost")
    X = np.random.default_rng(0).normal(size=(80, 3))
    booster = xgboost.XGBClassifier(n_estimators=2, max_depth=2).fit(X, (X[:, 0] > 0)
                                                                    .astype(int))
    return json.loads(bytes(booster.get_booster().save_raw(raw_format="json")))


@pytest.fixture(scope="module")
def lightgbm_text():
    lightgbm = pytest.importorskip("lightgbm")
    X = np.random.default_rng(0).normal(size=(200, 3))
    return lightgbm.LGBMRegressor(n_estimators=2, num_leaves=4, verbose=-1).fit(
        X, X[:, 0]).booster_.model_to_string()


@pytest.fixture(scope="module", params=["SymmetricTree", "Depthwise"])
def catboost_json(request, tmp_path_factory):
    catboost = pytest.importorskip("catboost")
    X = np.random.default_rng(0).normal(size=(120, 3))
    X[::7, 1] = np.nan
    model = catboost.CatBoostClassifier(iterations=2, depth=2, verbose=0, thread_count=1,
                                        grow_policy=request.param, allow_writing_files=False)
    path = tmp_path_factory.mktemp("catboost") / "model.json"
    model.fit(X, (X[:, 0] > 0).astype(int)).save_model(path, format="json")
    return json.loads(path.read_text())


def _write(tmp_path_factory, data: bytes, name: str):
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(data)
    return path


# Byte-level damage: overwrite a few bytes, cut the end, or duplicate a stretch.
@st.composite
def damaged(draw, original: bytes):
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set", "cut", "repeat"]))
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        if kind == "set":
            data[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[at:]
        else:
            length = draw(st.integers(1, 64))
            data[at:at] = data[at:at + length]
    return bytes(data)


def test_sapwood_files(sapwood_bytes, tmp_path_factory):
    @FUZZ
    @given(data=damaged(sapwood_bytes))
    def check(data):
        _loads_or_refuses(_from_bytes(tmp_path_factory, "m.sapwood"), data, "sapwood",
                          ".sapwood")

    check()


def test_ubjson(xgboost_json):
    xgboost = pytest.importorskip("xgboost")
    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(xgboost_json).encode()))
    original = bytes(booster.save_raw(raw_format="ubj"))

    @FUZZ
    @given(data=damaged(original))
    def check(data):
        _loads_or_refuses(loads, data, "ubjson", ".ubj")

    check()


# Value-level damage of XGBoost JSON: any leaf of the document replaced by another
# JSON value.
_JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40),
                         st.floats(allow_nan=False), st.text(max_size=8),
                         st.lists(st.integers(-3, 3), max_size=4))


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list) and value and isinstance(value[0], dict | list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path


def _fuzz_json_values(original, kind, tmp_path_factory):
    paths = list(_leaves(original))

    @FUZZ
    @given(choices=st.lists(st.tuples(st.sampled_from(paths), _JSON_VALUES), min_size=1,
                            max_size=3))
    def check(choices):
        document = json.loads(json.dumps(original))
        for path, value in choices:
            target = document
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        data = json.dumps(document).encode()
        _loads_or_refuses(_from_bytes(tmp_path_factory, "m.json"), data, kind, ".json")

    check()


def test_xgboost_json_values(xgboost_json, tmp_path_factory):
    _fuzz_json_values(xgboost_json, "xgboost-json", tmp_path_factory)


def test_catboost_json_values(catboost_json, tmp_path_factory):
    # The model's training log and options (model_info) are text sapwood never reads;
    # the fuzz spends its cases on what it does read.
    info = catboost_json["model_info"]
    document = {**catboost_json, "model_info": {
        "params": {"loss_function": info["params"]["loss_function"]},
        "class_params": info["class_params"]}}
    _fuzz_json_values(document, "catboost-json", tmp_path_factory)


def test_lightgbm_text_values(lightgbm_text, tmp_path_factory):
    lines = lightgbm_text.splitlines()
    keyed = [i for i, line in enumerate(lines) if "=" in line]
    tokens = st.one_of(st.integers(-10**12, 10**12).map(str), st.sampled_from(
        ["", "nan", "inf", "-inf", "1e308", "-1", "0", "x", "1 2 3", "binary sigmoid:0"]))

    @FUZZ
    @given(changes=st.lists(st.tuples(st.sampled_from(keyed), tokens), min_size=1,
                            max_size=3))
    def check(changes):
        damaged_lines = list(lines)
        for index, token in changes:
            key = damaged_lines[index].split("=", 1)[0]
            damaged_lines[index] = f"{key}={token}"
        data = "\n".join(damaged_lines).encode()
        _loads_or_refuses(_from_bytes(tmp_path_factory, "m.txt"), data, "lightgbm-text",
                          ".txt")

    check()
