"""The table checks of the library (sapwood.report._data) on the files people have
(issue 41, item 5): targets with missing values, date columns written as text,
misspelt columns, integer targets that are quantities. The same reach sapwood.explain."""

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood._errors import InputError
from sapwood.report._data import (
    check_enough_rows,
    check_target,
    did_you_mean,
    encode_features,
    parse_dates,
    prepare,
    prepare_xy,
)

# -- targets with missing values ---------------------------------------------------------

def test_missing_target_rows_are_left_out_with_a_note():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0], "b": list("vwxyz")})
    y = pd.Series([0, None, 1, None, 1], name="y")
    data = prepare_xy(X, y)
    assert data.notes == ["2 row(s) whose target 'y' is missing left out; 3 rows remain"]
    assert data.kept.tolist() == [0, 2, 4]
    assert data.X["a"].tolist() == [1.0, 3.0, 5.0]
    assert data.y.tolist() == [0, 1, 1] and data.y.dtype == "int64"
    assert data.task == "classification"
    # the encoding is of the rows kept: w and y are gone
    assert data.encodings == {"b": ["v", "x", "z"]}


def test_no_missing_target_no_note():
    data = prepare_xy(pd.DataFrame({"a": [1, 2, 3]}), pd.Series([0, 1, 0], name="y"))
    assert data.notes == [] and data.kept is None


def test_too_few_rows_with_a_target_are_refused():
    X = pd.DataFrame({"a": [1, 2, 3]})
    with pytest.raises(InputError, match=r"2 missing value\(s\) and 1 row\(s\) with a value"):
        prepare_xy(X, pd.Series([np.nan, 1.0, np.nan], name="y"))
    with pytest.raises(InputError, match="constant"):
        prepare_xy(X, pd.Series([1.0, 1.0, np.nan], name="y"))


def test_explain_leaves_missing_target_rows_out():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200), "z": rng.normal(size=200)})
    y = pd.Series(np.where(X["x"] > 0, "yes", "no"), name="buy").astype(object)
    y[::10] = None
    report = sapwood.explain(X, y, model="tree", methods="mdi", random_state=0)
    assert "20 row(s) whose target 'buy' is missing left out; 180 rows remain" in report.notes
    assert len(report.data.y) == 180


# -- dates written as text ---------------------------------------------------------------

def test_iso_dates_and_datetimes_become_seconds():
    frame = pd.DataFrame({"day": ["2024-03-01", "2024-03-02", None, "2024-03-04"],
                          "when": ["2024-03-01 12:00:00", "2024-03-01", "2024-03-02 00:30",
                                   "2024-03-03T06:00:00"]})
    out, found = parse_dates(frame)
    assert found == {"day": ("ISO 8601", 0), "when": ("ISO 8601", 0)}
    encoded, encodings = encode_features(out)
    assert encodings == {}
    assert encoded["day"].iloc[0] == pd.Timestamp("2024-03-01").timestamp()
    assert np.isnan(encoded["day"].iloc[2])
    assert encoded["when"].iloc[0] == pd.Timestamp("2024-03-01 12:00").timestamp()


def test_day_first_dates():
    frame = pd.DataFrame({"d": ["01/03/2024", "13/03/2024", "28/02/2024"],
                          "g": ["01.03.2024", "02.03.2024", "03.03.2024"]})
    out, found = parse_dates(frame)
    assert found == {"d": ("%d/%m/%Y", 0), "g": ("%d.%m.%Y", 0)}
    assert out["d"].iloc[1] == pd.Timestamp("2024-03-13", tz="UTC")
    assert out["g"].iloc[0] == pd.Timestamp("2024-03-01", tz="UTC")


@pytest.mark.parametrize("values", [
    ["a", "b", "c", "d"],                              # words
    ["red", "2024-01-01", "blue", "green"],            # a date among words
    ["1.5", "2.5", "3.5", "x"],                        # numbers written as text
    ["1.2.3", "1.2.4", "2.0.1", "2.0.2"],              # version numbers
    ["2024-01-01", "2024-01-02", "soon", "2024-01-04"],  # 3 of 4: not nearly all
    ["A-12-7", "B-3-4", "C-1-1", "D-9-9"],             # codes
    ["12-345-678", "98-765-432", "11-222-333", "44-555-666"],  # phone-like codes
])
def test_ordinary_text_is_not_taken_for_dates(values):
    frame = pd.DataFrame({"t": values})
    out, found = parse_dates(frame)
    assert found == {}
    assert out["t"].tolist() == values


