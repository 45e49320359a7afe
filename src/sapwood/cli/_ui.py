"""Where the command talks: results on stdout, notes and progress bars on stderr."""

from __future__ import annotations

from .._text import visible

__all__ = ["UI"]


class UI:
    """Results on stdout, notes and progress on stderr.

    Progress bars appear only when stderr is a terminal and neither ``--quiet`` nor
    ``--json`` was given; ``err`` replaces the stderr console (tests pass one that
    pretends to be a terminal). A piped stdout is as wide as ``COLUMNS`` says (80
    without it), as a terminal is.
    """

    def __init__(self, quiet=False, json=False, err=None):
        self.quiet = quiet
        self.json = json
        self._out = None
        self._err = err

    @property
    def out(self):
        if self._out is None:
            from rich.console import Console

            self._out = Console()
        return self._out

    @property
    def err(self):
        if self._err is None:
            from rich.console import Console

            self._err = Console(stderr=True)
        return self._err

    @property
    def shows_results(self) -> bool:
        return not (self.quiet or self.json)

    @property
    def shows_progress(self) -> bool:
        return not (self.quiet or self.json) and self.err.is_terminal

    @property
    def progress(self):
        """What :func:`sapwood.explain` takes as ``progress``: the stderr console, or
        False."""
        return self.err if self.shows_progress else False

    def note(self, text: str):
        if not self.quiet:
            self.err.print(visible(f"note: {text}"), markup=False, highlight=False,
                           soft_wrap=True)
