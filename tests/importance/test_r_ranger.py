"""sapwood against R's ranger on ranger's own forests (fixtures from
``tests/reference/r/make_fixtures.R``; R is not needed to run these tests).

What docs/measures.md says about ranger, and how each claim is checked:

- AIR's units: ranger's impurity importances are sapwood's MDI before normalisation
  times n (ranger adds the undivided decreases of every split and divides by the
  number of trees; ``impurity_corrected`` adds and subtracts the same decreases, on the
  original and the shadow columns). Deterministic given the trees: checked to 1e-12
  on ranger's trees (treeInfo) with its in-bag counts.
- OOB permutation importance: ranger computes the same per-tree quantity and mean, and
  its ``scale.permutation.importance = TRUE`` divides by the same SD. ranger's
  permutations come from C++'s ``std::shuffle`` and cannot be replayed, so this is
  checked in distribution on ranger's own trees and OOB rows: given them, ranger's
  number is one draw of the permutation distribution that sapwood samples with each
  ``random_state``.
- AIR itself (``impurity_corrected``): it depends on ranger's shadow permutation, which
  ranger does not return, so sapwood's and ranger's means over 20 seeds are compared.
- Janitza's p-values: ranger's ``importance_pvalues(method = "janitza")`` gives the same
  p-values from the same importances. Deterministic: checked for equality.
"""

import numpy as np
import pytest

from sapwood import RandomForestClassifier, RandomForestRegressor
from sapwood.importance import (
    ImportanceResult,
    air,
    janitza_pvalues,
    oob_permutation_importance,
)
from sapwood.importance._registry import unnormalised_mdi
from tests.reference.r import ranger_forest, read

CASES = [("ranger_classification", True), ("ranger_regression", False)]
# Draws of sapwood's permutations (one repeat each, as ranger permutes once per tree).
N_DRAWS = 30
# |ranger - mean of the draws| / (their SD * sqrt(1 + 1/N_DRAWS)) is about standard
# normal (a mean over 50 trees' independent permutations); 4.5 lets 20 comparisons
# pass by chance with probability 1 - 1e-4 and still catches any difference of
# definition (loss, sign, divisor, which rows), which moves the mean by many SDs.
Z_LIMIT = 4.5
# The features y depends on (make_fixtures.R): x1, x2; and x3 through x2 * x3.
INFORMATIVE = {"ranger_classification": [0, 1], "ranger_regression": [0, 1, 2]}


@pytest.mark.parametrize("name, classification", CASES)
def test_unnormalised_mdi_times_n_equals_ranger_impurity(name, classification):
    ensemble, X, y = ranger_forest(name, classification)
    assert all(tree.weighted_n_node_samples[0] == len(y) for tree in ensemble.trees)
    result = unnormalised_mdi(ensemble, X, y)
    np.testing.assert_allclose(result.importances_mean * len(y),
                               read(f"{name}_importance.csv")["impurity"], rtol=1e-12)


@pytest.fixture(scope="module")
def sapwood_draws():
    """sapwood's OOB permutation importance on ranger's forests, N_DRAWS seeds each:
    {name: (PI per draw, z per draw)}."""
    draws = {}
    for name, classification in CASES:
        ensemble, X, y = ranger_forest(name, classification)
        results = [oob_permutation_importance(ensemble, X, y, random_state=seed)
                   for seed in range(N_DRAWS)]
        draws[name] = (np.array([r.importances_mean for r in results]),
                       np.array([r.extra["zscore"] for r in results]))
    return draws


def _z(observed, draws):
    return (observed - draws.mean(axis=0)) / (draws.std(axis=0, ddof=1)
                                             * np.sqrt(1 + 1 / len(draws)))


