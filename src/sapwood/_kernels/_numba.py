"""The one place where sapwood's Numba options live.

Every kernel is compiled with ``cache=True`` (first-call compile time is part of what a
user waits for, so it is paid once per machine) and ``nogil=True`` (parallel work goes
through joblib threads, which only overlap if the kernels release the GIL).

What this module adds to Numba applies to sapwood's kernels only, through their own
dispatcher, compiler and cache classes: Numba's defaults, its implementations and any
other Numba code in the process compile as they would without sapwood
(``tests/kernels/test_numba_global_state.py``). In the order of this file:

- the on-disk cache keyed on every kernel file (:class:`_KernelsStamp`), read and written
  under file locks, a version another process is compiling waited for
  (:class:`_LockedCache`; ``tests/kernels/test_cache.py``, ``test_numba.py``);
- the cycle collector paused while a kernel compiles (:func:`_collector_paused`);
- a kernel called only by kernels compiled to LLVM IR for its callers, without machine
  code or the wrapper for calls from Python (:class:`_LinkedOnlyLibrary`,
  :attr:`_Kernel.called_from_python`);
- two of Numba's passes left out where they change nothing (:class:`_KernelCompiler`);
- a kernel's flags shown to Numba's implementations as theirs, so that both share one
  compile of each (:func:`_as_overloads_see_it`, :class:`_CallerFlags`);
- constant integer arguments typed as integers, one version per kernel
  (:meth:`_Kernel.get_call_template`);
- closures' kernels named by their constants (:func:`_named_by_constants`);
- no C wrapper, no reference counting or forced inlining where asked (:func:`_compile`,
  :data:`leaf_kernel`, :data:`inline_kernel`).
"""

import contextlib
import functools
import gc
import hashlib
import os
import threading
from types import CodeType

import numba
from numba.core import caching, compiler, sigutils, typed_passes, types, untyped_passes
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler_lock import global_compiler_lock
from numba.core.environment import lookup_environment
from numba.core.registry import CPUDispatcher
from numba.core.targetconfig import ConfigStack

try:
    import fcntl
except ImportError:  # not POSIX: Numba's own cache, unlocked
    fcntl = None

__all__ = ["allocating_kernel", "exit_between_saves", "inline_kernel", "kernel",
           "leaf_kernel"]

_KERNELS_DIR = os.path.dirname(os.path.abspath(__file__))


