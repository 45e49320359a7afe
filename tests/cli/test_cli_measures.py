"""``--methods drop,friedman``, ``--pvalues janitza|altmann``, ``--cv``, ``--top-k``, rank
agreement, ``demo --data`` and the measure registry: each number is recomputed here with
the library function the CLI calls, on the CLI's own split, and compared."""

import contextlib
import io
import json
import subprocess
import sys

import joblib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import sapwood
from sapwood import importance
from sapwood.cli import main
from sapwood.report import _measures
from sapwood.report._agreement import agreement
from sapwood.report._data import prepare
from sapwood.report._explain import split_rows
from sapwood.report._intervals import verdict_interval
from tests.cli._helpers import run_bad

N_ROWS = 160
SCORING = "neg_brier_score"  # sapwood explain's score for a classifier


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    """Two informative columns, a noisy ID-like column, two noise columns; 0/1 target."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.uniform(size=N_ROWS), "b": rng.uniform(size=N_ROWS),
                          "row_id": rng.permutation(N_ROWS).astype(float),
                          "coin": rng.integers(0, 2, size=N_ROWS).astype(float),
                          "die": rng.integers(0, 6, size=N_ROWS).astype(float)})
    frame["y"] = ((frame["a"] + 0.6 * frame["b"] + 0.3 * rng.normal(size=N_ROWS)) > 0.8
                  ).astype(int)
    path = tmp_path_factory.mktemp("measures") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def split_of(path, target="y", test_size=0.25, seed=0):
    """The CLI's own training / held-out split of the file."""
    data = prepare(pd.read_csv(path), target)
    return split_rows(data, test_size, seed)


def run_json(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    assert code == 0, stderr.getvalue()
    return json.loads(stdout.getvalue()), stderr.getvalue()


def by_feature(rows, key="importance"):
    return {row["feature"]: row[key] for row in rows}


def tree():
    return sapwood.DecisionTreeClassifier(max_depth=3, random_state=0)


# -- drop ----------------------------------------------------------------------------

def test_drop_on_the_held_out_split_equals_drop_column_importance(csv):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                            "--max-depth", "3", "--methods", "mdi,drop", "--json"])
    X_train, X_test, y_train, y_test = split_of(csv)
    expected = importance.drop_column_importance(tree(), X_train, y_train, X_test, y_test,
                                                   scoring=SCORING)
    got = by_feature(document["measures"]["drop"])
    assert got == pytest.approx(dict(zip(expected.feature_names, expected.importances_mean,
                                         strict=True)), abs=1e-12)
    assert list(document["measures"]) == ["mdi", "drop"]


def test_drop_by_cross_fitting_is_the_mean_over_the_folds(csv):
    """--cv 3 cross-fits: drop-column refits on each fold's training rows and scores the
    fold it left out; its importance is the mean of the three, its interval over them."""
    from sapwood._splits import folds

    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                            "--max-depth", "3", "--methods", "drop", "--cv", "3", "--json"])
    data = prepare(pd.read_csv(csv), "y")
    per_fold = np.stack([importance.drop_column_importance(
        tree(), data.X.iloc[train], data.y.iloc[train], data.X.iloc[test],
        data.y.iloc[test], scoring=SCORING).importances_mean
        for train, test in folds(len(data.y), 3, 0, y=data.y)], axis=1)
    rows = document["measures"]["drop"]
    names = list(data.X.columns)
    assert by_feature(rows) == pytest.approx(dict(zip(names, per_fold.mean(axis=1),
                                                      strict=True)), abs=1e-12)
    low = importance.ImportanceResult.from_draws(
        per_fold, feature_names=names, method="drop").ci_low
    assert by_feature(rows, "ci_low") == pytest.approx(dict(zip(names, low, strict=True)),
                                                       abs=1e-12)
    assert document["model"]["n_test"] == N_ROWS  # every row held out once
    assert document["split"]["folds"] == 3
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        assert main(["explain", str(csv), "--target", "y", "--model", "tree",
                     "--max-depth", "3", "--methods", "drop", "--cv", "3", "--details"]) == 0
    assert "95% CI" in stdout.getvalue() and "Cross-fitted: 3 folds" in stdout.getvalue()


def test_drop_is_skipped_with_a_note_for_a_loaded_model(csv, tmp_path):
    X_train, _, y_train, _ = split_of(csv)
    path = tmp_path / "tree.sapwood"
    sapwood.save(tree().fit(X_train, y_train), path)
    document, err = run_json(["explain", str(csv), "--target", "y", "--model", str(path),
                              "--methods", "mdi,drop", "--json"])
    assert list(document["measures"]) == ["mdi"]
    assert ("note: drop importance skipped: drop importance is computed by refitting "
            "without each feature, so it needs a model sapwood trains") in err
    assert any(note.startswith("drop importance skipped") for note in document["notes"])


