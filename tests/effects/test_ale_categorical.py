"""ale of a categorical feature: categories ordered by similarity (Apley & Zhu 2020),
PyALE's numbers on the same model and rows."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from sapwood.effects import ale

PyALE = pytest.importorskip("PyALE")

LABELS = ["ash", "beech", "cedar", "elm", "oak"]


def _frame(n=400, seed=0):
    """``kind`` shifts the distribution of ``a`` (in the order elm, ash, oak, beech,
    cedar, not the alphabet's) and has an effect of its own."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(LABELS, size=n)
    shift = pd.Series(kind).map({"elm": -2.0, "ash": -1.0, "oak": 0.0, "beech": 1.0,
                                 "cedar": 2.0}).to_numpy()
    frame = pd.DataFrame({"a": 0.5 * shift + rng.normal(size=n), "b": rng.normal(size=n),
                          "kind": kind})
    effect = pd.Series(kind).map({"elm": 0.0, "ash": 1.0, "oak": -1.0, "beech": 0.5,
                                  "cedar": 2.0}).to_numpy()
    y = frame["a"] + frame["a"] * frame["b"] + effect + 0.1 * rng.normal(size=n)
    return frame, y


def _pyale(model, frame, encode, include_CI=True, C=0.95):
    import matplotlib

    matplotlib.use("Agg")
    return PyALE.ale(frame.copy(), model, ["kind"], feature_type="categorical",
                     encode_fun=encode, predictors=list(frame.columns), plot=False,
                     include_CI=include_CI, C=C)


def _same(ours, theirs):
    """Equal per category (the MDS direction is free), the order up to reversal."""
    order = [str(c) for c in theirs.index]
    assert [str(c) for c in ours.index] in (order, order[::-1])
    theirs = theirs.set_axis([str(c) for c in theirs.index])
    ours = ours.set_axis([str(c) for c in ours.index]).loc[theirs.index]
    np.testing.assert_allclose(ours["eff"], theirs["eff"], rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours["size"], theirs["size"])
    return ours, theirs


def test_integer_codes_equal_pyale_and_follow_the_similarity_order():
    frame, y = _frame()
    coded = frame.assign(kind=frame["kind"].map({c: k for k, c in enumerate(LABELS)}))
    model = RandomForestRegressor(30, max_depth=6, random_state=0).fit(coded, y)

    def encode(column):
        return column.astype(str).replace({c: k for k, c in enumerate(LABELS)}).astype(
            np.int64)

    theirs = _pyale(model, frame, encode)
    ours = ale(model, coded, "kind", feature_type="categorical", include_CI=True)
    assert ours.index.name == "kind"
    # The similarity of a's distribution orders the categories elm, ash, oak, beech,
    # cedar (or the reverse): codes 3, 0, 4, 1, 2.
    assert list(ours.index) in ([3, 0, 4, 1, 2], [2, 1, 4, 0, 3])
    ours = ours.set_axis([LABELS[int(c)] for c in ours.index])
    reversed_order = list(ours.index) != list(theirs.index)
    _same(ours, theirs)
    # Each step's interval (NaN at the first category, which has no step; a step's
    # interval sits at its upper category, so with PyALE's direction reversed its
    # half-widths come in the opposite order).
    ours_half = (ours["upperCI_95%"] - ours["eff"]).to_numpy()
    theirs_half = (theirs["upperCI_95%"] - theirs["eff"]).to_numpy()
    assert np.isnan(ours_half[0]) and np.isnan(theirs_half[0])
    expected = theirs_half[1:][::-1] if reversed_order else theirs_half[1:]
    np.testing.assert_allclose(ours_half[1:], expected, rtol=1e-10)


def test_pandas_categorical_on_a_categorical_model_is_auto():
    frame, y = _frame(seed=1)
    dtype = pd.CategoricalDtype(LABELS)
    frame = frame.assign(kind=frame["kind"].astype(dtype))
    model = HistGradientBoostingRegressor(max_iter=40, categorical_features="from_dtype",
                                          random_state=0).fit(frame, y)
    theirs = _pyale(model, frame.assign(kind=frame["kind"].astype(str)),
                    lambda column: column.astype(str).astype(dtype), include_CI=False)
    ours = ale(model, frame, "kind")
    _same(ours, theirs)
    assert list(ours.columns) == ["eff", "size"]


def test_an_ordered_categorical_keeps_its_order():
    frame, y = _frame(seed=2)
    dtype = pd.CategoricalDtype(LABELS[::-1], ordered=True)
    frame = frame.assign(kind=frame["kind"].astype(dtype))
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype",
                                          random_state=0).fit(frame, y)
    table = ale(model, frame, "kind")
    assert list(table.index) == LABELS[::-1]
    assert table["eff"].to_numpy() @ table["size"].to_numpy() == pytest.approx(0, abs=1e-9)


def test_a_categorical_effect_is_recovered_when_the_model_is_additive():
    rng = np.random.default_rng(3)
    n = 600
    kind = rng.choice(LABELS, size=n)
    truth = dict(zip(LABELS, [0.0, 1.0, 3.0, -1.0, 2.0], strict=True))
    effect = pd.Series(kind).map(truth).to_numpy()
    frame = pd.DataFrame({"b": rng.normal(size=n),
                          "kind": pd.Categorical(kind, categories=LABELS)})
    y = frame["b"] + effect
    model = HistGradientBoostingRegressor(max_iter=100, categorical_features="from_dtype",
                                          random_state=0).fit(frame, y)
    table = ale(model, frame, "kind").loc[LABELS]
    truth = np.array([0.0, 1.0, 3.0, -1.0, 2.0])
    weights = table["size"].to_numpy()
    truth = truth - truth @ weights / weights.sum()
    np.testing.assert_allclose(table["eff"], truth, atol=0.15)


def test_one_category_is_refused():
    frame, y = _frame(n=50)
    frame = frame.assign(kind=0.0)
    model = RandomForestRegressor(5, random_state=0).fit(frame, y)
    with pytest.raises(ValueError, match="one category"):
        ale(model, frame, "kind", feature_type="categorical")
