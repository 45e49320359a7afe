"""The report's effects and interactions (issue 43, item 6): PD/ICE and ALE of the top
features, the strongest interactions by H, and the note where a correlated feature's
PDP extrapolates."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.effects import ale, partial_dependence
from sapwood.report._effects import _curves, _edges, effects, effects_html, effects_lines


def _table(n=1000, seed=0):
    """x1 * x2 interact; x4 is x3 plus a little noise (a correlated pair) and the
    target rises with x3 and, six times as steeply, with the small gap x4 - x3: on the
    data the model learns a steep local effect of x4 (and a falling one of x3, x4 held)
    that its predictions where x3 and x4 disagree (never seen) do not continue, so the
    PD of either, which averages over those, differs from its ALE. x5 is independent and
    additive; x6 is noise; ``colour`` a text column with an effect."""
    rng = np.random.default_rng(seed)
    x1, x2, x3, x5, x6 = rng.uniform(-1, 1, size=(5, n))
    x4 = x3 + 0.1 * rng.normal(size=n)
    colour = rng.choice(["blue", "green", "red"], size=n)
    y = (2 * x1 * x2 + 2 * x3 + 6 * (x4 - x3) + x5 + 0.6 * (colour == "red")
         + 0.1 * rng.normal(size=n))
    X = pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "x4": x4, "x5": x5, "x6": x6,
                      "colour": colour})
    return X, pd.Series(y, name="y")


@pytest.fixture(scope="module")
def report():
    X, y = _table()
    return sapwood.explain(X, y, methods=["permutation"], random_state=0)


@pytest.fixture(scope="module")
def computed(report):
    return effects(report, n_features=len(report.data.X.columns))


def _by_feature(computed):
    return {entry["feature"]: entry for entry in computed["effects"]}


def test_the_strongest_interaction_is_the_planted_one(computed):
    pairs = computed["interactions"]
    assert 1 <= len(pairs) <= 5
    assert set(pairs[0]["features"]) == {"x1", "x2"}
    assert pairs[0]["H"] > 0.7
    assert [p["H"] for p in pairs] == sorted((p["H"] for p in pairs), reverse=True)
    for pair in pairs:
        assert pair["H"] == pytest.approx(np.sqrt(pair["H2"]))
        assert pair["H_low"] <= pair["H_high"]
        assert pair["shap"] is not None and pair["shap"] >= 0
        assert pair["shap_skipped"] is None
        assert pair["rows"] <= 300
    # mean |SHAP interaction| is in the output's units (the steep x3, x4 pair can lead
    # it: sapwood.effects.shap_interaction_importance says why); it is there for each.


def test_the_note_fires_for_the_correlated_feature_and_not_the_additive_one(report,
                                                                            computed):
    correlated = {f for w in report.warnings if w.kind == "correlated" for f in w.features}
    assert {"x3", "x4"} <= correlated
    entries = _by_feature(computed)
    noted = [name for name, entry in entries.items() if entry["note"]]
    assert "x3" in noted and set(noted) <= {"x3", "x4"}
    for name in noted:
        entry = entries[name]
        assert entry["difference"]["beyond_intervals"]
        assert "the PDP extrapolates there" in entry["note"]
        assert entry["correlated_with"]
    additive = entries["x5"]
    assert additive["correlated_with"] == []
    assert not additive["difference"]["beyond_intervals"]
    assert additive["note"] is None


def test_curves_are_on_the_held_out_rows_and_equal_the_effects_package(report, computed):
    entries = _by_feature(computed)
    order = [f for f in report.verdict.order
             if {e["feature"]: e["status"] for e in report.verdict.features}[f] != "does_not"]
    assert list(entries) == order
    held_out = report.data.X.loc[report.held_out_index]
    entry = entries["x5"]
    assert entry["rows"] == len(held_out) == report.n_test
    expected = ale(report.model, held_out, "x5", include_CI=True)
    np.testing.assert_allclose(entry["ale"]["eff"], expected["eff"])
    np.testing.assert_allclose(entry["ale"]["edges"], expected.index.to_numpy())
    pd_result = partial_dependence(report.model, held_out, "x5", kind="average",
                                   method="brute",
                                   custom_values={"x5": entry["ale"]["edges"]})
    np.testing.assert_allclose(entry["pd"]["average"], pd_result["average"][0])
    assert len(entry["pd"]["ice"]) == 50
    # The difference's ALE, rebuilt from the ICE matrix at the edges, is the package's.
    x = held_out["x5"].to_numpy()
    edges = _edges(x, 20)
    ice = partial_dependence(report.model, held_out, "x5", kind="individual",
                             method="brute", custom_values={"x5": edges})["individual"][0]
    pd_curve, ale_curve = _curves(ice, x, edges, np.ones((1, len(x))))
    np.testing.assert_allclose(ale_curve[0], expected["eff"], atol=1e-12)
    # PD centred as the ALE is: the same centring, so only its level moved.
    np.testing.assert_allclose(np.diff(pd_curve[0]), np.diff(pd_result["average"][0]),
                               atol=1e-12)


def test_a_text_column_gets_its_curves_by_category(computed):
    entry = _by_feature(computed).get("colour")
    if entry is None:
        pytest.skip("colour was placed as not relied on")
    assert entry["categorical"]
    assert entry["pd"]["grid"] == ["blue", "green", "red"]
    average = entry["pd"]["average"]
    assert average[2] == max(average) and average[2] - average[0] > 0.1
    # The categorical ALE: by label, in the order found by similarity.
    part = entry["ale"]
    assert sorted(part["categories"]) == ["blue", "green", "red"] and "edges" not in part
    eff = dict(zip(part["categories"], part["eff"], strict=True))
    assert eff["red"] == max(eff.values())
    assert entry["difference"] is None and entry["note"] is None


def test_the_result_is_json_as_it_is(computed):
    assert set(computed) == {"effects", "interactions"}
    text = json.dumps(computed, allow_nan=False)
    assert json.loads(text) == computed


def test_the_html_has_the_pictures_table_and_note(report, computed):
    page = effects_html(report, computed)
    assert page.count("<img") == 2
    assert page.count("data:image/png;base64,") == 2
    assert "<table>" in page and "x1 × x2" in page
    assert "the PDP extrapolates there" in page


def test_terminal_lines_say_each_effect_and_name_the_strongest_pair(computed):
    lines = effects_lines(computed)
    assert lines[0].startswith("How the top features move the prediction (ALE")
    assert "held-out rows" in lines[0]
    said = {line.split(":")[0].strip(): line for line in lines[1:len(computed["effects"]) + 1]}
    assert set(said) == set(_by_feature(computed))
    # y = 2 x1 x2 - 4 x3 + 6 x4 + x5 + 0.6 [red]: x5 and x4 rise, x3 falls.
    assert said["x5"].startswith("  x5: rises by") and "from -" in said["x5"]
    assert "x4: rises by" in said["x4"] and "x3: falls by" in said["x3"]
    assert "colour: highest for red" in said["colour"]
    strongest = lines.index(next(line for line in lines if line.startswith("Strongest")))
    assert "x1 × x2: H" in lines[strongest + 1]
    assert any("PDP extrapolates" in line for line in lines)
    assert effects_lines({"effects": [], "interactions": []}) == []


@pytest.mark.parametrize("effect, words", [
    ([0, 1, 2, 3], "rises by 3 from 0 to 3"),
    ([3, 2.9, 1, 0], "falls by 3 from 0 to 3"),
    ([0, 2, 3, 1], "rises then falls by 3"),
    ([3, 0, 1, 2], "falls then rises by 3"),
    ([0, 3, 0, 3], "goes up and down by 3"),
    ([0, 2, 1.5, 3], "goes up and down by 3"),
    ([0, 2, 1.8, 3], "rises by 3"),  # a dip below a tenth of the spread is not a turn
    ([1, 1, 1, 1], "flat from 0 to 3"),
])
def test_an_effect_in_words(effect, words):
    from sapwood.report._effects import _shape

    entry = {"ale": {"edges": [0.0, 1.0, 2.0, 3.0], "eff": effect}, "output": None}
    assert _shape(entry).startswith(words)
    entry = {"ale": {"categories": ["a", "b", "c", "d"], "eff": effect}, "output": "yes"}
    if max(effect) > min(effect):
        top, bottom = "abcd"[int(np.argmax(effect))], "abcd"[int(np.argmin(effect))]
        assert _shape(entry) == (f"highest for {top}, lowest for {bottom}, "
                                 f"{max(effect) - min(effect):.3g} apart (the probability "
                                 "of 'yes')")


def test_defaults_top_three_and_a_multiclass_model():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=["a", "b", "c", "d"])
    y = np.where(X["a"] > 0.5, "high", np.where(X["a"] * X["b"] > 0, "same", "other"))
    report = sapwood.explain(X, pd.Series(y, name="y"), model="tree", random_state=0,
                             methods=["permutation"])
    computed = effects(report)
    assert len(computed["effects"]) <= 3
    entry = computed["effects"][0]
    assert entry["output"] in {"high", "same", "other"}
    assert entry["ale"] is not None
    assert {tuple(p["features"]) for p in computed["interactions"]}
    json.dumps(computed, allow_nan=False)
    assert effects_html(report, computed).count("<img") == 2


def test_shap_interactions_too_costly_are_left_out_with_the_reason(report, monkeypatch):
    from sapwood.report import _effects

    monkeypatch.setattr(_effects, "SHAP_BUDGET", 1.0)
    computed = effects(report, n_features=2, n_pairs=1)
    (pair,) = computed["interactions"]
    assert pair["shap"] is None and "too long" in pair["shap_skipped"]
    page = effects_html(report, computed)
    assert "not computed" in page and page.count("<img") == 2
    json.dumps(computed, allow_nan=False)


def test_without_held_out_rows_the_curves_use_every_row_and_say_so():
    X, y = _table(n=200, seed=5)
    report = sapwood.explain(X, y, model="tree", test_size=0, random_state=0,
                             methods=["permutation"])
    assert report.held_out_index is None
    computed = effects(report, n_features=1, n_pairs=1)
    assert computed["effects"][0]["rows"] == 200
    assert not computed["effects"][0]["held_out"]
    assert "none held out" in effects_lines(computed)[0]