@pytest.mark.parametrize("name, classification", CASES)
def test_oob_permutation_agrees_with_ranger_in_distribution(name, classification,
                                                            sapwood_draws):
    expected = read(f"{name}_importance.csv")
    pi, zscore = sapwood_draws[name]
    assert np.all(np.abs(_z(expected["permutation"].to_numpy(), pi)) < Z_LIMIT)
    assert np.all(np.abs(_z(expected["scaled"].to_numpy(), zscore)) < Z_LIMIT)
    # The informative features (x1, x2; x3 through the interaction in regression) stand
    # out on both sides, so the comparison is not between noise and noise.
    informative = INFORMATIVE[name]
    assert np.all(pi.mean(axis=0)[informative] > 5 * pi.std(axis=0, ddof=1)[informative])


def test_oob_permutation_check_has_power(sapwood_draws):
    """The distribution check above rejects what a wrong definition would give: the
    sum over trees instead of the mean, or the SD without its 1/N."""
    for name, _ in CASES:
        expected = read(f"{name}_importance.csv")
        pi, zscore = sapwood_draws[name]
        informative = INFORMATIVE[name]
        assert np.all(np.abs(_z(50 * expected["permutation"].to_numpy(), pi))[informative]
                      > Z_LIMIT)
        assert np.all(np.abs(_z(expected["scaled"].to_numpy() / np.sqrt(50), zscore))
                      [informative] > Z_LIMIT)


def test_janitza_pvalues_equal_ranger():
    fixture = read("ranger_janitza.csv")
    importances = fixture["importance"].to_numpy()
    result = ImportanceResult(importances_mean=importances,
                              importances_std=np.zeros_like(importances),
                              feature_names=[f"x{j + 1}" for j in range(len(importances))],
                              method="impurity_corrected")
    pvalues = janitza_pvalues(result).pvalues
    # A negative importance is in the null sample itself: only ">=" (ties counted)
    # gives ranger's p-value there, so the comparison covers the tie rule.
    assert (importances < 0).sum() >= 50
    # ranger computes 1 - #{m < imp_j} / |M|, sapwood #{m >= imp_j} / |M|: the same
    # count, rounded differently (|M| = 2 x negatives + zeros, so counts differ by
    # 1 / |M| > 1e-3 and 1e-14 tells them apart).
    size = 2 * (importances < 0).sum() + (importances == 0).sum()
    np.testing.assert_array_equal(np.rint(pvalues * size),
                                  np.rint(fixture["pvalue"].to_numpy() * size))
    np.testing.assert_allclose(pvalues, fixture["pvalue"], rtol=0, atol=1e-14)


@pytest.mark.parametrize("classification", [True, False],
                         ids=["classification", "regression"])
def test_air_agrees_with_ranger_impurity_corrected_in_distribution(classification):
    """AIR against ranger's ``importance = "impurity_corrected"``, both over 20 seeds of
    a 100-tree forest with mtry 3 of 10 features (3 informative), trees grown to purity
    (ranger's min.node.size = 1 splits what scikit-learn's min_samples_split = 2
    splits). The two forests grow by the same rules but draw differently, so the means
    are compared: |difference| / its standard error below Z_LIMIT for every feature,
    and (times n, ranger's units) the informative features far above their errors."""
    data = read("ranger_air_data.csv")
    task = "classification" if classification else "regression"
    y = data[f"y_{task}"].to_numpy()
    X = data.drop(columns=["y_classification", "y_regression"]).to_numpy()
    expected = read("ranger_air.csv").query("task == @task")
    model = RandomForestClassifier if classification else RandomForestRegressor
    draws = np.array([air(model(100, max_features="sqrt", random_state=seed),
                                         X, y, random_state=seed).importances_mean
                      for seed in range(20)]) * len(y)
    error = np.sqrt(expected["sd"].to_numpy() ** 2 / 20 + draws.var(axis=0, ddof=1) / 20)
    z = (draws.mean(axis=0) - expected["mean"].to_numpy()) / error
    assert np.all(np.abs(z) < Z_LIMIT)
    assert np.all(expected["mean"].to_numpy()[:3] > 10 * error[:3])
