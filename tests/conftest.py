import os

# The suite runs on two workers (pytest -n 2) on machines with two cores. XGBoost and
# LightGBM would each start one OpenMP thread per core inside every worker, and
# LightGBM's spinning threads then wait for each other: one test took 48 s instead of
# 0.7 s. One thread per worker keeps them fast; the numbers do not depend on it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The fuzz tests limit the address space (tests/_bounds.py). Arrow's own allocator
# reserves large arenas up front, so under that limit pandas' Arrow strings fail to
# allocate 64 bytes; the system allocator asks only for what is used.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the slow reference comparisons")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow reference comparison: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