def kernels_digest(directory=_KERNELS_DIR):
    """One digest of every Python file in ``directory`` (this package's by default)."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            with open(os.path.join(directory, name), "rb") as source:
                digest.update(name.encode() + b"\0" + source.read())
    return digest.digest()


class _KernelsStamp:
    """Numba keys a kernel's on-disk cache on its own file's content, but a kernel
    compiles in the kernels it calls from other files: after a change to
    ``_permuted_traversal.py`` alone, ``_permutation.py``'s cached code would still hold
    the old lanes (an upgrade that changes one file leaves the others' caches in place
    too). The kernels of this package are keyed on every file of it instead."""

    _digest = kernels_digest()

    def get_source_stamp(self):
        return self._digest

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) != _KERNELS_DIR:
            return None  # a kernel defined elsewhere (the tests'): Numba's own locators
        return super().from_function(py_func, py_file)


class _UserProvidedLocator(_KernelsStamp, caching.UserProvidedCacheLocator):
    """``NUMBA_CACHE_DIR``, when set."""


class _InTreeLocator(_KernelsStamp, caching.InTreeCacheLocator):
    """``__pycache__`` beside the source."""


class _UserWideLocator(_KernelsStamp, caching.UserWideCacheLocator):
    """The user's cache directory, when the package's is not writable."""


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    """Numba's cache of compiled functions, locating sapwood's kernels by the locators
    above first. Only sapwood's dispatchers use it: Numba's own list of locators, which
    every other cached function goes through, is left as it is."""

    _locator_classes = [_UserProvidedLocator, _InTreeLocator, _UserWideLocator,
                        *caching.CompileResultCacheImpl._locator_classes]


# Held by a thread of this process while it writes a kernel to the on-disk cache.
_SAVING = threading.RLock()


class _LockedCache(caching.FunctionCache):
    """Numba's on-disk cache, its index and data files read and written under a lock.

    Numba names a new entry's data file by counting the entries of the index it has
    just read, so two processes that save two versions of one function at the same time
    (``sapwood warmup``'s workers, pytest's) pick the same file name: the index can end
    up with one version's key naming the other's code, and a later process runs the
    wrong kernel ("'descr' is NULL", or silently wrong numbers). A save holds an
    exclusive lock on the function's index from reading it to writing the data (where
    the system has file locks); a load holds a shared one."""

    _impl_class = _KernelCacheImpl

    def __init__(self, py_func, wrapped=False):
        super().__init__(py_func)
        self._wrapped = wrapped

    def _index_key(self, sig, codegen):
        # A kernel and its twin for calls from Python (``_Kernel.called_from_python``)
        # share an index; the twin's entries are told apart.
        key = super()._index_key(sig, codegen)
        return key + ("called from Python",) if self._wrapped else key

    def load_overload(self, sig, target_context):
        with self._locked(shared=True):
            return super().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        with _SAVING, self._locked(shared=False):
            super().save_overload(sig, data)

    def compiling(self, sig, target_context):
        """Held while this process looks for ``sig`` in the cache and, if it is not
        there, compiles and saves it: a process about to compile the same version waits
        and then loads it. (Two processes compiling at once, ``demo`` and its
        compile-ahead process, ``sapwood warmup``'s or pytest's workers, spent seconds
        compiling kernels twice.) One lock per version: a kernel's compile holds its
        own and waits for those of the kernels it calls, never for a caller's, so two
        processes cannot wait for each other."""
        key = repr(self._index_key(sig, target_context.codegen())).encode()
        return self._locked(shared=False,
                            suffix=f".{hashlib.sha256(key).hexdigest()[:16]}.compiling")

    @contextlib.contextmanager
    def _locked(self, shared, suffix=".lock"):
        if fcntl is None:
            yield
            return
        try:
            self._impl.locator.ensure_cache_path()
            handle = os.open(self._cache_file._index_path + suffix, os.O_RDWR | os.O_CREAT,
                             0o666)
        except OSError:  # a cache nobody can write to: no writer to wait for
            yield
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # releases the lock


def exit_between_saves(status=0):
    """End this process now, but not while one of its threads writes a kernel to the
    on-disk cache: Numba writes a new entry's index before its data file, so a process
    ended between the two leaves an index naming a file it never wrote, or one an older
    version of the kernels wrote under the same name (whose code a later process would
    run). For a process that compiles on another's behalf (``cli._warmup``)."""
    _SAVING.acquire()
    os._exit(status)


class _Dispatcher(CPUDispatcher):
    """Numba's dispatcher, but a version not yet compiled in this process is compiled
    under its cache's lock (:meth:`_LockedCache.compiling`)."""

    def compile(self, sig):
        # Inside Numba's compiler lock, which Numba takes first too: a thread waiting
        # for the file lock holds no lock another thread of this process needs.
        with global_compiler_lock, _collector_paused():
            args, _ = sigutils.normalize_signature(sig)
            if tuple(args) in self.overloads or not isinstance(self._cache, _LockedCache):
                return super().compile(sig)
            with self._cache.compiling(sig, self.targetctx):
                return super().compile(sig)


