"""The effect plots draw the numbers of the effects' results: checked on the Axes'
content (lines, ticks, bars), not only that they run."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor  # noqa: E402

from sapwood import effects, plotting  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(200, 3)), columns=["age", "dose", "noise"])
    y = 2 * X["age"] * X["dose"] + X["age"]
    return GradientBoostingRegressor(n_estimators=30, random_state=0).fit(X, y), X


def test_pdp_with_ice_draws_one_line_per_row_and_the_average(fitted):
    model, X = fitted
    result = effects.partial_dependence(model, X.iloc[:40], ["age"], kind="both",
                                        grid_resolution=15)
    ax = plotting.partial_dependence(result, feature_names=["age"])
    lines = ax.get_lines()
    assert len(lines) == 41
    np.testing.assert_allclose(lines[-1].get_ydata(), result.average[0])
    np.testing.assert_allclose(lines[-1].get_xdata(), result.grid_values[0])
    assert ax.get_xlabel() == "age"
    centred = plotting.partial_dependence(result, centered=True, max_ice_lines=5)
    assert len(centred.get_lines()) == 6
    assert centred.get_lines()[-1].get_ydata()[0] == 0.0


def test_two_way_pdp_is_a_heatmap(fitted):
    model, X = fitted
    result = effects.partial_dependence(model, X, ["age", "dose"], grid_resolution=6)
    ax = plotting.partial_dependence(result, feature_names=["age", "dose"])
    (mesh,) = ax.collections
    np.testing.assert_allclose(np.asarray(mesh.get_array()).ravel(),
                               result.average[0].T.ravel())
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("age", "dose")


def test_categories_are_labelled_by_name():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "blue", "grey"], 150)),
                      "x": rng.normal(size=150)})
    y = (X["colour"] == "red") * 1.0 + X["x"]
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    result = effects.partial_dependence(model, X, ["colour"], method="brute",
                                        categorical_features=["colour"], kind="both")
    ax = plotting.partial_dependence(result, feature_names=["colour"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["blue", "grey", "red"]


def test_ale_draws_the_curve_and_its_band(fitted):
    model, X = fitted
    table = effects.ale(model, X, "dose", grid_size=10, include_CI=True)
    ax = plotting.ale(table)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), table["eff"])
    assert len(ax.collections) == 1  # the band
    assert ax.get_xlabel() == "dose"
    with pytest.raises(TypeError, match="DataFrame sapwood.effects.ale returns"):
        plotting.ale(table["eff"])


def test_ale_of_a_category_labels_each_by_name_in_the_ale_s_order():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "blue", "grey"], 300)),
                      "x": rng.normal(size=300)})
    y = (X["colour"] == "red") * 1.0 + X["x"]
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    table = effects.ale(model, X, "colour", include_CI=True)
    ax = plotting.ale(table)
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in table.index]
    (points,) = [line for line in ax.get_lines() if line.get_label() == "ALE"]
    np.testing.assert_allclose(points.get_ydata(), table["eff"])


def test_second_order_ale_is_a_heatmap_of_the_pair_s_grid(fitted):
    model, X = fitted
    table = effects.ale(model, X, ("age", "dose"), grid_size=5)
    ax = plotting.ale(table)
    (mesh,) = ax.collections
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(table.shape[::-1]),
                               table.to_numpy().T)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("age", "dose")


def test_interactions_as_ranked_bars_and_heatmap(fitted):
    model, X = fitted
    table = effects.h_statistic(model, X.iloc[:50], n_bootstrap=5, random_state=0)
    ax = plotting.interactions(table)
    widths = [patch.get_width() for patch in ax.patches]
    pairs = table[table["kind"] == "pair"]
    np.testing.assert_allclose(widths, pairs["H"])
    assert ax.get_yticklabels()[0].get_text() == "age x dose"
    heat = plotting.interactions(table, style="heatmap")
    assert heat.images[0].get_array().shape == (3, 3)
    shap_table = effects.shap_interaction_importance(model, X.iloc[:30])
    bars = plotting.interactions(shap_table, max_display=2)
    assert len(bars.patches) == 2
    with pytest.raises(ValueError, match="style must be 'bars' or 'heatmap'; got 'pie'"):
        plotting.interactions(table, style="pie")