def test_nearly_all_dates_leave_the_rest_missing_and_say_so():
    values = [str(day.date()) for day in pd.date_range("2024-01-01", periods=40)]
    values[5] = "2024-02-30"  # not a date
    X = pd.DataFrame({"day": values, "x": range(40)})
    data = prepare_xy(X, pd.Series(np.arange(40) % 2, name="y"))
    assert data.notes == ["date column 'day' read as seconds since 1970-01-01 (UTC); 1 "
                          "value(s) that are not dates left missing"]
    assert np.isnan(data.X["day"].iloc[5]) and data.X["day"].notna().sum() == 39


def test_datetime_columns_are_noted_too():
    X = pd.DataFrame({"when": pd.date_range("2024-01-01", periods=4), "x": range(4)})
    data = prepare_xy(X, pd.Series([0, 1, 0, 1], name="y"))
    assert data.notes == ["date column 'when' read as seconds since 1970-01-01 (UTC)"]
    assert data.X["when"].iloc[0] == pd.Timestamp("2024-01-01").timestamp()


def test_explain_notes_the_date_columns():
    rng = np.random.default_rng(0)
    days = pd.date_range("2023-01-01", periods=150, freq="D")
    X = pd.DataFrame({"opened": days.strftime("%Y-%m-%d"), "x": rng.normal(size=150)})
    y = pd.Series(X["x"] * 2 + rng.normal(scale=0.1, size=150), name="y")
    report = sapwood.explain(X, y, model="tree", methods="mdi", random_state=0)
    assert any("date column 'opened'" in note for note in report.notes)
    assert "opened" not in report.data.encodings


# -- misspelt columns, integer targets ---------------------------------------------------

def test_did_you_mean():
    columns = ["Sales", "CompPrice", "Income"]
    assert did_you_mean("sales", columns) == " (did you mean 'Sales'?)"
    assert did_you_mean("Incme", columns) == " (did you mean 'Income'?)"
    assert did_you_mean("zzz", columns) == ""


def test_check_target_suggests():
    table = pd.DataFrame({"Sales": [1, 2], "Price": [3, 4]})
    with pytest.raises(InputError, match=r"'Slaes' not found \(did you mean 'Sales'\?\); "
                                         r"columns are: Sales, Price"):
        check_target(table, "Slaes")


def test_check_target_names_a_wrong_delimiter():
    table = pd.DataFrame({"Sales;Price;Income": ["1;2;3", "4;5;6"]})
    with pytest.raises(InputError, match=r"separated by ';'") as caught:
        check_target(table, "Price")
    assert "did you mean" not in str(caught.value)


def test_integer_target_as_classes_hints_regression():
    y = pd.Series(np.r_[np.repeat(np.arange(8), 5), [8]], name="y")
    data = prepare(pd.DataFrame({"x": np.arange(len(y)), "y": y}), "y")
    with pytest.raises(InputError, match=r"class '8' .* 9 integer values taken as classes: "
                                         r"if it is a quantity, use --task regression"):
        check_enough_rows(data, 0.25)


def test_a_decimal_target_read_as_classes_is_not_called_integer():
    # mtcars' mpg with task="classification": numbers, not integer values.
    y = pd.Series(np.r_[np.repeat(np.arange(8) + 0.5, 5), [21.4]], name="mpg")
    data = prepare(pd.DataFrame({"x": np.arange(len(y)), "mpg": y}), "mpg",
                   task="classification")
    with pytest.raises(InputError, match=r"class '21.4' .* 'mpg' holds 9 numbers read as "
                                         r"classes: if it is a quantity"):
        check_enough_rows(data, 0.25)


def test_text_target_gets_no_regression_hint():
    y = pd.Series(list("abcabcabcabcd"), name="y")
    data = prepare(pd.DataFrame({"x": np.arange(len(y)), "y": y}), "y")
    with pytest.raises(InputError, match="class 'd'") as caught:
        check_enough_rows(data, 0.25)
    assert "regression" not in str(caught.value)


def test_explain_hints_regression_for_an_integer_target():
    rng = np.random.default_rng(0)
    y = pd.Series(np.r_[np.repeat(np.arange(8), 5), [8]], name="count")
    X = pd.DataFrame({"x": rng.normal(size=len(y))})
    with pytest.raises(InputError, match=r"task='regression'"):
        sapwood.explain(X, y, model="tree", methods="mdi")