# -- friedman ------------------------------------------------------------------------

def test_friedman_on_gradient_boosting_equals_friedman_importance(csv):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "gb",
                            "--max-depth", "2", "--methods", "friedman,permutation",
                            "--json"])
    X_train, _, y_train, _ = split_of(csv)
    model = sapwood.GradientBoostingClassifier(n_estimators=100, max_depth=2,
                                               random_state=0).fit(X_train, y_train)
    expected = importance.friedman_importance(model)
    assert by_feature(document["measures"]["friedman"]) == pytest.approx(
        dict(zip(expected.feature_names, expected.importances_mean, strict=True)), abs=1e-12)


def test_friedman_is_skipped_with_a_note_for_other_models(csv, capsys):
    assert main(["explain", str(csv), "--target", "y", "--model", "tree",
                 "--methods", "mdi,friedman"]) == 0
    out, err = capsys.readouterr()
    assert "note: friedman importance skipped: Friedman's importance is defined for " \
           "boosted ensembles" in err
    assert "friedman:" not in out


# -- conditional ---------------------------------------------------------------------

@pytest.mark.parametrize("model", ["tree", "rf"])
def test_conditional_equals_conditional_permutation_importance(csv, model):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", model,
                            "--max-depth", "3", "--methods", "conditional", "--json"])
    X_train, X_test, y_train, y_test = split_of(csv)
    if model == "tree":
        fitted, X, y = tree().fit(X_train, y_train), X_test, y_test
    else:
        # A bootstrapped forest: each tree's out-of-bag rows of the training data.
        fitted = sapwood.RandomForestClassifier(n_estimators=100, max_depth=3,
                                                random_state=0).fit(X_train, y_train)
        X, y = X_train, y_train
    expected = importance.conditional_permutation_importance(
        fitted, X, y, threshold=0.95, n_repeats=5, random_state=0)
    rows = document["measures"]["conditional"]
    assert by_feature(rows) == pytest.approx(
        dict(zip(expected.feature_names, expected.importances_mean, strict=True)), abs=1e-12)
    assert by_feature(rows, "std") == pytest.approx(
        dict(zip(expected.feature_names, expected.importances_std, strict=True)), abs=1e-12)


# -- air -----------------------------------------------------------------------------

def test_air_equals_impurity_corrected_with_janitza_pvalues(csv):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                            "--max-depth", "3", "--methods", "mdi,air", "--pvalues",
                            "janitza", "--json"])
    X_train, _, y_train, _ = split_of(csv)
    expected = importance.janitza_pvalues(
        importance.air(tree(), X_train, y_train, random_state=0))
    rows = document["measures"]["air"]
    assert by_feature(rows) == pytest.approx(
        dict(zip(expected.feature_names, expected.importances_mean, strict=True)), abs=1e-12)
    # Shown Holm-adjusted across the features (the default; docs/measures.md,
    # "Multiplicity").
    assert by_feature(rows, "pvalue") == pytest.approx(dict(zip(
        expected.feature_names, importance.adjust_pvalues(expected.pvalues, "holm"),
        strict=True)))
    assert document["pvalues"]["measures"] == ["air"]
    assert document["pvalues"]["adjust"] == "holm"


def test_air_is_skipped_with_a_note_for_a_loaded_model(csv, tmp_path):
    X_train, _, y_train, _ = split_of(csv)
    path = tmp_path / "tree.sapwood"
    sapwood.save(tree().fit(X_train, y_train), path)
    document, err = run_json(["explain", str(csv), "--target", "y", "--model", str(path),
                              "--methods", "mdi,air", "--json"])
    assert list(document["measures"]) == ["mdi"]
    assert ("note: air importance skipped: air importance is computed by refitting with "
            "a shadow copy of each feature") in err


# -- p-values ------------------------------------------------------------------------