@contextlib.contextmanager
def _collector_paused():
    """Python's cycle collector off while a kernel compiles (the outermost compile turns
    it back on: an inner one finds it off already). A compile makes and drops millions of
    small objects (Numba's IR, types, LLVM IR text), so the collector ran often, and
    every full collection walked all the objects of the process (pandas',
    scikit-learn's, Numba's), a large part of a first run's compiling. Paused, it collects
    what the compile left once, when it is back on. (Paused for the whole process:
    another thread's cycles wait too, for the seconds a compile takes; the compiles
    themselves hold Numba's compiler lock, one thread at a time. A caller who turned it
    off finds it off.)"""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _LinkedOnlyLibrary(JITCodeLibrary):
    """The code of a kernel compiled without the wrapper for calls from Python (see
    :attr:`_Kernel.called_from_python`): it only ever runs inside the machine code of the
    kernels that call it, which link its LLVM module into their own. Numba optimised
    every such module as a whole and turned it into machine code, and then each caller
    did both again for its own module, which holds all the code of its callees: each
    level of a call tree redid the whole tree below it. This library's module gets only
    Numba's per-function passes; the module-wide optimisation (inlining and the rest)
    runs once, in the module of the kernel called from Python, which is also the only
    one turned into machine code (LLVM's share of a first fit nearly halves). Its cache
    entries hold the module (LLVM bitcode) instead of machine code."""

    def _optimize_final_module(self):
        pass  # done by the callers, on their modules

    def _finalize_final_module(self):
        # Numba's own, without adding the module to the engine and emitting it.
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    def get_pointer_to_function(self, name):
        self._ensure_finalized()
        return 0  # no machine code: as for a missing wrapper

    @property
    def codegen(self):
        return _CodegenWithoutEnvironment(self._codegen)

    def serialize_using_object_code(self):
        # Loaded back by Numba as a library of bitcode, to link into callers.
        return self.name, "bitcode", self._get_module_for_linking().as_bitcode()


class _CodegenWithoutEnvironment:
    """The codegen as a :class:`_LinkedOnlyLibrary` shows it: Numba sets the address of a
    compiled function's environment in its machine code, and this library has none."""

    def __init__(self, codegen):
        self._codegen = codegen

    def set_env(self, env_name, env):
        pass

    def __getattr__(self, name):
        return getattr(self._codegen, name)


class _KernelCompiler(compiler.Compiler):
    """Numba's compiler, but a kernel compiled without the wrapper for calls from Python
    goes into a :class:`_LinkedOnlyLibrary`, and one compiled with it sets the
    environments of the linked-only kernels in its machine code."""

    def compile_extra(self, func):
        linked_only = self.state.flags.no_cpython_wrapper
        if self.state.library is None and linked_only:
            self.state.library = _LinkedOnlyLibrary(self.state.targetctx.codegen(),
                                                    func.__qualname__)
        result = super().compile_extra(func)
        if not linked_only:
            _set_environments(result.library)
        return result

    def define_pipelines(self):
        # Called inside the compile's entry on Numba's stack of flags (a copy of the
        # kernel's own flags), before any of the kernel's code is typed.
        _as_overloads_see_it(ConfigStack().top())
        pipelines = super().define_pipelines()
        for pipeline in pipelines:
            # Numba's rewrites after typing fuse array expressions (``a * b + c`` on
            # arrays) into one loop, and index records by string literals: kernels do
            # neither (they loop; ``tests/kernels/test_numba.py`` shows an array
            # expression still computes the same without it), but the pass computed
            # every variable's lifetime in each kernel to look.
            _without(pipeline, typed_passes.NopythonRewrites)
            if not _defines_functions(self.state.func_id.func):
                _without(pipeline, untyped_passes.InlineClosureLikes)
        return pipelines


def _defines_functions(function):
    """Whether ``function``'s code makes functions of its own (a closure, a lambda, a
    comprehension): what Numba's ``InlineClosureLikes`` pass inlines. For any other
    kernel the pass changes nothing but still rebuilt the IR's control flow and
    liveness."""
    return any(isinstance(constant, CodeType) for constant in function.__code__.co_consts)


def _without(pipeline, compiler_pass):
    pipeline.passes[:] = [entry for entry in pipeline.passes if entry[0] is not compiler_pass]
    pipeline.finalize()


