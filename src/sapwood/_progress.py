"""Progress bars for the library's long calls: many refits or rounds of a model.

Library calls are quiet unless asked (``progress=True``), as scikit-learn's are; the bar
goes to stderr, so results printed on stdout stay clean. The CLI shows its own bars.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

__all__ = ["check_progress", "counted", "progress_bar", "stderr_console"]


class _Steps:
    """What a long call tells its bar (nothing when the bar is off)."""

    def __init__(self, bar=None, task=None):
        self._bar = bar
        self._task = task

    def advance(self, steps=1):
        if self._bar is not None:
            self._bar.advance(self._task, steps)

    def complete(self):
        """Fill the bar: the call skipped steps that needed no work."""
        if self._bar is not None:
            self._bar.update(self._task, completed=self._bar.tasks[0].total)

    def finish_early(self, description):
        """Done before ``total`` steps (Boruta deciding every feature): the bar ends
        full, with ``description``."""
        if self._bar is not None:
            done = self._bar.tasks[0].completed
            self._bar.update(self._task, total=done, description=description)


@contextmanager
def progress_bar(total: int, description: str, enabled: bool, console=None):
    """Yield a :class:`_Steps`; when ``enabled``, a bar on stderr (or ``console``) counts
    ``total`` steps with the time taken and the time left, and is erased from a terminal
    when done (the results, not the bars, stay on screen). The description is text,
    never markup (it may hold a column's name)."""
    if not enabled:
        yield _Steps()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = console or stderr_console()
    # On a terminal the bar is erased when done; elsewhere (a log) its last state stays.
    bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                   console=console, transient=console.is_terminal)
    with bar:
        yield _Steps(bar, bar.add_task(description, total=total))


def stderr_console():
    """A rich Console on stderr for progress bars. In a notebook, rich draws live bars
    as ipywidgets and, without that package, warns to install it and shows none: there
    the bars are written as plain text instead (no terminal codes, which a notebook
    shows as they are), each bar one line when it ends."""
    from rich.console import Console

    console = Console(stderr=True)
    if console.is_jupyter and not _has_ipywidgets():
        # A notebook's output is wider than the 80 columns of a file.
        console = Console(stderr=True, force_jupyter=False, force_terminal=False,
                          color_system=None, width=110)
    return console


def _has_ipywidgets() -> bool:
    from importlib.util import find_spec

    return find_spec("ipywidgets") is not None


def counted(items, steps):
    """Yield ``items``, advancing ``steps`` (a :class:`_Steps`, or None for no bar) after
    each is used."""
    for item in items:
        yield item
        if steps is not None:
            steps.advance()


def check_progress(progress):
    """``progress`` must be True or False (a fit parameter, so scikit-learn's parameter
    validation does not see it)."""
    if not isinstance(progress, bool | np.bool_):
        raise TypeError(f"The 'progress' parameter must be True or False. Got {progress!r} "
                        "instead.")