def test_janitza_pvalues_in_json_and_table(csv, capsys):
    document, err = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                              "--max-depth", "3", "--methods", "mdi,permutation",
                              "--pvalues", "janitza", "--adjust", "none", "--json"])
    X_train, X_test, y_train, y_test = split_of(csv)
    model = tree().fit(X_train, y_train)
    permutation = importance.permutation_importance(model, X_test, y_test, n_repeats=5,
                                                    scoring=SCORING,
                                                    random_state=0)
    expected = importance.janitza_pvalues(permutation)
    assert by_feature(document["measures"]["permutation"], "pvalue") == pytest.approx(
        dict(zip(expected.feature_names, expected.pvalues, strict=True)))
    # MDI is never negative: no p-values, and a note says why.
    assert set(by_feature(document["measures"]["mdi"], "pvalue").values()) == {None}
    assert document["pvalues"] == {"method": "janitza", "measures": ["permutation"],
                                   "n_permutations": None, "adjust": None}
    assert "janitza p-values not computed for mdi" in err
    assert main(["explain", str(csv), "--target", "y", "--model", "tree", "--max-depth",
                 "3", "--methods", "mdi,permutation", "--pvalues", "janitza", "--adjust",
                 "none", "--details"]) == 0
    out = capsys.readouterr().out
    permutation_table = out[out.index("permutation: drop in held-out score"):
                            out.index("Ranks side by side")]
    mdi_table = out[out.index("mdi: mean decrease"):out.index("permutation: drop")]
    assert "p-value" in permutation_table and "p-value" not in mdi_table
    # A null sample of n values cannot tell a p-value below 1/n from 0.
    n_null = len(expected.extra["null_importances"])
    assert (expected.pvalues == 0).any()
    assert f"< {1 / n_null:.2g}" in permutation_table


def test_altmann_pvalues_equal_altmann_pvalues(csv):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                            "--max-depth", "3", "--methods", "mdi,permutation",
                            "--pvalues", "altmann", "--n-permutations", "9", "--adjust",
                            "none", "--json"])
    X_train, X_test, y_train, y_test = split_of(csv)
    mdi_p = importance.altmann_pvalues(tree(), X_train, y_train, measure="mdi",
                                       n_permutations=9, random_state=0)

    def held_out_permutation(model, X, y):
        return importance.permutation_importance(model, X_test, y_test, n_repeats=5,
                                                    scoring=SCORING,
                                                 random_state=0)

    permutation_p = importance.altmann_pvalues(tree(), X_train, y_train,
                                               measure=held_out_permutation,
                                               n_permutations=9, random_state=0)
    for name, expected in (("mdi", mdi_p), ("permutation", permutation_p)):
        got = by_feature(document["measures"][name], "pvalue")
        assert got == pytest.approx(dict(zip(expected.feature_names, expected.pvalues,
                                             strict=True)))
        assert all(round(p * 10, 9) == round(p * 10) for p in got.values())
    assert document["pvalues"]["n_permutations"] == 9
    # The shown importances stay the CLI's own (normalised MDI), not the tested ones.
    mdi = importance.mdi(tree().fit(X_train, y_train))
    assert by_feature(document["measures"]["mdi"]) == pytest.approx(
        dict(zip(mdi.feature_names, mdi.importances_mean, strict=True)))


def test_altmann_is_not_offered_for_drop_or_a_loaded_model(csv, tmp_path):
    _, err = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                       "--methods", "drop", "--pvalues", "altmann", "--n-permutations",
                       "2", "--json"])
    assert "altmann p-values not offered for drop" in err
    X_train, _, y_train, _ = split_of(csv)
    path = tmp_path / "tree.sapwood"
    sapwood.save(tree().fit(X_train, y_train), path)
    document, err = run_json(["explain", str(csv), "--target", "y", "--model", str(path),
                              "--methods", "mdi", "--pvalues", "altmann", "--json"])
    assert "altmann p-values not computed for mdi: they refit the model" in err
    assert document["pvalues"]["measures"] == []


# -- rank agreement ------------------------------------------------------------------

