"""A small, strict reader for Universal Binary JSON (the format of XGBoost's ``.ubj`` files).

Only reading is needed. Every length and count is checked against the bytes that remain
before anything is allocated, elements that take no bytes (typed null, true, false) are
limited to one per byte of the file, and nesting is limited, so a hostile file can raise
FormatError but cannot exhaust memory or the stack, and costs time in proportion to its
size. Strongly typed numeric arrays
(XGBoost's node arrays) come back as NumPy arrays.
"""

from __future__ import annotations

import struct

import numpy as np

from .._format import FormatError

__all__ = ["loads"]

_MAX_DEPTH = 64
_NUMBERS = {b"i": ">i1", b"U": ">u1", b"I": ">i2", b"l": ">i4", b"L": ">i8",
            b"d": ">f4", b"D": ">f8"}
_CONSTANTS = {b"Z": None, b"T": True, b"F": False}
# The same numbers one at a time, as Python ints and floats (a float32 widened exactly).
_SCALARS = {marker: struct.Struct(code) for marker, code in
            {b"i": ">b", b"U": ">B", b"I": ">h", b"l": ">i", b"L": ">q", b"d": ">f",
             b"D": ">d"}.items()}


def loads(data: bytes):
    """Decode one UBJSON value that fills ``data`` exactly."""
    reader = _Reader(bytes(data))
    value = reader.value(reader.marker(), 0)
    if reader.pos != len(data):
        raise FormatError(f"UBJSON: {len(data) - reader.pos} unexpected bytes after the value")
    return value


class _Reader:
    # A model file holds ~20 values per tree: markers and scalars are read from the
    # bytes directly (a one-byte slice, ``struct``), not through NumPy, which costs
    # microseconds per call.

    def __init__(self, data):
        self.data = data
        self.view = memoryview(data)  # typed arrays are read without a copy
        self.size = len(data)
        self.pos = 0
        # Elements of a zero-size type (null, true, false) in a typed container take no
        # bytes, so their count is bounded by this instead: at most one per byte of the
        # whole file, however many containers declare them. Without it a file of many
        # such containers, each as long as the bytes that remain, costs quadratic time.
        self.free_elements = len(data)

    def take(self, n):
        pos = self.pos
        if n < 0 or pos + n > self.size:
            raise FormatError(f"UBJSON: truncated at byte {pos} (needs {n} more bytes)")
        self.pos = pos + n
        return self.view[pos:pos + n]

    def marker(self):
        data, pos = self.data, self.pos
        marker = b"N"
        while marker == b"N":  # no-op padding
            if pos >= self.size:
                self.pos = pos
                raise FormatError(f"UBJSON: truncated at byte {pos} (needs 1 more bytes)")
            marker = data[pos:pos + 1]
            pos += 1
        self.pos = pos
        return marker

    def number(self, marker):
        scalar = _SCALARS[marker]
        pos = self.pos
        if pos + scalar.size > self.size:
            raise FormatError(f"UBJSON: truncated at byte {pos} (needs {scalar.size} more "
                              "bytes)")
        self.pos = pos + scalar.size
        return scalar.unpack_from(self.data, pos)[0]

    def length(self, marker=None):
        marker = self.marker() if marker is None else marker
        if marker not in _NUMBERS or marker in (b"d", b"D"):
            raise FormatError(f"UBJSON: a length must be an integer, got marker {marker!r}")
        n = self.number(marker)
        if n < 0 or n > self.size - self.pos:
            raise FormatError(f"UBJSON: length {n} exceeds the remaining data")
        return n

    def string(self):
        try:
            return str(self.take(self.length()), "utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(f"UBJSON: a string is not valid UTF-8 ({error})") from None

    def value(self, marker, depth):
        if marker in _CONSTANTS:
            return _CONSTANTS[marker]
        if marker in _NUMBERS:
            return self.number(marker)
        if marker == b"C":
            return str(self.take(1), "latin-1")
        if marker == b"S":
            return self.string()
        if marker == b"H":
            text = self.string()
            try:
                return float(text) if any(c in text for c in ".eE") else int(text)
            except ValueError:
                raise FormatError(f"UBJSON: bad high-precision number {text!r}") from None
        if marker in (b"[", b"{"):
            if depth >= _MAX_DEPTH:
                raise FormatError(f"UBJSON: nesting deeper than {_MAX_DEPTH} levels")
            return self.container(marker == b"{", depth + 1)
        raise FormatError(f"UBJSON: unknown marker {marker!r} at byte {self.pos - 1}")

    def container(self, is_object, depth):
        item_type, count = None, None
        peek = self.marker()
        if peek == b"$":
            item_type = self.marker()
            if self.marker() != b"#":
                raise FormatError("UBJSON: a typed container must give its count")
            count = self.length()
        elif peek == b"#":
            count = self.length()
        else:
            self.pos -= 1
        if item_type in _CONSTANTS and count is not None:
            self.free_elements -= count
            if self.free_elements < 0:
                raise FormatError(f"UBJSON: typed containers declare more {item_type!r} "
                                  f"elements (which take no bytes) than the file has bytes "
                                  f"({len(self.data)})")
        if not is_object and item_type in _NUMBERS and count is not None:
            dtype = np.dtype(_NUMBERS[item_type])
            if count * dtype.itemsize > len(self.data) - self.pos:
                raise FormatError(f"UBJSON: array of {count} numbers exceeds the remaining data")
            return np.frombuffer(self.take(count * dtype.itemsize), dtype=dtype).astype(
                dtype.newbyteorder("="))
        items = {} if is_object else []
        index = 0
        while True:
            if count is not None:
                if index == count:
                    break
            elif self.data[self.pos:self.pos + 1] == (b"}" if is_object else b"]"):
                self.pos += 1
                break
            key = self.string_key() if is_object else None
            marker = item_type if item_type is not None else self.marker()
            item = self.value(marker, depth)
            if is_object:
                items[key] = item
            else:
                items.append(item)
            index += 1
        return items

    def string_key(self):
        if self.pos >= len(self.data):
            raise FormatError("UBJSON: truncated inside an object")
        return self.string()

