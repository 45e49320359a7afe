"""What several report tests share."""

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def table():
    """400 rows of a regression on a and b (c, d noise): explain trains on 300 and
    holds out 100. A test module may define its own ``table`` instead."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((400, 4)), columns=["a", "b", "c", "d"])
    y = pd.Series(2 * X["a"] + X["b"] + rng.normal(0, 0.1, 400), name="y")
    return X, y
