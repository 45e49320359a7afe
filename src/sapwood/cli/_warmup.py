"""``sapwood warmup``: compile the Numba kernels now, in parallel processes.

Numba compiles a kernel on its first call and keeps it in its on-disk cache; a first
``sapwood demo`` with an empty cache spent most of its minute compiling, one kernel
after another on one core. Warming up runs the library's code paths on tiny data, so
that every kernel they call is compiled and cached, split over processes in two phases:

1. the learners are fit (the growers, the largest kernels) while, in other processes,
   every measure runs on a scikit-learn forest read into the tree format (so the
   measures' kernels compile without waiting for the growers);
2. the command line's whole pipeline runs for every model and task, with every
   measure: what phase 1 left (the refitting measures, the CLI's own paths) compiles
   here, the rest loads from the cache.

``make install`` runs it, so ``make demo`` does not wait. Numbers do not depend on it:
a kernel compiled here is the one a later call would have compiled.

Without it, ``demo`` and ``explain`` compile ahead (:func:`compile_ahead`): when the
kernels of the measures they will run are not in the cache yet, a second process,
started before the command builds its parser (:func:`start_ahead`), compiles them while
the command fits its model (the grower, half of a cold demo's compiling, compiles in
the command's own process); the command runs the measures already compiled first and
loads the others from the cache when it gets to them.
"""

from __future__ import annotations

import ast
import gc
import importlib
import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

from sapwood._kernels._numba import exit_between_saves

from ..report._compiled import probes, uncompiled

__all__ = ["AHEAD_COMMANDS", "PHASES", "compile_ahead", "run_unit", "serve", "start_ahead",
           "stop", "stop_when_stdin_closes", "warmup"]

N_ROWS = 240
N_TREES = 3
TASKS = ("classification", "regression")
MODELS = ("rf", "tree", "et", "gb")
PHASES = (
    [("fit", task) for task in TASKS] + [("measures", task) for task in TASKS],
    [("pipeline", task, model) for model in MODELS for task in TASKS],
)


def warmup(jobs: int | None = None) -> tuple[float, list[str]]:
    """Run every unit of :data:`PHASES` in ``jobs`` processes (default: one per core),
    phase after phase. Returns the seconds it took and one line per unit that failed
    (the others still run: what they compiled stays cached)."""
    jobs = jobs or os.cpu_count() or 1
    start = time.perf_counter()
    failures = []
    # "spawn": a fresh interpreter per worker, as a user's next command will be.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for phase in PHASES:
            futures = {pool.submit(run_unit, unit): unit for unit in phase}
            for future, unit in futures.items():
                error = future.exception()
                if error is not None:
                    failures.append(f"{' '.join(unit)}: {type(error).__name__}: {error}")
    return time.perf_counter() - start, failures


# Whether demo and explain compile ahead; SAPWOOD_COMPILE_AHEAD=0 turns it off.
AHEAD_VARIABLE = "SAPWOOD_COMPILE_AHEAD"
# The commands that compile ahead (their first argument).
AHEAD_COMMANDS = ("demo", "explain")
# How long stop() waits for the second process to end before killing it.
STOP_SECONDS = 30


def start_ahead(argv):
    """Start the second process of :func:`compile_ahead` at once, when ``argv`` (the
    ``sapwood`` command's arguments) names a command that compiles ahead and some
    measure's kernels are not cached; returns it, or None. ``sapwood`` calls this before
    it builds its parser: the process imports what the measures need (seconds) while
    the command imports the same and reads its data, then waits for
    :func:`compile_ahead` to send it the measures to compile."""
    if not argv or argv[0] not in AHEAD_COMMANDS or not _may_help() or not uncompiled(probes()):
        return None
    return _start()


