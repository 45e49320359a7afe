"""The measure registry: its records say true things about the measures, and the
names compare, altmann_pvalues and boruta accept come from it. One record of at most
12 fields per measure; adding a measure is one function and one record, and it shows in
the command line, the report and ``compare``."""

import contextlib
import dataclasses
import io
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import sapwood
from sapwood import importance
from sapwood.adapters import as_ensemble
from sapwood.cli import main
from sapwood.importance import MEASURES, ImportanceResult, Measure, MeasureInputs
from sapwood.importance._registry import GIVES, NEEDS, NULLS, REFIT_ROWS, ROWS, replace


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 4)), columns=["a", "b", "c", "d"])
    y = (X["a"] + 0.5 * X["b"] + 0.3 * rng.normal(size=120) > 0).astype(int)
    return X[:90], y[:90], X[90:], y[90:]


def _model(name):
    if name == "vimp":  # a random survival forest's
        ensemble = pytest.importorskip("sksurv.ensemble")
        return ensemble.RandomSurvivalForest(n_estimators=10, min_samples_leaf=5,
                                             random_state=0)
    if name == "gain":
        xgboost = pytest.importorskip("xgboost")
        return xgboost.XGBClassifier(n_estimators=5, max_depth=2)
    if name == "friedman":
        return sapwood.GradientBoostingClassifier(n_estimators=5, random_state=0)
    return sapwood.RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)


def test_every_record_names_a_public_function_and_valid_fields():
    assert list(MEASURES) == ["mdi", "gain", "friedman", "permutation", "drop",
                              "conditional", "air", "oob", "ufi", "shap", "mdi_plus", "cpi", "sage",
                              "vimp"]
    api_names = []
    for name, measure in MEASURES.items():
        assert measure.name == name == next(iter(measure.names))
        assert measure.options == measure.names[name]
        assert callable(getattr(importance, measure.function)), measure.function
        assert measure.function in importance.__all__
        assert measure.rows in ROWS and set(measure.needs) <= NEEDS | set(ROWS)
        assert measure.null in NULLS and set(measure.gives) <= GIVES
        assert not measure.fallback or measure.fallback in MEASURES
        assert measure.refits == (measure.rows in REFIT_ROWS)
        # The verdict rests on a measure that is zero for an unused feature and has
        # intervals.
        assert "verdict" not in measure.gives or (
            measure.null != "uncentred" and "intervals" in measure.gives)
        if measure.kernel:
            module, _, kernel = measure.kernel.rpartition(".")
            assert hasattr(getattr(__import__(module, fromlist=[kernel]), kernel), "py_func")
        api_names += list(measure.names)
    assert len(api_names) == len(set(api_names))


def test_a_record_has_at_most_12_fields():
    assert len(dataclasses.fields(Measure)) <= 12


def test_what_the_command_line_reads_from_the_records():
    # The facts it once kept in tables of its own, now derived from the records.
    from sapwood.report import _compiled, _measures
    from sapwood.report._verdict import verdict_measures

    assert verdict_measures() == ["permutation", "oob", "conditional", "drop", "air"]
    assert _measures.cross_validated() == ["drop"]
    assert _measures.janitza_measures() == ["permutation", "conditional", "air", "oob",
                                            "vimp"]
    assert [name for name, m in MEASURES.items() if m.optional] == [
        "gain", "friedman", "drop", "conditional", "air", "oob", "ufi", "cpi", "vimp"]
    assert sorted(_compiled.probes()) == sorted(
        ["permutation", "oob", "ufi", "conditional", "shap", "sage"])
    assert [MEASURES[name].short for name in ("permutation", "conditional", "mdi")] == [
        "perm", "cond", "mdi"]
    assert _measures.where("conditional") == "on the out-of-bag or held-out rows"
    assert _measures.where("conditional", held_out=False) == "on the training rows"
    assert _measures.where("air") == "by refitting with a shadow copy of each feature"


@pytest.mark.parametrize("name", list(MEASURES))
def test_the_flags_describe_the_results(name, data):
    X, y, X_test, y_test = data
    measure = MEASURES[name]
    model = _model(name)
    if name == "vimp":  # a time and an event: the time falls with a and b
        y, y_test = (_survival(X, target) for X, target in ((X, y), (X_test, y_test)))
    inputs = MeasureInputs(X_train=X, y_train=y, X_test=X_test, y_test=y_test,
                           random_state=0, estimator=clone(model), max_rows=None,
                           # drop-column has draws (folds) by cross-validation only
                           cv=3 if name == "drop" else None)
    model.fit(X, y)
    assert measure.why_not(model, inputs, **measure.options) is None
    result = measure.run(model, inputs, **measure.options)
    has_intervals = result.ci_low is not None and bool(np.isfinite(result.ci_low).any())
    assert has_intervals == ("intervals" in measure.gives)
    assert (result.rank_intervals() is not None) == ("rank_intervals" in measure.gives)
    assert ("zscore" in result.extra) == ("zscore" in measure.gives)
    if "new_rows" in measure.gives:
        # A draw per held-out row, or per cross-validation fold.
        assert result.importances.shape[1] in (len(X_test), inputs.cv)
    if measure.null == "symmetric":
        # Importances of irrelevant features scatter around zero: negatives possible.
        assert result.importances_mean.min() < 0.5 * result.importances_mean.max()
    if measure.null == "uncentred":
        assert (result.importances_mean >= 0).all() or name == "ufi"
    _draws_order_as_the_importance(result)


