"""The leakage rule (issue 41, items 1 and 6): a column is reported when alone it is
near perfect on the held-out rows and near the whole model, its missingness counted as
a feature; by simulation with known truth it fires on leaks and stays silent on strong
honest predictors that leave the model room for error. Issue 51, item 6: a leak in
several columns (two columns recorded after the outcome, a leak and its rescaled copy,
a leak spread over two columns) is reported as one set, and honest correlated strong
predictors stay quiet.

``python -m tests.diagnostics.test_leakage_rule [replications]`` prints the rates
quoted in docs/measures.md, section 'Warnings'.
"""

import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, r2_score
from sklearn.model_selection import train_test_split

from sapwood.diagnostics import (
    NEAR_MODEL,
    find_correlated,
    find_identifiers,
    find_leakage,
    relative_error,
)
from sapwood.learners import RandomForestClassifier, RandomForestRegressor


def _numeric(frame):
    """Codes for the model (text and categories by first appearance, NaN kept)."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if not pd.api.types.is_numeric_dtype(values.dtype) or values.dtype == bool:
            codes = pd.Series(pd.factorize(values)[0], index=values.index).astype(float)
            out[column] = codes.where(values.notna())
    return out.astype(float)


def model_score(X_train, y_train, X_test, y_test, task, seed=0):
    """The held-out score of a 30-tree forest on every column, in find_leakage's metric."""
    both = _numeric(pd.concat([X_train, X_test]))
    learner = RandomForestClassifier if task == "classification" else RandomForestRegressor
    model = learner(n_estimators=30, random_state=seed).fit(both.iloc[:len(X_train)], y_train)
    predicted = model.predict(both.iloc[len(X_train):])
    return float(balanced_accuracy_score(y_test, predicted) if task == "classification"
                 else r2_score(y_test, predicted))


# -- scenarios with known truth: name -> (X, y, task, leaked columns) ------------------

def scenario(name, rng, n):
    normal = rng.normal(size=(n, 3))
    X = pd.DataFrame(normal, columns=["x", "u", "v"])
    x = X["x"]
    if name == "honest R² 0.9":               # y = x + noise
        return X, x + rng.normal(scale=1 / 3, size=n), "regression", []
    if name == "honest R² 0.97":
        return X, x + rng.normal(scale=0.176, size=n), "regression", []
    if name == "honest BA 0.90":              # x alone: balanced accuracy 0.90
        return X, (x + rng.normal(scale=0.325, size=n) > 0).astype(int), "classification", []
    if name == "honest BA 0.935":             # borderline: x alone 0.935, the model 0.95
        y = (x + 0.1 * X["u"] + rng.normal(scale=0.16, size=n) > 0).astype(int)
        return X, y, "classification", []
    if name == "honest, many weak":
        X = pd.DataFrame(rng.normal(size=(n, 6)), columns=list("abcdef"))
        y = (X.iloc[:, :5].sum(axis=1) + rng.normal(scale=0.3, size=n) > 0).astype(int)
        return X, y, "classification", []
    if name == "honest missingness":          # missing more often in one class, no leak
        y = (x + X["u"] + rng.normal(size=n) > 0).astype(int)
        X.loc[rng.random(n) < np.where(y == 1, 0.4, 0.15), "x"] = np.nan
        return X, y, "classification", []
    if name == "honest text":
        city = rng.integers(0, 10, n)
        y = (x + city / 10 + rng.normal(size=n) > 1).astype(int)
        X["city"] = pd.Categorical([f"c{c}" for c in city])
        return X, y, "classification", []
    if name.startswith("missing-code leak"):  # issue 41: filled in only for one class
        rate = float(name.split()[-1])
        X = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
        y = (X["a"] + 0.8 * X["b"] + rng.normal(scale=0.8, size=n) > 0.3).astype(int)
        filled = (y == 1) & (rng.random(n) < rate)
        X["boat"] = np.where(filled, rng.integers(1, 16, n).astype(float), np.nan)
        return X, y, "classification", ["boat"]
    if name == "label copy, 3% flipped":
        y = (x + rng.normal(size=n) > 0).astype(int)
        X["copy"] = np.where(rng.random(n) < 0.03, 1 - y, y) + rng.normal(scale=0.1, size=n)
        return X, y, "classification", ["copy"]
    if name == "text status, 2% flipped":
        y = (x + rng.normal(size=n) > 0).astype(int)
        label = np.where(rng.random(n) < 0.02, 1 - y, y)
        status = np.where(label == 1, "approved", "rejected").astype(object)
        status[rng.random(n) < 0.05] = None
        X["status"] = status
        return X, y, "classification", ["status"]
    if name == "target copy + noise":
        y = 3 * x + rng.normal(size=n)
        X["y_copy"] = y + rng.normal(scale=0.05, size=n)
        return X, y, "regression", ["y_copy"]
    if name == "two post-outcome columns":    # issue 51: spending, and its share of income
        y = (x + rng.normal(size=n) > 0).astype(int)
        X["income"] = rng.lognormal(10, 0.5, n)
        X["spend"] = np.where(y == 1, rng.gamma(2, 100, n), 0.0)
        X["share"] = X["spend"] / X["income"]
        return X, y, "classification", ["spend", "share"]
    if name == "a leak and its rescaled copy":  # a weight in grams and in pounds
        y = 3 * x + rng.normal(size=n)
        X["grams"] = 5000 + 100 * (y + rng.normal(scale=0.05, size=n))
        X["pounds"] = X["grams"] / 453.6
        return X, y, "regression", ["grams", "pounds"]
    if name == "a leak spread over two columns":  # their sum is the label, neither alone
        y = (x + rng.normal(size=n) > 0).astype(int)
        X["a"] = rng.normal(scale=2, size=n)
        X["b"] = 3 * (2 * y - 1) - X["a"] + rng.normal(scale=0.1, size=n)
        return X, y, "classification", ["a", "b"]
    if name.startswith("honest correlated"):  # two noisy measurements of one cause
        z = rng.normal(size=n)
        X["m1"] = z + rng.normal(scale=0.2, size=n)
        X["m2"] = z + rng.normal(scale=0.2, size=n)
        if name.endswith("R² 0.9"):
            return X, X["m1"] + X["m2"] + rng.normal(scale=0.7, size=n), "regression", []
        return X, (z + rng.normal(scale=0.2, size=n) > 0).astype(int), "classification", []
    raise KeyError(name)


