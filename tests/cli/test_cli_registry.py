"""A new measure is one function plus one registry entry: registered here, in the test,
it shows in ``sapwood explain --help`` and ``--methods``, in its tables and ``--json``,
in ``compare``, ``altmann_pvalues`` and ``boruta``, and is refused with its reason
where it does not apply; unregistered, it is unknown again."""

import contextlib
import dataclasses
import io
import json

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood import importance
from sapwood.adapters import as_ensemble
from sapwood.cli import main
from sapwood.importance import ImportanceResult, Measure, MeasureInputs
from sapwood.report import _measures as cli_measures
from sapwood.report._data import prepare
from sapwood.report._explain import split_rows
from sapwood.selection import boruta
from tests.cli._helpers import run_bad

N_ROWS = 160


# -- the new measure: its "module" ---------------------------------------------------

def split_share(model, feature_names=None) -> ImportanceResult:
    """Share of each tree's splits made on each feature, averaged over the trees (a
    crude importance, chosen because it is easy to recompute by hand)."""
    ensemble = as_ensemble(model)
    per_tree = []
    for tree in ensemble.trees:
        split = tree.children_left >= 0
        counts = np.bincount(tree.feature[split], minlength=ensemble.n_features)
        per_tree.append(counts / max(int(split.sum()), 1))
    names = feature_names or [f"x{j}" for j in range(ensemble.n_features)]
    return ImportanceResult.from_draws(np.column_stack(per_tree), feature_names=names,
                                       method="splits")


def _run(model, inputs, **options):
    names = list(inputs.X_train.columns) if hasattr(inputs.X_train, "columns") else None
    return split_share(model, feature_names=names)


def _applies(model, inputs, **options):
    n_trees = len(as_ensemble(model).trees)
    if n_trees < 2:
        return f"split shares vary over the trees of a forest; this model has {n_trees} tree"
    return None


# -- ... and its registry entry ------------------------------------------------------

SPLITS = Measure("splits", f"{__name__}.split_share",
                 "share of each tree's splits made on the feature", _run, applies=_applies,
                 gives={"intervals", "rank_intervals"}, label="split share")


@pytest.fixture
def splits():
    with importance.registered(SPLITS) as measure:
        yield measure
    assert "splits" not in importance.MEASURES


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.uniform(size=N_ROWS), "b": rng.uniform(size=N_ROWS),
                          "noise": rng.uniform(size=N_ROWS)})
    frame["y"] = ((frame["a"] + 0.5 * frame["b"] + 0.2 * rng.normal(size=N_ROWS)) > 0.8
                  ).astype(int)
    path = tmp_path_factory.mktemp("registry") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run_cli(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return code, stdout.getvalue(), stderr.getvalue()


def forest_on_the_cli_split(path):
    data = prepare(pd.read_csv(path), "y")
    X_train, X_test, y_train, y_test = split_rows(data, 0.25, 0)
    model = sapwood.RandomForestClassifier(n_estimators=100, random_state=0)
    return model.fit(X_train, y_train), X_train, y_train


def test_a_registered_measure_is_in_the_help(splits, capsys):
    assert main(["explain", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "splits: share of each tree's splits made on the feature" in text
    assert "comma-separated measures from: mdi, gain, friedman, permutation, drop, " \
           "conditional, air, oob, ufi, shap, mdi_plus, cpi, sage, vimp, splits" in text
    # It can refuse (applies), so the help lists it among those skipped where they do
    # not apply.
    assert ("(gain, friedman, drop, conditional, air, oob, ufi, cpi, vimp, splits) are "
            "skipped") in text


def test_a_registered_measure_runs_from_the_command_line(splits, csv):
    code, out, err = run_cli(["explain", str(csv), "--target", "y", "--model", "rf",
                              "--methods", "mdi,splits", "--json"])
    assert code == 0, err
    document = json.loads(out)
    assert list(document["measures"]) == ["mdi", "splits"]
    model, X_train, _ = forest_on_the_cli_split(csv)
    expected = split_share(model, feature_names=list(X_train.columns))
    rows = {row["feature"]: row for row in document["measures"]["splits"]}
    for j, name in enumerate(expected.feature_names):
        assert rows[name]["importance"] == pytest.approx(expected.importances_mean[j],
                                                         abs=1e-12)
        assert rows[name]["ci_low"] == pytest.approx(expected.ci_low[j], abs=1e-12)
    assert [pair["measure_b"] for pair in document["agreement"]["pairs"]] == ["splits"]
    # The table says what it is, from the record's description.
    code, out, err = run_cli(["explain", str(csv), "--target", "y", "--model", "rf",
                              "--methods", "splits", "--details"])
    assert code == 0, err
    assert "splits: share of each tree's splits made on the feature" in out


def test_a_measure_that_does_not_apply_is_skipped_with_its_reason(splits, csv):
    code, out, err = run_cli(["explain", str(csv), "--target", "y", "--model", "tree",
                              "--methods", "mdi,splits", "--json"])
    assert code == 0, err
    document = json.loads(out)
    assert list(document["measures"]) == ["mdi"]
    reason = ("splits importance skipped: split shares vary over the trees of a forest; "
              "this model has 1 tree")
    assert reason in document["notes"]
    assert f"note: {reason}" in err


def test_alone_and_not_applying_it_is_bad_input(splits, csv, capsys):
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--model", "tree",
                     "--methods", "splits"],
            "none of the requested importance measures could be computed: splits",
            "this model has 1 tree")


def test_a_registered_measure_is_in_compare(splits, csv):
    model, X_train, y_train = forest_on_the_cli_split(csv)
    table = importance.compare(model, X_train, y_train, methods=["mdi", "splits"])
    assert table["method"].unique().tolist() == ["mdi", "splits"]
    expected = split_share(model, feature_names=list(X_train.columns))
    rows = table[table["method"] == "splits"]
    np.testing.assert_array_equal(rows["importance"], expected.importances_mean)
    np.testing.assert_array_equal(rows["rank"], expected.ranks())
    tree = sapwood.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X_train, y_train)
    with pytest.raises(ValueError, match="method 'splits' does not apply: split shares "
                                         "vary over the trees of a forest; this model has "
                                         "1 tree"):
        importance.compare(tree, X_train, y_train, methods=["splits"])


