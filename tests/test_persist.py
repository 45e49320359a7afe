"""sapwood's model file: round trips for every model kind, and a fuzz test showing that
damaged, truncated and hostile files all raise FormatError (no crash, no hang)."""

import io
import json
import signal
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from sklearn import ensemble, tree
from threadpoolctl import threadpool_limits

import sapwood
from sapwood import FormatError, TreeArrays, TreeEnsemble
from sapwood._persist import HEADER, load
from sapwood.adapters import from_model, predict, predict_raw, save
from tests.reference.naive_categorical import categorical_ensemble

from .adapters._data import make_data


@pytest.fixture(autouse=True)
def one_thread():
    # HistGradientBoosting's OpenMP threads spin-wait on a busy machine; one is enough.
    with threadpool_limits(1):
        yield


def _sklearn_models():
    X, y, y_reg = make_data(0, n_features=4, n_classes=3)
    X0 = np.nan_to_num(X)
    labels = np.array(["a", "b", "c"])[y]
    return X, {
        "tree": tree.DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, labels),
        "forest_multi_output": ensemble.RandomForestClassifier(3, max_depth=3, random_state=0)
        .fit(X, np.column_stack([y, y_reg > 0])),
        "extra_trees_regressor": ensemble.ExtraTreesRegressor(3, random_state=0).fit(X, y_reg),
        "gradient_boosting": ensemble.GradientBoostingClassifier(
            n_estimators=3, loss="exponential", random_state=0).fit(X0, y > 0),
        "gradient_boosting_multi": ensemble.GradientBoostingClassifier(
            n_estimators=3, random_state=0).fit(X0, y),
        "hist_gb": ensemble.HistGradientBoostingClassifier(max_iter=3).fit(X, y),
        "hist_gb_poisson": ensemble.HistGradientBoostingRegressor(
            max_iter=3, loss="poisson").fit(X, np.exp(y_reg / 4)),
    }


def _library_models(X, y, y_reg):
    models = {}
    try:
        import xgboost as xgb
    except ImportError:
        pass
    else:
        models["xgb_binary"] = xgb.XGBClassifier(n_estimators=3, n_jobs=1).fit(X, y > 0)
        models["xgb_multi"] = xgb.XGBClassifier(n_estimators=3, n_jobs=1).fit(X, y)
        models["xgb_dart"] = xgb.XGBRegressor(n_estimators=3, booster="dart", n_jobs=1).fit(
            X, y_reg)
    try:
        import lightgbm as lgb
    except ImportError:
        pass
    else:
        common = {"n_estimators": 3, "num_leaves": 5, "verbose": -1, "n_jobs": 1}
        models["lgb_multi"] = lgb.LGBMClassifier(**common).fit(X, y)
        models["lgb_rf"] = lgb.LGBMRegressor(boosting_type="rf", subsample=0.7,
                                             subsample_freq=1, **common).fit(X, y_reg)
    return models


def _handmade():
    # A stump with an infinite threshold ("missing goes right" in scikit-learn) and no
    # source, gain or cover, as a sapwood learner might produce.
    stump = TreeArrays(
        children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[1, -2, -2],
        threshold=[np.inf, -2, -2], impurity=[0.5, 0, 0], n_node_samples=[4, 3, 1],
        weighted_n_node_samples=[4, 3, 1], value=[[[0.5]], [[0.2]], [[1.5]]],
        missing_go_to_left=[0, 0, 0], operator=[0, 0, 0], n_features=2)
    return TreeEnsemble(trees=(stump,), task="regression", n_features=2)


def all_models():
    X, models = _sklearn_models()
    _, y, y_reg = make_data(0, n_features=4, n_classes=3)
    models.update(_library_models(X, y, y_reg))
    models["handmade"] = _handmade()
    return X, models


