"""``sapwood warmup`` compiles what the commands need, so that the next run compiles
nothing (issue 20, item 3)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings

import pytest

from sapwood.cli import _warmup, main
from sapwood.cli._warmup import MODELS, PHASES, TASKS
from sapwood.report import _compiled
from sapwood.report._models import MODEL_NAMES

# A demo in a new process that reports every sapwood kernel Numba compiles in it.
DEMO_COMPILES = """
import io
import json
from numba.core import event
from sapwood.cli import main
with event.install_recorder("numba:compile") as recorder:
    code = main(["demo", "--quiet"])
compiled = sorted({data["dispatcher"].py_func.__qualname__ for _, data in
                   ((ts, ev.data) for ts, ev in recorder.buffer)
                   if data["dispatcher"].py_func.__module__.startswith("sapwood")})
print(json.dumps({"code": code, "compiled": compiled}))
"""


def test_warmup_is_a_command(capsys):
    assert main(["warmup", "--help"]) == 0
    assert "parallel processes" in capsys.readouterr().out
    assert main(["warmup", "--jobs", "0"]) == 2


def test_the_pipeline_phase_runs_every_model_for_every_task():
    assert set(MODELS) == set(MODEL_NAMES)
    pipelines = {unit[1:] for unit in PHASES[-1] if unit[0] == "pipeline"}
    assert pipelines == {(task, model) for task in TASKS for model in MODELS}


def test_a_unit_that_fails_is_reported_and_the_others_still_run(monkeypatch, capsys):
    monkeypatch.setattr(_warmup, "PHASES", ([("nothing", "classification")],))
    assert main(["warmup", "--jobs", "1"]) == 1
    err = capsys.readouterr().err
    assert "sapwood warmup: nothing classification: ValueError" in err
    assert "1 part(s) failed" in err


@pytest.mark.slow
def test_after_warmup_the_demo_compiles_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "sapwood.cli", "warmup", "--jobs", "2"], env=env,
                   check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", DEMO_COMPILES], env=env, check=True,
                          capture_output=True, text=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"code": 0, "compiled": []}


@pytest.mark.parametrize("unit", [("measures", "classification"),
                                  ("pipeline", "regression", "rf")])
def test_a_unit_warns_nothing_to_the_user(unit):
    # make install runs it: its tiny data's warnings would bury the install's output.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warmup.run_unit(unit)
    assert [str(w.message) for w in caught] == []


# -- compiling ahead: demo and explain compile the measures' kernels in a second process

CACHED_AFTER_A_CALL = """
import io
import json
from sapwood._kernels._criteria import log2
from sapwood.report._compiled import _cached
before = _cached("sapwood._kernels._criteria", "log2")
log2(2.0)
print(json.dumps([before, _cached("sapwood._kernels._criteria", "log2")]))
"""


def test_the_cache_probe_sees_a_kernel_once_it_is_compiled(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", CACHED_AFTER_A_CALL], env=env, check=True,
                          capture_output=True, text=True)
    assert json.loads(done.stdout) == [False, True]


class _Started:
    def __init__(self, command, **kwargs):
        self.command = command
        self.kwargs = kwargs
        self.stdin = io.BytesIO()
        self.waited = False

    def wait(self, timeout=None):
        self.waited = True


def _forest():
    from sapwood.report._models import build_model

    return build_model("rf", "classification")


def test_a_warm_cache_starts_no_second_process(monkeypatch):
    started = []
    monkeypatch.setattr(_warmup.subprocess, "Popen", lambda *a, **k: started.append(a))
    monkeypatch.setattr(_compiled, "_cached", lambda module, name: True)
    assert _warmup.compile_ahead("classification", _forest(), ("permutation", "shap")) is None
    assert started == []


def test_a_cold_cache_compiles_the_first_measure_then_the_others_last_first(monkeypatch):
    monkeypatch.setattr(_warmup.subprocess, "Popen", _Started)
    monkeypatch.setattr(_compiled, "_cached", lambda module, name: "_shap" in module)
    monkeypatch.setattr(_warmup.os, "cpu_count", lambda: 2)
    process = _warmup.compile_ahead("classification", _forest(),
                                    ("mdi", "permutation", "oob", "ufi", "conditional",
                                     "shap"))
    assert process.command == [sys.executable, "-c",
                               "from sapwood.cli._warmup import serve; serve()"]
    # mdi has no kernel of its own, shap's are cached: the first measure the command
    # runs, then the others from the last, sent as one line.
    assert process.stdin.getvalue() == (b"('ahead', 'classification', 'rf', 'permutation', "
                                        b"'conditional', 'ufi', 'oob')\n")
    assert process.kwargs["stdout"] == process.kwargs["stderr"] == subprocess.DEVNULL
    assert process.kwargs["stdin"] == subprocess.PIPE
    _warmup.stop(process)
    assert process.stdin.closed and process.waited


@pytest.mark.parametrize("why", ["one core", "turned off", "loaded model"])
def test_no_second_process_where_it_cannot_help(monkeypatch, why):
    monkeypatch.setattr(_warmup.subprocess, "Popen", _Started)
    monkeypatch.setattr(_compiled, "_cached", lambda module, name: False)
    model = _forest()
    if why == "one core":
        monkeypatch.setattr(_warmup.os, "cpu_count", lambda: 1)
    elif why == "turned off":
        monkeypatch.setenv(_warmup.AHEAD_VARIABLE, "0")
    else:
        from sklearn.ensemble import RandomForestClassifier

        model = RandomForestClassifier()
    assert _warmup.compile_ahead("classification", model, ("permutation",)) is None


@pytest.mark.parametrize("argv, starts", [
    (["demo"], True), (["explain", "data.csv", "--target", "y"], True),
    (["tree", "data.csv"], False), (["warmup"], False), ([], False),
    (["--version"], False)])
def test_the_second_process_starts_before_the_parser_for_demo_and_explain(
        monkeypatch, argv, starts):
    monkeypatch.setattr(_warmup.subprocess, "Popen", _Started)
    monkeypatch.setattr(_compiled, "_cached", lambda module, name: "_shap" in module)
    monkeypatch.setattr(_warmup.os, "cpu_count", lambda: 2)
    process = _warmup.start_ahead(argv)
    assert (process is not None) == starts
    if starts:
        assert process.command[-1] == "from sapwood.cli._warmup import serve; serve()"
        assert process.stdin.getvalue() == b""  # told what to compile later


@pytest.mark.parametrize("why", ["every measure cached", "one core", "turned off"])
def test_no_early_second_process_where_it_cannot_help(monkeypatch, why):
    monkeypatch.setattr(_warmup.subprocess, "Popen", _Started)
    monkeypatch.setattr(_compiled, "_cached", lambda module, name: why == "every measure cached")
    monkeypatch.setattr(_warmup.os, "cpu_count", lambda: 1 if why == "one core" else 2)
    if why == "turned off":
        monkeypatch.setenv(_warmup.AHEAD_VARIABLE, "0")
    assert _warmup.start_ahead(["demo"]) is None


def test_compiling_ahead_uses_the_early_process_or_stops_it(monkeypatch):
    monkeypatch.setattr(_warmup.os, "cpu_count", lambda: 2)
    started = []
    monkeypatch.setattr(_warmup.subprocess, "Popen", lambda *a, **k: started.append(a))
    early = _Started(["early"])
    monkeypatch.setattr(_compiled, "_cached", lambda module, name: False)
    assert _warmup.compile_ahead("regression", _forest(), ("mdi", "ufi"), early) is early
    assert early.stdin.getvalue() == b"('ahead', 'regression', 'rf', 'ufi')\n"
    early = _Started(["early"])
    monkeypatch.setattr(_compiled, "_cached", lambda module, name: True)
    assert _warmup.compile_ahead("regression", _forest(), ("mdi", "ufi"), early) is None
    assert early.stdin.closed and early.waited
    assert started == []  # never a second one


SERVE = [sys.executable, "-c", "from sapwood.cli._warmup import serve; serve()"]


def test_the_second_process_runs_the_unit_it_is_sent():
    process = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdin.write(b"('nothing', 'classification')\n")
    process.stdin.flush()
    # run_unit refuses that unit: the process ends on its own, with run_unit's error.
    assert process.wait(timeout=300) != 0
    assert b"warm-up unit ('nothing', 'classification')" in process.stderr.read()
    process.stdin.close()


def test_the_second_process_ends_as_soon_as_its_unit_is_done(monkeypatch):
    # Not by an orderly exit of the interpreter (a second's collecting the command
    # waited for), and not before the unit has run; it never collects cycles.
    done = []
    monkeypatch.setattr(_warmup, "stop_when_stdin_closes",
                        lambda first_line: first_line(b"('fit', 'regression')\n"))
    monkeypatch.setattr(_warmup.importlib, "import_module", lambda module: None)
    monkeypatch.setattr(_warmup, "run_unit", lambda unit: done.append(unit))
    monkeypatch.setattr(_warmup, "exit_between_saves", lambda: done.append("exit"))
    monkeypatch.setattr(_warmup.gc, "disable", lambda: done.append("no collector"))
    _warmup.serve()
    assert done == ["no collector", ("fit", "regression"), "exit"]


def test_the_second_process_ends_when_the_command_closes_its_input():
    process = subprocess.Popen(SERVE, stdin=subprocess.PIPE)
    _warmup.stop(process)  # before it has finished importing, or been sent anything
    assert process.returncode == 0


@pytest.mark.parametrize("argv, code", [(["demo", "--data", "iris", "--n-samples", "9"], 2),
                                        (["demo", "--data", "loan", "--quiet"], 0)])
def test_the_command_stops_its_early_process_however_it_ends(monkeypatch, argv, code):
    import sapwood.cli

    early = []
    monkeypatch.setattr(sapwood.cli, "start_ahead",
                        lambda arguments: early.append(_Started(arguments)) or early[-1])
    assert main(argv) == code
    assert early[0].command == argv
    assert early[0].stdin.closed and early[0].waited


def test_the_compiled_measures_run_first_and_all_show_in_the_order_asked(monkeypatch,
                                                                          capsys):
    # On a first run the command runs the measures already compiled while the second
    # process compiles the others; what it shows keeps the order of --methods.
    from sapwood.report import _compiled, _measures

    ran = []
    compute = _measures.compute
    monkeypatch.setattr(_measures, "compute",
                        lambda name, *args, **kwargs: ran.append(name)
                        or compute(name, *args, **kwargs))
    monkeypatch.setattr(_compiled, "uncompiled",
                        lambda methods: [name for name in methods if name == "permutation"])
    assert main(["demo", "--data", "iris", "--methods", "permutation,mdi,ufi", "--json"]) == 0
    assert ran == ["mdi", "ufi", "permutation"]
    report = json.loads(capsys.readouterr().out)
    assert list(report["measures"]) == ["permutation", "mdi", "ufi"]


def test_a_measure_compiled_meanwhile_goes_before_one_still_compiling(monkeypatch, capsys):
    # permutation, ufi and conditional are not compiled when the measures start; the
    # second process finishes conditional's kernels while mdi runs: conditional runs
    # before ufi, which is still compiling, though asked for after it.
    from sapwood.report import _compiled, _measures

    ran = []
    compute = _measures.compute
    monkeypatch.setattr(_measures, "compute",
                        lambda name, *args, **kwargs: ran.append(name)
                        or compute(name, *args, **kwargs))

    def uncompiled(methods):
        still = {"permutation", "ufi"} if ran else {"permutation", "ufi", "conditional"}
        return [name for name in methods if name in still]

    monkeypatch.setattr(_compiled, "uncompiled", uncompiled)
    methods = "permutation,ufi,mdi,conditional"
    assert main(["demo", "--data", "iris", "--methods", methods, "--json"]) == 0
    assert ran == ["mdi", "conditional", "permutation", "ufi"]
    assert list(json.loads(capsys.readouterr().out)["measures"]) == methods.split(",")


@pytest.mark.parametrize("cached", [True, False])
def test_a_run_that_compiles_says_so_and_a_cached_one_does_not(monkeypatch, capsys, cached):
    from sapwood.cli import _commands

    asked = []
    monkeypatch.setattr(_commands, "uncompiled",
                        lambda methods: asked.append(methods) or ([] if cached else
                                                                  list(methods)))
    assert main(["demo", "--data", "iris", "--methods", "mdi", "--json"]) == 0
    assert asked == [["mdi"]]
    note = "sapwood's kernels were not in Numba's cache yet"
    assert (note in capsys.readouterr().err) is not cached


def test_every_probe_is_a_kernel_of_a_measure():
    from sapwood.importance import MEASURES

    for name, (module, attribute) in _compiled.probes().items():
        assert name in MEASURES
        assert hasattr(getattr(__import__(module, fromlist=[attribute]), attribute), "py_func")


def test_the_ahead_unit_runs_the_measures_named(monkeypatch):
    import dataclasses

    from sapwood.report._measures import MEASURES

    ran = []
    for name in ("permutation", "mdi"):
        monkeypatch.setitem(MEASURES, name, dataclasses.replace(
            MEASURES[name], run=lambda model, inputs, _name=name, **options:
            ran.append((_name, type(model).__name__, len(inputs.X_train)))))
    _warmup.run_unit(("ahead", "classification", "et", "permutation", "mdi"))
    assert ran == [("permutation", "ExtraTreesClassifier", _warmup.N_ROWS),
                   ("mdi", "ExtraTreesClassifier", _warmup.N_ROWS)]


# The demo's measure kernels compiled by the ahead unit alone, then a demo with
# compiling ahead off: what the demo still compiles is the grower's and the model's own.
DEMO_AFTER_AHEAD = """
import io
import json
from numba.core import event
from sapwood.cli import _warmup, main
from sapwood.report import _compiled
from sapwood.report._measures import DEMO_METHODS
_warmup.run_unit(("ahead", "classification", "rf", *reversed(DEMO_METHODS)))
with event.install_recorder("numba:compile") as recorder:
    code = main(["demo", "--quiet"])