def _survival(X, y):
    """A survival target for the rows X: times falling with the features of y."""
    from sksurv.util import Surv

    time = np.exp(-(X["a"] + 0.5 * X["b"]).to_numpy()) + np.arange(len(X)) * 1e-3
    return Surv.from_arrays(np.arange(len(X)) % 4 != 0, time)


def _draws_order_as_the_importance(result):
    """Rank intervals come from the draws' means: they must rank the features as the
    importance does (a monotone transform of the mean, as Friedman's square root, is
    fine; another average is not)."""
    if result.importances is None or result.importances.shape[1] < 2:
        return
    by_draws = pd.Series(result.importances.mean(axis=1)).rank(method="min")
    by_importance = pd.Series(result.importances_mean).rank(method="min")
    assert (by_draws == by_importance).all(), (result.method, by_draws, by_importance)


@pytest.mark.parametrize("combine", ["forest", "boosting"])
def test_mdi_draws_average_to_the_importance(combine, data):
    X, y, _, _ = data
    model = (sapwood.RandomForestClassifier(n_estimators=8, random_state=0) if combine ==
             "forest" else sapwood.GradientBoostingClassifier(n_estimators=20, random_state=0))
    result = importance.mdi(model.fit(X, y))
    np.testing.assert_allclose(result.importances.mean(axis=1), result.importances_mean,
                               rtol=1e-12)
    _draws_order_as_the_importance(result)


def test_predicates_give_reasons():
    X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0] * 5, "b": [1.0, 0.0] * 10})
    y = (X["a"] > 1).astype(int)
    tree = sapwood.DecisionTreeClassifier(max_depth=2).fit(X, y)
    no_test = MeasureInputs(X_train=X, y_train=y)
    assert "needs out-of-sample rows" in MEASURES["conditional"].why_not(
        tree, no_test, **MEASURES["conditional"].options)
    assert "needs an unfitted estimator" in MEASURES["drop"].why_not(tree, no_test)
    assert MEASURES["mdi"].why_not(tree, no_test) is None
    xgboost = pytest.importorskip("xgboost")
    booster = xgboost.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y)
    assert "records no node impurities" in MEASURES["mdi"].why_not(booster, no_test)


def test_a_measure_record_checks_its_fields():
    with pytest.raises(ValueError, match=r"'needs' field .* got \['X'\]"):
        Measure("x", "mdi", "x", lambda model, inputs: None, needs=frozenset({"X"}))
    with pytest.raises(ValueError, match=r"'needs' field .* at most one of .* got "
                                         r"\['held-out', 'oob'\]"):
        Measure("x", "mdi", "x", lambda model, inputs: None, needs={"oob", "held-out"})
    with pytest.raises(ValueError, match=r"'null' field of Measure must be one of "
                                         r"\['uncentred', 'centred', 'symmetric'\]; got 'zero'"):
        Measure("x", "mdi", "x", lambda model, inputs: None, null="zero")
    with pytest.raises(ValueError, match=r"'gives' field .* got \['ci'\]"):
        Measure("x", "mdi", "x", lambda model, inputs: None, gives={"ci"})
    with pytest.raises(ValueError, match="'kernel' field of Measure must be 'module.name'"):
        Measure("x", "mdi", "x", lambda model, inputs: None, kernel="reroute_packed")
    with pytest.raises(ValueError, match="'names' field of Measure must hold at least"):
        Measure({}, "mdi", "x", lambda model, inputs: None)
    record = Measure({"x": {"k": 1}, "long_x": {}}, "mdi", "x", lambda model, inputs: None)
    assert (record.name, dict(record.options), record.rows) == ("x", {"k": 1}, "train")
    with pytest.raises(TypeError):
        record.options["k"] = 2  # read-only all the way down
    with pytest.raises(TypeError, match="register takes a Measure"):
        importance.register("mdi")
    with pytest.raises(ValueError, match="no measure named 'nothing'"):
        importance.unregister("nothing")
    with pytest.raises(TypeError):
        del importance.MEASURES["mdi"]


