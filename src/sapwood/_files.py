"""Writing a file so that it appears whole or not at all.

Every file sapwood writes (model files, reports, drawings, converted models) goes to a
temporary file in the target's folder, is flushed and synced to disk, and then renamed
onto the target (``os.replace``, atomic on POSIX and Windows). A write that fails part
way (a full disk, a size limit, an interrupt) removes the temporary file and leaves
what was at the target byte for byte as it was.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["replace_atomically"]


def replace_atomically(path, write) -> None:
    """Call ``write(handle)`` on a binary temporary file beside ``path``, then move the
    finished file onto ``path``; on any failure remove it and re-raise."""
    path = Path(path)
    handle = tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp", delete=False)
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        # Temporary files are private (0600); the result gets the usual permissions.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(handle.name, 0o666 & ~umask)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
