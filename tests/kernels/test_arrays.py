"""Kernels allocate with ``_arrays``' intrinsics, which make what NumPy's functions make
and compile nothing of their own."""

import ast
from pathlib import Path

import numpy as np
import pytest
from numba.core import event
from numba.core.errors import TypingError

from sapwood._kernels._arrays import empty, full, zeros
from sapwood._kernels._numba import kernel

KERNELS = Path(__file__).resolve().parents[2] / "src" / "sapwood" / "_kernels"
KERNEL_DECORATORS = {"kernel", "leaf_kernel", "allocating_kernel", "inline_kernel"}
NUMPY_ALLOCATIONS = {"empty", "zeros", "full", "ones", "empty_like", "zeros_like",
                     "ones_like", "full_like"}


@kernel(cache=False)
def _every_form(n, like):
    return (empty(n, np.float64), empty((n, 3), np.int32),
            empty((2 * like.shape[0],) + like.shape[1:], like.dtype),
            zeros(n, np.uint8), zeros((n, 2), np.float64), zeros(like.shape, like.dtype),
            full(n, -1, np.intp), full((n, 2), True, np.bool_), full(n, 2.5, np.float64),
            full(n, 7, np.float32), full(n, -2, np.float64))


@kernel(cache=False)
def _negative(n):
    return empty(n - 10, np.intp)


@kernel(cache=False)
def _allocates_five_dtypes(n):
    return (empty(n, np.uint16).shape[0] + zeros((n, n), np.int16).shape[1]
            + full(n, 3, np.int8).shape[0] + zeros(n, np.float32).shape[0]
            + full((n, n, n), 1.5, np.complex64).shape[2])


def test_they_make_what_numpy_makes():
    like = np.ones((3, 2), dtype=np.float32)
    made = _every_form(4, like)
    expected = (np.empty(4), np.empty((4, 3), dtype=np.int32), np.empty((6, 2), np.float32),
                np.zeros(4, np.uint8), np.zeros((4, 2)), np.zeros_like(like),
                np.full(4, -1, np.intp), np.ones((4, 2), dtype=bool), np.full(4, 2.5),
                np.full(4, 7, dtype=np.float32), np.full(4, -2.0))
    assert len(made) == len(expected)
    for ours, theirs in zip(made, expected, strict=True):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert ours.flags.c_contiguous and ours.flags.writeable
    for ours, theirs in zip(made[3:], expected[3:], strict=True):  # empty's are unset
        np.testing.assert_array_equal(ours, theirs)


def test_a_negative_size_is_numpys_error():
    with pytest.raises(ValueError, match="negative dimensions not allowed"):
        _negative(3)


@kernel(cache=False)
def _float_shape(x):
    return empty(x, np.intp)


@kernel(cache=False)
def _text_fill(n):
    return full(n, "a", np.intp)


@pytest.mark.parametrize(("call", "argument"), [(_float_shape, 2.5), (_text_fill, 3)])
def test_a_shape_or_fill_value_numpy_would_refuse_does_not_compile(call, argument):
    with pytest.raises(TypingError):
        call(argument)


def test_they_compile_nothing_of_their_own():
    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    with event.install_listener("numba:compile", Listener()):
        assert _allocates_five_dtypes(2) == 2 + 2 + 2 + 2 + 2
    # The kernel and its twin for calls from Python; np.empty's would add one
    # implementation per dtype and shape.
    assert set(compiled) == {"_allocates_five_dtypes"}, compiled


def _numpy_allocations_in_kernels(source):
    """(line, function) of every np.empty, np.zeros, ... called inside a kernel."""
    found = []

    def visit(node, kernel_name):
        for child in ast.iter_child_nodes(node):
            inside = kernel_name
            if isinstance(child, ast.FunctionDef):
                names = {getattr(getattr(d, "func", d), "id", getattr(getattr(d, "func", d),
                                                                      "attr", None))
                         for d in child.decorator_list}
                if names & KERNEL_DECORATORS:
                    inside = child.name
            if (inside and isinstance(child, ast.Call)
                    and isinstance(child.func, ast.Attribute)
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == "np"
                    and child.func.attr in NUMPY_ALLOCATIONS):
                found.append((child.lineno, inside))
            visit(child, inside)

    visit(ast.parse(source), None)
    return found


def test_the_check_finds_a_numpy_allocation_in_a_kernel():
    source = ("@kernel\ndef f(n):\n    return np.zeros(n)\n\n"
              "def g(n):\n    return np.zeros(n)\n")
    assert _numpy_allocations_in_kernels(source) == [(3, "f")]


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.py")), ids=lambda path: path.name)
def test_kernels_allocate_with_the_intrinsics(path):
    assert _numpy_allocations_in_kernels(path.read_text()) == []