def test_agreement_numbers_are_scipy_s_and_the_top_k_overlap(csv, capsys, monkeypatch):
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                            "--max-depth", "4", "--methods", "mdi,permutation,drop",
                            "--top-k", "2", "--json"])
    measures = document["measures"]
    pairs = document["agreement"]["pairs"]
    assert document["agreement"]["top_k"] == 2
    assert [(p["measure_a"], p["measure_b"]) for p in pairs] == [
        ("mdi", "permutation"), ("mdi", "drop"), ("permutation", "drop")]
    # Over the features either measure finds above zero on new rows: permutation's 95%
    # interval over the held-out rows (the verdict's); drop on one held-out set has no
    # interval and selects nothing; with neither, all features.
    X_train, X_test, y_train, y_test = split_of(csv)
    model = sapwood.DecisionTreeClassifier(max_depth=4, random_state=0).fit(X_train, y_train)
    permutation = importance.permutation_importance(model, X_test, y_test, n_repeats=5,
                                                    scoring=SCORING,
                                                    random_state=0)
    assert by_feature(measures["permutation"]) == pytest.approx(dict(zip(
        permutation.feature_names, permutation.importances_mean, strict=True)))
    low = dict(zip(permutation.feature_names,
                   verdict_interval("permutation", permutation).low, strict=True))
    for pair in pairs:
        features = [f for f in (row["feature"] for row in measures["mdi"])
                    if "permutation" not in (pair["measure_a"], pair["measure_b"])
                    or low[f] > 0]
        assert pair["features"] == features
        if "permutation" in (pair["measure_a"], pair["measure_b"]):
            assert pair["compared_over"] == (
                "the features above zero by permutation (95% interval over the held-out "
                "rows and the shuffles)")
        else:
            assert pair["compared_over"].startswith("all features")
        if len(features) < 2:
            assert pair["spearman"] is None
            continue
        a = [by_feature(measures[pair["measure_a"]])[f] for f in features]
        b = [by_feature(measures[pair["measure_b"]])[f] for f in features]
        assert pair["spearman"] == pytest.approx(stats.spearmanr(a, b).statistic)
        assert pair["kendall"] == pytest.approx(stats.kendalltau(a, b).statistic)
        top_a = [row["feature"] for row in measures[pair["measure_a"]][:2]]
        top_b = [row["feature"] for row in measures[pair["measure_b"]][:2]]
        assert pair["top_k_overlap"] == len(set(top_a) & set(top_b))
        assert pair["only_a"] == [f for f in top_a if f not in top_b]
    monkeypatch.setenv("COLUMNS", "120")  # the agreement table's every column
    assert main(["explain", str(csv), "--target", "y", "--model", "tree", "--methods",
                 "mdi,permutation", "--top-k", "2", "--details"]) == 0
    out = capsys.readouterr().out
    assert out.index("Ranks side by side") < out.index("Rank agreement between the measures")
    assert "mdi vs permutation" in out and "top-k overlap" in out


def result(name, means, stds=None):
    means = np.asarray(means, dtype=float)
    return importance.ImportanceResult(
        importances_mean=means,
        importances_std=np.zeros_like(means) if stds is None else np.asarray(stds),
        feature_names=["signal", "weak", "id", "noise"], method=name)


def test_a_constant_measure_has_no_rank_correlation():
    results = {"mdi": result("mdi", [0.4, 0.3, 0.2, 0.1]),
               "permutation": result("permutation", [0.0, 0.0, 0.0, 0.0])}
    pair = agreement(results, k=2)[0]
    assert pair["spearman"] is None and pair["kendall"] is None


def test_report_has_agreement_and_pvalue_columns(csv, tmp_path):
    report = tmp_path / "r.html"
    run_json(["explain", str(csv), "--target", "y", "--model", "tree", "--max-depth", "3",
              "--methods", "mdi,permutation", "--pvalues", "janitza", "--report",
              str(report), "--json"])
    text = report.read_text(encoding="utf-8")
    assert "<summary>Rank agreement</summary>" in text
    assert "<td class='text'>mdi vs permutation</td>" in text
    assert "<th class='num'>p-value</th>" in text


# -- demo --data ---------------------------------------------------------------------

def test_demo_loan_is_seed_003s_tree_on_all_rows():
    document, err = run_json(["demo", "--data", "loan", "--json"])
    assert document["data"]["n_rows"] == 7 and document["model"]["n_test"] == 7
    assert by_feature(document["measures"]["mdi"]) == pytest.approx(
        {"car": 0.0, "income": 0.5295, "existloan": 0.4705}, abs=5e-5)
    assert "too few to hold any out" in err
    assert [w["kind"] for w in document["warnings"]] == ["small-data"]


