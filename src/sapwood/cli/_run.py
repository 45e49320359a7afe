"""The job behind ``explain`` and ``demo``: split, fit, score, run the measures."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pandas as pd

from . import _measures
from ._data import InputError, Prepared
from ._models import describe_model, score_model

__all__ = ["Run", "UI", "align_to_model", "run_pipeline", "top_nodes"]

N_TRACE_NODES = 10


class UI:
    """Where the CLI talks: results on stdout, notes and progress on stderr.

    Progress bars appear only when stderr is a terminal and neither ``--quiet`` nor
    ``--json`` was given; ``err`` replaces the stderr console (tests pass one that
    pretends to be a terminal).
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

            console = Console()
            # Piped or captured output: wide enough that tables are not cut.
            self._out = console if console.is_terminal else Console(width=120)
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

    def note(self, text: str):
        if not self.quiet:
            self.err.print(f"note: {text}", markup=False, highlight=False, soft_wrap=True)

    @property
    def shows_progress(self) -> bool:
        return not (self.quiet or self.json) and self.err.is_terminal

    def step(self, label: str):
        """A progress bar for ``label`` on an interactive stderr (it pulses while the
        step runs, then stays as one finished line with its time); nothing otherwise."""
        if not self.shows_progress:
            return _Nothing()
        return _Step(self.err, label)


class _Nothing:
    def __enter__(self):
        return self

    def skipped(self):
        pass

    def __exit__(self, *exc):
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

        self.progress = Progress(Mark(finished_text="[green]✓"),
                                 TextColumn("{task.description}"), BarColumn(),
                                 TimeElapsedColumn(), console=console, transient=False)
        self.label = label
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
        self.progress.stop()
        return False


@dataclass
class Run:
    """Everything the terminal output, the JSON and the report show."""

    source: str
    data: Prepared
    model: object
    model_text: str
    n_train: int
    n_test: int
    score_name: str
    score: float
    results: dict
    truth: dict | None = None
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    fitted_here: bool = True

    @property
    def ranks(self) -> pd.DataFrame:
        return _measures.rank_table(self.results, self.truth)


def _split(data: Prepared, test_size: float, seed: int):
    from sklearn.model_selection import train_test_split

    stratify = None
    if data.task == "classification":
        counts = data.y.value_counts()
        n_test = int(round(test_size * len(data.y)))
        if counts.min() >= 2 and len(counts) <= n_test <= len(data.y) - len(counts):
            stratify = data.y
    try:
        return train_test_split(data.X, data.y, test_size=test_size, random_state=seed,
                                stratify=stratify)
    except ValueError as error:
        raise InputError(f"cannot split {len(data.y)} rows with --test-size {test_size}: "
                         f"{str(error).splitlines()[0]}") from None


