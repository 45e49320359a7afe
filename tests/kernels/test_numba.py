"""Kernels compile without Numba's wrapper for calls from Python; such calls go to a
twin compiled with it (``_numba._Kernel.called_from_python``), cached apart. A kernel
called only by kernels gets no machine code of its own (``_LinkedOnlyLibrary``). A
version another process is compiling is waited for, then loaded
(``_LockedCache.compiling``)."""

import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from numba.core import compiler, event

from sapwood._kernels._numba import _CallerFlags, _LinkedOnlyLibrary, kernel
from tests.kernels import closure_kernels

ROOT = Path(__file__).resolve().parents[2]


@kernel(cache=False)
def _inner(x):
    return x + 1.0


@kernel(cache=False)
def _outer(x):
    return _inner(x) * 2.0


# np.empty of a shape and dtype no other test allocates: its implementation compiles here
@kernel(cache=False)
def _allocates(n):
    return np.empty((n, n, n, n, n), dtype=np.uint16).shape[0]


@kernel(cache=False)
def _calls_allocates(n):
    return _allocates(n) + np.empty((n, n, n, n, n), dtype=np.uint16).shape[1]


def _watching_compiles(on_end, on_start=lambda ev: None):
    """Numba's compile events passed to ``on_end`` (and ``on_start``) inside a with
    block."""

    class Listener(event.Listener):
        def on_start(self, ev):
            on_start(ev)

        def on_end(self, ev):
            on_end(ev)

    return event.install_listener("numba:compile", Listener())


def test_kernels_and_their_twins_share_numpy_implementations():
    """np.empty's implementation compiles once for a kernel and for its twin (their
    flags differ only in what their callees cannot see)."""
    compiled = []
    with _watching_compiles(lambda ev: compiled.append(ev.data["dispatcher"].py_func
                                                       .__qualname__)):
        assert _calls_allocates(2) == 4  # _allocates as a kernel, _calls_allocates' twin
        assert _allocates(3) == 3  # _allocates' twin
    assert compiled.count("ol_np_empty.<locals>.impl") == 1, compiled


@kernel(cache=False)
def _full_and_empty(n):
    # np.full's implementation calls np.empty's with the same types as this kernel does
    full = np.full((n, n, n, n, n, n), 1.5)
    return full[0, 0, 0, 0, 0, 0] + np.empty((n, n, n, n, n, n), np.float64).shape[0]


def test_kernels_and_numbas_implementations_share_numpy_implementations():
    """np.empty's implementation compiles once for a kernel and for Numba's
    implementation of np.full (a kernel's flags, as its callees see them, are those of
    an implementation)."""
    compiled = []
    with _watching_compiles(lambda ev: compiled.append(ev.data["dispatcher"].py_func
                                                       .__qualname__)):
        assert _full_and_empty(1) == 2.5
    assert "impl_np_full.<locals>.full" in compiled, compiled
    assert compiled.count("ol_np_empty.<locals>.impl") == 1, compiled


def test_kernels_compile_without_the_c_wrapper():
    """Numba's C wrapper, which lets a compiled function be passed as a function value
    (sapwood never does), is not compiled for a kernel or its twin."""
    assert _outer(5.0) == 12.0
    for compiled in (*_inner.overloads.values(), *_outer.called_from_python.overloads.values()):
        assert compiled.fndesc.llvm_cfunc_wrapper_name not in compiled.library.get_llvm_str()
        assert compiled.fndesc.llvm_func_name in compiled.library.get_llvm_str()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cycle_collector_is_paused_while_a_kernel_compiles(enabled):
    """Off during the compile (inner compiles included), as it was after it."""
    seen = []

    @kernel(cache=False)
    def triple(x):
        return x * 3.0

    def watch(ev):
        seen.append(gc.isenabled())

    (gc.enable if enabled else gc.disable)()
    try:
        with _watching_compiles(watch, watch):
            assert triple(np.float32(2.0)) == 6.0
            assert triple(np.int8(2)) == 6.0
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert seen and not any(seen), seen


def test_callers_flags_compare_as_numbas_do():
    flags = compiler.Flags()
    flags.nrt = True
    shared = compiler.Flags(flags)
    shared.__class__ = _CallerFlags
    same = compiler.Flags(flags)
    same.__class__ = _CallerFlags
    other = compiler.Flags(flags)
    other.nrt = False
    assert shared == flags and flags == shared and shared == same
    assert shared != other and other != shared
    assert hash(shared) == hash(flags) == hash(other)
    assert {(1, flags): "impl"}[(1, shared)] == "impl"