def assert_same_ensemble(ours, theirs):
    for name in ("task", "n_features", "combine", "link", "classes", "feature_names",
                 "input_dtype", "kind", "categories"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert (ours.bootstrap is None) == (theirs.bootstrap is None)
    if ours.bootstrap is not None:
        a, b = ours.bootstrap, theirs.bootstrap
        assert (a.n_samples, a.n_draws) == (b.n_samples, b.n_draws)
        np.testing.assert_array_equal(a.seeds, b.seeds)
        assert (a.sample_weight is None) == (b.sample_weight is None)
        if a.sample_weight is not None:
            np.testing.assert_array_equal(a.sample_weight, b.sample_weight)
    for name in ("tree_weights", "tree_output", "base_score"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name))
    assert ours.n_trees == theirs.n_trees
    for a, b in zip(ours.trees, theirs.trees, strict=True):
        for name, array in a.to_dict().items():
            other = getattr(b, name)
            if isinstance(array, np.ndarray):
                np.testing.assert_array_equal(array, other, err_msg=name)
                assert array.dtype == other.dtype, name
            else:
                assert array == other, name
        assert (a.gain is None) == (b.gain is None) and (a.cover is None) == (b.cover is None)
        np.testing.assert_array_equal(a.cat_bitsets, b.cat_bitsets)
        assert a.cat_bitsets.dtype == b.cat_bitsets.dtype == np.uint32


def test_round_trip_every_model_kind(tmp_path):
    X, models = all_models()
    for name, model in models.items():
        path = tmp_path / f"{name}.sapwood"
        save(model, path)
        original = from_model(model)
        loaded = load(path)
        assert_same_ensemble(loaded, original)
        Xp = X[:, :original.n_features]
        np.testing.assert_array_equal(predict_raw(loaded, Xp), predict_raw(original, Xp))
        np.testing.assert_array_equal(predict(loaded, Xp), predict(original, Xp))
        # from_model reads sapwood files too; saving again gives the same bytes.
        assert_same_ensemble(from_model(str(path)), original)
        save(loaded, tmp_path / "again.sapwood")
        assert (tmp_path / "again.sapwood").read_bytes() == path.read_bytes(), name


def test_the_file_holds_no_pickle_and_documents_itself(tmp_path):
    X, models = _sklearn_models()
    path = tmp_path / "model.sapwood"
    save(models["tree"], path)
    with zipfile.ZipFile(path) as archive:
        header = json.loads(archive.read(HEADER))
        assert header["format"] == "sapwood-model" and header["format_version"] == 3
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if info.filename.endswith(".npy"):
                array = np.load(io.BytesIO(archive.read(info)), allow_pickle=False)
                assert array.dtype.kind in "iuf"


def test_save_refuses_unsaveable_models(tmp_path):
    model = _handmade()
    bad = TreeEnsemble(trees=model.trees, task="classification", n_features=2,
                       classes=(object(), 1))
    with pytest.raises(ValueError, match="class label"):
        save(bad, tmp_path / "bad.sapwood")
    with pytest.raises(TypeError):
        save(object(), tmp_path / "bad.sapwood")
    unlabelled = TreeEnsemble(trees=model.trees, task="classification", n_features=2,
                              combine="sum", link="logistic")
    with pytest.raises(ValueError, match="cannot be saved.*classes"):
        save(unlabelled, tmp_path / "bad.sapwood")
    assert not (tmp_path / "bad.sapwood").exists()


# -- fuzzing ------------------------------------------------------------------------


