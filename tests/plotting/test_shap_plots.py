"""The SHAP plots draw what the tree_shap result holds: checked on the Axes' content
(tick labels, points, bar widths, texts), not only that they run."""

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)

from sapwood.importance import permutation_importance, tree_shap  # noqa: E402
from sapwood.plotting import bar, beeswarm, dependence, waterfall  # noqa: E402
from sapwood.plotting._shap import approximate_interactions  # noqa: E402

N_ROWS = 160


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _frame(n=400, seed=0):
    """y = a * b + 2 [c == 2] + noise: a and b interact, c is categorical-like."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.integers(0, 3, n).astype(float)})
    for k in range(9):
        X[f"noise {k}"] = rng.normal(size=n)
    y = X["a"] * X["b"] + 2.0 * (X["c"] == 2) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def regression():
    X, y = _frame()
    model = RandomForestRegressor(25, max_depth=6, random_state=0).fit(X, y)
    return model, X.iloc[:N_ROWS], tree_shap(model, X.iloc[:N_ROWS])


def _tick_texts(ax):
    return [label.get_text() for label in ax.get_yticklabels()]


def _scatters(ax):
    return [c for c in ax.collections if isinstance(c, PathCollection)]


def test_beeswarm_one_row_per_feature_one_point_per_row(regression):
    _, X, result = regression
    phi = result.extra["shap_values"]
    ax = beeswarm(result, max_display=5)
    order = np.argsort(-np.abs(phi).mean(axis=0), kind="stable")
    top = [X.columns[j] for j in order[:4]]
    # Bottom to top: the "other features" row, then the top features, largest on top.
    assert _tick_texts(ax) == ["sum of 8 other features"] + top[::-1]
    scatters = _scatters(ax)
    assert len(scatters) == 5
    for collection, j in zip(scatters[1:], order[:4][::-1], strict=True):
        offsets = collection.get_offsets()
        assert offsets.shape == (N_ROWS, 2)
        np.testing.assert_allclose(offsets[:, 0], phi[:, j])  # x is the SHAP value
    np.testing.assert_allclose(scatters[0].get_offsets()[:, 0], phi[:, order[4:]].sum(axis=1))
    assert ax.get_xlabel() == "SHAP value (impact on prediction)"
    colorbar_axes = [other for other in ax.figure.axes if other is not ax]
    assert [t.get_text() for t in colorbar_axes[0].get_yticklabels()] == ["Low", "High"]


def test_beeswarm_colours_follow_the_feature_value(regression):
    _, X, result = regression
    ax = beeswarm(result, max_display=13)
    row = _tick_texts(ax).index("a")
    colors = _scatters(ax)[row].get_facecolors()
    a = X["a"].to_numpy()
    # Red grows with the value: the highest values are redder than the lowest.
    high, low = a > np.percentile(a, 95), a < np.percentile(a, 5)
    assert colors[high, 0].min() > colors[low, 0].max()


def test_bar_shows_mean_absolute_values(regression):
    _, X, result = regression
    ax = bar(result, max_display=4)
    means = np.abs(result.extra["shap_values"]).mean(axis=0)
    order = np.argsort(-means, kind="stable")
    widths = [patch.get_width() for patch in ax.patches]
    # Top to bottom in the picture is first to last in ax.patches.
    np.testing.assert_allclose(widths, list(means[order[:3]]) + [means[order[3:]].sum()])
    assert _tick_texts(ax)[::-1] == [X.columns[j] for j in order[:3]] + [
        "sum of 9 other features"]
    assert ax.get_xlabel() == "mean |SHAP value| (impact on prediction)"
    assert [t.get_text() for t in ax.texts][0] == f"{means[order[0]]:.3g}"


def test_waterfall_adds_up_from_base_value_to_prediction(regression):
    model, X, result = regression
    row = 7
    ax = waterfall(result, row, max_display=6)
    phi = result.extra["shap_values"][row]
    base = result.extra["expected_value"]
    widths = np.array([patch.get_width() for patch in ax.patches])
    lefts = np.array([patch.get_x() for patch in ax.patches])
    prediction = model.predict(X.iloc[[row]])[0]
    assert widths.sum() == pytest.approx(prediction - base, abs=1e-9)
    assert lefts[0] == pytest.approx(base)
    assert lefts[-1] + widths[-1] == pytest.approx(prediction, abs=1e-9)
    # Each bar starts where the one below it ends.
    np.testing.assert_allclose(lefts[1:], lefts[:-1] + widths[:-1])
    order = np.argsort(-np.abs(phi), kind="stable")
    names = [f"{X.columns[j]} = {X.iloc[row, j]:.4g}" for j in order[:5]]
    assert _tick_texts(ax) == ["7 other features"] + names[::-1]
    np.testing.assert_allclose(widths[::-1][:5], phi[order[:5]])
    texts = [t.get_text() for t in ax.texts]
    assert f"E[f(X)] = {base:.4g}" in texts and f"f(x) = {prediction:.4g}" in texts
    assert ax.get_xlabel() == "model output: prediction"


def test_waterfall_names_category_labels_and_missing_values():
    X, y = _frame(300)
    X.loc[[5, 50, 60], "a"] = np.nan
    model = RandomForestRegressor(10, max_depth=5, random_state=0).fit(X, y)
    result = tree_shap(model, X.iloc[:20])
    # The rows as the user knows them: c's codes are the categories low, mid, high.
    shown = X.iloc[:20].assign(c=pd.Categorical.from_codes(X["c"].iloc[:20].astype(int),
                                                           ["low", "mid", "high $x$"]))
    result.extra["data"] = shown
    texts = _tick_texts(waterfall(result, 5, max_display=13))
    assert "a = missing" in texts
    assert f"c = {shown['c'].iloc[5]}" in texts
    # Labels from data are text, never mathtext.
    row = int(np.flatnonzero(shown["c"] == "high $x$")[0])
    ax = waterfall(result, row, max_display=13)
    label = [t for t in ax.get_yticklabels() if t.get_text() == "c = high $x$"][0]
    assert label.get_parse_math() is False


def test_classifier_output_names_the_class_and_the_units():
    X, y = _frame(300)
    labels = np.where(y > y.median(), "yes", "no")
    boosting = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, labels)
    result = tree_shap(boosting, X.iloc[:40])
    assert beeswarm(result).get_xlabel() == "SHAP value (impact on log-odds of class 'yes')"
    forest = RandomForestClassifier(15, max_depth=5, random_state=0).fit(X, labels)
    forest_result = tree_shap(forest, X.iloc[:40])
    # Two columns (P(no), P(yes)): by default the positive class; either by name or index.
    ax = waterfall(forest_result, 3)
    assert ax.get_xlabel() == "model output: probability of class 'yes'"
    widths = sum(patch.get_width() for patch in ax.patches)
    probability = forest.predict_proba(X.iloc[[3]])[0]
    assert widths == pytest.approx(probability[1] - forest_result.extra["expected_value"][1])
    assert bar(forest_result, output="no").get_xlabel() == (
        "mean |SHAP value| (impact on probability of class 'no')")
    np.testing.assert_allclose(
        [p.get_width() for p in bar(forest_result, output=0, max_display=13).patches],
        np.sort(np.abs(forest_result.extra["shap_values"][..., 0]).mean(axis=0))[::-1])


def test_loss_explanation_has_a_base_value_per_row():
    X, y = _frame(300)
    labels = (y > y.median()).astype(int)
    boosting = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, labels)
    result = tree_shap(boosting, X.iloc[:30], data=X.iloc[100:150], model_output="log_loss",
                       y=labels.iloc[:30])
    ax = waterfall(result, 4)
    margin = boosting.decision_function(X.iloc[[4]])[0]
    loss = np.logaddexp(0.0, margin) - labels.iloc[4] * margin
    base = result.extra["expected_value"][4]
    assert sum(p.get_width() for p in ax.patches) == pytest.approx(loss - base, abs=1e-9)
    assert f"f(x) = {loss:.4g}" in [t.get_text() for t in ax.texts]
    assert ax.get_xlabel() == "model output: log loss"


def test_dependence_plots_values_against_shap_and_colours_by_the_interaction(regression):
    _, X, result = regression
    ax = dependence(result, "a")
    (points,) = _scatters(ax)
    offsets = points.get_offsets()
    np.testing.assert_allclose(offsets[:, 0], X["a"])
    np.testing.assert_allclose(offsets[:, 1], result.extra["shap_values"][:, 0])
    # a acts through a * b: "auto" colours by b.
    colorbar = [other for other in ax.figure.axes if other is not ax][0]
    assert colorbar.get_ylabel() == "b"
    assert ax.get_xlabel() == "a"
    assert ax.get_ylabel() == "SHAP value of a\n(impact on prediction)"
    plain = dependence(result, 2, interaction=None)
    assert len(plain.figure.axes) == 1  # no colour bar


def test_dependence_auto_uses_interaction_values_when_present(regression):
    model, X, _ = regression
    result = tree_shap(model, X.iloc[:80], interactions=True)
    strength = np.abs(result.extra["interaction_values"][:, 0, :]).mean(axis=0)
    strength[0] = 0.0
    ax = dependence(result, "a")
    colorbar = [other for other in ax.figure.axes if other is not ax][0]
    assert colorbar.get_ylabel() == X.columns[np.argmax(strength)] == "b"


def test_dependence_drops_missing_rows_and_labels_categories(regression):
    _, X, result = regression
    shown = X.assign(c=pd.Categorical.from_codes(X["c"].astype(int), ["low", "mid", "high"]))
    shown.loc[shown.index[:3], "a"] = np.nan
    result.extra["data"], original = shown, result.extra["data"]
    try:
        ax = dependence(result, "a", interaction="c")
        assert len(_scatters(ax)[0].get_offsets()) == N_ROWS - 3
        assert ax.get_xlabel() == "a (3 rows missing it not shown)"
        colorbar = [other for other in ax.figure.axes if other is not ax][0]
        assert [t.get_text() for t in colorbar.get_yticklabels()] == ["low", "mid", "high"]
        ax = dependence(result, "c", interaction=None)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["low", "mid", "high"]
    finally:
        result.extra["data"] = original


def test_approximate_interactions_find_the_partner():
    X, y = _frame(1000)
    numbers = X.to_numpy()
    # A feature's SHAP value that depends on b within runs of constant a.
    phi = numbers[:, 0] * numbers[:, 1]
    scores = approximate_interactions(phi, numbers, 0)
    assert np.argmax(np.delete(scores, 0)) == 0  # b, once a itself is left out
    assert scores[1] > 5 * np.delete(scores, [0, 1]).max()
    # A constant column and an all-missing column add nothing.
    numbers[:, 2] = 1.0
    numbers[:, 3] = np.nan
    scores = approximate_interactions(phi, numbers, 0)
    assert scores[2] == 0.0 and scores[3] == 0.0


def test_axes_given_are_drawn_into(regression):
    _, _, result = regression
    figure, axes = plt.subplots(2, 2)
    drawn = [beeswarm(result, ax=axes[0, 0]), bar(result, ax=axes[0, 1]),
             waterfall(result, 0, ax=axes[1, 0]), dependence(result, "b", ax=axes[1, 1])]
    assert drawn == [axes[0, 0], axes[0, 1], axes[1, 0], axes[1, 1]]


def test_dask_results_plot_like_in_memory_ones(regression):
    dd = pytest.importorskip("dask.dataframe")
    model, X, result = regression
    lazy = tree_shap(model, dd.from_pandas(X, npartitions=3))
    np.testing.assert_allclose([p.get_width() for p in bar(lazy).patches],
                               [p.get_width() for p in bar(result).patches], rtol=1e-10)
    np.testing.assert_allclose([p.get_width() for p in waterfall(lazy, 100).patches],
                               [p.get_width() for p in waterfall(result, 100).patches],
                               rtol=1e-9, atol=1e-12)
    assert _tick_texts(waterfall(lazy, 100)) == _tick_texts(waterfall(result, 100))
    assert _tick_texts(beeswarm(lazy)) == _tick_texts(beeswarm(result))


def test_bad_arguments_name_the_parameter(regression):
    model, X, result = regression
    other = permutation_importance(model, X, model.predict(X), n_repeats=2, random_state=0)
    with pytest.raises(ValueError, match="tree_shap result"):
        beeswarm(other)
    with pytest.raises(ValueError, match=r"row must be .* \[0, 159\]; got 160"):
        waterfall(result, N_ROWS)
    with pytest.raises(ValueError, match="output must be None or 0"):
        bar(result, output=1)
    with pytest.raises(ValueError, match="feature must be a feature name"):
        dependence(result, "nope")
    with pytest.raises(ValueError, match="max_display must be a positive int"):
        beeswarm(result, max_display=0)
    X3, y = _frame(200)
    forest = RandomForestClassifier(5, random_state=0).fit(X3, np.digitize(y, [-1, 1]))
    with pytest.raises(ValueError, match=r"output must name one of .* 3 output columns"):
        beeswarm(tree_shap(forest, X3.iloc[:10]))


def test_importing_sapwood_does_not_import_matplotlib():
    code = ("import sys, sapwood, sapwood.plotting, sapwood.importance; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_names_from_data_are_text_not_mathtext():
    X, y = _frame(200)
    X = X.rename(columns={"a": "$a^2$\x1b[31m", "b": "rate [%]"})
    model = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, y)
    result = tree_shap(model, X.iloc[:30])
    shown = "$a^2$\\x1b[31m"  # control characters escaped, dollars kept
    for ax in (beeswarm(result, max_display=13), bar(result, max_display=13)):
        labels = {t.get_text(): t for t in ax.get_yticklabels()}
        assert shown in labels and labels[shown].get_parse_math() is False
    ax = dependence(result, "$a^2$\x1b[31m", interaction="rate [%]")
    assert ax.get_xlabel() == shown and ax.xaxis.label.get_parse_math() is False
    colorbar = [other for other in ax.figure.axes if other is not ax][0]
    assert colorbar.get_ylabel() == "rate [%]"


def test_a_forest_loss_explanation_has_a_base_value_per_row_and_class():
    from sklearn.ensemble import RandomForestClassifier

    X, y = _frame(300)
    labels = (y > y.median()).astype(int)
    forest = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, labels)
    result = tree_shap(forest, X.iloc[:20], data=X.iloc[100:140], model_output="log_loss",
                       y=labels.iloc[:20])
    ax = waterfall(result, 4, output=1)
    base = result.extra["expected_value"][4, 1]
    total = base + result.extra["shap_values"][4, :, 1].sum()
    assert sum(p.get_width() for p in ax.patches) == pytest.approx(total - base, abs=1e-9)
