"""Casewise OOB importance against R's randomForest ``localImp``, on R's own tree with R's
own permutations (fixtures made by ``fixtures/randomforest_localimp/make_fixture.R``;
R is not needed to run this test).

randomForest permutes each used variable's out-of-bag values with R's ``unif_rand()``
(``rf.c``, ``permuteOOB``). The fixture keeps R's Mersenne-Twister state where those
draws start, so the test replays them with NumPy's MT19937 and hands R's tree and the
replayed permutations to sapwood's kernel: its casewise values must equal R's.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sapwood._kernels._oob import oob_tree_permutation
from tests.reference.r import r_uniforms, randomforest_permutation

FIXTURES = Path(__file__).parent / "fixtures" / "randomforest_localimp"


def r_tree(path):
    """R's getTree() as sapwood's kernel arrays (0-based, leaves -1; x <= split goes
    left)."""
    tree = pd.read_csv(path)
    leaf = tree["status"].to_numpy() == -1
    left = np.where(leaf, -1, tree["left daughter"].to_numpy() - 1).astype(np.intp)
    right = np.where(leaf, -1, tree["right daughter"].to_numpy() - 1).astype(np.intp)
    feature = np.where(leaf, -2, tree["split var"].to_numpy() - 1).astype(np.intp)
    threshold = np.where(leaf, -2.0, tree["split point"].to_numpy()).astype(np.float64)
    prediction = np.where(leaf, tree["prediction"].to_numpy() - 1, 0).astype(np.float64)
    n = len(tree)
    return (left, right, feature, threshold, np.zeros(n, dtype=np.uint8),
            np.zeros(n, dtype=np.uint8), prediction)


@pytest.mark.parametrize("case", ["three_classes", "four_classes"])
def test_casewise_equals_randomforest_localimp(case):
    data = pd.read_csv(FIXTURES / f"{case}_data.csv")
    y = data.pop("y").to_numpy() - 1
    X = np.ascontiguousarray(data.to_numpy(dtype=np.float64))
    n_classes = int(y.max()) + 1
    inbag = pd.read_csv(FIXTURES / f"{case}_inbag.csv")["inbag"].to_numpy()
    expected = pd.read_csv(FIXTURES / f"{case}_localimp.csv").to_numpy()
    state = pd.read_csv(FIXTURES / f"{case}_rngstate.csv")["seed"].to_numpy()
    left, right, feature, threshold, missing_left, operator, prediction = r_tree(
        FIXTURES / f"{case}_tree.csv")

    oob = np.flatnonzero(inbag == 0)
    m = len(oob)
    # permuteOOB, variable by variable (only those the tree uses draw).
    uniforms = r_uniforms(state)
    permutations = np.tile(np.arange(m), (1, X.shape[1], 1))
    for j in range(X.shape[1]):
        if not (feature == j).any():
            continue
        permutations[0, j] = randomforest_permutation(uniforms, m)

    target = y[oob].astype(np.float64)
    _, increase, _, casewise = oob_tree_permutation(
        X, oob, target, y[oob].astype(np.intp), n_classes, True, left, right, feature,
        threshold, missing_left, operator, np.zeros(0, np.uint32), prediction, permutations)

    # In-bag rows: R divides by zero out-of-bag trees.
    assert np.isnan(expected[inbag > 0]).all()
    np.testing.assert_array_equal(casewise, expected[oob])
    # The case this fixes: a wrong class turned into another wrong class counts +1, so
    # the casewise sum exceeds the accuracy drop (which counts it 0) somewhere.
    assert (casewise.sum(axis=0) > increase).any()
