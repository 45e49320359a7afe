"""sapwood.explain: the command line's conclusions from one library call."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.cli import main
from sapwood.datasets import make_ground_truth


@pytest.fixture(scope="module")
def table():
    X, y, _ = make_ground_truth(600, task="classification", random_state=3)
    return X, y.rename("y")


@pytest.fixture(scope="module")
def report(table):
    X, y = table
    return sapwood.explain(X, y, methods=["mdi", "permutation"], random_state=1)


def test_explain_returns_a_report_with_every_conclusion(report, table):
    X, _ = table
    assert isinstance(report, sapwood.Report)
    assert list(report.results) == ["mdi", "permutation"]
    assert report.verdict.measure == "permutation"
    # Every feature is placed, with its interval over new rows.
    placed = {entry["feature"]: entry for entry in report.verdict.features}
    assert set(placed) == set(X.columns)
    assert {entry["status"] for entry in placed.values()} <= {"relies_on", "uncertain",
                                                               "does_not"}
    for entry in placed.values():
        assert entry["low"] <= entry["importance"] <= entry["high"]
    assert "inf_1" in report.verdict.relies_on
    assert report.agreement and report.agreement[0]["measure_a"] == "mdi"
    assert {f.kind for f in report.warnings} >= {"identifier"}
    # Where they must not fire: noise_id, a key the model does not rely on for held-out
    # rows, is no leak of the rows' order; no noise feature's interval lies below zero.
    (key,) = [f for f in report.warnings if f.kind == "identifier"]
    assert not key.details.get("predicts_held_out")
    assert not any(line.startswith("- Better shuffled") for line in report.verdict.lines)
    # A notebook's repr is a line, not the dataclass's every field (the encoded table).
    shown = repr(report)
    assert shown.startswith("Report(target='y', classification, model=") and len(shown) < 400
    assert f"relies_on={report.verdict.relies_on[:8]!r}" in shown


def test_the_target_by_its_column_name(report, table):
    X, y = table
    named = sapwood.explain(X.assign(y=y), "y", methods=["mdi", "permutation"],
                            random_state=1)
    assert named.to_json() == report.to_json()
    with pytest.raises(ValueError, match=r"y='Y': not a column of X \(did you mean 'y'\?\)"):
        sapwood.explain(X.assign(y=y), "Y")


def test_what_a_measure_warns_of_is_a_note(table):
    # CPI's Gaussian knockoffs warn about discrete columns (noise_binary, noise_lowcard).
    X, y = table
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = sapwood.explain(X, y, methods=["cpi"], random_state=1)
    assert not [w for w in caught if issubclass(w.category, UserWarning)]
    notes = [note for note in report.notes if note.startswith("cpi: Gaussian knockoffs")]
    assert len(notes) == 1 and "noise_binary" in notes[0]


def test_the_library_and_the_command_give_the_same_json(table, tmp_path, capsys):
    X, y = table
    path = tmp_path / "data.csv"
    X.assign(y=y).to_csv(path, index=False)
    assert main(["explain", str(path), "--target", "y", "--methods", "mdi,permutation",
                 "--seed", "4", "--json", "--n-jobs", "1"]) == 0
    from_cli = json.loads(capsys.readouterr().out)
    table_again = pd.read_csv(path)
    report = sapwood.explain(table_again.drop(columns="y"), table_again["y"],
                             methods="mdi,permutation", random_state=4, source=str(path))
    assert json.loads(report.to_json()) == from_cli


def test_to_frame_has_a_row_per_feature_in_the_verdict_order(report, table):
    X, _ = table
    frame = report.to_frame()
    assert list(frame.index) == report.verdict.order
    assert set(frame.index) == set(X.columns)
    assert {"status", "low", "high", "group", "mdi", "mdi_rank", "permutation_rank_low"} <= \
        set(frame.columns)
    assert frame["permutation"].is_monotonic_decreasing


def test_plot_returns_axes_with_intervals_respecting_zero(table):
    import matplotlib

    matplotlib.use("Agg")
    X, y = table
    report = sapwood.explain(X, y, methods=["shap", "permutation"], random_state=0)
    ax = report.plot()
    assert ax.get_yticklabels()
    from sapwood.report._pictures import plot_importances

    ax = plot_importances(report.results["shap"], "shap")
    # mean |SHAP| cannot be negative: no error bar reaches below zero.
    for collection in ax.collections:
        for segment in collection.get_segments():
            assert np.min(segment[:, 0]) >= 0


def test_notebook_display_puts_the_verdict_card_first(report):
    html = report._repr_html_()
    card, picture = html.index("class='card'"), html.index("<svg")
    assert card < picture < html.index("<details")
    assert "Verdict (permutation importance" in html


def _screen_lines(text, width=80):
    """The lines a terminal ``width`` wide shows (a longer line wraps)."""
    return [line[i:i + width] for line in text.splitlines()
            for i in range(0, max(len(line), 1), width)]


def test_one_screen_at_80_columns(report):
    text = report.to_text(width=80)
    lines = _screen_lines(text)
    assert len(lines) <= 40
    # Only the data and model lines are longer (one line each: grep-able).
    assert all(len(line) <= 80 for line in text.splitlines()
               if not line.startswith(("Data:", "Model:")))
    assert any(line.startswith("Verdict") for line in lines[:12])
    # The agreement says over which features it holds, and one pair's exact overlap.
    compared = report.agreement[0]["features"]
    overlap = report.agreement[0]["top_k_overlap"]
    flat = " ".join(text.split())
    assert (f"order no pair of features among the {len(compared)} found above zero "
            f"oppositely beyond their uncertainty; their top {report.top_k} share {overlap} "
            f"of {report.top_k}.") in flat
    details = report.to_text(width=80, details=True)
    assert len(details.splitlines()) > len(lines)


def test_a_wide_table_stays_one_screen():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 200)), columns=[f"f{j}" for j in range(200)])
    y = (X["f0"] + X["f1"] + rng.normal(scale=0.5, size=300) > 0).astype(int)
    report = sapwood.explain(X, y, model=sapwood.RandomForestClassifier(n_estimators=20),
                             methods="permutation")
    lines = _screen_lines(report.to_text(width=80))
    assert len(lines) <= 40
    assert any("more features" in line for line in lines)
    # A feature relied on through its group is shown however low it ranks alone.
    last = dict(report.verdict.features[-1], status="relies_on", through_group=True)
    verdict = dataclasses.replace(report.verdict,
                                  features=[*report.verdict.features[:-1], last])
    text = dataclasses.replace(report, verdict=verdict).to_text(width=80)
    row = next(line for line in text.splitlines() if line.startswith(last["feature"] + " "))
    assert "via group" in row
    counts = next(line for line in text.splitlines() if "more features" in line)
    assert "relies on" not in counts and "via group" not in counts


def test_a_warning_line_names_fewer_features_before_its_numbers_are_cut(report):
    from sapwood.diagnostics import Finding
    from sapwood.report._terminal import warning_summary

    group = Finding("correlated", tuple(f"feature_{j}" for j in range(6)), "whole text",
                    {"joint_importance": 1.7, "joint_ci_low": -0.14, "joint_ci_high": 3.6})
    assert warning_summary(group) == ("feature_0, feature_1, feature_2, feature_3 and 2 "
                                      "more: jointly -0.14 to 3.6")
    assert warning_summary(group, 1) == "feature_0 and 5 more: jointly -0.14 to 3.6"
    for width, shown in ((70, "feature_0 and 5 more"),
                         (80, "feature_0, feature_1 and 4 more"),
                         (90, "feature_0, feature_1, feature_2 and 3 more"),
                         (100, "feature_0, feature_1, feature_2, feature_3 and 2 more")):
        text = dataclasses.replace(report, warnings=[group]).to_text(width=width)
        line = next(line for line in text.splitlines()
                    if line.startswith("Warning (correlated)"))
        assert line == f"Warning (correlated): {shown}: jointly -0.14 to 3.6"


def test_the_verdict_says_which_intervals_lie_below_zero(report, monkeypatch):
    # A feature whose whole interval over new rows is below zero: the model does better
    # with it shuffled; said apart from the uncertain ones, and so in the table.
    from sapwood.report import _verdict

    result = report.results["permutation"]
    real = _verdict.verdict_interval(report.verdict.measure, result)
    low, high = real.low.copy(), real.high.copy()
    j = result.feature_names.index("noise_binary")
    low[j], high[j] = -0.02, -0.01
    monkeypatch.setattr(_verdict, "verdict_interval",
                        lambda name, result: dataclasses.replace(real, low=low, high=high))
    verdict = _verdict.verdict(report, report.warnings)
    line = next(line for line in verdict.lines if line.startswith("- Better shuffled:"))
    assert line.startswith("- Better shuffled: noise_binary (the whole interval below zero")
    assert not any("noise_binary" in line for line in verdict.lines
                   if line.startswith("- Uncertain"))
    assert "noise_binary" in verdict.uncertain  # its status stays uncertain
    text = dataclasses.replace(report, verdict=verdict).to_text(width=100)
    row = next(line for line in text.splitlines() if line.startswith("noise_binary "))
    assert "below zero" in row


def test_a_key_that_predicts_held_out_rows_is_a_leak_of_the_rows_order():
    # A file sorted by its target: the row number predicts held-out rows too (their
    # neighbours are in the training rows), which memorising rows cannot explain.
    rng = np.random.default_rng(4)
    n = 600
    y = np.sort(rng.normal(size=n))
    X = pd.DataFrame({"row": np.arange(1, n + 1), "signal": y + rng.normal(size=n),
                      "noise": rng.normal(size=n)})
    report = sapwood.explain(X, pd.Series(y, name="y"), random_state=0)
    (key,) = [w for w in report.warnings if w.kind == "identifier"]
    assert key.details["predicts_held_out"]
    assert "the rows' order carries the target" in key.message
    assert "row: key predicting held-out rows: row order leaks" in report.to_text()
    relies = next(line for line in report.verdict.lines if "clearly relies on" in line)
    assert "row (a key: the rows' order)" in relies


def test_a_fitted_model_is_judged_on_the_rows_given(table):
    from sklearn.ensemble import RandomForestClassifier

    X, y = table
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(X[:400], y[:400])
    report = sapwood.explain(X[400:], y[400:], model=model,
                             methods=["mdi", "permutation", "oob"])
    assert report.n_test == 200 and not report.fitted_here
    assert "oob" not in report.results
    assert any("oob reads the rows the model was trained on" in note
               for note in report.notes)
    given = sapwood.explain(X[400:], y[400:], model=model, methods=["permutation", "oob"],
                            X_train=X[:400], y_train=y[:400])
    assert "oob" in given.results


def test_a_tree_ensemble_and_an_unfitted_estimator(table):
    X, y = table
    fitted = sapwood.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    report = sapwood.explain(X, y, model=fitted.to_ensemble(), methods="permutation")
    assert report.verdict.measure == "permutation"
    unfitted = sapwood.ExtraTreesClassifier(n_estimators=10)
    report = sapwood.explain(X, y, model=unfitted, methods="permutation")
    assert report.fitted_here and report.n_train == 450
    assert not hasattr(unfitted, "estimators_")  # a clone was fitted, not the caller's


def test_long_names_are_aliases(table):
    X, y = table
    report = sapwood.explain(X, y, methods=["tree_shap", "drop_column"],
                             model=sapwood.DecisionTreeClassifier(max_depth=4))
    assert list(report.results) == ["shap", "drop"]


@pytest.mark.parametrize("kwargs, words", [
    ({"methods": ["nope"]}, "unknown measure 'nope'"),
    ({"model": "forest"}, "model='forest'"),
    ({"test_size": 1.5}, "test_size must be a number in [0, 1)"),
    ({"pvalues": "exact"}, "pvalues must be"),
    ({"X_train": np.zeros((3, 9))}, "X_train and y_train go together"),
])
def test_bad_arguments_name_the_parameter(table, kwargs, words):
    X, y = table
    with pytest.raises(ValueError) as caught:
        sapwood.explain(X, y, **kwargs)
    assert words in str(caught.value)


def test_a_model_without_skill_relies_on_nothing():
    # The target is noise: the forest cannot beat always predicting the mean.
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(600, 4)), columns=list("abcd"))
    y = pd.Series(rng.normal(size=600), name="y")
    report = sapwood.explain(X, y, methods="permutation")
    assert report.baseline is not None and report.baseline.beaten is False
    assert report.warnings[0].kind == "baseline"
    assert report.verdict.relies_on == []
    # Issue 51: "no skill" only where the interval shows it; here the gain's interval
    # includes zero, so the model is not shown to be better, which is all it says.
    lines = " ".join(report.verdict.lines)
    assert report.baseline.low < 0 < report.baseline.high
    assert "not shown to be better than a constant model" in lines
    assert "no skill" not in lines and "no skill" not in report.warnings[0].message
    assert json.loads(report.to_json())["model"]["baseline"]["beaten"] is False


@pytest.mark.parametrize("scoring", [None, "accuracy"])
def test_a_rare_event_score_is_shown_beside_the_constant_s(scoring):
    rng = np.random.default_rng(6)
    X = pd.DataFrame(rng.normal(size=(2000, 3)), columns=list("abc"))
    y = pd.Series((rng.random(2000) < 0.03).astype(int), name="y")  # no signal
    report = sapwood.explain(X, y, methods="permutation", scoring=scoring)
    held_out = y.loc[report.held_out_index]
    if scoring is None:  # the Brier score, the accuracy beside it
        share = float((y.drop(report.held_out_index) == 1).mean())
        constant = np.where(held_out == 1, (1 - share) ** 2, share ** 2)
        assert report.score_name == "neg_brier_score"
        assert report.baseline.score == pytest.approx(-constant.mean())
        assert report.accuracy == pytest.approx(
            float((report.model.predict(report.data.X.loc[report.held_out_index])
                   == held_out).mean()))
        assert "Brier score " in report.to_text() and ", accuracy 0.9" in report.to_text()
    else:
        assert report.baseline.score == pytest.approx(float((held_out == 0).mean()))
        assert report.baseline.score > 0.95 and report.accuracy is None
    assert "(a constant model: " in report.to_text().replace("lower is better; ", "(")
    assert "baseline" in [f.kind for f in report.warnings]


def test_a_model_with_skill_beats_the_constant(report):
    assert report.baseline.beaten is True
    assert "baseline" not in [f.kind for f in report.warnings]


def test_rows_asked_for_are_the_rows_given_when_targets_are_missing(table):
    X, y = table
    X, y = X.iloc[:200].copy(), y.iloc[:200].astype(float)
    y.iloc[2] = np.nan
    report = sapwood.explain(X, y, rows=[5], methods="permutation",
                             model=sapwood.DecisionTreeClassifier(max_depth=3))
    [explained] = report.rows
    assert explained.position == 5
    shown = explained.result.extra["data"].iloc[0]
    assert shown.to_dict() == pytest.approx(X.iloc[5].to_dict())
    with pytest.raises(ValueError, match="row 2: its target is missing"):
        sapwood.explain(X, y, rows=[2], methods="permutation")


@pytest.mark.parametrize("scoring", ["roc_auc", "neg_log_loss", "balanced_accuracy"])
def test_any_scikit_learn_scorer(table, scoring):
    from sklearn.metrics import get_scorer

    X, y = table
    report = sapwood.explain(X, y, methods="permutation,drop", scoring=scoring,
                             model=sapwood.DecisionTreeClassifier(max_depth=4))
    assert report.score_name == scoring
    test = report.data.X.loc[report.held_out_index]
    truth = report.data.y.loc[report.held_out_index]
    assert report.score == pytest.approx(get_scorer(scoring)(report.model, test, truth))
    expected = sapwood.importance.permutation_importance(
        report.model, test, truth, scoring=scoring, n_repeats=5, random_state=0)
    assert report.results["permutation"].importances_mean == pytest.approx(
        expected.importances_mean)
    assert report.baseline is not None
    # The Model line names the score in words.
    words = {"roc_auc": "ROC AUC", "neg_log_loss": "log loss",
             "balanced_accuracy": "balanced accuracy"}[scoring]
    model_line = next(line for line in report.to_text(width=200).splitlines()
                      if line.startswith("Model:"))
    assert f"held-out {words} {abs(report.score):.3f} on" in model_line
    if scoring == "roc_auc":
        assert report.baseline.score == 0.5
    if scoring == "neg_log_loss":  # the constant's log loss: the class shares' entropy
        train = report.data.y.drop(report.held_out_index)
        shares = train.value_counts(normalize=True)
        assert report.baseline.score == pytest.approx(
            float(np.log(shares.loc[truth].to_numpy()).mean()))
        assert report.baseline.beaten is not None  # a per-row test was made


def test_an_unknown_scorer_is_named():
    X = pd.DataFrame({"a": range(40)})
    with pytest.raises(ValueError, match="did you mean roc_auc"):
        sapwood.explain(X, [0, 1] * 20, scoring="roc_aux")


def test_a_scorer_for_the_other_task_is_named_before_the_fit():
    X = pd.DataFrame({"a": np.linspace(0, 1, 40)})
    with pytest.raises(ValueError, match="scoring 'accuracy' scores classes, and the "
                                         "target 'y' is a regression target"):
        sapwood.explain(X, pd.Series(np.linspace(0, 3, 40) ** 2, name="y"),
                        scoring="accuracy")
    with pytest.raises(ValueError, match="scoring 'neg_mean_absolute_error' scores numbers, "
                                         "and the target 'y' holds classes"):
        sapwood.explain(X, pd.Series([0, 1] * 20, name="y"),
                        scoring="neg_mean_absolute_error")


def _rare_event():
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"balance": rng.normal(size=4000), "noise": rng.normal(size=4000)})
    y = pd.Series((X["balance"] + rng.normal(scale=0.4, size=4000) > 2.3).astype(int),
                  name="y")
    return X, y


def test_a_rare_event_model_scored_by_accuracy_is_judged_by_roc_auc():
    # 3% positives: accuracy barely beats always "no", ROC AUC shows the skill.
    report = sapwood.explain(*_rare_event(), methods="permutation", scoring="accuracy")
    assert report.baseline.test == "roc_auc" and report.baseline.beaten is True
    assert "balance" in report.verdict.relies_on


def test_a_rare_event_is_seen_by_the_default_brier_score():
    # The Brier score moves when a feature shifts the probabilities without crossing
    # 0.5: the per-row test finds the skill, and the verdict the feature.
    report = sapwood.explain(*_rare_event(), methods="permutation")
    assert report.score_name == "neg_brier_score"
    assert report.baseline.test == "score" and report.baseline.beaten is True
    assert report.verdict.relies_on == ["balance"]
    standing = {f["feature"]: f["status"] for f in report.verdict.to_dict()["features"]}
    assert standing["noise"] != "relies_on"


def test_delong_is_the_auc_and_its_variance():
    from sklearn.metrics import roc_auc_score

    from sapwood.report._baseline import _delong

    rng = np.random.default_rng(8)
    positives, negatives = rng.normal(1, 1, 60), rng.normal(0, 1, 90).round(1)
    auc, variance = _delong(positives, negatives)
    truth = np.r_[np.ones(60), np.zeros(90)]
    assert auc == pytest.approx(roc_auc_score(truth, np.r_[positives, negatives]))
    # The variance against the spread of the AUC over many such samples.
    draws = [roc_auc_score(truth, np.r_[rng.normal(1, 1, 60), rng.normal(0, 1, 90)])
             for _ in range(400)]
    assert variance == pytest.approx(np.var(draws), rel=0.35)


def test_one_name_per_measure_everywhere(table):
    # The command line's names are the names compare and the selectors take; the long
    # names stay as aliases with their own settings.
    from sapwood.importance import MEASURES, compare

    X, y = table
    forest = sapwood.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    frame = compare(forest, X, y, methods=("shap", "tree_shap", "oob", "oob_permutation"),
                    random_state=0)
    assert {"shap", "tree_shap", "oob", "oob_permutation"} <= set(frame["method"]) | set(
        frame.columns)
    for name, measure in MEASURES.items():
        assert name in measure.names


def test_effects_reach_the_json_the_html_and_the_screen(table, tmp_path):
    X, y = table
    report = sapwood.explain(X.iloc[:300], y.iloc[:300], methods="permutation",
                             model=sapwood.RandomForestClassifier(n_estimators=20),
                             effects=True)
    document = json.loads(report.to_json())
    assert document["effects"] and document["interactions"]
    assert [e["feature"] for e in document["effects"]] == [
        f for f in report.verdict.order
        if f in {e["feature"] for e in document["effects"]}]
    strongest = document["interactions"][0]
    assert set(strongest) >= {"features", "H2", "H"}
    assert "Strongest interactions" in report.to_text(width=100)
    page = report.to_html(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<summary>Effects and interactions</summary>" in page
