"""Janitza and Altmann p-values against naive counting, with hand-made examples."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier as SkRandomForestClassifier
from sklearn.tree import DecisionTreeRegressor

from sapwood.importance import (
    ImportanceResult,
    altmann_pvalues,
    janitza_pvalues,
    permutation_importance,
)
from tests.reference.naive_issue5 import naive_altmann, naive_janitza


def _result(values):
    values = np.asarray(values, dtype=float)
    return ImportanceResult(values, np.zeros_like(values),
                            [f"x{j}" for j in range(values.shape[0])], "permutation",
                            params={"n_repeats": 3})


def test_janitza_by_hand():
    # M = {-0.2, 0.2, -0.1, 0.1, 0.0}
    result = janitza_pvalues(_result([0.5, 0.15, 0.1, 0.0, -0.1, -0.2]))
    np.testing.assert_array_equal(result.pvalues, [0 / 5, 1 / 5, 2 / 5, 3 / 5, 4 / 5, 5 / 5])
    np.testing.assert_array_equal(result.extra["null_importances"],
                                  [-0.2, -0.1, 0.0, 0.1, 0.2])
    assert result.params == {"n_repeats": 3, "pvalues": "janitza"}
    assert result.method == "permutation"
    # Five null values cannot tell a p-value below 1/5 from 0: shown as "< 0.2".
    html = result._repr_html_()
    assert "<td>&lt; 0.2</td>" in html and "<td>0.4</td>" in html


@pytest.mark.parametrize("seed", range(5))
def test_janitza_matches_naive_with_ties(seed):
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(0.02, 0.05, size=60), 2)  # rounding makes ties and zeros
    values[:3] = 0.0
    result = janitza_pvalues(_result(values))
    np.testing.assert_array_equal(result.pvalues, naive_janitza(values))


def test_janitza_leaves_input_untouched_and_keeps_nan():
    original = _result([0.3, np.nan, -0.1])
    result = janitza_pvalues(original)
    assert original.pvalues is None and "null_importances" not in original.extra
    np.testing.assert_array_equal(result.pvalues, [0.0, np.nan, 1.0])


def test_janitza_refuses_all_positive():
    with pytest.raises(ValueError, match="all 3 importances of this 'permutation' result "
                                         "are positive.*altmann_pvalues"):
        janitza_pvalues(_result([0.3, 0.2, 0.1]))


def test_altmann_mdi_matches_naive_on_scikit_learn_forest():
    X, y = make_classification(80, 4, n_informative=2, n_redundant=0, random_state=0)
    forest = SkRandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    result = altmann_pvalues(forest, X, y, measure="mdi", n_permutations=9, random_state=4)
    # Unnormalised: scikit-learn's per-tree sums over the root weight, averaged.
    observed, null, pvalues = naive_altmann(
        forest, X, y, lambda model, X, y: np.mean(
            [tree.tree_.compute_feature_importances(normalize=False)
             for tree in model.estimators_], axis=0), 9, 4)
    np.testing.assert_allclose(result.importances_mean, observed, rtol=1e-12)
    np.testing.assert_allclose(result.extra["null_importances"], null, rtol=1e-12)
    np.testing.assert_array_equal(result.pvalues, pvalues)
    assert result.method == "mdi"
    assert result.params["pvalues"] == "altmann" and result.params["n_permutations"] == 9
    assert result.params["normalized"] is False


def test_altmann_callable_measure_kwargs_and_n_jobs():
    X, y = make_classification(80, 3, n_informative=2, n_redundant=0, random_state=1)
    tree = DecisionTreeRegressor(max_depth=3, random_state=0)

    def measure(model, X, y, n_repeats):
        return permutation_importance(model, X, y, n_repeats=n_repeats, random_state=0)

    serial = altmann_pvalues(tree, X, y, measure=measure, n_permutations=6,
                             random_state=0, n_repeats=2)
    parallel = altmann_pvalues(tree, X, y, measure=measure, n_permutations=6,
                               random_state=0, n_jobs=2, n_repeats=2)
    np.testing.assert_array_equal(serial.pvalues, parallel.pvalues)
    np.testing.assert_array_equal(serial.extra["null_importances"],
                                  parallel.extra["null_importances"])
    assert serial.importances.shape == (3, 2)
    observed, null, pvalues = naive_altmann(
        tree, X, y, lambda model, X, y: measure(model, X, y, 2).importances_mean, 6, 0)
    np.testing.assert_allclose(serial.importances_mean, observed, rtol=1e-12)
    np.testing.assert_allclose(serial.extra["null_importances"], null, rtol=1e-12)
    np.testing.assert_array_equal(serial.pvalues, pvalues)


def test_altmann_separates_signal_from_noise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=200) > 0).astype(int)
    # scikit-learn's forest (bit-identical to sapwood's) refits 20 times in well under
    # a second.
    forest = SkRandomForestClassifier(n_estimators=20, max_depth=4, random_state=0)
    result = altmann_pvalues(forest, X, y, measure="oob_permutation", n_permutations=19,
                             random_state=0, n_jobs=2)
    assert np.all(result.pvalues[:2] == 1 / 20)
    assert np.all(result.pvalues[2:] > 0.05)
    again = altmann_pvalues(forest, X, y, measure="oob_permutation", n_permutations=19,
                            random_state=0)
    np.testing.assert_array_equal(again.extra["null_importances"],
                                  result.extra["null_importances"])
    np.testing.assert_array_equal(again.importances, result.importances)


def test_altmann_measure_must_return_a_result():
    X, y = make_classification(40, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(TypeError, match="ImportanceResult; got ndarray"):
        altmann_pvalues(DecisionTreeRegressor(), X, y, n_permutations=2,
                        measure=lambda model, X, y: model.feature_importances_)
    with pytest.raises(ValueError, match="'measure' parameter"):
        altmann_pvalues(DecisionTreeRegressor(), X, y, measure="shap")
