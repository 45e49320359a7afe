"""Number columns with stray tokens (issue 51, item 7): a column of numbers with a few
cells that say "missing" (?, n/a, NA, -, ., empty, missing) is read as numbers with a
note; a genuine text column, one with numbers in some cells, stays text. One rule
(sapwood.report._numbers) for the library's explain on a frame and the command line's
CSV files."""

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.report._data import prepare_xy
from sapwood.report._numbers import MISSING_TOKENS, read_numbers


def _numbers_with(tokens, n=200, seed=0):
    values = np.random.default_rng(seed).gamma(2, 3, n).round(2).astype(object)
    values[: len(tokens)] = tokens
    return pd.Series(values, name="crim")


@pytest.mark.parametrize("token", ["?", "n/a", "NA", "-", ".", "", " missing ", "N/A"])
def test_a_stray_token_leaves_a_number_column_numbers(token):
    frame = pd.DataFrame({"crim": _numbers_with([token])})
    read, found = read_numbers(frame)
    assert pd.api.types.is_float_dtype(read["crim"])
    assert read["crim"].isna().sum() == 1 and np.isnan(read["crim"].iloc[0])
    assert read["crim"].iloc[1:].tolist() == frame["crim"].iloc[1:].tolist()
    assert found == {"crim": {token.strip(): 1}}
    assert frame["crim"].dtype == object  # the caller's frame is left as it was


def test_several_tokens_are_counted():
    frame = pd.DataFrame({"crim": _numbers_with(["?", "?", "n/a"])})
    _, found = read_numbers(frame)
    assert found == {"crim": {"?": 2, "n/a": 1}}


@pytest.mark.parametrize("values", [
    ["3", "4", "none of the above"] + ["5"] * 97,   # other text: genuine text
    ["1 to 3", "2", "7"] * 40,                       # numbers in some cells only
    ["a", "b", "12"] * 40,
    ["1.5"] * 90 + ["?"] * 10,                        # tokens in 10% of cells: left alone
    ["x"] * 10,
])
def test_genuine_text_stays_text(values):
    frame = pd.DataFrame({"t": pd.Series(values, dtype=object)})
    read, found = read_numbers(frame)
    assert found == {} and read["t"].tolist() == values


def test_categories_booleans_and_numbers_are_not_touched():
    frame = pd.DataFrame({"c": pd.Categorical(["1", "2", "?"] * 10),
                          "b": [True, False, True] * 10, "x": np.arange(30.0)})
    read, found = read_numbers(frame)
    assert found == {} and read is frame


def test_the_tokens_are_the_documented_ones():
    assert {"?", "n/a", "na", "-", ".", "", "missing"} <= set(MISSING_TOKENS)


def test_prepare_notes_the_column_the_tokens_and_the_count():
    X = pd.DataFrame({"crim": _numbers_with(["?"]), "town": ["a", "b"] * 100})
    y = pd.Series(np.arange(200.0), name="y")
    data = prepare_xy(X, y)
    assert data.notes == ["read as numbers, not text: 'crim' (1 of 200 cells '?' read as "
                          "missing)"]
    assert "crim" not in data.encodings and "town" in data.encodings
    assert data.n_missing == 1


def test_a_target_with_a_stray_token_loses_that_row():
    X = pd.DataFrame({"a": np.arange(200.0)})
    data = prepare_xy(X, _numbers_with(["?"]).rename("y"))
    assert data.task == "regression" and len(data.y) == 199
    assert any("'y' (1 of 200 cells '?'" in note for note in data.notes)


def test_explain_on_a_frame_reads_the_number_column_with_its_importance():
    # Issue 51: one "?" made the strongest column text codes sorted as strings ("10.2"
    # before "2.5"); its importance fell from 0.49 to 0.09.
    rng = np.random.default_rng(1)
    n = 400
    x = rng.gamma(2, 3, n).round(2)
    X = pd.DataFrame({"x": x, "noise": rng.normal(size=n)})
    y = pd.Series(np.log1p(x) + rng.normal(scale=0.2, size=n), name="y")
    clean = sapwood.explain(X, y, model="tree", methods="permutation", random_state=0)
    stray = X.astype({"x": object})
    stray.loc[5, "x"] = "?"
    report = sapwood.explain(stray, y, model="tree", methods="permutation", random_state=0)
    assert any("'x' (1 of 400 cells '?'" in note for note in report.notes)
    assert report.verdict.relies_on == clean.verdict.relies_on == ["x"]
    first = report.results["permutation"].importances_mean[0]
    assert first == pytest.approx(clean.results["permutation"].importances_mean[0], rel=0.2)
