"""MDI's node trace is built when it is read (issue 20, item 4), for all trees or one.

A 100-tree forest grown on 150,000 rows has 9.5 million split nodes: building their
table took seconds on every MDI call, so it is built only on request. The numbers it
holds are those of the whole trace, whichever way it is built.
"""

import numpy as np
import pandas as pd
from sklearn.datasets import make_regression
from sklearn.ensemble import RandomForestRegressor

from sapwood.importance import mdi
from tests.reference.sklearn_trees import ensemble_from_sklearn


def _forest_result():
    X, y = make_regression(300, 5, n_informative=3, random_state=3)
    forest = RandomForestRegressor(n_estimators=6, max_depth=4, random_state=0).fit(X, y)
    return mdi(ensemble_from_sklearn(forest))


def test_the_trace_is_built_on_first_read_and_kept():
    result = _forest_result()
    assert "_trace" in vars(result) and callable(vars(result)["_trace"])
    trace = result.trace
    assert isinstance(trace, pd.DataFrame) and result.trace is trace
    assert result["trace"] is trace
    assert trace["tree"].unique().tolist() == list(range(6))


def test_one_trees_rows_equal_that_trees_rows_of_the_whole_trace():
    lazy, built = _forest_result(), _forest_result()
    whole = built.trace
    for tree in range(6):
        alone = lazy.tree_trace(tree)
        expected = whole[whole["tree"] == tree].reset_index(drop=True)
        pd.testing.assert_frame_equal(alone, expected, check_exact=True)
        # From a built trace, the same rows (with the whole trace's index).
        pd.testing.assert_frame_equal(built.tree_trace(tree).reset_index(drop=True),
                                      expected, check_exact=True)
    assert callable(vars(lazy)["_trace"])  # still not built


def test_a_copy_with_p_values_leaves_the_trace_unbuilt_and_equal():
    result = _forest_result()
    tested = result.replace(pvalues=np.full(5, 0.5))
    assert callable(vars(tested)["_trace"])
    pd.testing.assert_frame_equal(tested.trace, result.trace, check_exact=True)
    np.testing.assert_array_equal(tested.importances_mean, result.importances_mean)
