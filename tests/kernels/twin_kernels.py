"""Two cached kernels, one calling the other, for ``test_numba.py``'s new processes."""

from sapwood._kernels._numba import kernel


@kernel
def plus_one(x):
    return x + 1.0


@kernel
def twice_plus_one(x):
    return plus_one(x) * 2.0
