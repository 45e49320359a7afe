"""The steps of :func:`sapwood.explain` on stderr: one bar per step when asked.

``progress=False`` (the library's default, as scikit-learn's calls are quiet) shows
nothing; ``True`` shows the bars on stderr; a rich ``Console`` shows them there (the
command line passes its own, and tests one that pretends to be a terminal).
"""

from __future__ import annotations

from contextlib import contextmanager

from .._text import visible

__all__ = ["NoStep", "Steps"]


class Steps:
    """Where :func:`~sapwood.explain` says what it is doing."""

    def __init__(self, progress=False):
        if not isinstance(progress, bool) and not hasattr(progress, "print"):
            raise TypeError("The 'progress' parameter of explain must be True, False or a rich "
                            f"Console. Got {progress!r} instead.")
        self._console = progress if not isinstance(progress, bool) else None
        self.shown = bool(progress)

    @property
    def console(self):
        if self._console is None:
            from .._progress import stderr_console

            self._console = stderr_console()
        return self._console

    def line(self, text: str):
        """A heading for a step that draws its own bar (steps counted, time left). Used
        as a context (``with steps.line(label):``), the heading is erased from a
        terminal when the step ends, as its bar is."""
        if not self.shown:
            return NoStep()
        self.console.print(visible(text), markup=False, highlight=False)
        return _Heading(self.console, visible(text))

    @contextmanager
    def counted(self, label: str, total: int):
        """A bar counting ``total`` units of work for ``label``, with the time taken and
        the time left (a :class:`sapwood._progress._Steps` to advance); one that shows
        nothing when progress is off."""
        from .._progress import progress_bar

        with progress_bar(total, visible(label), self.shown, console=self.console) as steps:
            yield steps
            steps.complete()

    def step(self, label: str):
        """A bar for ``label`` (it pulses while the step runs, then is erased, leaving
        the screen to the results; a skipped or failed step stays, marked); nothing
        when progress is off."""
        if not self.shown:
            return NoStep()
        return _Step(self.console, label)


class NoStep:
    """A step that shows nothing (progress off, or a measure that draws its own bar)."""

    def __enter__(self):
        return self

    def skipped(self):
        pass

    def __exit__(self, *exc):
        return False


class _Heading(NoStep):
    """A heading printed above a bar the step draws itself; erased when the step ends
    (the bar below it is transient), on a terminal only."""

    def __init__(self, console, text):
        self.console, self.text = console, text

    def __exit__(self, kind, error, traceback):
        if kind is None and self.console.is_terminal:
            from rich.control import Control
            from rich.segment import ControlType
            from rich.text import Text

            rows = len(self.console.render_lines(Text(self.text), pad=False))
            for _ in range(rows):
                self.console.control(Control((ControlType.CURSOR_UP, 1),
                                             ControlType.CARRIAGE_RETURN,
                                             (ControlType.ERASE_IN_LINE, 2)))
        return False


class _Step:
    """One rich progress bar: indeterminate while running, full when done."""

    def __init__(self, console, label):
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        class Mark(SpinnerColumn):
            """The spinner, ✓ when done, or the mark the step was given."""

            def render(self, task):
                from rich.text import Text

                mark = task.fields.get("mark")
                return Text.from_markup(mark) if mark else super().render(task)

        # The label holds names from data (a model file's path): shown, never parsed.
        self.progress = Progress(Mark(finished_text="[green]✓"),
                                 TextColumn("{task.description}", markup=False), BarColumn(),
                                 TimeElapsedColumn(), console=console,
                                 transient=console.is_terminal)
        self.label = visible(label)
        self.task = None
        self.outcome = None

    def skipped(self):
        """Show the step as skipped rather than done."""
        self.outcome = "skipped"

    def __enter__(self):
        self.progress.start()
        self.task = self.progress.add_task(self.label, total=None)
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None and self.outcome:
            self.progress.update(self.task, description=f"{self.label} ({self.outcome})",
                                 total=1, completed=0, mark="[yellow]–")
        elif kind is None:
            self.progress.update(self.task, total=1, completed=1)
        else:
            self.progress.update(self.task, description=f"{self.label} (failed)", total=1,
                                 completed=0, mark="[red]✗")
        # A step done leaves nothing behind; one skipped or failed stays, marked.
        self.progress.live.transient = (self.progress.live.transient and kind is None
                                        and not self.outcome)
        self.progress.stop()
        return False
