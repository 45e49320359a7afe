"""explain on a survival target: the forms of y, the refusals, the scores and the
Kaplan-Meier baseline, and a simulation with known hazard ratios where the verdict finds
the features that act and none that do not, at 0%, 50% and 90% censoring."""

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood._errors import InputError
from sapwood.report._survival import prepare_survival

Surv = pytest.importorskip("sksurv.util").Surv
metrics = pytest.importorskip("sksurv.metrics")

# log hazard ratio per standard deviation of x0, x1, x2; x3, x4, x5 do not act.
LOG_HAZARD_RATIOS = np.log([3.0, 1 / 2.5, 2.0, 1.0, 1.0, 1.0])
CENSORING_RATE = {0.0: 0.0, 0.5: 1.0, 0.9: 9.0}


def simulate(n, censored, seed=0):
    """Exponential times with hazard exp(X beta), censored by an independent exponential
    time whose rate gives about the share ``censored``."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"x{j}" for j in range(6)])
    time = rng.exponential(1 / np.exp(X.to_numpy() @ LOG_HAZARD_RATIOS))
    rate = CENSORING_RATE[censored]
    censor = rng.exponential(1 / rate, n) if rate else np.full(n, np.inf)
    # Times recorded to 1/50 (ties, as follow-up in days has them; fewer distinct times
    # make the forest's leaf functions shorter and the test faster).
    observed = np.ceil(np.minimum(time, censor) * 50) / 50
    return X, Surv.from_arrays(time <= censor, observed)


def forest(seed=0, n_estimators=50):
    return sapwood.RandomSurvivalForest(n_estimators=n_estimators, min_samples_leaf=10,
                                        random_state=seed)


@pytest.mark.parametrize(("censored", "n"), [(0.0, 800), (0.5, 600), (0.9, 1500)])
def test_the_verdict_finds_the_hazards_that_act(censored, n):
    X, y = simulate(n, censored)
    share = 1 - y["event"].mean()
    assert abs(share - censored) < 0.1
    report = sapwood.explain(X, y, model=forest(), methods="permutation")
    assert report.task == "survival" and report.score_name == "concordance_index"
    assert report.baseline.beaten and report.baseline.score == 0.5
    assert set(report.verdict.relies_on) == {"x0", "x1", "x2"}
    assert not set(report.verdict.relies_on) & {"x3", "x4", "x5"}


@pytest.fixture(scope="module")
def whas():
    datasets = pytest.importorskip("sksurv.datasets")
    X, y = datasets.load_whas500()
    return X.astype(float), y


def test_the_three_forms_of_y_give_one_report(whas):
    X, y = whas
    model = forest(n_estimators=10)
    by_array = sapwood.explain(X, y, model=model, methods="permutation", rows=[0])
    table = X.assign(lenfol=y["lenfol"], fstat=y["fstat"].astype(int))
    by_names = sapwood.explain(table, ("lenfol", "fstat"), model=model,
                               methods="permutation")
    by_frame = sapwood.explain(X, table[["lenfol", "fstat"]], model=model,
                               methods="permutation")
    for report in (by_names, by_frame):
        assert report.score == by_array.score
        np.testing.assert_array_equal(report.results["permutation"].importances,
                                      by_array.results["permutation"].importances)
    assert by_array.data.target == "lenfol"
    # A row explained: its risk score by TreeSHAP, its target as time and status.
    assert by_array.rows[0].target == f"{y['lenfol'][0]:g} (censored)"
    assert list(by_array.data.y.columns) == ["lenfol", "fstat"]


@pytest.mark.slow
def test_scores_by_name_equal_scikit_survival_on_the_held_out_rows(whas):
    X, y = whas
    for scoring in ("concordance_index", "concordance_index_ipcw",
                    "neg_integrated_brier_score"):
        report = sapwood.explain(X, y, model=forest(), methods="permutation",
                                 scoring=scoring)
        rows = report.held_out_index
        held, trained = y[rows], y[np.setdiff1d(np.arange(len(y)), rows)]
        model = report.model
        if scoring == "concordance_index":
            expected = metrics.concordance_index_censored(
                held["fstat"], held["lenfol"], model.predict(X.loc[rows]))[0]
        elif scoring == "concordance_index_ipcw":
            expected = metrics.concordance_index_ipcw(trained, held,
                                                      model.predict(X.loc[rows]))[0]
        else:
            times = np.unique(np.quantile(held["lenfol"], np.linspace(0.1, 0.9, 20)))
            survival = np.vstack([f(times) for f in
                                  model.predict_survival_function(X.loc[rows])])
            expected = -metrics.integrated_brier_score(trained, held, survival, times)
        assert report.score == pytest.approx(expected, rel=1e-9)
        assert report.baseline.model.startswith("the Kaplan-Meier model")


def test_missing_rows_are_left_out_with_a_note():
    X = pd.DataFrame({"a": np.arange(8.0)})
    y = pd.DataFrame({"t": [1, 2, np.nan, 4, 5, 6, 7, 8], "e": [1, 0, 1, None, 1, 1, 0, 1]})
    data = prepare_survival(X, y)
    assert len(data.y) == 6 and list(data.kept) == [0, 1, 4, 5, 6, 7]
    assert "2 row(s) whose time 't' or event 'e' is missing left out" in data.notes[0]
    assert data.y["e"].dtype == bool and data.y["t"].dtype == np.float64


def test_a_feature_with_a_stray_token_is_numbers_as_for_any_target():
    # The survival target's preparation read "?" as text codes, as every target once did.
    values = [str(v) for v in np.arange(1.0, 61.0)]
    values[7] = "?"
    X = pd.DataFrame({"a": values, "b": ["x", "y"] * 30})
    y = pd.DataFrame({"t": np.arange(1.0, 61.0), "e": [1, 0, 1] * 20})
    data = prepare_survival(X, y)
    assert data.X["a"].dtype == np.float64 and np.isnan(data.X["a"].iloc[7])
    assert data.X["a"].iloc[8] == 9.0 and "b" in data.encodings and "a" not in data.encodings
    assert any("'a'" in note and "'?'" in note for note in data.notes)


@pytest.mark.parametrize(("time", "event", "event_value", "phrase"), [
    ([1, -2, 3, 4], [1, 0, 1, 1], None, "time column 't' has 1 negative value(s)"),
    ([1, 2, 3, 4], [0, 1, 2, 1], None, "event column 'e' has 3 distinct values"),
    ([1, 2, 3, 4], ["dead", "alive", "dead", "alive"], None,
     "say which marks an event with --event-value"),
    ([1, 2, 3, 4], [1, 2, 2, 1], None, "say which marks an event"),
    ([1, 2, 3, 4], ["dead", "alive", "dead", "alive"], "died",
     "event value 'died' does not occur"),
    ([1, 2, 3, 4], [0, 0, 0, 1], None, "marks 1 event(s) in 4 rows"),
    (["a", "b", "c", "d"], [1, 0, 1, 1], None, "time column 't' is not numeric"),
])
def test_bad_targets_are_refused_in_one_line(time, event, event_value, phrase):
    X = pd.DataFrame({"a": np.arange(4.0)})
    with pytest.raises(InputError) as caught:
        prepare_survival(X, pd.DataFrame({"t": time, "e": event}), event_value)
    assert phrase in str(caught.value) and "\n" not in str(caught.value)


def test_named_events_and_all_events():
    X = pd.DataFrame({"a": np.arange(4.0)})
    data = prepare_survival(X, pd.DataFrame({"t": [1, 2, 3, 4],
                                             "e": ["dead", "alive", "dead", "dead"]}),
                            "dead")
    assert data.y["e"].tolist() == [True, False, True, True]
    words = prepare_survival(X, pd.DataFrame({"t": [1, 2, 3, 4],
                                              "e": ["Yes", "no", "yes", "no"]}))
    assert words.y["e"].tolist() == [True, False, True, False]
    # No censoring at all is a survival target too.
    assert prepare_survival(X, pd.DataFrame({"t": [1, 2, 3, 4], "e": [1, 1, 1, 1]})
                            ).y["e"].all()


def test_the_scoring_must_fit_the_target(whas):
    X, y = whas
    with pytest.raises(InputError, match="does not score survival"):
        sapwood.explain(X, y, model=forest(n_estimators=2), scoring="r2")
    with pytest.raises(InputError, match="scores a survival target"):
        sapwood.explain(X, y["lenfol"], scoring="concordance_index")
    with pytest.raises(InputError, match="event_value='dead' names the event"):
        sapwood.explain(X, y["lenfol"], event_value="dead")


def test_the_survival_pictures_in_json_and_the_notebook(whas):
    from sapwood.report._html import notebook_html

    X, y = whas
    report = sapwood.explain(X.iloc[:200], y[:200], model=forest(n_estimators=10),
                             methods="permutation")
    curves = report.survival["curves"]
    assert len(curves) == 3 and len(curves[0]["survival_low"]) == len(report.survival["times"])
    # The curves are the model's: its mean survival function with the feature set.
    rows = X.loc[report.held_out_index].assign(**{curves[0]["feature"]: curves[0]["high"]})
    grid = report.model.unique_times_
    shown = np.searchsorted(grid, report.survival["times"])
    np.testing.assert_allclose(
        report.model.predict_survival_function(rows, return_array=True).mean(axis=0)[shown],
        curves[0]["survival_high"])
    text = " ".join(str(report).split())  # the terminal's summary
    assert "target 'lenfol', event 'fstat' (survival:" in text
    assert "concordance index (Harrell's C)" in text
    assert "the Kaplan-Meier model (no features): 0.500" in text
    assert "Survival at lenfol =" in text
    page = notebook_html(report)
    assert "Survival curves and importance over time" in page and "<svg" in page


def test_the_default_model_is_sapwoods_random_survival_forest():
    from sapwood.report._models import build_model, default_model

    assert default_model("survival") == "rf"
    assert type(build_model("rf", "survival")) is sapwood.RandomSurvivalForest
    assert type(build_model("tree", "survival")) is sapwood.SurvivalTree
    with pytest.raises(InputError, match="--model gb"):
        build_model("gb", "survival")