@kernel(cache=False)
def _plain(n):
    return n + 1


@kernel(cache=False)
def _comprehension(n):
    return sum([i * 2 for i in range(n)])


def _passes_run(dispatcher):
    (compiled,) = dispatcher.called_from_python.overloads.values()
    return [name.split("_", 1)[1] for name in compiled.metadata["pipeline_times"]["nopython"]]


def test_closure_inlining_runs_only_for_kernels_that_make_functions():
    """Numba's InlineClosureLikes pass is left out for a kernel whose code makes no
    function of its own; a comprehension (a function of its own) still compiles."""
    assert _plain(3) == 4
    assert _comprehension(4) == 12
    assert "inline_closure_likes" not in _passes_run(_plain)
    assert "nopython_type_inference" in _passes_run(_plain)
    assert "inline_closure_likes" in _passes_run(_comprehension)


@kernel(cache=False)
def _array_expression(a, b):
    return a * b + 2.0 * np.sqrt(b) - a / (b + 1.0)


def test_kernels_compile_without_the_rewrites_after_typing():
    """Numba's NopythonRewrites pass (it fuses array expressions) is left out; an array
    expression still computes what NumPy computes, bit for bit."""
    a = np.linspace(-3.0, 7.0, 11)
    b = np.geomspace(0.5, 40.0, 11)
    np.testing.assert_array_equal(_array_expression(a, b),
                                  a * b + 2.0 * np.sqrt(b) - a / (b + 1.0))
    assert "nopython_rewrites" not in _passes_run(_array_expression)
    assert "nopython_type_inference" in _passes_run(_array_expression)


def _has_python_wrapper(compiled):
    return compiled.fndesc.llvm_cpython_wrapper_name in compiled.library.get_llvm_str()


def test_a_kernel_called_by_a_kernel_compiles_without_the_python_wrapper():
    assert _outer(1.0) == 4.0
    (inner,) = _inner.overloads.values()
    assert not _has_python_wrapper(inner)
    assert "called_from_python" not in _inner.__dict__  # never called from Python
    assert not _outer.overloads  # only its twin compiled
    (outer,) = _outer.called_from_python.overloads.values()
    assert _has_python_wrapper(outer)


def test_a_kernel_called_by_a_kernel_gets_no_machine_code_of_its_own():
    assert _outer(3.0) == 8.0  # _inner's code runs inside _outer's
    (inner,) = _inner.overloads.values()
    assert isinstance(inner.library, _LinkedOnlyLibrary)
    assert inner.library.get_pointer_to_function(inner.fndesc.llvm_func_name) == 0
    assert inner.fndesc.llvm_func_name in inner.library.get_llvm_str()  # its IR, to link
    (outer,) = _outer.called_from_python.overloads.values()
    assert not isinstance(outer.library, _LinkedOnlyLibrary)
    assert outer.library.get_pointer_to_function(outer.fndesc.llvm_func_name) != 0


def test_a_kernel_called_from_python_and_from_a_kernel_gives_the_same_result():
    assert _inner(2.5) == 3.5
    assert _outer(2.5) == 7.0
    (twin,) = _inner.called_from_python.overloads.values()
    assert _has_python_wrapper(twin)


@kernel(cache=False)
def _at_most_three(n):
    if n > 3:
        raise ValueError("too many", n)
    return n


@kernel(cache=False)
def _at_most_three_plus_one(n):
    return _at_most_three(n) + 1


def test_a_kernel_called_by_a_kernel_raises_with_values_known_at_run_time():
    # The exception's values are boxed through the linked-only kernel's environment,
    # which its caller sets (``_numba._set_environments``).
    assert _at_most_three_plus_one(2) == 3
    with pytest.raises(ValueError) as raised:
        _at_most_three_plus_one(7)
    assert raised.value.args == ("too many", 7)


_RAISES = """
from tests.kernels import twin_kernels
try:
    twin_kernels.at_most_three_plus_one(7)
except ValueError as error:
    print(repr(error.args))
"""


def _printed(script, cache, *arguments):
    """What ``script`` prints in a new process with ``cache`` as Numba's cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", script, *arguments], cwd=ROOT, env=env,
                          check=True, capture_output=True, text=True)
    return done.stdout


def test_a_cached_kernel_called_by_a_kernel_raises_with_values_known_at_run_time(tmp_path):
    for _ in ("compiled", "loaded from the cache"):
        assert _printed(_RAISES, tmp_path).strip() == "('too many', 7)"


# In a new process: both kernels called from Python, and plus_one also from the other
# kernel; reports the values and the kernels Numba compiled (not loaded from the cache).
_CALLS = """
import json
from numba.core import event
from tests.kernels import twin_kernels
with event.install_recorder("numba:compile") as recorder:
    values = [twin_kernels.twice_plus_one(1.0), twin_kernels.plus_one(1.0)]