@contextmanager
def time_limit(seconds):
    def expire(signum, frame):
        raise TimeoutError("load() took too long: a hang")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def members_of(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def zip_of(members, compression=zipfile.ZIP_STORED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, content in members:
            archive.writestr(name, content)
    return buffer.getvalue()


def npy(array):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def raw_npy(descr, shape, body, fortran=False, magic=b"\x93NUMPY\x01\x00"):
    text = repr({"descr": descr, "fortran_order": fortran, "shape": shape})
    text = text.encode("latin-1") + b" " * (63 - len(text) % 64) + b"\n"
    return magic + len(text).to_bytes(2, "little") + text + body


def array_of(members, name):
    return np.load(io.BytesIO(members[f"{name}.npy"]), allow_pickle=False)


def with_member(members, name, content):
    return zip_of([(key, content if key == name else value)
                   for key, value in members.items()])


def with_array(members, name, array):
    return with_member(members, f"{name}.npy", npy(array))


def with_header(members, change):
    header = json.loads(members[HEADER])
    change(header)
    return with_member(members, HEADER, json.dumps(header).encode())


def header_attacks(members):
    bad_values = [None, -1, 0, 2**31, 2**63, 1.5, "1", [], {}, True, float("nan")]
    header = json.loads(members[HEADER])
    for key in header:
        yield with_header(members, lambda h, key=key: h.pop(key))
        for value in bad_values:
            if value == header[key] or (key == "source" and value in (None, {})):
                continue
            if key in ("classes", "feature_names") and value is None:
                continue
            if key == "sapwood_version" and isinstance(value, str):
                continue
            text = json.dumps({**header, key: value}, allow_nan=True)
            yield with_member(members, HEADER, text.encode())
    yield with_header(members, lambda h: h.update(extra=1))
    yield with_header(members, lambda h: h.update(format_version=4))  # unknown
    yield with_header(members, lambda h: h.update(format_version=1))  # version 3's keys
    yield with_header(members, lambda h: h.update(format="sapwood-model-x"))
    yield with_header(members, lambda h: h.update(link="softmax", combine="mean"))
    yield with_header(members, lambda h: h.update(feature_names=["a"]))
    yield with_header(members, lambda h: h.update(feature_names=[1] * h["n_features"]))
    yield with_header(members, lambda h: h.update(n_trees=h["n_nodes"] + 1))
    yield with_header(members, lambda h: h.update(n_nodes=h["n_nodes"] + 1))
    yield with_header(members, lambda h: h.update(classes=[[1, 2], [3]]))
    yield with_header(members, lambda h: h.update(classes=[{"a": 1}]))
    yield with_header(members, lambda h: h.update(source={"x": [1, 2]}))
    yield with_header(members, lambda h: h.update(source={str(i): i for i in range(100)}))
    for raw in (b"", b"{", b"[1, 2]", b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000,
                b'{"format": 1e999}', b"9" * 5000, b'{"a": NaN}'):
        yield with_member(members, HEADER, raw)


def array_attacks(members, rng):
    for member in members:
        if member == HEADER:
            continue
        name = member[:-4]
        array = array_of(members, name)
        other = np.float64 if array.dtype.kind in "iu" else np.int64
        with np.errstate(invalid="ignore"):
            yield with_array(members, name, array.astype(other))
        if array.dtype.itemsize > 1:
            yield with_array(members, name, array.astype(array.dtype.newbyteorder(">")))
        if array.size:
            yield with_array(members, name, np.concatenate([array, array[:1]]))
            yield with_array(members, name, array[:-1])
            yield with_array(members, name, np.zeros(0, dtype=array.dtype))
        else:  # an empty array (no category sets): one entry more than declared
            yield with_array(members, name, np.ones(1, dtype=array.dtype))
        yield with_array(members, name, array.reshape(1, *array.shape))
        yield with_member(members, member, members[member][:-1])
        yield with_member(members, member, members[member] + b"\0" * 8)
        yield with_member(members, member, b"\x93NUMPX" + members[member][6:])
        yield with_member(members, member, members[member][:6] + b"\x09\x00" +
                          members[member][8:])
        yield with_member(members, member, raw_npy(array.dtype.str, array.shape,
                                                   array.tobytes(), fortran=True))
        yield with_member(members, member, raw_npy(array.dtype.str, (10**12,), b""))
        yield with_member(members, member, raw_npy("|O", array.shape, array.tobytes()))
        yield with_member(members, member, raw_npy(array.dtype.str, (-1,), array.tobytes()))
        yield with_member(members, member, b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 200)
        yield with_member(members, member, b"\x93NUMPY\x01\x00\x40\x00" +
                          b"__import__('os').system('false')" + b" " * 31 + b"\n")


def semantic_attacks(members, rng):
    counts = array_of(members, "tree_node_count")
    left = array_of(members, "children_left")
    n = left.shape[0]
    split = np.flatnonzero(left != -1)
    leaf = np.flatnonzero(left == -1)
    first = int(split[0])

    def changed(name, index, value):
        array = array_of(members, name).copy()
        array[index] = value
        return with_array(members, name, array)

    for index in rng.choice(split, size=min(6, split.size), replace=False):
        yield changed("children_left", index, n + 5)
        yield changed("children_left", index, -7)
        yield changed("children_left", index, index)  # self loop
        yield changed("children_left", index, 0)  # back to the root: a cycle
        yield changed("children_right", index, left[index])  # shared child
        yield changed("children_right", index, -1)  # one child marked leaf
        yield changed("feature", index, 10**6)
        yield changed("feature", index, -1)
        yield changed("threshold", index, np.nan)
        yield changed("operator", index, 2)
        yield changed("missing_go_to_left", index, 3)
    for index in rng.choice(leaf, size=3, replace=False):
        yield changed("children_left", index, first)
        yield changed("value", index, np.nan)
        yield changed("value", index, np.inf)
        yield changed("impurity", index, np.nan)
        yield changed("weighted_n_node_samples", index, -np.inf)
        yield changed("n_node_samples", index, -1)
        yield changed("gain", index, np.nan)
        yield changed("cover", index, np.inf)
    yield changed("tree_node_count", 0, counts[0] + 1)
    yield changed("tree_node_count", 0, 0)
    yield changed("tree_node_count", 0, -counts[0])
    yield changed("tree_node_count", 0, 2**62)
    yield changed("tree_output", 0, 99)
    yield changed("tree_output", 0, -1)
    yield changed("tree_weights", 0, np.nan)
    yield changed("tree_has_gain", 0, 2)
    yield changed("tree_has_cover", 0, 255)
    yield changed("base_score", 0, np.inf)
    # Trees cut at a wrong boundary: every tree is checked on its own nodes.
    if counts.shape[0] > 1:
        shifted = counts.copy()
        shifted[0] += 1
        shifted[1] -= 1
        if shifted[1] >= 1:
            yield with_array(members, "tree_node_count", shifted)


def container_attacks(members):
    items = list(members.items())
    yield zip_of(items, compression=zipfile.ZIP_DEFLATED)
    yield zip_of(items + [("evil.pkl", b"cos\nsystem\n(S'false'\ntR.")])
    yield zip_of(items[1:])
    yield zip_of(items + items[:1])
    yield zip_of([(name.upper(), value) for name, value in items])
    yield zip_of([])
    yield b""
    yield b"PK\x03\x04" + b"\0" * 100
    yield b"PK\x05\x06" + b"\0" * 18
    buffer = io.BytesIO()
    np.savez(buffer, children_left=np.zeros(3))
    yield buffer.getvalue()
    yield json.dumps({"learner": {}}).encode()
    yield b"tree\nversion=v4\n"


def fuzz_cases(data, rng):
    """(kind, file bytes): hand-crafted hostile files with valid checksums, truncations,
    and random byte flips."""
    members = members_of(data)
    for attacks in (header_attacks(members), array_attacks(members, rng),
                    semantic_attacks(members, rng), container_attacks(members)):
        for case in attacks:
            yield "crafted", case
    for length in rng.integers(0, len(data), 120):
        yield "truncated", data[:length]
    for _ in range(300):
        damaged = bytearray(data)
        for position in rng.integers(0, len(data), rng.integers(1, 6)):
            damaged[position] ^= int(rng.integers(1, 256))
        yield "flipped", bytes(damaged)


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_fuzz_damaged_and_hostile_files_raise_format_error(tmp_path):
    X, y, y_reg = make_data(3, n_features=3, n_classes=3)
    sources = {
        "forest": ensemble.RandomForestClassifier(3, max_depth=3, random_state=0).fit(
            X, np.array(["p", "q", "r"])[y]),
        "boosting": ensemble.HistGradientBoostingClassifier(max_iter=2, max_leaf_nodes=5)
        .fit(X, y),
    }
    rng = np.random.default_rng(0)
    errors = {"crafted": 0, "truncated": 0, "flipped": 0}
    harmless = 0
    for name, model in sources.items():
        path = tmp_path / f"{name}.sapwood"
        save(model, path)
        original = load(path)
        for case, (kind, data) in enumerate(fuzz_cases(path.read_bytes(), rng)):
            target = tmp_path / "fuzz.sapwood"
            target.write_bytes(data)
            try:
                with time_limit(10):
                    loaded = load(target)
            except FormatError:
                errors[kind] += 1
                continue
            # A flip in bytes nothing reads (a timestamp, file attributes) leaves a
            # valid file, which must then load as the very same model.
            assert kind == "flipped", f"{name} {kind} case {case} loaded without error"
            assert_same_ensemble(loaded, original)
            harmless += 1
    assert sum(errors.values()) >= 1000, errors
    assert harmless < 0.1 * errors["flipped"], (harmless, errors)


@pytest.mark.parametrize("make_model", [
    lambda: sapwood.DecisionTreeClassifier(max_depth=4, random_state=0),
    lambda: sapwood.RandomForestClassifier(n_estimators=5, random_state=0),
    lambda: sapwood.ExtraTreesRegressor(n_estimators=5, random_state=0),
    lambda: sapwood.GradientBoostingRegressor(n_estimators=5, random_state=0),
])
def test_sapwood_models_round_trip(tmp_path, make_model):
    rng = np.random.RandomState(0)
    X = rng.rand(120, 4)
    model = make_model()
    y = (X[:, 0] > 0.5).astype(int) if "Classifier" in type(model).__name__ else X @ [1, 2, 0, 0]
    model.fit(X, y)
    path = tmp_path / "model.sapwood"
    sapwood.save(model, path)
    loaded = sapwood.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


# -- format version 2: the model's kind and its bootstrap draws ---------------------

VERSION_1 = Path(__file__).parent / "model_format_v1"


@pytest.mark.parametrize("name", sorted(p.stem for p in VERSION_1.glob("*.sapwood")))
def test_version_1_files_still_load_with_the_same_predictions(tmp_path, name):
    """Files written by format version 1 (free-form ``source``, no bootstrap), saved
    with the sapwood of that version, together with what it predicted then."""
    path = VERSION_1 / f"{name}.sapwood"
    with zipfile.ZipFile(path) as archive:
        assert json.loads(archive.read(HEADER))["format_version"] == 1
    X = np.load(VERSION_1 / "X.npy")
    model = load(path)
    np.testing.assert_array_equal(model.predict(X), np.load(VERSION_1 / f"{name}.predict.npy"))
    if model.task == "classification":
        np.testing.assert_array_equal(model.predict_proba(X),
                                      np.load(VERSION_1 / f"{name}.predict_proba.npy"))
    assert model.bootstrap is None
    # Saved again, the model is a version 3 file that loads as the same model.
    save(model, tmp_path / "again.sapwood")
    assert_same_ensemble(load(tmp_path / "again.sapwood"), model)


VERSION_2 = Path(__file__).parent / "model_format_v2"


@pytest.mark.parametrize("name", sorted(p.stem for p in VERSION_2.glob("*.sapwood")))
def test_version_2_files_still_load_with_the_same_predictions(tmp_path, name):
    """Files written by format version 2 (no category sets), saved with the sapwood of
    that version (``make_fixtures.py``), together with what it predicted then."""
    path = VERSION_2 / f"{name}.sapwood"
    with zipfile.ZipFile(path) as archive:
        header = json.loads(archive.read(HEADER))
    assert header["format_version"] == 2
    X = np.load(VERSION_2 / "X.npy")
    model = load(path)
    np.testing.assert_array_equal(model.predict(X), np.load(VERSION_2 / f"{name}.predict.npy"))
    if model.task == "classification":
        np.testing.assert_array_equal(model.predict_proba(X),
                                      np.load(VERSION_2 / f"{name}.predict_proba.npy"))
    assert (model.bootstrap is None) == (header["bootstrap"] is None)
    assert model.categories is None and not model.has_categorical
    save(model, tmp_path / "again.sapwood")
    assert_same_ensemble(load(tmp_path / "again.sapwood"), model)


def test_version_1_sources_become_kinds():
    kinds = {name: load(VERSION_1 / f"{name}.sapwood").kind for name in (
        "sapwood_forest", "sklearn_gradient_boosting_binary",
        "sklearn_hist_gradient_boosting", "xgboost_binary")}
    assert kinds["sapwood_forest"] == sapwood.ModelKind()  # version 1 recorded nothing
    assert kinds["sklearn_gradient_boosting_binary"] == sapwood.ModelKind(
        library="sklearn", model="GradientBoostingClassifier")
    assert kinds["sklearn_hist_gradient_boosting"].node_impurity is False
    assert kinds["xgboost_binary"] == sapwood.ModelKind(
        library="xgboost", model="XGBClassifier", objective="binary:logistic",
        library_version="3.2.0", node_impurity=False)


def _bagged_forests():
    X, y, _ = make_data(4, n_features=4, n_classes=3)
    X = np.nan_to_num(X)
    return X, y, {
        "sapwood": sapwood.RandomForestClassifier(
            n_estimators=4, max_depth=4, random_state=0, class_weight="balanced",
            max_samples=0.7).fit(X, y),
        "sklearn": ensemble.RandomForestClassifier(
            n_estimators=4, max_depth=4, random_state=0).fit(X, y),
    }


def test_bagged_forests_keep_their_bootstrap_draws(tmp_path):
    from sapwood.importance import (
        conditional_permutation_importance,
        oob_permutation_importance,
    )

    X, y, forests = _bagged_forests()
    for name, forest in forests.items():
        original = from_model(forest) if name == "sklearn" else forest.to_ensemble()
        assert original.kind.bagged and original.kind.family == "forest", name
        path = tmp_path / f"{name}.sapwood"
        save(forest, path)
        loaded = load(path)
        assert_same_ensemble(loaded, original)
        assert (loaded.bootstrap.sample_weight is not None) == (name == "sapwood")
        for t, drawn in enumerate(forest.estimators_samples_):
            np.testing.assert_array_equal(loaded.bootstrap.counts(t),
                                          np.bincount(drawn, minlength=len(y)))
        # Out-of-bag measures work on the file alone, with the forest's numbers.
        for measure in (oob_permutation_importance, conditional_permutation_importance):
            from_file = measure(loaded, X, y, random_state=0)
            from_forest = measure(forest, X, y, random_state=0)
            np.testing.assert_array_equal(from_file.importances, from_forest.importances)


def test_unbagged_models_record_no_bootstrap():
    X, y, _ = make_data(5, n_features=3, n_classes=2)
    X = np.nan_to_num(X)
    for model in (sapwood.ExtraTreesClassifier(n_estimators=2).fit(X, y),
                  ensemble.ExtraTreesClassifier(n_estimators=2).fit(X, y),
                  sapwood.GradientBoostingClassifier(n_estimators=2).fit(X, y),
                  tree.DecisionTreeClassifier().fit(X, y)):
        converted = from_model(model) if hasattr(model, "tree_") or "sklearn" in type(
            model).__module__ else model.to_ensemble()
        assert converted.bootstrap is None and not converted.kind.bagged


def bootstrap_attacks(members):
    """A weighted forest's file with its bootstrap record broken."""
    seeds = array_of(members, "bootstrap_seeds")
    weight = array_of(members, "bootstrap_weight")
    for value in (-1, 2**32, 2**62):
        yield with_array(members, "bootstrap_seeds", np.where(seeds == seeds[0], value, seeds))
    for value in (-1.0, np.nan, np.inf):
        changed = weight.copy()
        changed[0] = value
        yield with_array(members, "bootstrap_weight", changed)
    yield with_array(members, "bootstrap_weight", np.zeros_like(weight))
    yield with_array(members, "bootstrap_weight", weight[:-1])
    for change in ({"weighted": False}, {"n_samples": len(weight) + 1}, {"n_draws": 0},
                   {"n_samples": 2**31}, {"n_draws": 2.5}, {"extra": 1}, {"weighted": 1}):
        yield with_header(members, lambda h, change=change: h["bootstrap"].update(change))
    yield with_header(members, lambda h: h.update(bootstrap=None))
    yield with_header(members, lambda h: h["kind"].update(family="bagging"))
    yield with_header(members, lambda h: h["kind"].update(bagged="yes"))
    yield with_header(members, lambda h: h["kind"].pop("objective"))
    yield with_header(members, lambda h: h["kind"].update(model="x" * 5000))
    yield zip_of([(k, v) for k, v in members.items() if k != "bootstrap_weight.npy"])


def test_broken_bootstrap_records_raise_format_error(tmp_path):
    _, _, forests = _bagged_forests()
    path = tmp_path / "forest.sapwood"
    save(forests["sapwood"], path)
    members = members_of(path.read_bytes())
    n_cases = 0
    for case, data in enumerate(bootstrap_attacks(members)):
        target = tmp_path / "broken.sapwood"
        target.write_bytes(data)
        with pytest.raises(FormatError):
            load(target)
            pytest.fail(f"case {case} loaded")
        n_cases += 1
    assert n_cases == 21


def test_version_1_hostile_sources_raise_format_error(tmp_path):
    members = members_of((VERSION_1 / "xgboost_binary.sapwood").read_bytes())
    for source in ({"x": [1, 2]}, {str(i): i for i in range(100)}, [1], "xgboost",
                   {"library": "x" * 5000}):
        target = tmp_path / "v1.sapwood"
        target.write_bytes(with_header(members, lambda h, s=source: h.update(source=s)))
        with pytest.raises(FormatError, match="source"):
            load(target)


# -- format version 3: category sets -------------------------------------------------

def _categorical_file(tmp_path):
    X, y, _ = make_data(5, n_features=3, n_classes=2)
    forest = ensemble.RandomForestClassifier(3, max_depth=4, random_state=0).fit(
        np.nan_to_num(np.abs(X) * 10), y)
    model = categorical_ensemble(from_model(forest), np.random.RandomState(0), share=0.7)
    model = TreeEnsemble(**{**{name: getattr(model, name) for name in (
        "trees", "task", "n_features", "combine", "classes", "kind", "bootstrap")},
        "categories": (None, tuple(f"c{k}" for k in range(70)), None)})
    path = tmp_path / "categorical.sapwood"
    save(model, path)
    return model, path


def test_category_sets_round_trip(tmp_path):
    model, path = _categorical_file(tmp_path)
    loaded = load(path)
    assert_same_ensemble(loaded, model)
    assert loaded.has_categorical and loaded.categories[1][3] == "c3"
    X = np.abs(make_data(6, n_features=3)[0]) * 10
    np.testing.assert_array_equal(predict_raw(loaded, X), predict_raw(model, X))


def test_hostile_category_sets_raise_format_error(tmp_path):
    model, path = _categorical_file(tmp_path)
    members = members_of(path.read_bytes())
    words = array_of(members, "cat_bitsets")
    per_tree = array_of(members, "tree_cat_words")
    threshold = array_of(members, "threshold")
    operator = array_of(members, "operator")
    categorical = np.flatnonzero(operator == 2)
    assert categorical.size and words.size

    def changed(name, array, index, value):
        array = array.copy()
        array[index] = value
        return with_array(members, name, array)

    cases = [
        changed("tree_cat_words", per_tree, 0, per_tree[0] + 1),
        changed("tree_cat_words", per_tree, 0, -1),
        changed("tree_cat_words", per_tree, 0, 2**40),
        with_array(members, "cat_bitsets", words[:-1]),
        with_array(members, "cat_bitsets", words.astype(np.int64)),
        with_header(members, lambda h: h.update(n_cat_words=h["n_cat_words"] + 1)),
        with_header(members, lambda h: h.update(n_cat_words=-1)),
        with_header(members, lambda h: h.update(n_cat_words=True)),
        with_header(members, lambda h: h.update(categories=[None])),
        with_header(members, lambda h: h.update(categories=[None, ["a", "a"], None])),
        with_header(members, lambda h: h.update(categories=[None, [[1]], None])),
        with_header(members, lambda h: h.update(categories={"a": 1})),
        with_header(members, lambda h: h.pop("categories")),
        with_header(members, lambda h: h.update(format_version=2)),
        changed("operator", operator, categorical[0], 3),
        zip_of([(k, v) for k, v in members.items() if k != "cat_bitsets.npy"]),
    ]
    node = int(categorical[0])
    for value in (-1.0, 0.5, float(words.shape[0]), 1e300, np.inf):
        cases.append(changed("threshold", threshold, node, value))
    # A set's word count reaching past the end of its tree's words.
    offset = int(threshold[node])
    cases.append(changed("cat_bitsets", words, offset, 2**31))
    cases.append(changed("cat_bitsets", words, offset, words.shape[0]))
    for case, data in enumerate(cases):
        target = tmp_path / "broken.sapwood"
        target.write_bytes(data)
        with pytest.raises(FormatError):
            load(target)
            pytest.fail(f"case {case} loaded")
