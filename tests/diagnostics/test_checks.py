"""The library's checks (identifier, leakage, correlated) on data with known answers:
each fires where it must and stays silent where it must not."""

import numpy as np
import pandas as pd
import pytest
from sklearn import datasets
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor as SkDecisionTreeRegressor

from sapwood.datasets import make_ground_truth
from sapwood.diagnostics import (
    Finding,
    association_matrix,
    find_correlated,
    find_identifiers,
    find_leakage,
)

N = 1000


@pytest.fixture(scope="module")
def ground_truth():
    X, y, _ = make_ground_truth(2000, random_state=0)
    return X, y


def split(X, y):
    """Training and held-out rows in find_leakage's order."""
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    return X_train, y_train, X_test, y_test


def bundled(name):
    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    task = "regression" if name == "diabetes" else "classification"
    return bunch.data, bunch.target, task


# -- identifier ---------------------------------------------------------------------

def test_the_ground_truth_id_column_and_nothing_else(ground_truth):
    X, _ = ground_truth
    [finding] = find_identifiers(X)
    assert finding.kind == "identifier" and finding.features == ("noise_id",)
    assert "integers from 0 to 1999" in finding.message
    assert find_identifiers(X, used={"noise_id": False}) == []


def test_keys_fire_and_measurements_do_not():
    rng = np.random.default_rng(0)
    codes = pd.Series([f"C{i:05d}" for i in rng.permutation(N)])
    frame = pd.DataFrame({
        "customer": pd.factorize(codes, sort=True)[0].astype(float),  # text codes
        "running": np.arange(N) * 3 + 7.5,                             # in row order
        "income": rng.gamma(2, 20000, N).round(2),                     # unique, continuous
        "salary": rng.choice(np.arange(20000, 200000), N, replace=False),  # wide, random
        "uniform": rng.uniform(size=N),
        "few": rng.integers(0, 5, N).astype(float),
    })
    found = {f.features[0]: f.details["evidence"] for f in
             find_identifiers(frame, categorical=["customer"])}
    assert set(found) == {"customer", "running"}
    assert found["customer"] == "text codes" and found["running"].startswith("in row order")
    # Too few rows to tell.
    assert find_identifiers(frame.head(10), categorical=["customer"]) == []


@pytest.mark.parametrize("name", ["wine", "breast_cancer", "diabetes"])
def test_bundled_measurements_are_not_identifiers(name):
    X, _, _ = bundled(name)
    assert find_identifiers(X) == []


# -- leakage ----------------------------------------------------------------------

def test_a_copy_of_the_label_leaks():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.normal(size=N)})
    y = (X["a"] + rng.normal(size=N) > 0).astype(int)
    X["label_copy"] = y * 10 + rng.integers(0, 3, N)
    parts = split(X, y)
    [finding] = find_leakage(*parts, "classification")
    assert finding.features == ("label_copy",) and finding.details["score"] == 1.0
    assert "balanced accuracy 1.000 on 250 held-out rows" in finding.message
    # Fewer than 20 held-out rows: nothing is claimed.
    X_train, y_train, X_test, y_test = parts
    assert find_leakage(X_train, y_train, X_test[:19], y_test[:19], "classification") == []


def test_a_noisy_copy_of_a_numeric_target_leaks():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=N)})
    y = X["a"] * 3 + rng.normal(size=N)
    X["y_plus_noise"] = y + rng.normal(scale=0.01, size=N)
    X.loc[::50, "y_plus_noise"] = np.nan  # missing values are allowed
    X_train, y_train, X_test, y_test = split(X, y)
    [finding] = find_leakage(X_train, y_train, X_test, y_test, "regression")
    assert finding.features == ("y_plus_noise",) and finding.details["score_name"] == "R²"
    # The score is the held-out R² of a depth-5 tree (leaves of 5 rows) on that column
    # alone: scikit-learn's tree, which sapwood's reproduces, gives the same number.
    reference = SkDecisionTreeRegressor(max_depth=5, min_samples_leaf=5, random_state=0)
    reference.fit(X_train[["y_plus_noise"]].to_numpy(), y_train)
    expected = r2_score(y_test, reference.predict(X_test[["y_plus_noise"]].to_numpy()))
    assert finding.details["score"] == pytest.approx(expected, rel=1e-12)
    assert 0.99 <= expected <= 1.0
    assert f"R² {expected:.3f} on 250 held-out rows" in finding.message