compiled = [ev.data["dispatcher"].py_func.__name__ for _, ev in recorder.buffer
            if ev.is_start]
print(json.dumps({"values": values, "compiled": sorted(compiled)}))
"""


def _run_calls(cache):
    return json.loads(_printed(_CALLS, cache).strip().splitlines()[-1])


def test_a_kernel_and_its_twin_are_cached_apart(tmp_path):
    first = _run_calls(tmp_path)
    assert first["values"] == [4.0, 2.0]
    # plus_one twice: once for the other kernel, once (its twin) for Python
    assert first["compiled"] == ["plus_one", "plus_one", "twice_plus_one"]
    again = _run_calls(tmp_path)
    assert again == {"values": [4.0, 2.0], "compiled": []}


# Holds the compile lock of plus_one's version for float64 until a line arrives on its
# standard input, then compiles and saves that version (Numba's own compile: the lock
# is already held) and lets go.
_HOLDER = """
import sys
from numba import float64
from numba.core.registry import CPUDispatcher
from tests.kernels import twin_kernels
kernel = twin_kernels.plus_one
with kernel._cache.compiling((float64,), kernel.targetctx):
    print("locked", flush=True)
    sys.stdin.readline()
    CPUDispatcher.compile(kernel, (float64,))
"""


def _waiting_on_a_lock(pid):
    # A request that waits: "1: -> FLOCK ADVISORY WRITE <pid> <device:inode> ..."
    with open("/proc/locks") as locks:
        return any(fields[1:2] == ["->"] and fields[5:6] == [str(pid)]
                   for fields in map(str.split, locks))


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux's /proc/locks")
def test_a_process_waits_for_the_version_another_is_compiling(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER], cwd=ROOT, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        calls = subprocess.Popen([sys.executable, "-c", _CALLS], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not _waiting_on_a_lock(calls.pid):
            assert calls.poll() is None, "compiled without waiting for the lock"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.wait(timeout=120) == 0
        result = json.loads(calls.communicate(timeout=120)[0].strip().splitlines()[-1])
    finally:
        holder.kill()
    assert result["values"] == [4.0, 2.0]
    # plus_one's kernel version came from the holder through the cache: only the twins
    # compiled here
    assert result["compiled"] == ["plus_one", "twice_plus_one"]


# In a new process: the callers of closure_kernels named on the command line, one line
# of their results.
_CLOSURES = """
import sys
from tests.kernels import closure_kernels
print(*(closure_kernels.CALLERS[int(shift)](0.0) for shift in sys.argv[1:]))
"""


def _run_closures(cache, *shifts):
    return [float(value) for value in _printed(_CLOSURES, cache, *map(str, shifts)).split()]


def test_closures_of_one_factory_compiled_by_two_processes_stay_apart(tmp_path):
    # Each process compiles one closure of each factory, in the same order: Numba's
    # count of compiled functions, part of the symbol names, is equal in both. (Before
    # kernels were named by their constants, the third process's second caller ran the
    # first one's callee: [1.0, 1.0].)
    assert _run_closures(tmp_path, 1) == [1.0]
    assert _run_closures(tmp_path, 2) == [2.0]
    assert _run_closures(tmp_path, 1, 2) == [1.0, 2.0]
    assert _run_closures(tmp_path, 2, 1) == [2.0, 1.0]


def test_a_closures_kernel_is_named_by_its_constants():
    assert [closure_kernels.CALLERS[shift].py_func.__qualname__ for shift in (1, 2)] == [
        "_caller.<locals>.caller[shift=1]", "_caller.<locals>.caller[shift=2]"]


def test_a_closure_over_anything_but_a_constant_is_refused():
    values = np.zeros(3)

    def reads(i):
        return values[i]

    with pytest.raises(TypeError, match="'values' is ndarray"):
        kernel(reads)


@kernel(cache=False)
def _shifted(x, shift):
    return x + shift


@kernel(cache=False)
def _shifted_thrice(x):
    return _shifted(x, 0) + _shifted(x, 1) + _shifted(x, 2)


def test_a_kernel_called_with_constant_integers_compiles_one_version():
    """Numba would type each constant as its own literal type and compile one version
    of the kernel called per value (``_numba._Kernel.get_call_template``)."""
    assert _shifted_thrice(1) == 6
    assert len(_shifted.overloads) == 1