def test_the_names_each_function_accepts_come_from_the_registry(data):
    X, y, X_test, y_test = data
    from sapwood.importance._compare import _api_names
    from sapwood.importance._pvalues import _altmann_names
    from sapwood.selection._boruta import _named_importances

    # Each measure by the command line's name and by its long names (one measure, one
    # name everywhere; the long names stay as aliases).
    assert sorted(_api_names()) == sorted([
        "mdi", "gain", "native", "friedman", "permutation", "drop", "drop_column",
        "conditional", "conditional_permutation", "air", "impurity_corrected", "oob",
        "oob_permutation", "ufi", "unbiased_mdi", "shap", "tree_shap", "mdi_plus", "cpi",
        "sage", "vimp", "survival_vimp"])
    assert _altmann_names() == sorted([
        "mdi", "friedman", "permutation", "conditional", "conditional_permutation", "air",
        "impurity_corrected", "oob", "oob_permutation", "ufi", "unbiased_mdi", "mdi_plus"])
    assert sorted(_named_importances()) == sorted([
        "mdi", "gain", "native", "friedman", "oob", "oob_raw", "oob_permutation",
        "oob_permutation_raw", "ufi", "unbiased_mdi", "conditional",
        "conditional_permutation", "mdi_plus", "vimp", "survival_vimp"])
    # "native" is the library's default kind, "gain" its split gain: two measures.
    model = sapwood.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    table = importance.compare(model, X, y, methods=["native"])
    np.testing.assert_array_equal(table["importance"],
                                  importance.native_importance(model).importances_mean)


def test_replacing_a_measure_keeps_the_registry_order():
    order = list(MEASURES)
    original = MEASURES["permutation"]
    swapped = dataclasses.replace(original, label="swapped")
    assert replace(swapped) is original
    try:
        assert list(MEASURES) == order and MEASURES["permutation"] is swapped
    finally:
        replace(original)
    assert list(MEASURES) == order and MEASURES["permutation"] is original
    with pytest.raises(ValueError, match="no measure named 'nothing'"):
        replace(dataclasses.replace(original, names="nothing"))
    with pytest.raises(ValueError, match="already taken by another measure"):
        replace(dataclasses.replace(original, names={"permutation": {}, "mdi": {}}))



# -- a measure added by one function and one record ---------------------------------------

def tree_share(model, feature_names=None) -> ImportanceResult:
    """The share of the trees that split on each feature (a crude importance, chosen
    because it is easy to recompute by hand)."""
    ensemble = as_ensemble(model)
    features = np.arange(ensemble.n_features)
    per_tree = np.column_stack([np.isin(features, tree.feature[tree.children_left >= 0])
                                for tree in ensemble.trees]).astype(np.float64)
    names = feature_names or [f"x{j}" for j in features]
    return ImportanceResult.from_draws(per_tree, feature_names=names, method="trees_using")


def _run_tree_share(model, inputs, **options):
    return tree_share(model, feature_names=[str(c) for c in inputs.X_train.columns])


TREES_USING = Measure("trees_using", f"{__name__}.tree_share",
                      "share of the trees that split on the feature", _run_tree_share,
                      gives={"intervals", "rank_intervals"}, label="tree share")


def test_one_function_and_one_record_add_a_measure_to_the_cli_the_report_and_compare(
        data, tmp_path):
    X, y, X_test, y_test = data
    table = pd.concat([X, X_test]).assign(y=pd.concat([y, y_test]))
    path = tmp_path / "data.csv"
    table.to_csv(path, index=False)
    assert "trees_using" not in MEASURES
    with importance.registered(TREES_USING):
        # compare
        forest = sapwood.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
        frame = importance.compare(forest, X, y, methods=["mdi", "trees_using"])
        assert frame["method"].unique().tolist() == ["mdi", "trees_using"]
        np.testing.assert_array_equal(frame[frame["method"] == "trees_using"]["importance"],
                                      tree_share(forest).importances_mean)
        # the library's explain: the Report
        report = sapwood.explain(table.drop(columns="y"), table["y"], model="rf",
                                 methods="mdi,trees_using")
        assert list(report.results) == ["mdi", "trees_using"]
        np.testing.assert_array_equal(report.results["trees_using"].importances_mean,
                                      tree_share(report.model).importances_mean)
        assert {"trees_using", "trees_using_rank"} <= set(report.to_frame().columns)
        assert "trees_using: share of the trees that split on the feature" in \
            report.to_text(details=True)
        # the command line: the same model on the same split, so the same numbers
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["explain", str(path), "--target", "y", "--model", "rf",
                         "--methods", "mdi,trees_using", "--json"])
        assert code == 0, stderr.getvalue()
        document = json.loads(stdout.getvalue())
        assert list(document["measures"]) == ["mdi", "trees_using"]
        shown = {row["feature"]: row["importance"] for row in
                 document["measures"]["trees_using"]}
        result = report.results["trees_using"]
        assert shown == dict(zip(result.feature_names, result.importances_mean, strict=True))
    assert "trees_using" not in MEASURES