HONEST = ["honest R² 0.9", "honest R² 0.97", "honest BA 0.90", "honest BA 0.935",
          "honest, many weak", "honest missingness", "honest text"]
LEAKS = ["missing-code leak 0.954", "missing-code leak 0.9", "label copy, 3% flipped",
         "text status, 2% flipped", "target copy + noise"]
# Issue 51, item 6: leaks in several columns, and the honest columns they must not be
# confused with.
SET_HONEST = ["honest correlated, R² 0.9", "honest correlated, BA 0.90"]
SET_LEAKS = ["two post-outcome columns", "a leak and its rescaled copy",
             "a leak spread over two columns"]


def rates(name, reps, n, with_model=True):
    """(share of replications reporting any honest column, share reporting every leaked
    column) over ``reps`` data sets of ``n`` rows, a quarter held out."""
    false = found = 0
    for rep in range(reps):
        rng = np.random.default_rng([rep, n, sum(map(ord, name))])
        X, y, task, leaks = scenario(name, rng, n)
        parts = train_test_split(X, y, random_state=rep)
        X_train, X_test, y_train, y_test = parts
        score = model_score(X_train, y_train, X_test, y_test, task) if with_model else None
        flagged = {column for f in find_leakage(X_train, y_train, X_test, y_test, task,
                                                model_score=score) for column in f.features}
        false += bool(flagged - set(leaks))
        found += bool(leaks) and set(leaks) <= flagged
    return false / reps, found / reps


@pytest.mark.parametrize("name", HONEST)
def test_strong_honest_predictors_are_not_reported(name):
    false, _ = rates(name, 15, 800)
    # Seen over 100 replications of 800 rows: 0.00, but 0.01 for BA 0.90 and 0.17 for
    # the borderline BA 0.935 (a column within 0.065 of balanced accuracy 1).
    assert false <= (0.4 if name == "honest BA 0.935" else 1 / 15)


@pytest.mark.parametrize("name", ["missing-code leak 0.954", "label copy, 3% flipped",
                                  "target copy + noise"])
def test_leaks_are_reported(name):
    _, found = rates(name, 15, 800)
    assert found >= 0.8  # seen over 100 replications of 800 rows: 0.99, 0.90, 0.89


# -- the case and the rule's parts ------------------------------------------------