# Numba compiles an implementation of a NumPy or Python function (np.empty, min, ...)
# once per argument types and per set of flags of the function calling it, all of them,
# but the implementation's code depends only on the few flags it inherits (reference
# counting, fast math, error model, forced inlining). A kernel, its twin for calls from
# Python and Numba's implementations (which call each other) differ in flags that only
# concern the caller itself: its wrappers, the GIL, its own inlining. As its callees see
# them, a kernel's flags are made those an implementation has by Numba's defaults, so the
# kernels, their twins and Numba's implementations share one compile of each.
_OVERLOAD_FLAGS = {"no_cpython_wrapper": True, "no_cfunc_wrapper": False,
                   "release_gil": False, "inline": "never"}


def _as_overloads_see_it(flags):
    values = flags.values()  # every option set, defaults too: see _CallerFlags
    values.update(_OVERLOAD_FLAGS)
    for name, value in values.items():
        setattr(flags, name, value)
    flags.__class__ = _CallerFlags


class _CallerFlags(compiler.Flags):
    """A compiling kernel's flags as its callees see them, compared faster.

    Numba looks up an implementation by the caller's flags at every typing of a call
    to a NumPy function, and compares flags by all of their values, defaults included:
    a noticeable part of a first fit's compiling. A kernel's, with every option set
    (:func:`_as_overloads_see_it`), compare by the values set, which are all of them;
    the hash, Numba's, is that of the option names (the same for all flags)."""

    __slots__ = ()

    def __eq__(self, other):
        if type(other) is _CallerFlags:
            return self._values == other._values
        return super().__eq__(other)

    def __hash__(self):
        return _FLAGS_HASH


_FLAGS_HASH = hash(compiler.Flags())


def _set_environments(library):
    """Point the environment variables in ``library``'s machine code at their
    environments (the Python objects a kernel needs to raise an exception with values
    computed at run time). Numba sets a kernel's own when it makes its machine code, and
    every one of a kernel it loads from the cache; a linked-only kernel's has no machine
    code of its own, so the kernels called from Python set it (all copies of one variable
    resolve to one address in the execution engine)."""
    for variable in library._final_module.global_variables:
        environment = lookup_environment(variable.name)
        if environment is not None:
            library.codegen.set_env(variable.name, environment)


class _Kernel(_Dispatcher):
    """Numba's dispatcher (with :class:`_Dispatcher`'s compile lock), but a kernel
    called from another with a constant integer (``rand_int(0, n, rng)``,
    ``route_rows(0, ...)``) is typed with ``int64``, not
    ``Literal[int](0)``: Numba compiles one version per literal value otherwise, and a
    first run compiled up to five versions of one kernel. A value
    known at compile time changes which code is compiled, never what it computes.
    Constant booleans keep their literal type, at most two versions each, but Numba
    types and compiles both paths of a branch on one (LLVM drops the other at the end):
    a path is dropped before typing on a comparison with None (the grower's
    ``random_splitter`` is True or None). (So
    an integer argument cannot index a heterogeneous tuple inside the kernel called:
    pass the tuple's member instead.)"""

    def get_call_template(self, args, kws):
        return super().get_call_template(
            tuple(_general(arg) for arg in args),
            {name: _general(arg) for name, arg in kws.items()})

    def __call__(self, *args, **kwargs):
        """Called from Python: through :attr:`called_from_python`."""
        return self.called_from_python(*args, **kwargs)

    @functools.cached_property
    def called_from_python(self):
        """This kernel compiled with the wrapper that converts Python arguments (and its
        own entries in the on-disk cache).

        Numba compiles every kernel with a wrapper for calls from Python, and that
        wrapper (the unpacking of every argument, the boxing of the result) is
        compiled and optimised as much as the kernel itself: a kernel taking the
        grower's tuple of nine node arrays spent more compiling its wrapper than its
        body. Most kernels are only called by other kernels, so a kernel compiles
        without it (``no_cpython_wrapper``) and a call from Python goes to this twin.
        (Numba would call the missing wrapper: a crash.)"""
        options = dict(self.targetoptions)
        del options["no_cpython_wrapper"]
        twin = _Dispatcher(py_func=self.py_func, locals={}, targetoptions=options,
                           pipeline_class=_KernelCompiler)
        if isinstance(self._cache, _LockedCache):
            twin._cache = _LockedCache(self.py_func, wrapped=True)
        return twin