@pytest.mark.parametrize("name", ["wine", "breast_cancer", "diabetes"])
def test_bundled_tables_do_not_leak(name):
    X, y, task = bundled(name)
    assert find_leakage(*split(X, y), task) == []


def test_ground_truth_does_not_leak(ground_truth):
    X, y = ground_truth
    assert find_leakage(*split(X, y), "classification") == []


# -- correlated ------------------------------------------------------------------------

def test_the_ground_truth_copy_and_nothing_else(ground_truth):
    X, _ = ground_truth
    [finding] = find_correlated(X)
    assert finding.features == ("inf_4", "inf_4_copy")
    assert "|Spearman rho| 0.95" in finding.message
    assert find_correlated(X, importance={"inf_4": False, "inf_4_copy": False}) == []
    assert find_correlated(X, importance={"inf_4": False, "inf_4_copy": True}) != []


def test_categorical_associations():
    rng = np.random.default_rng(3)
    letters = rng.choice(list("abcd"), N)
    frame = pd.DataFrame({
        "letter": pd.factorize(letters)[0].astype(float),
        "upper": pd.factorize(np.char.upper(letters.astype(str)), sort=True)[0].astype(float),
        "other": rng.integers(0, 4, N).astype(float),
        "by_letter": pd.Series(letters).map({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
        + rng.normal(0, 0.01, N),
        "free": rng.normal(size=N),
    })
    [finding] = find_correlated(frame, categorical=["letter", "upper", "other"])
    assert finding.features == ("letter", "upper", "by_letter")
    measures = {(a, b): (m, v) for a, b, m, v in finding.details["pairs"]}
    assert measures[("letter", "upper")] == ("Cramér's V", pytest.approx(1.0))
    assert measures[("letter", "by_letter")][0] == "correlation ratio"


def test_independent_columns_are_not_grouped():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(N, 6)), columns=list("abcdef"))
    frame["cat"] = rng.integers(0, 5, N).astype(float)
    assert find_correlated(frame, categorical=["cat"]) == []
    matrix, _ = association_matrix(frame, categorical=["cat"])
    off = matrix[~np.eye(7, dtype=bool)]
    assert np.nanmax(off) < 0.15


def test_breast_cancer_groups_its_size_columns():
    X, _, _ = bundled("breast_cancer")
    groups = [set(f.features) for f in find_correlated(X)]
    assert any({"mean radius", "mean perimeter", "mean area"} <= group for group in groups)


def test_missing_values_and_the_caller_s_frame():
    rng = np.random.default_rng(5)
    x = rng.normal(size=N)
    frame = pd.DataFrame({"x": x, "x_again": x + rng.normal(0, 0.05, N), "z": rng.normal(size=N)})
    frame.loc[::7, "x_again"] = np.nan
    before = frame.copy()
    [finding] = find_correlated(frame)
    assert finding.features == ("x", "x_again")
    pd.testing.assert_frame_equal(frame, before)


def test_findings_are_json_ready():
    finding = Finding("leakage", ("a",), "text", {"score": np.float64(0.995), "n": np.int64(3),
                                                   "bad": float("nan")})
    assert finding.to_dict() == {"kind": "leakage", "features": ["a"], "message": "text",
                                 "details": {"score": 0.995, "n": 3, "bad": None}}
    assert type(finding.to_dict()["details"]["n"]) is int
