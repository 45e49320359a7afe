"""Cached kernels, each pair one calling the other, for ``test_numba.py``'s new processes."""

from sapwood._kernels._numba import kernel


@kernel
def plus_one(x):
    return x + 1.0


@kernel
def twice_plus_one(x):
    return plus_one(x) * 2.0


@kernel
def at_most_three(n):
    if n > 3:
        raise ValueError("too many", n)  # values known at run time only
    return n


@kernel
def at_most_three_plus_one(n):
    return at_most_three(n) + 1
