"""Two processes saving two versions of one kernel to Numba's cache at the same time.

The versions are one kernel's for two argument types, in one cache index. Each
process is slowed inside the save at chosen points so that, without a lock, both read
the same index, pick the same data file name, and the index is written last by one
process while the data file is written last by the other; and a process stopped while
it saves. Run in new processes by ``tests/kernels/test_cache.py``.
"""

import time

from numba.core import caching

from sapwood._kernels._numba import kernel
from sapwood.cli._warmup import stop_when_stdin_closes


@kernel
def doubled(x):
    return x + x


# The argument of each version: a float and an integer.
ARGUMENTS = (1.5, 2)

# Seconds each process waits before writing the index and before writing the data file:
# process 0 writes its index first and its data last.
_DELAYS = ((1.0, 2.0), (1.5, 0.0))


def _slow_saves(before_index, before_data):
    save_index = caching.IndexDataCacheFile._save_index
    save_data = caching.IndexDataCacheFile._save_data

    def slow_index(self, overloads):
        time.sleep(before_index)
        save_index(self, overloads)

    def slow_data(self, name, data):
        time.sleep(before_data)
        save_data(self, name, data)

    caching.IndexDataCacheFile._save_index = slow_index
    caching.IndexDataCacheFile._save_data = slow_data


def compile_slowly(which, barrier):
    """Compile the version of ``doubled`` for ``ARGUMENTS[which]`` into the cache, the save
    slowed by ``_DELAYS[which]``."""
    _slow_saves(*_DELAYS[which])
    barrier.wait()
    doubled(ARGUMENTS[which])


def compile_slowly_until_stopped():
    """As a process of ``cli._warmup.compile_ahead``: compile the first version of
    ``doubled``, its index written two seconds before its data file, then wait to be
    stopped."""
    stop_when_stdin_closes()
    _slow_saves(0.0, 2.0)
    doubled(ARGUMENTS[0])
    time.sleep(600)


def cached_values():
    """What each version returns in a new process (from the cache where it can), with
    the type of each result."""
    return [(value := doubled(argument), type(value).__name__) for argument in ARGUMENTS]
