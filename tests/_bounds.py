"""Bounds for fuzzing: each case runs under an address-space limit and a hard time limit,
and what a fuzzing run finds is kept as a regression corpus.

``bounded()`` lowers the soft ``RLIMIT_AS`` to what the process already maps plus
``EXTRA_BYTES`` (so one case may allocate at most about 1 GB, whatever the test worker
had mapped before: an unbounded allocation becomes a MemoryError, which the fuzz tests
count as a failure) and arms ``faulthandler`` to kill the process with a traceback if the
case runs past ``HARD_SECONDS`` (a hang inside a Numba kernel or C code cannot be
interrupted any other way; Hypothesis's deadline reports slow cases but only after they
end). Both are undone when the case ends.

``keep_if_found(kind, data, suffix)`` writes a failing input to the corpus folder named
by ``SAPWOOD_FUZZ_CORPUS`` (``make fuzz`` sets it), one file per reader, replaced only by a
shorter failing input, so after Hypothesis has shrunk the failure the file holds its
smallest form. The suites load every file in the corpus on every run.
"""

import contextlib
import faulthandler
import os
import resource
from pathlib import Path

EXTRA_BYTES = 1 << 30
HARD_SECONDS = 60


def _mapped_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


@contextlib.contextmanager
def bounded(extra_bytes: int = EXTRA_BYTES, seconds: float = HARD_SECONDS):
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _mapped_bytes() + extra_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def keep_if_found(kind: str, data: bytes, suffix: str) -> None:
    folder = os.environ.get("SAPWOOD_FUZZ_CORPUS")
    if not folder:
        return
    path = Path(folder) / f"found-{kind}{suffix}"
    if not path.exists() or len(data) < path.stat().st_size:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def corpus(folder: Path) -> list[Path]:
    """The corpus files of ``folder`` (sorted, so test ids are stable), not its generator
    script or notes."""
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.suffix not in (".py", ".md"))
