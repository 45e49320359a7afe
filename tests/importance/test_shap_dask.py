"""TreeSHAP on Dask collections equals TreeSHAP on the same rows in memory."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression

from sapwood import RandomForestClassifier, RandomForestRegressor
from sapwood.importance import tree_shap

dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def classifier():
    X, y = make_classification(n_samples=900, n_features=5, n_informative=3,
                               random_state=0)
    X[::17, 2] = np.nan  # missing values follow each split's missing direction
    forest = RandomForestClassifier(15, max_depth=6, random_state=0).fit(X, y)
    return forest, pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])


def test_dataframe_partitions_give_the_in_memory_summary(classifier):
    forest, frame = classifier
    expected = tree_shap(forest, frame)
    result = tree_shap(forest, dd.from_pandas(frame, npartitions=4))
    assert result.feature_names == ["a", "b", "c", "d", "e"]
    np.testing.assert_allclose(result.importances_mean, expected.importances_mean,
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.importances_std, expected.importances_std,
                               rtol=1e-10, atol=1e-15)
    assert result.importances is None and result.params["dask"]
    values = result.extra["shap_values"]
    assert isinstance(values, da.Array) and values.shape == (900, 5, 2)
    np.testing.assert_allclose(values.compute(), expected.extra["shap_values"],
                               rtol=1e-10, atol=1e-13)
    np.testing.assert_array_equal(result.extra["expected_value"],
                                  expected.extra["expected_value"])


def test_array_blocks_with_interactions_and_one_output():
    X, y = make_regression(n_samples=400, n_features=4, random_state=1)
    forest = RandomForestRegressor(10, max_depth=5, random_state=0).fit(X, y)
    expected = tree_shap(forest, X, interactions=True)
    # Blocks that split the columns too: each block must still see whole rows.
    result = tree_shap(forest, da.from_array(X, chunks=(130, 3)), interactions=True,
                       n_jobs=2)
    np.testing.assert_allclose(result.importances_mean, expected.importances_mean,
                               rtol=1e-12)
    np.testing.assert_allclose(result.extra["interaction_values"].compute(),
                               expected.extra["interaction_values"], rtol=1e-10, atol=1e-10)
    assert result.extra["shap_values"].shape == (400, 4)
    assert isinstance(result.extra["expected_value"], float)


def test_bad_dask_input_is_refused(classifier):
    forest, frame = classifier
    with pytest.raises(ValueError, match="numeric columns only.*'name'"):
        tree_shap(forest, dd.from_pandas(frame.assign(name="x"), npartitions=2))
    with pytest.raises(ValueError, match="fit on 5"):
        tree_shap(forest, da.from_array(frame.to_numpy()[:, :3], chunks=100))
    infinite = frame.to_numpy().copy()
    infinite[5, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        tree_shap(forest, da.from_array(infinite, chunks=300))