def test_demo_iris_in_process(capsys):
    assert main(["demo", "--data", "iris", "--methods", "mdi", "--details"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Data: iris (seed 002; sapwood.datasets.load_iris): 150 rows, "
                          "4 features, target 'target' (classification, 3 distinct values)")
    assert "Truly informative" not in out


def test_demo_ground_truth_names_the_informative_columns(capsys):
    assert main(["demo", "--n-samples", "300", "--methods", "mdi"]) == 0
    out = capsys.readouterr().out
    assert "Truly informative: inf_1, inf_2, inf_3, inf_4, inf_5\n" in out
    assert "Pure noise: noise_binary, noise_lowcard, noise_id\n" in out


# -- the registry ----------------------------------------------------------------------

def test_every_registered_measure_exists_and_is_in_the_help(capsys):
    assert main(["explain", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    for name, measure in _measures.MEASURES.items():
        assert _measures.is_available(name), measure.function
        assert " ".join(f"{name}: {measure.description}".split()) in help_text
    assert "Default measures: mdi,permutation." in help_text
    assert "ordinal codes" in help_text and "janitza:" in help_text


def test_one_registry_entry_adds_a_measure(csv, monkeypatch):
    def reversed_mdi(model, inputs):
        plain = importance.mdi(model)
        return importance.ImportanceResult(
            importances_mean=-plain.importances_mean, importances_std=plain.importances_std,
            feature_names=plain.feature_names, method="reversed")

    entry = _measures.Measure("reversed", "mdi", "MDI upside down", reversed_mdi,
                              null="symmetric")
    monkeypatch.setitem(_measures.MEASURES, "reversed", entry)
    document, _ = run_json(["explain", str(csv), "--target", "y", "--model", "tree",
                            "--methods", "mdi,reversed", "--pvalues", "janitza", "--json"])
    assert list(document["measures"]) == ["mdi", "reversed"]
    pair = document["agreement"]["pairs"][0]
    assert pair["measure_b"] == "reversed" and pair["spearman"] < 0
    assert document["pvalues"]["measures"] == ["reversed"]


def test_n_jobs_reaches_the_fits_and_measures_and_leaves_the_numbers_alone(csv,
                                                                           monkeypatch):
    seen = []

    def threads_seen(model, inputs):
        seen.append(joblib.effective_n_jobs(None))  # None: what the fits and measures get
        return importance.mdi(model)

    entry = _measures.Measure("threads", "mdi", "MDI, noting joblib's n_jobs", threads_seen)
    monkeypatch.setitem(_measures.MEASURES, "threads", entry)
    documents = {}
    for n_jobs in ("1", "2", "-1"):
        documents[n_jobs], _ = run_json([
            "explain", str(csv), "--target", "y", "--model", "rf",
            "--methods", "threads,permutation,oob", "--n-jobs", n_jobs, "--json"])
    assert seen == [1, 2, joblib.cpu_count()]
    for n_jobs in ("2", "-1"):
        assert documents[n_jobs]["measures"] == documents["1"]["measures"]


# -- bad values ------------------------------------------------------------------------


@pytest.mark.parametrize("options, phrases", [
    (["--pvalues", "exact"], ["--pvalues", "invalid choice: 'exact'", "'janitza'",
                              "'altmann'"]),
    (["--n-permutations", "0"], ["--n-permutations", "positive integer", "'0'"]),
    (["--pvalues", "janitza", "--n-permutations", "5"],
     ["--n-permutations 5", "--pvalues altmann", "got --pvalues janitza"]),
    (["--cv", "1"], ["--cv", "at least 2", "'1'"]),
    (["--top-k", "0"], ["--top-k", "positive integer", "'0'"]),
    (["--top-k", "5"], ["--top-k 5", "less than the number of features (5"]),
    (["--methods", "mdi,conditional2"], ["--methods", "'conditional2'", "choose from: mdi, "
                                         "gain, friedman, permutation, drop"]),
    (["--methods", ","], ["--methods ','", "choose from: mdi"]),
    (["--n-jobs", "0"], ["--n-jobs", "-1 for every core", "'0'"]),
    (["--n-jobs", "two"], ["--n-jobs", "-1 for every core", "'two'"]),
])
def test_bad_measure_options(capsys, csv, options, phrases):
    run_bad(capsys, ["explain", str(csv), "--target", "y", "--model", "tree", *options],
        *phrases)


@pytest.mark.parametrize("options, phrases", [
    (["--data", "titanic"], ["--data", "invalid choice: 'titanic'", "'ground-truth'",
                             "'iris'", "'loan'"]),
    (["--data", "iris", "--n-samples", "50"], ["--n-samples 50", "--data ground-truth",
                                               "got --data iris"]),
])
def test_bad_demo_options(capsys, options, phrases):
    run_bad(capsys, ["demo", *options], *phrases)


def test_subprocess_new_options(csv):
    good = subprocess.run([sys.executable, "-m", "sapwood.cli", "demo", "--data", "loan",
                           "--methods", "mdi,permutation,drop", "--pvalues", "janitza",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stderr
    document = json.loads(good.stdout)
    assert list(document["measures"]) == ["mdi", "permutation", "drop"]
    assert document["agreement"]["top_k"] == 2
    wrong = subprocess.run([sys.executable, "-m", "sapwood.cli", "explain", str(csv),
                            "--target", "y", "--pvalues", "bonferroni"],
                           capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.splitlines() == [
        "sapwood: error: sapwood explain: argument --pvalues: invalid choice: 'bonferroni' "
        "(choose from 'janitza', 'altmann')"]