def test_a_column_filled_in_only_for_one_class_is_a_leak():
    # Issue 41: alone balanced accuracy 0.977, the model lifted from 0.805 to 0.973.
    rng = np.random.default_rng(7)
    X, y, task, _ = scenario("missing-code leak 0.954", rng, 1300)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    without = model_score(X_train.drop(columns="boat"), y_train, X_test.drop(columns="boat"),
                          y_test, task)
    whole = model_score(X_train, y_train, X_test, y_test, task)
    assert without < 0.85 and whole > 0.95
    [finding] = find_leakage(X_train, y_train, X_test, y_test, task, model_score=whole)
    assert finding.kind == "leakage" and finding.features == ("boat",)
    details = finding.details
    assert 0.95 <= details["score"] < 0.99  # under the old fixed 0.99: not reported
    assert details["indicator_score"] == pytest.approx(details["score"], abs=0.01)
    assert details["model_score"] == whole
    assert "whether it is missing" in finding.message
    assert f"the whole model: {whole:.3f}" in finding.message
    assert find_leakage(X_train, y_train, X_test, y_test, task) != []  # no model score


def test_y_equals_x_plus_noise_is_not_a_leak():
    rng = np.random.default_rng(3)
    X, y, task, _ = scenario("honest R² 0.9", rng, 2000)
    parts = train_test_split(X, y, random_state=0)
    X_train, X_test, y_train, y_test = parts
    whole = model_score(X_train, y_train, X_test, y_test, task)
    assert 0.85 < whole < 0.92
    assert find_leakage(X_train, y_train, X_test, y_test, task, model_score=whole) == []
    assert find_leakage(X_train, y_train, X_test, y_test, task) == []


def test_a_model_much_better_than_the_column_silences_it():
    rng = np.random.default_rng(4)
    n = 2000
    x = rng.normal(size=n)
    y = pd.Series((x > 0).astype(int))
    # A copy of the target 3.5% off beside a noise column (x itself is not given: the
    # model's score stands for what the other columns would add).
    X = pd.DataFrame({"noisy_copy": np.where(rng.random(n) < 0.035, 1 - y, y).astype(float),
                      "noise": rng.normal(size=n)})
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    alone = {f.features[0]: f for f in find_leakage(X_train, y_train, X_test, y_test,
                                                    "classification")}
    assert set(alone) == {"noisy_copy"}
    error = alone["noisy_copy"].details["relative_error"]
    assert 0.05 < error <= 0.1
    # A model with no error leaves the column NEAR_MODEL or more behind: not reported.
    assert error > relative_error(1.0, "classification") + NEAR_MODEL
    assert find_leakage(X_train, y_train, X_test, y_test, "classification",
                        model_score=1.0) == []
    # A model no better than the column: reported; one worse (it ignores it): too.
    for score in (1 - error / 2, 0.6):
        found = find_leakage(X_train, y_train, X_test, y_test, "classification",
                             model_score=score)
        assert ("noisy_copy",) in [f.features for f in found]


def test_a_strong_column_whose_information_other_columns_share_is_not_a_leak():
    # Iris: petal length alone separates the species nearly as well as the model, but
    # petal width (and the sepals) carry the same information: strong, not leaked.
    from sapwood.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
    assert find_leakage(X_train, y_train, X_test, y_test, "classification",
                        model_score=0.95) == []
    # The same column recorded after the outcome, beside columns that know little.
    noise = pd.DataFrame(np.random.default_rng(0).normal(size=X.shape), columns=X.columns)
    noise["petal length (cm)"] = X["petal length (cm)"]
    X_train, X_test, y_train, y_test = train_test_split(noise, y, random_state=0, stratify=y)
    found = find_leakage(X_train, y_train, X_test, y_test, "classification",
                         model_score=0.95)
    assert [f.features for f in found] == [("petal length (cm)",)]


# -- a leak in several columns (issue 51, item 6) ------------------------------------------

def _split(name, seed=1, n=800):
    X, y, task, leaks = scenario(name, np.random.default_rng(seed), n)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=seed)
    return (X_train, y_train, X_test, y_test), task, leaks


def test_two_post_outcome_columns_are_reported_as_one_set():
    # Issue 51: each alone near perfect, each hid the other from the one-column rule.
    parts, task, leaks = _split("two post-outcome columns")
    whole = model_score(*parts[:2], *parts[2:], task)
    [finding] = find_leakage(*parts, task, model_score=whole)
    assert finding.kind == "leakage" and set(finding.features) == set(leaks)
    assert "together predict the held-out target almost perfectly" in finding.message
    assert set(finding.details["alone"]) == set(leaks)
    assert finding.details["rest_score"] < 0.9 and finding.details["score"] > 0.97
    # One of them dropped: the other is reported alone, as before.
    X_train, y_train, X_test, y_test = parts
    [alone] = find_leakage(X_train.drop(columns="share"), y_train,
                           X_test.drop(columns="share"), y_test, task)
    assert alone.features == ("spend",)


