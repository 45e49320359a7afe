"""MDI+ against the imodels implementation on the same forests (scikit-learn's and
sapwood's, every sample split), a known-truth case, and the errors.

Tolerance: the per-tree R^2 values agree to 1e-10. Both compute the same ridge fits and
the same exact leave-one-out updates, by different linear algebra (imodels: an explicit
inverse of the normal equations, sapwood: one SVD of the centred design), so they
differ by round-off only; the penalty chosen from the grid is the same.
"""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import sapwood
from sapwood.importance import mdi_plus

imodels = pytest.importorskip("imodels")
from imodels.importance import RandomForestPlusRegressor  # noqa: E402
from imodels.importance.block_transformers import MDIPlusDefaultTransformer  # noqa: E402
from imodels.importance.mdi_plus import ForestMDIPlus  # noqa: E402
from imodels.importance.ppms import RidgeRegressorPPM  # noqa: E402
from imodels.importance.rf_plus import _fast_r2_score  # noqa: E402

TOLERANCE = 1e-10


def _data(seed=0, n=200, p=6):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + 0.5 * X[:, 2] + rng.normal(size=n)
    return X, y


def _ranks(values):
    return np.argsort(np.argsort(-values))


@pytest.mark.parametrize("split", ["loo", "oob", "inbag"])
def test_equals_imodels_on_a_scikit_learn_forest(split):
    X, y = _data()
    # 40 trees: with fewer, imodels' out-of-bag fit fails on rows that are in every bag.
    forest = RandomForestRegressor(n_estimators=40, min_samples_leaf=5, max_features=0.5,
                                   random_state=0)
    ppm = RidgeRegressorPPM() if split == "loo" else RidgeRegressorPPM(loo=False)
    plus = RandomForestPlusRegressor(rf_model=forest, prediction_model=ppm, sample_split=split)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plus.fit(X, y)
        expected = plus.get_mdi_plus_scores(X, y)["importance"].to_numpy()
    per_tree = plus.mdi_plus_.feature_importances_by_tree_.to_numpy()
    result = mdi_plus(plus.rf_model, X, y, sample_split=split)
    np.testing.assert_allclose(result.importances, per_tree, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(result.importances_mean, expected, rtol=0, atol=TOLERANCE)
    np.testing.assert_array_equal(_ranks(result.importances_mean), _ranks(expected))
    np.testing.assert_array_equal(result.extra["alpha"],
                                  [e.alpha_[0] for e in plus.estimators_])


def _imodels_on_trees(trees, X, y):
    """imodels' MDI+ (ridge, leave-one-out, R^2) on already fitted trees."""
    estimators, transformers = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for tree in trees:
            transformer = MDIPlusDefaultTransformer(tree)
            blocks = transformer.fit_transform(X)
            if blocks.get_all_data().shape[1] == 0:
                continue
            ppm = RidgeRegressorPPM()
            ppm.fit(blocks.get_all_data(), y)
            estimators.append(ppm)
            transformers.append(transformer)
        scores = ForestMDIPlus(estimators, transformers, _fast_r2_score,
                               tree_random_states=[None] * len(estimators)).get_scores(X, y)
    return scores["importance"].to_numpy()


def test_equals_imodels_on_a_sapwood_forest():
    X, y = _data(1)
    forest = sapwood.RandomForestRegressor(n_estimators=20, min_samples_leaf=5,
                                           random_state=0).fit(X, y)
    expected = _imodels_on_trees(forest.estimators_, X, y)
    result = mdi_plus(forest, X, y)
    np.testing.assert_allclose(result.importances_mean, expected, rtol=0, atol=TOLERANCE)


def test_binary_classifier_equals_imodels_ridge_on_the_labels():
    """Ridge on the one-hot indicators, R^2 averaged over the two classes, equals
    imodels' ridge on the 0/1 label scored by R^2 (the two columns are y and 1 - y)."""
    X, _ = _data(2)
    rng = np.random.RandomState(2)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=len(X)) > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=20, min_samples_leaf=3, random_state=0)
    forest.fit(X, y)
    expected = _imodels_on_trees(forest.estimators_, X, y.astype(float))
    result = mdi_plus(forest, X, y)
    np.testing.assert_allclose(result.importances_mean, expected, rtol=0, atol=TOLERANCE)


def test_known_truth_signal_above_noise():
    """y depends on x0, x1, x2 only: they rank first, in the order of their share of
    the variance (x0: 4, x1: 2, x2: 0.25), and the noise features are near zero."""
    X, y = _data(3, n=400)
    forest = RandomForestRegressor(n_estimators=30, min_samples_leaf=5,
                                   random_state=0).fit(X, y)
    result = mdi_plus(forest, X, y)
    assert list(np.argsort(-result.importances_mean)[:3]) == [0, 1, 2]
    assert np.all(np.abs(result.importances_mean[3:]) < 0.02)
    assert np.all(result.ci_low[:3] > result.ci_high[3:].max())


def test_trace_lists_every_stump_with_its_coefficient():
    X, y = _data(4, n=100)
    forest = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    result = mdi_plus(forest, X, y, feature_names=list("abcdef"))
    trace = result.trace
    n_splits = sum(int((e.tree_.children_left >= 0).sum()) for e in forest.estimators_)
    assert len(trace) == n_splits
    w_left, w_right = trace["w_left"], trace["w_right"]
    np.testing.assert_allclose(trace["value_left"], -np.sqrt(w_right / w_left))
    np.testing.assert_allclose(trace["value_right"], np.sqrt(w_left / w_right))
    assert set(trace["feature"]) <= set("abcdef")
    assert trace["coefficient"].notna().all()


def test_errors():
    X, y = _data(5, n=60)
    tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="sample_split='oob' needs a bagged forest"):
        mdi_plus(tree, X, y, sample_split="oob")
    with pytest.raises(ValueError, match="sample_split"):
        mdi_plus(tree, X, y, sample_split="cv")
    with pytest.raises(ValueError, match="alphas of mdi_plus must be positive"):
        mdi_plus(tree, X, y, alphas=[0.0, 1.0])
    with pytest.raises(ValueError, match="y has 59 entries but X has 60 rows"):
        mdi_plus(tree, X, y[:-1])
    stump = DecisionTreeRegressor(max_depth=1).fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="at least one split"):
        mdi_plus(stump, X, y)
