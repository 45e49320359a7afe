import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def one_thread():
    # HistGradientBoosting's OpenMP threads spin-wait; on a busy 2-core machine that makes
    # tiny fits take seconds. One thread gives the same trees.
    with threadpool_limits(1):
        yield