def test_a_registered_measure_is_in_altmann_and_boruta(splits, csv):
    _, X_train, y_train = forest_on_the_cli_split(csv)
    forest = sapwood.RandomForestClassifier(n_estimators=10, random_state=0)

    def by_hand(model, X, y):
        return split_share(model, feature_names=list(X.columns))

    named = importance.altmann_pvalues(forest, X_train, y_train, measure="splits",
                                       n_permutations=3, random_state=0)
    direct = importance.altmann_pvalues(forest, X_train, y_train, measure=by_hand,
                                        n_permutations=3, random_state=0)
    np.testing.assert_array_equal(named.importances_mean, direct.importances_mean)
    np.testing.assert_array_equal(named.pvalues, direct.pvalues)
    np.testing.assert_array_equal(named.extra["null_importances"],
                                  direct.extra["null_importances"])
    named = boruta(X_train, y_train, estimator=forest, importance="splits", max_rounds=3,
                   random_state=0)
    direct = boruta(X_train, y_train, estimator=forest, importance=by_hand, max_rounds=3,
                    random_state=0)
    assert named.n_rounds == direct.n_rounds == 3
    pd.testing.assert_frame_equal(named.history, direct.history)


def test_unregistered_it_is_unknown_again(csv, capsys):
    with importance.registered(SPLITS):
        assert "splits" in importance.MEASURES
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--methods", "mdi,splits"],
            "--methods: unknown measure 'splits'")
    with pytest.raises(ValueError, match="names from .*got 'splits'"):
        importance.compare(None, np.zeros((2, 1)), [0, 1], methods=["splits"])


def test_register_refuses_a_name_taken(splits):
    with pytest.raises(ValueError, match="a measure named 'splits' is already registered"):
        importance.register(SPLITS)
    other = Measure({"splits2": {}, "tree_shap": {}}, f"{__name__}.split_share", "again",
                    _run)
    with pytest.raises(ValueError, match="'tree_shap' of measure 'splits2' is already taken"):
        importance.register(other)
    assert "splits2" not in importance.MEASURES
    with pytest.raises(TypeError):
        importance.MEASURES["splits3"] = SPLITS  # read-only: register() is the way in


def test_inputs_are_what_the_run_function_gets(splits, csv):
    model, X_train, y_train = forest_on_the_cli_split(csv)
    inputs = MeasureInputs(X_train=X_train, y_train=y_train)
    assert splits.why_not(model, inputs) is None
    np.testing.assert_array_equal(splits.run(model, inputs).importances_mean,
                                  split_share(model).importances_mean)


def test_the_command_lines_registry_swaps_a_measure_in_its_place(monkeypatch):
    # monkeypatch.setitem sets the old record back when it undoes: the order holds.
    order = list(importance.MEASURES)
    with monkeypatch.context() as patch:
        patch.setitem(cli_measures.MEASURES, "mdi",
                      dataclasses.replace(importance.MEASURES["mdi"]))
        assert list(importance.MEASURES) == order
    assert list(importance.MEASURES) == order