def run_pipeline(data: Prepared, model, methods, *, test_size, seed, ui: UI, source: str,
                 truth=None, fitted=False) -> Run:
    """Split ``data``, fit ``model`` on the training rows (unless it was loaded,
    ``fitted``), score it on the held-out rows and run each available measure there."""
    notes = []
    X_train, X_test, y_train, y_test = _split(data, test_size, seed)
    if fitted:
        _check_loaded(model, data)
        notes.append(f"the model was loaded, not trained here: it is scored and permuted "
                     f"on the held-out {len(X_test)} of {len(data.y)} rows (--test-size "
                     f"{test_size:g}, --seed {seed}), which is only honest if it was not "
                     "trained on them")
    else:
        with ui.step(f"Fitting {describe_model(model)} on {len(X_train)} rows"):
            try:
                model.fit(X_train, y_train)
            except ValueError as error:
                raise InputError(f"cannot fit the model: {str(error).splitlines()[0]}"
                                 ) from None
    with ui.step(f"Scoring on {len(X_test)} held-out rows"):
        try:
            score = score_model(model, X_test, y_test, data.task)
        except (ValueError, TypeError) as error:
            raise InputError(f"cannot score the model on this data: "
                             f"{str(error).splitlines()[0]}") from None
    results = {}
    queue = list(methods)
    while queue:
        name = queue.pop(0)
        if name in results:
            continue
        if not _measures.is_available(name):
            notes.append(f"{name} importance is not available in this version of sapwood "
                         f"yet (sapwood.importance.{_measures.MEASURES[name][1]}); skipped")
            continue
        where = ("on the held-out rows" if name in _measures.HELD_OUT
                 else "on the out-of-bag rows" if name in ("oob", "ufi")
                 else "from the fitted trees")
        with ui.step(f"Computing {name} importance {where}") as step:
            try:
                split = SimpleNamespace(X_train=X_train, y_train=y_train, X_test=X_test,
                                        y_test=y_test)
                results[name] = _measures.compute(name, model, split, seed)
            except (ValueError, TypeError) as error:
                problem = str(error).splitlines()[0] if str(error) else type(error).__name__
                step.skipped()
                if name == "mdi" and "native_importance" in problem:
                    # XGBoost, LightGBM: no node impurities; their split gain instead.
                    notes.append("MDI skipped: this model records no node impurities (XGBoost "
                                 "and LightGBM trees keep split gains, not impurities); "
                                 "showing its split-gain importance instead")
                    if "gain" not in methods and "gain" not in results:
                        queue.insert(0, "gain")
                    continue
                # gain, oob and ufi apply to some kinds of model only: skipped with a note
                if not fitted and name not in ("gain", "oob", "ufi"):
                    raise
                notes.append(f"{name} importance skipped: {problem}")
    if not results:
        raise InputError("none of the requested importance measures could be computed: "
                         + ", ".join(methods) + (f" ({notes[-1]})" if notes else ""))
    for text in notes:
        ui.note(text)
    found = sorted(_measures.disagreements(results), key=lambda item: item["mdi_rank"])
    warnings = [_measures.warning_text(item) for item in found]
    return Run(source=source, data=data, model=model, model_text=describe_model(model),
               n_train=0 if fitted else len(X_train), n_test=len(X_test),
               score_name="accuracy" if data.task == "classification" else "R²",
               score=score, results=results, truth=truth, notes=notes, warnings=warnings,
               fitted_here=not fitted)


def _check_loaded(model, data: Prepared):
    """The data must have the loaded model's features (in its order: see
    :func:`align_to_model`) and, for a classifier, labels among its classes."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        names = [str(name) for name in names]
        missing = [name for name in names if name not in data.X.columns]
        extra = [name for name in data.X.columns if name not in names]
        if missing or extra:
            problem = (f"lacks the model's feature(s) {_few(missing)}" if missing else
                       f"has column(s) the model does not use: {_few(extra)}")
            raise InputError(f"the data (without the target {data.target!r}) {problem}; "
                             f"the model's features are {_few(names)}")
    expected = getattr(model, "n_features_in_", None)
    if expected is not None and expected != data.X.shape[1]:
        raise InputError(f"the model expects {expected} features; the data has "
                         f"{data.X.shape[1]} besides the target {data.target!r}")
    classes = getattr(model, "classes_", None)
    if data.task == "classification" and classes is not None:
        known = {str(label) for label in classes}
        unknown = sorted({str(label) for label in data.y.unique()} - known)
        if unknown:
            raise InputError(f"target {data.target!r} has values the model does not "
                             f"predict ({', '.join(unknown[:5])}); the model's classes are "
                             f"{', '.join(sorted(known)[:10])}")


def _few(names, n=8) -> str:
    shown = ", ".join(map(str, names[:n]))
    return shown + (f", ... ({len(names)} in all)" if len(names) > n else "")


def align_to_model(model, data: Prepared) -> Prepared:
    """``data`` with its feature columns in the loaded model's order, when the model
    names its features and the data has each of them."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return data
    names = [str(name) for name in names]
    if names == list(data.X.columns) or set(names) != set(data.X.columns):
        return data
    from dataclasses import replace

    return replace(data, X=data.X[names])


def top_nodes(run: Run, n: int = N_TRACE_NODES) -> pd.DataFrame | None:
    """The first tree's split nodes with the largest impurity decrease (MDI evidence)."""
    result = run.results.get("mdi")
    if result is None or result.trace is None:
        return None
    trace = result.trace
    first = trace[trace["tree"] == trace["tree"].min()]
    columns = ["node", "feature", "threshold", "w", "impurity", "w_left", "impurity_left",
               "w_right", "impurity_right", "decrease"]
    return first.nlargest(n, "decrease")[columns].reset_index(drop=True)
