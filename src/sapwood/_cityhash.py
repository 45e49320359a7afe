"""CityHash64, the hash CatBoost gives a categorical value's text (imports nothing).

CatBoost tests a one-hot categorical split as ``hash(text) == value``, where ``hash`` is
the low 32 bits of CityHash64 (Pike and Alakuijala, Google, 2011) of the value's UTF-8
text, an integer category being hashed as its decimal text. Written from the
algorithm's published description in plain Python: it hashes each distinct label of a
column once, so speed does not matter. Arithmetic is on 64-bit words (every result is
reduced modulo 2**64); words are read little-endian.
"""

from __future__ import annotations

__all__ = ["city_hash64", "catboost_hash"]

_MASK = (1 << 64) - 1
# The algorithm's constants: primes between 2**63 and 2**64.
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F
_K3 = 0xC949D7C7509E6557
_KMUL = 0x9DDFEA08EB382D69


def _word(data, at):
    return int.from_bytes(data[at:at + 8], "little")


def _half(data, at):
    return int.from_bytes(data[at:at + 4], "little")


def _rotate(value, shift):
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value):
    return value ^ (value >> 47)


def _mix(u, v, mul=_KMUL):
    """Two words into one (the 128-to-64-bit reduction, with its multiplier)."""
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _up_to_16(data, n):
    if n > 8:
        a = _word(data, 0)
        b = _word(data, n - 8)
        return _mix(a, _rotate((b + n) & _MASK, n)) ^ b
    if n >= 4:
        return _mix((n + (_half(data, 0) << 3)) & _MASK, _half(data, n - 4))
    if n > 0:
        y = data[0] + (data[n >> 1] << 8)
        z = n + (data[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K3)) & _MASK) * _K2) & _MASK
    return _K2


def _up_to_32(data, n):
    a = (_word(data, 0) * _K1) & _MASK
    b = _word(data, 8)
    c = (_word(data, n - 8) * _K2) & _MASK
    d = (_word(data, n - 16) * _K0) & _MASK
    return _mix((_rotate((a - b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
                (a + _rotate(b ^ _K3, 20) - c + n) & _MASK)


def _half_32(data, at, z, a):
    """Two words from the 32 bytes at ``at`` (``z`` one of them, ``a`` a seed)."""
    b = _rotate((a + z) & _MASK, 52)
    c = _rotate(a, 37)
    a = (a + _word(data, at + 8)) & _MASK
    c = (c + _rotate(a, 7)) & _MASK
    a = (a + _word(data, at + 16)) & _MASK
    return (a + z) & _MASK, (b + _rotate(a, 31) + c) & _MASK


def _up_to_64(data, n):
    a = (_word(data, 0) + (n + _word(data, n - 16)) * _K0) & _MASK
    vf, vs = _half_32(data, 0, _word(data, 24), a)
    a = (_word(data, 16) + _word(data, n - 32)) & _MASK
    wf, ws = _half_32(data, n - 32, _word(data, n - 8), a)
    r = _shift_mix(((vf + ws) * _K2 + (wf + vs) * _K0) & _MASK)
    return (_shift_mix((r * _K0 + vs) & _MASK) * _K2) & _MASK


def _weak_32(data, at, a, b):
    """The 32 bytes at ``at`` with two seeds into two words."""
    w, x, y, z = (_word(data, at + 8 * k) for k in range(4))
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def city_hash64(data: bytes) -> int:
    """CityHash64 of ``data``, an unsigned 64-bit integer."""
    n = len(data)
    if n <= 16:
        return _up_to_16(data, n)
    if n <= 32:
        return _up_to_32(data, n)
    if n <= 64:
        return _up_to_64(data, n)
    # Longer inputs: the last 64 bytes seed a state of seven words, which each 64-byte
    # block (the last one partly repeated) is then mixed into.
    x = _word(data, 0)
    y = _word(data, n - 16) ^ _K1
    z = _word(data, n - 56) ^ _K0
    v = _weak_32(data, n - 64, n, y)
    w = _weak_32(data, n - 32, (n * _K1) & _MASK, _K0)
    z = (z + _shift_mix(v[1]) * _K1) & _MASK
    x = (_rotate((z + x) & _MASK, 39) * _K1) & _MASK
    y = (_rotate(y, 33) * _K1) & _MASK
    for at in range(0, (n - 1) & ~63, 64):
        x = (_rotate((x + y + v[0] + _word(data, at + 16)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v[1] + _word(data, at + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y ^= v[0]
        z = _rotate(z ^ w[0], 33)
        v = _weak_32(data, at, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak_32(data, at + 32, (z + w[1]) & _MASK, y)
        z, x = x, z
    return _mix((_mix(v[0], w[0]) + _shift_mix(y) * _K1 + z) & _MASK,
                (_mix(v[1], w[1]) + x) & _MASK)


def catboost_hash(text: str) -> int:
    """CatBoost's hash of a categorical value's text: CityHash64's low 32 bits."""
    return city_hash64(text.encode("utf-8")) & 0xFFFFFFFF
