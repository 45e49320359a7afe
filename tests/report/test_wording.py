"""Honest wording (issue 51, item 8): "no skill" only when the interval shows the model
no better than a constant, else "not shown to be better" with the interval; a feature's
stated reason matches its interval; the accuracy beside the majority-class rate."""

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.learners import RandomForestClassifier
from sapwood.report._baseline import Baseline, baseline_warning
from sapwood.report._terminal import print_report, score_line, text_console, warning_summary


@pytest.mark.parametrize(("low", "high", "words", "absent"), [
    (-0.066, 0.070, "not shown to be better than a constant model", "no skill"),
    (-0.2, -0.01, "no better than a constant model", "not shown"),
])
def test_the_baseline_warning_says_what_its_interval_says(low, high, words, absent):
    found = Baseline(-0.591, low, high)
    finding = baseline_warning(found, "neg_brier_score", -0.531, 200)
    assert words in finding.message and absent not in finding.message
    assert f"{low:.3g} to {high:.3g}" in finding.message
    summary = warning_summary(finding)
    assert words in summary and absent not in summary
    assert f"{low:.2g} to {high:.2g}" in summary
    assert finding.details["no_skill"] is (high <= 0)


def test_a_model_that_beats_the_constant_gets_no_warning():
    assert baseline_warning(Baseline(0.5, 0.01, 0.2), "accuracy", 0.7, 200) is None


def test_a_model_shown_worse_than_a_constant_has_no_skill():
    # A deep tree on a noise target: its squared error is far above the mean's.
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=list("abc"))
    y = pd.Series(rng.normal(size=400), name="y")
    report = sapwood.explain(X, y, model="tree", methods="permutation")
    assert report.baseline.high < 0 and report.baseline.no_skill
    assert "nothing: the model has no skill to explain" in report.verdict.lines[1]
    assert "is at or below zero" in report.verdict.lines[1]


def test_features_above_zero_without_skill_are_not_called_uncertain_about_zero():
    # A weak signal beside noise: the forest is not shown to beat a constant (Brier
    # score), while the signal's own interval lies above zero. Its stated reason is
    # that, not "the interval includes zero".
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(800, 6)), columns=["strong", "b", "c", "d", "e", "f"])
    y = pd.Series((0.5 * X["strong"] + rng.logistic(size=800) > 0).astype(int), name="y")
    report = sapwood.explain(X, y, model=RandomForestClassifier(n_estimators=30,
                                                                random_state=0),
                             methods="permutation", random_state=1)
    assert report.baseline.low < 0 < report.baseline.high
    placed = {entry["feature"]: entry for entry in report.verdict.features}
    assert placed["strong"]["low"] > 0 and placed["strong"]["status"] == "uncertain"
    lines = report.verdict.lines
    assert "nothing yet: the model is not shown to be better" in lines[1]
    assert any(line.startswith("- Above zero, not decided: strong (") for line in lines)
    uncertain = next(line for line in lines if line.startswith("- Uncertain"))
    assert "strong" not in uncertain
    # On one screen the groups and their warnings wait for --details; none here, and
    # the warning line is whole.
    console = text_console(80)
    print_report(report, console)
    text = console.export_text()
    assert "Warning (baseline): not shown to be better than a constant model" in text
    assert "…" not in text


def test_the_accuracy_is_shown_beside_the_majority_class_rate():
    rng = np.random.default_rng(6)
    X = pd.DataFrame(rng.normal(size=(800, 3)), columns=list("abc"))
    y = pd.Series(((X["a"] > 1.2) | (rng.random(800) < 0.03)).astype(int), name="y")
    report = sapwood.explain(X, y, methods="permutation")
    majority = float((y.loc[report.held_out_index] == 0).mean())
    assert report.baseline.accuracy == pytest.approx(majority)
    line = score_line(report)
    assert f"accuracy {report.accuracy:.3f} (a constant model: {majority:.3f})" in line


def test_without_skill_the_groups_wait_for_details():
    # Issue 51: a no-skill model printed every entangled group and its warning.
    rng = np.random.default_rng(5)
    base = rng.normal(size=(400, 3))
    X = pd.DataFrame(np.hstack([base, base + rng.normal(scale=0.1, size=base.shape)]),
                     columns=["a", "b", "c", "a2", "b2", "c2"])
    y = pd.Series(rng.normal(size=400), name="y")
    report = sapwood.explain(X, y, model="tree", methods="permutation")
    assert report.warnings[0].kind == "baseline" and len(report.verdict.groups) == 3
    short, full = text_console(80), text_console(80)
    print_report(report, short)
    print_report(report, full, details=True)
    short, full = short.export_text(), full.export_text()
    assert "Warning (correlated)" not in short and "- Entangled: a, a2" not in short
    assert "- Entangled: 3 groups of strongly associated features" in short
    assert "--details" in short
    assert "Warning (correlated)" in full and "- Entangled: a, a2" in full


def test_the_agreement_line_with_no_pair_to_order():
    # Grunfeld by firm: no feature above zero, and the line read "among the 0 found".
    from types import SimpleNamespace

    from sapwood.report._terminal import agreement_sentence

    run = SimpleNamespace(top_k=2, results={"mdi": None, "permutation": None},
                          agreement=[{"agree": True, "top_k_overlap": 1, "features": []}])
    text = agreement_sentence(run)
    assert "among the 0" not in text
    assert text == ("Agreement: fewer than two features are found above zero, so mdi and "
                    "permutation have no order to compare; their top 2 share 1 of 2.")