def _general(numba_type):
    if isinstance(numba_type, types.IntegerLiteral):
        return types.unliteral(numba_type)
    return numba_type


def _named_by_constants(function):
    """A closure's kernel named after its constants: ``_for_criterion.<locals>.split``
    becomes ``_for_criterion.<locals>.split[code=4]``.

    Numba names a kernel's machine code by its qualified name, its argument types and
    a count of the functions its process had compiled before. Closures of one factory
    share the first two, so two processes that each compiled one of them (pytest's
    workers, ``sapwood warmup``'s) could give both the same symbol, and a process that
    loaded both from the on-disk cache linked one closure's calls to the other's code:
    the Poisson grower ran another criterion's split search and grew trees of one node.
    With the constants in the name, symbols (and cache files) of two closures differ."""
    if function.__closure__ is None:
        return function
    constants = []
    for name, cell in zip(function.__code__.co_freevars, function.__closure__, strict=True):
        value = cell.cell_contents
        # Integers and None only: their text is the same in every process, and has no
        # dot (which would start a namespace of its own in the symbol).
        if not (value is None or isinstance(value, (bool, int))):
            raise TypeError(f"kernel {function.__qualname__!r}: a closure's constants must "
                            f"be None, booleans or integers; {name!r} is "
                            f"{type(value).__name__}")
        constants.append(f"{name}={value!r}")
    function.__qualname__ += "[" + ",".join(constants) + "]"
    return function


def _compile(function, settings):
    """``numba.njit(**settings)(function)`` through :class:`_Kernel`."""
    if numba.config.DISABLE_JIT:
        return function
    function = _named_by_constants(function)
    options = {name: value for name, value in settings.items() if name != "cache"}
    # Numba also compiles a C wrapper of every function, for passing it as a
    # first-class function value, which sapwood never does (its kernels only: Numba's
    # own implementations keep Numba's defaults).
    options.update(nopython=True, boundscheck=options.get("boundscheck"),  # as njit
                   no_cpython_wrapper=True,  # see _Kernel.called_from_python
                   no_cfunc_wrapper=True)
    dispatcher = _Kernel(py_func=function, locals={}, targetoptions=options,
                         pipeline_class=_KernelCompiler)
    if settings.get("cache"):
        dispatcher._cache = _LockedCache(function)  # enable_caching(), locked
    return dispatcher


def kernel(function=None, **options):
    """``numba.njit`` with sapwood's options; usable bare or with extra options."""
    settings = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}
    settings.update(options)
    if function is None:
        return lambda f: _compile(f, settings)
    return _compile(function, settings)


# Kernels that allocate nothing and return no array are compiled without Numba's
# reference counting (``_nrt=False``, an option Numba accepts and uses in its own tests;
# pyproject.toml caps numba at the versions tested with it): with it, every array a
# kernel receives, unpacks from a tuple or slices costs an atomic increment and
# decrement of its reference count, a large part of the fit of a deep tree. Such a
# kernel must not allocate (it cannot: compilation fails), must not return an array,
# and must only call kernels that return no array
# (the arrays it sees are owned by its callers). A kernel compiled from another
# inherits its caller's setting unless it sets its own, so the kernels that allocate
# and are called from leaf kernels say so explicitly.
leaf_kernel = kernel(_nrt=False)
allocating_kernel = kernel(_nrt=True)


# Kernels inlined into their callers by Numba (its own ``inline="always"``) instead of
# compiled on their own: a kernel that branches on a value its callers fix at compile
# time (the grower's criterion, see ``_criteria.Criterion``). Numba drops the branches
# a constant rules out only inside one function, so the constant reaches the kernel by
# inlining, and the other branches, and the kernels they call, are never compiled.
# Inlining costs compile time of its own (the kernel is copied and typed again at
# every call): only such kernels are inlined. Called from Python, one
# compiles as a leaf kernel.
inline_kernel = kernel(_nrt=False, inline="always")
