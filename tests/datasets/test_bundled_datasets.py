"""The bundled data sets load offline with the documented shapes and values."""

import numpy as np
import pandas as pd
import pytest

from sapwood.datasets import load_iris, load_loan


def test_loan_table_is_seed_003s():
    bunch = load_loan()
    assert list(bunch.frame.columns) == ["car", "income", "existloan", "loan"]
    assert bunch.frame.to_dict("list") == {
        "car": [0, 0, 1, 0, 0, 1, 1],
        "income": [650, 200, 700, 500, 425, 900, 550],
        "existloan": [1, 0, 3, 0, 1, 1, 0],
        "loan": [1, 0, 0, 0, 0, 1, 1],
    }
    assert bunch.feature_names == ["car", "income", "existloan"]
    assert list(bunch.target_names) == ["no", "yes"]
    pd.testing.assert_frame_equal(bunch.data, bunch.frame[bunch.feature_names])
    assert bunch.target.name == "loan"
    assert "seed 003" in bunch.DESCR


def test_loan_six_rows_and_numpy():
    X, y = load_loan(6, as_frame=False, return_X_y=True)
    assert isinstance(X, np.ndarray) and X.shape == (6, 3)
    np.testing.assert_array_equal(y, [1, 0, 0, 0, 0, 1])
    assert load_loan(6, as_frame=False).frame is None
    X, y = load_loan(return_X_y=True)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series) and len(X) == 7


def test_loan_copies_are_independent():
    first = load_loan()
    first.frame.loc[0, "income"] = -1
    assert load_loan().frame.loc[0, "income"] == 650


def test_loan_rejects_other_sizes():
    with pytest.raises(ValueError, match="'n_rows' parameter must be 6 or 7. Got 5"):
        load_loan(5)


def test_iris_offline_as_frame():
    bunch = load_iris()
    assert bunch.data.shape == (150, 4)
    assert isinstance(bunch.data, pd.DataFrame)
    assert list(bunch.target_names) == ["setosa", "versicolor", "virginica"]
    assert np.bincount(bunch.target).tolist() == [50, 50, 50]
    X, y = load_iris(as_frame=False, return_X_y=True)
    assert isinstance(X, np.ndarray) and X.shape == (150, 4) and y.shape == (150,)
