"""Kernels made by factories (closures over a constant, as the grower's per-criterion
kernels are), for ``test_numba.py``'s new processes."""

import numpy as np

from sapwood._kernels._numba import kernel


def _shifted_by(shift):
    @kernel
    def shifted(x):
        """``shift``, after enough arithmetic on ``x`` (times zero) that LLVM keeps this a
        function of its own instead of inlining it into its callers."""
        total = 0.0
        for step in range(1, 21):
            total = total * 0.5 + np.sin(x * step + total) / (step + 1)
            total = total - np.cos(total * step) / (step + 2)
        total = total * 0.5 + np.sin(x + total) / 3.0
        total = total * 0.5 + np.cos(x - total) / 5.0
        total = total * 0.5 + np.sin(x * 2.0 + total) / 7.0
        total = total * 0.5 + np.cos(x * 3.0 - total) / 11.0
        total = total * 0.5 + np.sin(x * 5.0 + total) / 13.0
        total = total * 0.5 + np.cos(x * 7.0 - total) / 17.0
        total = total * 0.5 + np.sin(x * 11.0 + total) / 19.0
        total = total * 0.5 + np.cos(x * 13.0 - total) / 23.0
        total = total * 0.5 + np.sin(x * 17.0 + total) / 29.0
        total = total * 0.5 + np.cos(x * 19.0 - total) / 31.0
        total = total * 0.5 + np.sin(x * 23.0 + total) / 37.0
        total = total * 0.5 + np.cos(x * 29.0 - total) / 41.0
        total = total * 0.5 + np.sin(x * 31.0 + total) / 43.0
        total = total * 0.5 + np.cos(x * 37.0 - total) / 47.0
        total = total * 0.5 + np.sin(x * 41.0 + total) / 53.0
        total = total * 0.5 + np.cos(x * 43.0 - total) / 59.0
        return total * 0.0 + shift
    return shifted


SHIFTED_BY_ONE = _shifted_by(1)
SHIFTED_BY_TWO = _shifted_by(2)


def _caller(shift):
    @kernel
    def caller(x):
        if shift == 1:
            return SHIFTED_BY_ONE(x) + SHIFTED_BY_ONE(x + 1.0) * 0.0
        return SHIFTED_BY_TWO(x) + SHIFTED_BY_TWO(x + 1.0) * 0.0
    return caller


CALLERS = {shift: _caller(shift) for shift in (1, 2)}