def compile_ahead(task: str, model, methods, process=None):
    """Start compiling the kernels of ``methods`` (the measures a command will run on
    ``model``, a sapwood learner of the CLI's models) in a second process, when the
    machine has a core for it and they are not cached yet; returns that process (stop it
    with :func:`stop`) or None. ``process``: the one :func:`start_ahead` started, which
    is used rather than starting another (and stopped when there is nothing to compile).

    The second process runs the measures (the first, then the others from the last) on
    a tiny scikit-learn model of the same kind, while the command's process grows its
    model and then runs them, the compiled ones first (``_run``), loading what the
    other has cached and compiling the rest (the two meet in the middle). Numbers do
    not depend on it: a kernel loaded from the cache is the one the command would have
    compiled. A warm cache costs the index reads of :func:`uncompiled`."""
    kind = _model_name(model)
    names = uncompiled(methods)
    if kind is None or not names or not _may_help():
        stop(process)
        return None
    # The first measure the command runs, then the others from the last: the command
    # finds its first measure compiled when its fit is done, and the two processes meet
    # in the rest (where one waits for the kernel the other is compiling, see
    # ``_kernels._numba._LockedCache.compiling``).
    unit = ("ahead", task, kind, *names[:1], *reversed(names[1:]))
    process = process or _start()
    try:
        process.stdin.write(repr(unit).encode() + b"\n")
        process.stdin.flush()
    except OSError:  # it has ended: the command compiles what it needs itself
        stop(process)
        return None
    return process


def _may_help() -> bool:
    """A core for a second process, and compiling ahead not turned off."""
    return (os.cpu_count() or 1) >= 2 and os.environ.get(AHEAD_VARIABLE, "1") != "0"


