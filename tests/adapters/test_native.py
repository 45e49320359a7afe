"""native_importance on models without a source library, and its argument checks."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from sapwood import TreeArrays, TreeEnsemble
from sapwood.adapters import from_model
from sapwood.importance._gain import native_importance

from ._data import make_data


def boosted_stumps():
    def stump(feature, gain, cover):
        return TreeArrays(
            children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[feature, -2, -2],
            threshold=[0.0, -2, -2], impurity=[0, 0, 0], n_node_samples=[4, 2, 2],
            weighted_n_node_samples=[4, 2, 2], value=[[[0.0]], [[-1.0]], [[1.0]]],
            missing_go_to_left=[1, 0, 0], operator=[1, 0, 0], n_features=3,
            gain=[gain, 0, 0], cover=[cover, 1, 1])

    trees = (stump(0, 4.0, 10.0), stump(0, 2.0, 6.0), stump(2, -1.0, 3.0))
    return TreeEnsemble(trees=trees, task="regression", n_features=3, combine="sum")


def test_definitions_on_hand_computed_stumps():
    model = boosted_stumps()

    def values(kind, **options):
        return native_importance(model, kind, **options).importances_mean

    np.testing.assert_array_equal(values("weight"), [2, 0, 1])
    np.testing.assert_array_equal(values("total_gain"), [6, 0, -1])
    np.testing.assert_array_equal(values("gain"), [3, 0, -1])
    np.testing.assert_array_equal(values("total_cover"), [16, 0, 3])
    np.testing.assert_array_equal(values("cover"), [8, 0, 3])
    # LightGBM's counts skip splits without positive gain.
    np.testing.assert_array_equal(values("split"), [2, 0, 0])
    np.testing.assert_allclose(values("weight", normalize=True), [2 / 3, 0, 1 / 3])
    trace = native_importance(model, "gain").trace
    assert list(trace.columns) == ["tree", "node", "feature", "gain", "cover"]
    assert len(trace) == 3


def test_errors_name_the_problem():
    X, _, y = make_data(21)
    forest = RandomForestRegressor(3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="'kind' parameter"):
        native_importance(forest, "permutation")
    with pytest.raises(ValueError, match="no split gains"):
        native_importance(forest, "gain")
    np.testing.assert_allclose(native_importance(forest).importances_mean,
                               forest.feature_importances_, rtol=0, atol=1e-12)
    assert native_importance(from_model(forest)).method == "native_impurity"


def test_tree_ensemble_predict_methods():
    X, y, _ = make_data(22)
    model = boosted_stumps()
    np.testing.assert_array_equal(model.predict(X[:, :3]), model.raw_predict(X[:, :3])[:, 0])
    with pytest.raises(ValueError, match="classification"):
        model.predict_proba(X[:, :3])
