"""Timing, memory and machine description shared by every benchmark group.

- :func:`time_call`: median of ``repeats`` in-process runs (the machines are shared and
  noisy; BENCHMARKS.md asks for medians of >= 3).
- :func:`run_fresh`: run a snippet in a new interpreter (cold start, Numba compile with
  an empty cache, peak RSS of one call without the harness's own memory in it).
- :func:`reset_peak_rss` / :func:`peak_rss_mb`: in-process peak RSS of a stretch of
  code (Linux resets the high-water mark through ``/proc/self/clear_refs``).
- :func:`machine`: date, ``nproc``, CPU model, memory, package versions, git commit.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

__all__ = ["Timing", "machine", "peak_rss_mb", "repeats_for", "reset_peak_rss", "run_fresh",
           "time_call", "time_interleaved"]

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("sapwood", "numpy", "scipy", "scikit-learn", "numba", "llvmlite", "joblib",
            "pandas")


def repeats_for(quick: bool) -> int:
    """Runs per measurement: 3 for real figures, 1 for a smoke run."""
    return 1 if quick else 3


@dataclass
class Timing:
    """Wall times (seconds) of repeated runs of one call; ``result`` is the last return."""

    runs: list[float] = field(default_factory=list)
    result: object = None

    @property
    def median(self) -> float:
        return statistics.median(self.runs)


def time_call(function: Callable[[], object], repeats: int = 3) -> Timing:
    """Run ``function()`` ``repeats`` times; wall time of each run, median on demand."""
    timing = Timing()
    for _ in range(repeats):
        start = time.perf_counter()
        timing.result = function()
        timing.runs.append(time.perf_counter() - start)
    return timing


def time_interleaved(functions: dict[str, Callable[[], object]],
                     repeats: int = 3) -> dict[str, Timing]:
    """Time several calls taking turns (a, b, a, b, ...), so that a change in the load of
    a shared machine falls on all of them alike rather than on whichever ran last."""
    timings = {name: Timing() for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            timings[name].result = function()
            timings[name].runs.append(time.perf_counter() - start)
    return timings


def run_fresh(code: str, env: dict[str, str] | None = None, timeout: float = 1800) -> dict:
    """Run ``code`` with ``python -c`` in a new interpreter and return its report.

    The snippet prints one JSON object as the last line of its standard output; to it
    are added ``process_s`` (wall time of the whole process, interpreter start
    included) and ``peak_rss_mb`` (the child's maximum resident set size, from
    ``wait4``). ``env`` entries are added to the current environment. The repository
    root is the working directory, so ``import benchmarks`` works in the snippet.
    """
    child_env = {**os.environ, **(env or {})}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=err,
                                   env=child_env, cwd=REPO)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.005)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode()
        stderr = err.read().decode()
    if process.returncode != 0:
        tail = stderr.strip().splitlines()[-1:] or [f"exit code {process.returncode}"]
        raise RuntimeError(f"fresh process failed: {tail[0]}")
    report = json.loads(stdout.strip().splitlines()[-1])
    report["process_s"] = elapsed
    report["peak_rss_mb"] = usage.ru_maxrss / 1024  # kilobytes on Linux
    return report


def reset_peak_rss() -> bool:
    """Restart this process's peak-RSS count (Linux >= 4.0); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


def peak_rss_mb() -> float | None:
    """Peak resident set size of this process since start or :func:`reset_peak_rss`."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def _git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def machine() -> dict:
    """What a figure was measured on: BENCHMARKS.md asks for nproc, CPU model, versions."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gb": _memory_gb(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": _git_commit(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "versions": versions,
    }