def _start():
    # A new interpreter, not multiprocessing: it must not import the caller's main
    # module again (a script calling sapwood.cli.main would run twice), and it writes
    # nothing where the command writes.
    return subprocess.Popen([sys.executable, "-c",
                             "from sapwood.cli._warmup import serve; serve()"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def serve() -> None:
    """The second process of :func:`start_ahead` and :func:`compile_ahead`: import what
    the measures need, then run the unit the command sends (one line on standard
    input). It ends as soon as standard input closes, even while importing
    (:func:`stop_when_stdin_closes`), and at once when the unit is done: the command
    waits for it, and an interpreter's orderly exit, collecting the objects of every
    module and compiled kernel, took a second."""
    # Its cycle collector off for good: the process ends after its unit, and the
    # collection after each compile (``_kernels._numba._collector_paused``) walked what
    # the compile left, a large share of the unit's time, for some memory at the end.
    gc.disable()
    lines = queue.SimpleQueue()
    stop_when_stdin_closes(lines.put)
    for module in ("sklearn.ensemble", "sapwood.datasets", "sapwood.importance"):
        importlib.import_module(module)
    run_unit(ast.literal_eval(lines.get().decode()))
    exit_between_saves()


def stop(process) -> None:
    """End a process of :func:`compile_ahead` (None: nothing to do) by closing its
    standard input: it ends between two writes to the cache
    (:func:`stop_when_stdin_closes`), and what it has not finished is compiled by
    whoever needs it next."""
    if process is None:
        return
    process.stdin.close()
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:  # never seen: a write takes milliseconds
        process.kill()
        process.wait()


def stop_when_stdin_closes(first_line=None) -> None:
    """In a process of :func:`compile_ahead`: end it as soon as its standard input
    closes (the command called :func:`stop`, or ended in any way), but not in the middle
    of writing a kernel to the cache (terminating it could leave an index naming a data
    file it never wrote: ``_kernels._numba.exit_between_saves``). ``first_line``: called
    with the first line read (:func:`serve`'s unit) before waiting for the end."""

    def wait():
        if first_line is not None:
            line = sys.stdin.buffer.readline()
            if line.endswith(b"\n"):
                first_line(line)
        sys.stdin.buffer.read()
        exit_between_saves()

    # A Ctrl-C at the terminal reaches this process too (one process group), and its
    # KeyboardInterrupt could land between the two writes: the command's stop() ends it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=wait, daemon=True).start()


def _model_name(model):
    """The CLI's name of ``model`` (a sapwood learner), or None."""
    from ..report._models import MODEL_NAMES

    if not type(model).__module__.startswith("sapwood.learners"):
        return None
    for name, classes in MODEL_NAMES.items():
        if type(model).__name__ in classes[:2]:
            return name
    return None


def run_unit(unit) -> None:
    """One unit of work: ``("fit", task)``, ``("measures", task)``,
    ``("pipeline", task, model)`` or ``("ahead", task, model, *measures)`` (the measures
    named, in that order, on a scikit-learn model like ``model``: what
    :func:`compile_ahead` runs)."""
    kind, task, *model = unit
    if kind == "ahead":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X, y = _data(task)
            _every_measure(_converted_forest(task, X, y, model[0]), X, y, model[1:])
        return
    if kind not in ("fit", "measures", "pipeline"):
        raise ValueError(f"warm-up unit {unit!r}: the kind must be fit, measures or "
                         f"pipeline; got {kind!r}")
    # The tiny data makes the measures warn (few distinct values, small samples): those
    # warnings are about data nobody gave, so the user never sees them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = _data(task)
        if kind == "fit":
            _fit_every_learner(task, X, y)
        elif kind == "measures":
            _every_measure(_converted_forest(task, X, y), X, y)
        else:
            _pipeline(task, model[0], X, y)


def _data(task):
    from sapwood.datasets import make_ground_truth

    X, y, _ = make_ground_truth(N_ROWS, task=task, random_state=0)
    return X.astype("float64"), y


def _fit_every_learner(task, X, y):
    from ..report._models import MODEL_NAMES, model_class

    for name in MODEL_NAMES:
        cls = model_class(name, task)
        if cls is None:
            continue
        model = cls(**_small(cls)).fit(X, y)
        model.predict(X)
        if task == "classification":
            model.predict_proba(X)
    if task == "classification":
        # The grower compiles per criterion, and ``demo --data loan`` grows seed 003's
        # entropy tree.
        model_class("tree", task)(criterion="entropy", max_depth=3).fit(X, y)


def _small(cls) -> dict:
    """Settings that keep a warm-up fit tiny (the kernels' types do not depend on them)."""
    names = cls().get_params()
    return {"n_estimators": N_TREES} if "n_estimators" in names else {}


def _converted_forest(task, X, y, model="rf"):
    """A scikit-learn forest (bagged, so the out-of-bag measures apply), or the
    scikit-learn model of the CLI's ``model``: measures read it through the same tree
    format and kernels as sapwood's model."""
    import sklearn.ensemble
    import sklearn.tree

    from ..report._models import MODEL_NAMES

    names = MODEL_NAMES[model]
    name = names[0] if task == "classification" else names[1]
    cls = getattr(sklearn.tree if model == "tree" else sklearn.ensemble, name)
    return cls(**_small(cls), random_state=0).fit(X, y)


def _every_measure(model, X, y, names=None):
    """Every registered measure that needs no refit (or those of ``names``, in that
    order), on ``model``; a measure that does not apply to it (its ValueError or
    TypeError) is left to phase 2."""
    from sapwood.importance import MEASURES, MeasureInputs

    half = N_ROWS // 2
    inputs = MeasureInputs(X_train=X[:half], y_train=y[:half], X_test=X[half:],
                           y_test=y[half:], random_state=0)
    if names is not None:
        # The model was fit on every row: its out-of-bag rows are those of X.
        inputs = MeasureInputs(X_train=X, y_train=y, X_test=X[half:], y_test=y[half:],
                               random_state=0)
    for measure in (MEASURES.values() if names is None else
                    [MEASURES[name] for name in names]):
        if measure.refits:
            continue
        try:
            if measure.why_not(model, inputs, **measure.options) is None:
                measure.run(model, inputs, **measure.options)
        except (ValueError, TypeError):
            continue


def _pipeline(task, model_name, X, y):
    """The command line's pipeline (fit, score, every measure) as ``explain`` runs it."""
    from ..report import _measures, explain
    from ..report._models import build_model

    model = build_model(model_name, task, random_state=0)
    model.set_params(**_small(type(model)))
    methods = [name for name in _measures.MEASURES if _measures.is_available(name)]
    explain(X, y.rename("y"), model=model, methods=methods, task=task,
            source="sapwood warmup")
