"""scikit-learn's tree random stream, so sapwood draws the same features and thresholds.

scikit-learn's splitters draw from a 32-bit XorShift generator (Marsaglia 2003,
doi:10.18637/jss.v008.i14) seeded once per tree with
``RandomState.randint(0, 2**31 - 1)``; reproducing it is what makes a sapwood tree
equal to scikit-learn's for the same ``random_state``. The state lives in a
one-element int64 array holding a 32-bit value (int64 keeps Numba from
promoting mixed unsigned arithmetic to float).
"""

from ._numba import kernel

RAND_R_MAX = 2147483647
_MASK32 = 0xFFFFFFFF


@kernel
def rand_r(state):
    """Advance the XorShift state and return a value in [0, RAND_R_MAX]."""
    seed = state[0]
    if seed == 0:
        seed = 1
    seed ^= (seed << 13) & _MASK32
    seed ^= seed >> 17
    seed ^= (seed << 5) & _MASK32
    state[0] = seed
    return seed % (RAND_R_MAX + 1)


@kernel
def rand_int(low, high, state):
    """An integer in [low, high)."""
    return low + rand_r(state) % (high - low)


@kernel
def rand_uniform(low, high, state):
    """A float in [low, high)."""
    return ((high - low) * float(rand_r(state)) / float(RAND_R_MAX)) + low