def test_a_leak_and_its_rescaled_copy_are_reported_together():
    parts, task, leaks = _split("a leak and its rescaled copy")
    [finding] = find_leakage(*parts, task, model_score=model_score(*parts[:2], *parts[2:],
                                                                   task))
    assert finding.features == ("grams", "pounds")
    assert finding.details["copies"] == ["pounds"]
    assert "'pounds' holds the same values in another scale" in finding.message


def test_a_leak_spread_over_two_columns_is_found_by_the_set_search():
    parts, task, leaks = _split("a leak spread over two columns")
    whole = model_score(*parts[:2], *parts[2:], task)
    [finding] = find_leakage(*parts, task, model_score=whole)
    assert set(finding.features) == set(leaks)
    assert max(finding.details["alone"].values()) < 0.95  # neither alone near perfect
    # Too few held-out rows for a set: quiet.
    X_train, y_train, X_test, y_test = parts
    assert find_leakage(X_train, y_train, X_test[:99], y_test[:99], task) == []


@pytest.mark.parametrize("name", SET_HONEST)
def test_honest_correlated_strong_predictors_are_not_reported(name):
    false, _ = rates(name, 5, 800)
    # Seen over 100 replications of 800 rows: docs/measures.md, section 'Warnings'.
    assert false == 0


def test_relative_error_puts_both_metrics_on_one_scale():
    assert relative_error(0.5, "classification", [0, 1]) == 1.0
    assert relative_error(1 / 3, "classification", [0, 1, 2]) == pytest.approx(1.0)
    assert relative_error(0.95, "classification") == pytest.approx(0.1)
    assert relative_error(0.99, "regression") == pytest.approx(0.1)
    assert relative_error(-0.2, "regression") == 0.0 + np.sqrt(1.2)


# -- the frames the command line takes (issue 41, item 6) ---------------------------------

def test_the_checks_take_text_category_boolean_date_and_missing_columns():
    rng = np.random.default_rng(5)
    n = 800
    y = rng.integers(0, 2, n)
    level = rng.normal(size=n)
    frame = pd.DataFrame({
        "customer": [f"C{i:05d}" for i in rng.permutation(n)],             # text key
        "status": np.where(y == 1, "approved", "rejected"),                 # text leak
        "grade": pd.Categorical(rng.choice(["a", "b", "c"], n)),
        "grade_again": None,
        "flag": rng.random(n) < 0.5,                                        # boolean
        "joined": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n),
                                                                unit="D"),
        "level": level,
        "level_text": pd.Series(np.round(level, 3)).astype(str),            # numbers as text
        "count": pd.array(rng.integers(0, 9, n), dtype="Int64"),
    })
    frame["grade_again"] = frame["grade"].astype(str).str.upper()
    frame.loc[::9, "status"] = None
    frame.loc[::11, "level"] = np.nan
    frame.loc[::13, "grade"] = np.nan
    frame.loc[::17, "joined"] = pd.NaT
    frame.loc[::19, "count"] = pd.NA
    before = frame.copy()
    X_train, X_test, y_train, y_test = train_test_split(frame, y, random_state=0)

    [identifier] = find_identifiers(frame)
    assert identifier.features == ("customer",) and "text codes" in identifier.message
    groups = {f.features for f in find_correlated(frame)}
    assert ("grade", "grade_again") in groups
    assert any({"level", "level_text"} <= set(g) for g in groups)
    found = find_leakage(X_train, y_train, X_test, y_test, "classification")
    assert [f.features for f in found] == [("status",)]
    assert found[0].details["score"] > 0.9  # the rows where it is missing are guesses
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is left as it was


if __name__ == "__main__":
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rows = []
    for name in HONEST + LEAKS + SET_HONEST + SET_LEAKS:
        row = {"scenario": name}
        for n in (200, 800):
            for with_model in (True, False):
                false, found = rates(name, reps, n, with_model)
                key = f"n={n} {'model' if with_model else 'alone'}"
                row[key] = found if name in LEAKS + SET_LEAKS else false
        rows.append(row)
        print(row, flush=True)
    print(pd.DataFrame(rows).round(2).to_string(index=False))
