"""Every sapwood kernel's on-disk cache is keyed on all the kernel files.

A kernel compiles in the kernels it calls from other files, so a cache keyed on its
own file alone (Numba's default) would keep stale code after a change elsewhere.
"""

import collections
import importlib
import multiprocessing
import os
import pkgutil
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numba
from numba.core.caching import FunctionCache

import sapwood._kernels
from sapwood._kernels._criteria import POISSON
from sapwood._kernels._numba import _KernelsStamp, kernels_digest
from sapwood.cli import _warmup
from tests.kernels import cache_race

ROOT = Path(__file__).resolve().parents[2]


def _cached_kernels():
    """Every cached sapwood kernel once (modules import each other's kernels): those
    named in a kernel module, and the per-criterion closures its dicts and tuples hold."""
    kernels = {}
    for info in pkgutil.iter_modules(sapwood._kernels.__path__):
        module = importlib.import_module(f"sapwood._kernels.{info.name}")
        values = list(vars(module).values())
        values += [v for value in values if isinstance(value, dict) for v in value.values()]
        values += [v for value in values if isinstance(value, tuple) for v in value]
        kernels.update((id(value), value) for value in values
                       if isinstance(getattr(value, "_cache", None), FunctionCache))
    return list(kernels.values())


def _name(kernel):
    return f"{kernel.py_func.__module__}.{kernel.py_func.__qualname__}"


def test_every_kernel_is_keyed_on_all_kernel_files():
    kernels = _cached_kernels()
    assert len(kernels) > 30
    for dispatcher in kernels:
        locator = dispatcher._cache._impl._locator
        assert isinstance(locator, _KernelsStamp), _name(dispatcher)
        assert locator.get_source_stamp() == kernels_digest(), _name(dispatcher)


def test_no_two_kernels_share_a_name():
    # Numba names machine code by a kernel's module, qualified name and argument types
    # (and a per-process count): two kernels of one name, compiled by two processes,
    # could share a symbol, and a third process that loaded both ran one for the other.
    names = collections.Counter(map(_name, _cached_kernels()))
    assert len(names) > 60
    assert names["sapwood._kernels._grow._best_first.<locals>.best_first"
                 f"[code={POISSON},random_splitter=True]"] == 1
    assert [name for name, count in names.items() if count > 1] == []


def test_the_key_changes_with_any_kernel_file(tmp_path):
    copy = tmp_path / "kernels"
    shutil.copytree(sapwood._kernels.__path__[0], copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = kernels_digest(copy)
    assert before == kernels_digest()
    lanes = copy / "_permuted_traversal.py"
    lanes.write_text(lanes.read_text() + "\n# a change in one file\n")
    assert kernels_digest(copy) != before


def test_other_numba_functions_keep_numbas_own_key():
    def twice(x):
        return 2 * x

    dispatcher = numba.njit(cache=True)(twice)
    assert not isinstance(dispatcher._cache._impl._locator, _KernelsStamp)


def test_processes_saving_one_kernels_versions_at_once_keep_each_its_own(tmp_path,
                                                                          monkeypatch):
    # ``sapwood warmup`` and pytest's workers compile in parallel processes; a race in
    # Numba's cache once had a process run another grower builder's code.
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [context.Process(target=cache_race.compile_slowly, args=(which, barrier))
               for which in (0, 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    data_files = sorted(path.name.rsplit(".", 2)[-2] for path in tmp_path.rglob("*.nbc"))
    assert data_files == ["1", "2"]  # one file per version
    with context.Pool(1) as pool:
        assert pool.apply(cache_race.cached_values) == [(3.0, "float"), (4, "int")]


def test_a_process_stopped_while_it_saves_a_kernel_finishes_the_save(tmp_path):
    # compile_ahead's process is stopped when the command ends (or is interrupted),
    # whatever it is doing; ended between the index and the data file, it would leave
    # an index naming a file it never wrote (or an older version's, whose code a later
    # process would run).
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-c",
         "from tests.kernels import cache_race; cache_race.compile_slowly_until_stopped()"],
        cwd=ROOT, env=env, stdin=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(tmp_path.rglob("*.nbi")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not list(tmp_path.rglob("*.nbc"))  # the index is written, its data not yet
    process.send_signal(signal.SIGINT)  # a Ctrl-C at the terminal reaches it too
    _warmup.stop(process)
    assert process.returncode == 0
    assert len(list(tmp_path.rglob("*.nbc"))) == 1
    done = subprocess.run(
        [sys.executable, "-c",
         "from tests.kernels import cache_race; print(cache_race.cached_values())"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    assert done.stdout.strip() == "[(3.0, 'float'), (4, 'int')]"
