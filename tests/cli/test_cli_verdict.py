"""What the command line concludes: warnings that fire where they should and not where
they should not, agreement over the features that matter, the verdict, sane defaults,
too little data, the SHAP row sample and tables that fit 80 columns.

The data have known answers: generated tables with an ID column, a leaked column, a
correlated pair and an MDI-inflated noise column, and scikit-learn's bundled wine,
breast-cancer and diabetes tables.
"""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from sapwood import importance
from sapwood.cli import main
from sapwood.datasets import make_ground_truth
from sapwood.report._agreement import agreement, significantly_above
from sapwood.report._verdict import (
    MIN_NET_ROWS,
    disagreement,
    small_data,
    standing,
    verdict_interval,
    verdict_measure,
)
from tests.cli._helpers import run_bad


def run_json(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    assert code == 0, stderr.getvalue()
    return json.loads(stdout.getvalue())


def kinds(document, kind):
    return [w for w in document["warnings"] if w["kind"] == kind]


def write(frame, tmp_path, name="data.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def ground_truth(tmp_path_factory):
    X, y, _ = make_ground_truth(2000, random_state=0)
    return write(X.assign(y=y), tmp_path_factory.mktemp("gt"))


@pytest.fixture(scope="module")
def ground_truth_run(ground_truth):
    return run_json(["explain", str(ground_truth), "--target", "y", "--json"])


def sklearn_table(name, tmp_path):
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    return write(bunch.frame, tmp_path, f"{name}.csv")


# -- the warnings on data with known answers -----------------------------------------

def test_ground_truth_warnings(ground_truth_run):
    document = ground_truth_run
    assert {w["kind"] for w in document["warnings"]} == {
        "identifier", "correlated", "disagreement"}
    for warning in document["warnings"]:
        assert set(warning) == {"kind", "features", "message", "details"}
    [identifier] = kinds(document, "identifier")
    assert identifier["features"] == ["noise_id"]
    [correlated] = kinds(document, "correlated")
    assert sorted(correlated["features"]) == ["inf_4", "inf_4_copy"]
    assert "Shuffled together" in correlated["message"]
    assert correlated["details"]["joint_ci_low"] > 0
    [disagree] = kinds(document, "disagreement")
    # MDI puts the ID column above the binary informative inf_5; held out it is nothing.
    assert "noise_id" in disagree["features"]
    assert "high cardinality" in disagree["details"]["causes"]
    assert "inf_4_copy" not in disagree["features"]  # left to the correlated warning


def test_ground_truth_verdict(ground_truth_run):
    verdict = ground_truth_run["verdict"]
    assert verdict["measure"] == "permutation"
    assert {"inf_1", "inf_2", "inf_4"} <= set(verdict["relies_on"])
    noise = {"noise_binary", "noise_lowcard", "noise_id"}
    assert not noise & set(verdict["relies_on"])
    assert noise <= set(verdict["uncertain"]) | set(verdict["does_not"])
    assert sorted(verdict["entangled"][0]) == ["inf_4", "inf_4_copy"]
    assert verdict["lines"][0].startswith("Verdict (permutation importance")


def test_a_leaked_column_is_named_with_its_score(tmp_path):
    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["y"] = (frame["a"] + rng.normal(size=n) > 0).astype(int)
    frame["outcome_code"] = frame["y"] * 10 + rng.integers(0, 3, size=n)
    document = run_json(["explain", str(write(frame, tmp_path)), "--target", "y",
                         "--json"])
    [leak] = kinds(document, "leakage")
    assert leak["features"] == ["outcome_code"]
    assert leak["details"]["score"] >= 0.99
    assert "almost perfectly" in leak["message"]


@pytest.mark.parametrize("name", ["wine", "breast_cancer", "diabetes"])
def test_bundled_tables_raise_no_false_alarm(name, tmp_path):
    path = sklearn_table(name, tmp_path)
    document = run_json(["explain", str(path), "--target", "target", "--json"])
    found = {w["kind"] for w in document["warnings"]}
    # All measurements: no identifiers, nothing leaks.
    assert not found & {"identifier", "leakage"}
    if name == "wine":
        # 178 rows leave 45 held out; proline (permutation 0.06, interval above zero)
        # is not said to "barely change the score".
        assert "small-data" in found
        for warning in kinds(document, "disagreement"):
            assert "proline" not in warning["features"]
    else:
        assert "small-data" not in found


def test_breast_cancer_groups_its_size_columns(tmp_path):
    document = run_json(["explain", str(sklearn_table("breast_cancer", tmp_path)),
                         "--target", "target", "--json"])
    groups = [set(w["features"]) for w in kinds(document, "correlated")]
    assert any({"mean radius", "mean perimeter"} <= group for group in groups)


# -- disagreement and standing, unit by unit ------------------------------------------

def drawn(name, draws, rows=None):
    """A result over the features signal, weak, id, noise from its repeats ``draws``,
    with per-row draws ``rows`` (n_features, n_rows) as its ``rank_draws`` when given:
    the verdict's intervals rest on those, as the measures' own do."""
    draws = np.asarray(draws, dtype=float)
    return importance.ImportanceResult.from_draws(
        draws, feature_names=["signal", "weak", "id", "noise"], method=name,
        rank_draws=None if rows is None else np.asarray(rows, dtype=float))


def row_draws(means, spreads, n, seed=0):
    """n per-row draws per feature around ``means`` with standard deviations
    ``spreads`` (a feature of spread 0 never changes a row)."""
    rng = np.random.default_rng(seed)
    return (np.asarray(means, dtype=float)[:, None]
            + np.asarray(spreads, dtype=float)[:, None] * rng.normal(size=(len(means), n)))


def test_disagreement_needs_the_intervals_to_part():
    rng = np.random.default_rng(0)
    # MDI over 50 trees: "id" clearly above "weak".
    mdi = drawn("mdi", np.array([[0.5], [0.1], [0.3], [0.1]])
                + 0.01 * rng.normal(size=(4, 50)))
    # Held out: "weak" clearly used; "id" covers zero (over 500 rows).
    repeats = [[0.2, 0.21, 0.19, 0.2, 0.2], [0.05, 0.06, 0.05, 0.04, 0.05],
               [0.0, 0.01, -0.01, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]
    held = drawn("permutation", repeats, row_draws([0.2, 0.05, 0.0, 0.0],
                                                   [0.05, 0.05, 0.05, 0.0], 500))
    standings = standing(held)
    assert standings == {"signal": "relies", "weak": "relies", "id": "uncertain",
                         "noise": "not"}
    n_distinct = {"signal": 200, "weak": 2, "id": 1000, "noise": 3}
    found = disagreement(mdi, held, standings, n_distinct=n_distinct, correlated=set())
    assert found.kind == "disagreement" and found.features == ("id",)
    assert "high cardinality" in found.message and "'id'" in found.message
    # The same with "id" in a correlated group: the correlated warning speaks instead.
    assert disagreement(mdi, held, standings, n_distinct=n_distinct,
                        correlated={"id"}) is None
    # "id" held out clearly above zero: the intervals agree that it is used.
    used = drawn("permutation", held.importances.copy())
    used.importances[2] = [0.03, 0.031, 0.029, 0.03, 0.03]
    used = drawn("permutation", used.importances, row_draws(
        [0.2, 0.05, 0.03, 0.0], [0.05, 0.05, 0.05, 0.0], 500))
    assert disagreement(mdi, used, standing(used), n_distinct=n_distinct,
                        correlated=set()) is None


def test_an_accuracy_drop_of_a_few_rows_is_not_relied_on():
    # Five repeats that all turn the same 2 of 100 rows wrong: each such row and the
    # row that gave it its value draw 1/2 (the per-row draws count both), the others
    # 0. The t interval of those draws lies above zero, but a sign test cannot tell 2
    # rows from chance.
    def held(n, changed):
        rows = np.zeros((4, n))
        rows[0] = 0.3
        rows[1, :2 * changed] = 0.5
        return drawn("permutation", [[0.3] * 5, [changed / n] * 5, [0.0] * 5, [0.0] * 5],
                     rows)

    few = held(100, 2)
    assert verdict_interval("permutation", few).low[1] > 0
    assert standing(few, n_rows=100, accuracy=True)["weak"] == "uncertain"
    # 6 rows of 300: the same share, enough rows to tell.
    assert standing(held(300, MIN_NET_ROWS), n_rows=300, accuracy=True)["weak"] == "relies"


def test_an_interval_over_the_shuffles_alone_decides_nothing():
    # Repeats that agree closely, as five shuffles of the same held-out rows do: their
    # interval lies above zero for every feature used, whatever the rows' noise. With
    # no per-row draws only a feature the model never splits on is decided.
    repeats = [[0.3, 0.31, 0.29, 0.3, 0.3], [0.02, 0.021, 0.019, 0.02, 0.02],
               [0.0] * 5, [0.0] * 5]
    shuffles_only = drawn("permutation", repeats)
    used = {"signal": True, "weak": True, "id": True, "noise": False}
    assert shuffles_only.ci_low[1] > 0
    assert standing(shuffles_only, n_rows=1000, used=used) == {
        "signal": "uncertain", "weak": "uncertain", "id": "uncertain", "noise": "not"}
    interval = verdict_interval("permutation", shuffles_only)
    assert not interval.rows
    # The same importances whose per-row draws cover zero for "weak": still uncertain;
    # "signal" is relied on, and "id" (never changing a row) is out on 1,000 rows.
    rows = drawn("permutation", repeats, row_draws([0.3, 0.02, 0.0, 0.0],
                                                   [0.1, 0.5, 0.0, 0.0], 1000))
    assert standing(rows, n_rows=1000, used=used) == {
        "signal": "relies", "weak": "uncertain", "id": "not", "noise": "not"}


def test_the_verdict_prefers_a_measure_whose_intervals_cover_the_rows():
    repeats = [[0.3, 0.31, 0.29, 0.3, 0.3], [0.02] * 5, [0.0] * 5, [0.0] * 5]
    shuffles_only = drawn("permutation", repeats)
    oob = drawn("oob", repeats, row_draws([0.3, 0.02, 0.0, 0.0], [0.1, 0.1, 0.0, 0.0], 800))
    assert verdict_measure({"permutation": shuffles_only}) == "permutation"
    assert verdict_measure({"permutation": shuffles_only, "oob": oob}) == "oob"
    assert verdict_measure({"permutation": oob, "oob": oob}) == "permutation"
    # Drop-column by cross-validation: its folds are new held-out rows.
    drop = drawn("drop", repeats)
    assert verdict_interval("drop", drop).rows
    assert verdict_measure({"permutation": shuffles_only, "drop": drop}) == "drop"


def test_small_data_rule():
    assert small_data(500, True, "accuracy") is None
    finding = small_data(45, True, "accuracy")
    assert finding.kind == "small-data" and "45 held-out rows" in finding.message
    assert "accuracy drop" in finding.message
    assert "accuracy drop" not in small_data(45, True, "neg_brier_score").message
    assert small_data(7, False, "accuracy").kind == "small-data"


# -- agreement over the features that matter ------------------------------------------

def test_agreement_ignores_the_order_of_noise():
    rng = np.random.default_rng(0)
    names = ["x0", "x1"] + [f"noise_{i}" for i in range(8)]
    # MDI orders the noise arbitrarily; permutation finds only x0 and x1 above zero.
    mdi_means = np.r_[0.5, 0.3, rng.permutation(np.linspace(0.01, 0.03, 8))]
    mdi = importance.ImportanceResult.from_draws(
        mdi_means[:, None] + 0.001 * rng.normal(size=(10, 100)), feature_names=names,
        method="mdi")
    perm_means = np.r_[0.3, 0.2, np.zeros(8)]
    # Per-row draws over 500 held-out rows; a shuffle of an unused column changes no
    # row, so its importance is exactly zero.
    spread = np.r_[0.05, 0.05, np.zeros(8)]
    perm = importance.ImportanceResult.from_draws(
        perm_means[:, None] + spread[:, None] / 25 * rng.normal(size=(10, 5)),
        feature_names=names, method="permutation", rank_draws=perm_means[:, None]
        + spread[:, None] * rng.normal(size=(10, 500)))
    [pair] = agreement({"mdi": mdi, "permutation": perm}, k=2)
    assert pair["features"] == ["x0", "x1"]
    assert pair["spearman"] == pytest.approx(1.0)
    assert pair["agree"] and pair["n_discordant"] == 0
    # Reverse x0 and x1 under permutation, clearly: now they are discordant.
    perm_means[:2] = [0.2, 0.3]
    perm = importance.ImportanceResult.from_draws(
        perm_means[:, None] + spread[:, None] / 25 * rng.normal(size=(10, 5)),
        feature_names=names, method="permutation", rank_draws=perm_means[:, None]
        + spread[:, None] * rng.normal(size=(10, 500)))
    [pair] = agreement({"mdi": mdi, "permutation": perm}, k=2)
    assert pair["discordant"] == [["x0", "x1"]] and not pair["agree"]


def test_ties_within_uncertainty_are_not_disagreement():
    names = ["a", "b", "c"]
    mdi = importance.ImportanceResult(importances_mean=[0.5, 0.3, 0.2],
                                      importances_std=[0, 0, 0], feature_names=names,
                                      method="mdi")
    # Permutation reverses a and b, but its repeats cannot tell them apart.
    perm = importance.ImportanceResult.from_draws(
        [[0.10, 0.30, 0.20, 0.25, 0.15], [0.2, 0.22, 0.21, 0.19, 0.2], [0.0] * 5],
        feature_names=names, method="permutation")
    [pair] = agreement({"mdi": mdi, "permutation": perm}, k=2)
    assert pair["n_discordant"] == 0 and pair["agree"]


def test_agreement_counts_above_zero_by_the_interval_over_new_rows():
    mdi = drawn("mdi", np.array([[0.5], [0.1], [0.3], [0.2]])
                + 0.001 * np.random.default_rng(1).normal(size=(4, 50)))
    # Five shuffles that agree closely: their interval is above zero for "signal",
    # "weak" and "id"; over the 400 held-out rows only "signal" is.
    repeats = [[0.3, 0.31, 0.29, 0.3, 0.3], [0.02, 0.021, 0.019, 0.02, 0.02],
               [0.01, 0.011, 0.009, 0.01, 0.01], [0.0] * 5]
    rows = drawn("permutation", repeats, row_draws([0.3, 0.02, 0.01, 0.0],
                                                   [0.1, 0.5, 0.5, 0.0], 400))
    assert (rows.ci_low[:3] > 0).all()
    assert verdict_interval("permutation", rows).low[1:3].max() <= 0
    [pair] = agreement({"mdi": mdi, "permutation": rows}, k=2)
    assert pair["features"] == ["signal"]
    assert pair["compared_over"] == ("the features above zero by permutation (95% "
                                     "interval over new rows)")
    # The same repeats without per-row draws cover the shuffles only: they select
    # nothing, so every feature is compared, as for two measures of the training rows.
    shuffles_only = drawn("permutation", repeats)
    [pair] = agreement({"mdi": mdi, "permutation": shuffles_only}, k=2)
    assert pair["features"] == ["signal", "weak", "id", "noise"]
    # Nor do they order features: the shuffles put "weak" above "id", against MDI, but
    # that order need not hold on new rows, so it is no discordant pair.
    assert shuffles_only.rank_intervals().above[1, 2]
    assert not significantly_above(shuffles_only, "permutation").any()
    assert pair["n_discordant"] == 0
    assert pair["compared_over"] == ("all features (neither measure has a 95% interval "
                                     "over new rows)")
    # CPI's draws are its per-row loss changes: its own interval covers the rows.
    cpi = drawn("cpi", row_draws([0.3, 0.02, 0.01, 0.0], [0.1, 0.5, 0.5, 0.0], 400))
    [pair] = agreement({"mdi": mdi, "cpi": cpi}, k=2)
    assert pair["features"] == ["signal"]
    assert pair["compared_over"] == ("the features above zero by cpi (95% interval over "
                                     "the 400 held-out rows, one draw per row)")


# -- defaults, too little data, SHAP sample --------------------------------------------

def test_gb_uses_the_estimator_defaults(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    frame["y"] = frame["a"] * 2 + rng.normal(size=200)
    document = run_json(["explain", str(write(frame, tmp_path)), "--target", "y",
                         "--model", "gb", "--methods", "mdi", "--json"])
    params = document["model"]["params"]
    assert params["max_depth"] == 3 and params["learning_rate"] == 0.1
    assert params["n_estimators"] == 100 and params["random_state"] == 0
    forest = run_json(["explain", str(write(frame, tmp_path)), "--target", "y",
                       "--model", "rf", "--methods", "mdi", "--json"])
    assert forest["model"]["params"]["max_depth"] is None


@pytest.mark.parametrize("rows, target, phrases", [
    (2, lambda i: i % 2, ["too little data: 2 rows", "at least 10"]),
    (12, lambda i: int(i == 0), ["too little data: class '1'", "has 1 row",
                                 "at least 2"]),
])
def test_too_little_data_exits_2(capsys, tmp_path, rows, target, phrases):
    frame = pd.DataFrame({"x": np.arange(rows, dtype=float) * 1.5,
                          "y": [target(i) for i in range(rows)]})
    run_bad(capsys, ["explain", str(write(frame, tmp_path)), "--target", "y"], *phrases)


def test_a_test_size_that_leaves_too_few_rows_exits_2(capsys, tmp_path):
    frame = pd.DataFrame({"x": np.arange(20.0), "y": np.arange(20.0) % 2})
    run_bad(capsys, ["explain", str(write(frame, tmp_path)), "--target", "y",
                     "--test-size", "0.05"], "leaves 1 held out", "at least 3")


def test_shap_explains_a_stated_sample(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)})
    frame["y"] = frame["a"] + rng.normal(size=400)
    path = write(frame, tmp_path)
    document = run_json(["explain", str(path), "--target", "y", "--model", "tree",
                         "--methods", "shap", "--max-rows", "40", "--json"])
    assert document["model"]["n_test"] == 100
    assert document["rows_explained"] == {"shap": {"n_rows": 40, "n_rows_available": 100}}
    rows = document["measures"]["shap"]
    assert all(row["ci_low"] is not None for row in rows)
    every = run_json(["explain", str(path), "--target", "y", "--model", "tree",
                      "--methods", "shap", "--max-rows", "all", "--json"])
    assert every["measures"]["shap"] != rows
    assert main(["explain", str(path), "--target", "y", "--model", "tree", "--methods",
                 "shap", "--max-rows", "40", "--details"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(40 of the 100 rows, a random sample: --max-rows" in out


# -- tables that fit the terminal -----------------------------------------------------

def test_every_line_fits_80_columns(ground_truth):
    import sapwood
    from sapwood.cli._data import load_table
    from sapwood.report._terminal import print_report, summary_lines

    table = load_table(ground_truth)
    run = sapwood.explain(table.drop(columns="y"), table["y"],
                          methods="mdi,permutation,oob,shap", source=str(ground_truth))
    for width in (80, 160):
        console = Console(width=width, file=io.StringIO(), color_system=None)
        print_report(run, console, details=True)
        text = console.file.getvalue()
        # Tables and the text under them fit; the summary lines at the top are one
        # line each (grep-able), and the terminal wraps them.
        body = text.splitlines()[len(summary_lines(run)):]
        assert max(len(line) for line in body) <= width
        assert "…" not in text
        if width == 80:
            narrow = text
    # Narrow: the std column and the MDI trace's left/right columns are left out ...
    assert "impurity_left" not in narrow and "│ std" not in narrow
    # ... wide: all there; the names and numbers are whole in both.
    assert "impurity_left" in text
    for name in ("noise_lowcard", "inf_4_copy", "noise_binary"):
        assert name in narrow


def test_a_held_out_measure_without_draws_orders_nothing():
    names = ["a", "b", "c"]
    mdi = importance.ImportanceResult(importances_mean=[0.5, 0.3, 0.2],
                                      importances_std=[0, 0, 0], feature_names=names,
                                      method="mdi")
    # One held-out drop-column evaluation: exact numbers, unknown sampling error.
    drop = importance.ImportanceResult(importances_mean=[0.1, 0.3, 0.2],
                                       importances_std=[0, 0, 0], feature_names=names,
                                       method="drop")
    [pair] = agreement({"mdi": mdi, "drop": drop}, k=2)
    assert pair["features"] == names and pair["n_discordant"] == 0
    # The same numbers from two training-data measures are discordant.
    gain = importance.ImportanceResult(importances_mean=[0.1, 0.3, 0.2],
                                       importances_std=[0, 0, 0], feature_names=names,
                                       method="gain")
    [pair] = agreement({"mdi": mdi, "gain": gain}, k=2)
    # [x, y]: the first measure puts x above y, the second y above x.
    assert pair["discordant"] == [["a", "b"], ["a", "c"]]


def test_auto_rows_shrink_with_the_model():
    from sapwood.learners import RandomForestRegressor
    from sapwood.report._measures import (
        DEFAULT_MAX_ROWS,
        MIN_SHAP_ROWS,
        SHAP_LEAF_ROWS,
        Inputs,
        compute,
    )

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(3000, 3)), columns=list("abc"))
    y = X["a"] + rng.normal(size=3000)
    small = RandomForestRegressor(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    big = RandomForestRegressor(n_estimators=100, random_state=0).fit(X, y)
    inputs = Inputs(X_train=X, y_train=y, X_test=X, y_test=y, random_state=0)
    assert compute("shap", small, inputs).params["n_rows"] == DEFAULT_MAX_ROWS
    leaves = sum(int((t.tree_.children_left < 0).sum()) for t in big.estimators_)
    expected = min(DEFAULT_MAX_ROWS, max(MIN_SHAP_ROWS, SHAP_LEAF_ROWS // leaves))
    assert expected < DEFAULT_MAX_ROWS
    assert compute("shap", big, inputs).params["n_rows"] == expected


def test_absence_needs_more_rows_than_presence():
    from sapwood.report._verdict import MIN_ROWS_FOR_ABSENCE

    # A regression R² drop: "weak" is far below 1% of the top, but on few rows it is
    # only uncertain; a feature the model never splits on is out whatever the rows.
    def held(n):
        return drawn("permutation", [[0.3, 0.31, 0.29, 0.3, 0.3], [0.0001] * 5, [0.0] * 5,
                                     [0.0] * 5],
                     row_draws([0.3, 0.0001, 0.0, 0.0], [0.1, 0.001, 0.0, 0.0], n))

    few = standing(held(MIN_ROWS_FOR_ABSENCE - 1), n_rows=MIN_ROWS_FOR_ABSENCE - 1,
                   used={"signal": True, "weak": True, "id": True, "noise": False})
    assert few["weak"] == "uncertain" and few["noise"] == "not"
    enough = standing(held(MIN_ROWS_FOR_ABSENCE), n_rows=MIN_ROWS_FOR_ABSENCE)
    assert enough["weak"] == "not"


def test_a_verdict_without_an_interval_over_rows_decides_nothing():
    import types

    from sapwood.report._verdict import verdict

    repeats = [[0.3, 0.31, 0.29, 0.3, 0.3], [0.02, 0.021, 0.019, 0.02, 0.02],
               [0.0] * 5, [0.0] * 5]
    shuffles_only = drawn("permutation", repeats)
    shuffles_only.extra["intervals"] = {"ci": "the spread of the 5 shuffles only, not the "
                                        "choice of held-out rows"}
    mdi = drawn("mdi", [[0.5], [0.2], [0.1], [0.0]])
    run_like = types.SimpleNamespace(results={"mdi": mdi, "permutation": shuffles_only},
                                     task="regression", n_test=1000, held_out=True)
    found = verdict(run_like, [])
    assert found.relies_on == [] and found.does_not == ["noise"]
    assert found.uncertain == ["signal", "weak", "id"]
    assert "over the spread of the 5 shuffles only" in found.lines[0]
    assert "decide nothing" in found.lines[1]
    assert found.lines[2].endswith("not decided (no interval over new rows)")