compiled = sorted({data["dispatcher"].py_func.__module__ for _, data in
                   ((ts, ev.data) for ts, ev in recorder.buffer)
                   if data["dispatcher"].py_func.__module__.startswith("sapwood")})
print(json.dumps({"code": code, "compiled": compiled}))
"""


@pytest.mark.slow
def test_the_ahead_unit_compiles_the_demos_measure_kernels(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), _warmup.AHEAD_VARIABLE: "0"}
    done = subprocess.run([sys.executable, "-c", DEMO_AFTER_AHEAD], env=env, check=True,
                          capture_output=True, text=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    measures = {"sapwood._kernels._permutation", "sapwood._kernels._oob",
                "sapwood._kernels._conditional", "sapwood._kernels._shap",
                "sapwood._kernels._permuted_traversal", "sapwood._kernels._tree_index"}
    assert not measures & set(report["compiled"]), report["compiled"]


@pytest.mark.slow
def test_the_demo_writes_the_same_with_and_without_compiling_ahead(tmp_path):
    outputs = []
    for ahead in ("1", "0"):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / ahead),
               _warmup.AHEAD_VARIABLE: ahead}
        done = subprocess.run([sys.executable, "-m", "sapwood.cli", "demo", "--json"],
                              env=env, check=True, capture_output=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
