"""New arrays inside kernels: ``empty``, ``zeros`` and ``full``, as NumPy's functions of
the same names (C order), the dtype always given, as a positional argument.

Kernels allocate with these, never with ``np.empty``, ``np.zeros``, ``np.full``,
``np.ones`` or ``np.*_like`` (``tests/kernels/test_arrays.py`` checks): Numba compiles
its implementation of a NumPy function as a function of its own, once per shape type
and dtype, each through its whole pipeline (typing, lowering, LLVM passes, machine
code), and a cold demo compiled dozens of them. These are Numba intrinsics: each call
is lowered in place, in the kernel calling it, to the code Numba's own implementation
would have inlined there after those compiles (its allocation, overflow and
negative-size checks included), so a call costs the caller's typing of one call and nothing more.
"""

from numba.core import cgutils, types
from numba.core.extending import intrinsic
from numba.core.typing.npydecl import parse_dtype, parse_shape
from numba.np.arrayobj import _empty_nd_impl, _parse_empty_args

__all__ = ["empty", "full", "zeros"]


def _typed(codegen, shape, dtype, fill_value=None):
    """The intrinsic's signature and ``codegen``: a C-order array of NumPy's making from
    ``shape`` (an integer or a tuple of integers) and ``dtype`` (a NumPy scalar type or
    an array's dtype), from those and ``fill_value`` (a number or boolean, for ``full``)
    when given; None when they are not of those kinds (the call then fails to type,
    naming its arguments)."""
    element = parse_dtype(dtype)
    ndim = parse_shape(shape)
    if element is None or ndim is None:
        return None
    array_type = types.Array(element, ndim, "C")
    if fill_value is None:
        return array_type(shape, dtype), codegen
    if not isinstance(fill_value, (types.Number, types.Boolean)):
        return None
    return array_type(shape, fill_value, dtype), codegen


def _allocated(context, builder, signature, arguments):
    """The new array's structure (Numba's own allocation: ``np.empty``'s checks)."""
    array_type, shapes = _parse_empty_args(context, builder, signature, arguments)
    return _empty_nd_impl(context, builder, array_type, shapes)


@intrinsic
def empty(typingctx, shape, dtype):
    """``np.empty(shape, dtype)``: a new array, its entries not set."""

    def codegen(context, builder, signature, arguments):
        return _allocated(context, builder, signature, arguments)._getvalue()

    return _typed(codegen, shape, dtype)


@intrinsic
def zeros(typingctx, shape, dtype):
    """``np.zeros(shape, dtype)``: a new array of zeros (every byte 0: 0, 0.0, False)."""

    def codegen(context, builder, signature, arguments):
        array = _allocated(context, builder, signature, arguments)
        cgutils.memset(builder, array.data, builder.mul(array.itemsize, array.nitems), 0)
        return array._getvalue()

    return _typed(codegen, shape, dtype)


@intrinsic
def full(typingctx, shape, fill_value, dtype):
    """``np.full(shape, fill_value, dtype)``: a new array with every entry
    ``fill_value`` (converted to the dtype as an assignment converts it)."""

    def codegen(context, builder, signature, arguments):
        array = _allocated(context, builder, signature, arguments)
        element = signature.return_type.dtype
        value = context.cast(builder, arguments[1], signature.args[1], element)
        with cgutils.for_range(builder, array.nitems) as loop:
            context.pack_value(builder, element, value, builder.gep(array.data, [loop.index]))
        return array._getvalue()

    return _typed(codegen, shape, dtype, fill_value)
