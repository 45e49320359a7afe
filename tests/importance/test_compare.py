"""compare: one tidy table equal to the measures run one by one, and its plot."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.ensemble import RandomForestClassifier as SkRandomForestClassifier  # noqa: E402
from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier  # noqa: E402

from sapwood.datasets import make_ground_truth  # noqa: E402
from sapwood.importance import (  # noqa: E402
    compare,
    conditional_permutation_importance,
    drop_column_importance,
    mdi,
    oob_permutation_importance,
    permutation_importance,
    tree_shap,
    ufi,
)
from sapwood.plotting import plot_compare  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = make_ground_truth(300, random_state=0)
    X_train, X_test, y_train, y_test = X[:200], X[200:], y[:200], y[200:]
    model = SkRandomForestClassifier(n_estimators=15, random_state=0).fit(X_train, y_train)
    return model, X_train, y_train, X_test, y_test


def test_table_equals_the_measures_one_by_one(fitted):
    model, X, y, X_test, y_test = fitted
    table = compare(model, X, y, methods=["mdi", "permutation", "oob_permutation",
                                          "drop_column", "unbiased_mdi", "tree_shap"],
                    X_test=X_test, y_test=y_test, random_state=0)
    assert table.columns.tolist() == ["feature", "method", "importance", "std", "rank"]
    assert table["method"].unique().tolist() == ["mdi", "permutation", "oob_permutation",
                                                 "drop_column", "unbiased_mdi", "tree_shap"]
    expected = {
        "mdi": mdi(model),
        "permutation": permutation_importance(model, X_test, y_test, random_state=0),
        "oob_permutation": oob_permutation_importance(model, X, y, random_state=0),
        "drop_column": drop_column_importance(SkRandomForestClassifier(
            n_estimators=15, random_state=0), X, y, X_test, y_test),
        "unbiased_mdi": ufi(model, X, y),
        "tree_shap": tree_shap(model, X_test),
    }
    for method, result in expected.items():
        rows = table[table["method"] == method]
        assert rows["feature"].tolist() == list(X.columns)
        np.testing.assert_array_equal(rows["importance"], result.importances_mean)
        np.testing.assert_array_equal(rows["std"], result.importances_std)
        np.testing.assert_array_equal(rows["rank"], result.ranks())


def test_permutation_falls_back_to_training_data(fitted):
    model, X, y, _, _ = fitted
    table = compare(model, X, y, methods=["permutation"], random_state=1)
    expected = permutation_importance(model, X, y, random_state=1)
    np.testing.assert_array_equal(table["importance"], expected.importances_mean)


def test_conditional_uses_oob_rows_of_a_forest_and_held_out_rows_otherwise(fitted):
    model, X, y, X_test, y_test = fitted
    table = compare(model, X, y, methods=["conditional_permutation"], random_state=0)
    expected = conditional_permutation_importance(model, X, y, random_state=0)
    np.testing.assert_array_equal(table["importance"], expected.importances_mean)
    single_tree = SkDecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    table = compare(single_tree, X, y, methods=["conditional_permutation"],
                    X_test=X_test, y_test=y_test, random_state=0)
    expected = conditional_permutation_importance(single_tree, X_test, y_test,
                                                  random_state=0)
    np.testing.assert_array_equal(table["importance"], expected.importances_mean)
    with pytest.raises(ValueError, match="needs out-of-sample rows"):
        compare(single_tree, X, y, methods=["conditional_permutation"])


def test_callable_method_named_by_its_result(fitted):
    model, X, y, _, _ = fitted
    def oob(model, X, y):
        return oob_permutation_importance(model, X, y, random_state=0)

    table = compare(model, X, y, methods=["mdi", oob])
    assert table["method"].unique().tolist() == ["mdi", "oob_permutation"]
    with pytest.raises(TypeError, match="ImportanceResult; got ndarray"):
        compare(model, X, y, methods=[lambda model, X, y: model.feature_importances_])


def test_errors(fitted):
    model, X, y, X_test, _ = fitted
    with pytest.raises(ValueError, match="names from .*'no_such_measure'"):
        compare(model, X, y, methods=["no_such_measure"])
    with pytest.raises(ValueError, match="distinct"):
        compare(model, X, y, methods=["mdi", "mdi"])
    with pytest.raises(ValueError, match="both X_test and y_test"):
        compare(model, X, y, X_test=X_test)
    single_tree = SkDecisionTreeClassifier(max_depth=3).fit(X, y)
    for name in ("ufi", "unbiased_mdi"):
        with pytest.raises(ValueError, match="needs out-of-sample rows"):
            compare(single_tree, X, y, methods=[name])
    with pytest.raises(ValueError, match="at least one"):
        compare(model, X, y, methods=[])


def test_plot_draws_one_bar_per_feature_and_method(fitted):
    model, X, y, X_test, y_test = fitted
    table = compare(model, X, y, methods=["mdi", "permutation"], X_test=X_test,
                    y_test=y_test, random_state=0)
    ax = plot_compare(table, max_features=4)
    assert len(ax.patches) == 8
    assert len(ax.get_yticklabels()) == 4
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["mdi", "permutation"]
    # scale="max": each method's largest bar has length 1.
    widths = np.array([p.get_width() for p in ax.patches])
    assert np.isclose(widths[:4].max(), 1.0) and np.isclose(widths[4:].max(), 1.0)
    raw = plot_compare(table, scale="none", max_features=None)
    assert len(raw.patches) == 2 * X.shape[1]
    with pytest.raises(ValueError, match="lacks \\['std'\\]"):
        plot_compare(pd.DataFrame({"feature": [], "method": [], "importance": []}))
    with pytest.raises(ValueError, match="scale must be one of"):
        plot_compare(table, scale="log")
