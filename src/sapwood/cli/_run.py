"""The job behind ``explain`` and ``demo``: split, fit, score, run the measures."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from . import _measures
from ._data import InputError, Prepared
from ._models import describe_model, score_model

__all__ = ["Run", "UI", "run_pipeline", "top_nodes"]

N_TRACE_NODES = 10


class UI:
    """Where the CLI talks: results on stdout, notes and progress on stderr."""

    def __init__(self, quiet=False, json=False):
        self.quiet = quiet
        self.json = json
        self._out = None
        self._err = None

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
            self.err.print(f"note: {text}", markup=False, highlight=False)

    def step(self, label: str):
        """A spinner with ``label`` on an interactive stderr; nothing otherwise."""
        if self.quiet or self.json or not self.err.is_terminal:
            return _Nothing()
        return self.err.status(label)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
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
    """Fit ``model`` on a training split (unless ``fitted``), score it on the rest and
    run each available measure on the held-out rows."""
    notes = []
    if fitted:
        X_train = X_test = data.X
        y_test = data.y
        notes.append("the model was loaded, not trained here: every row is used as "
                     "held-out data, which is only honest if the model never saw them")
        _check_loaded(model, data)
    else:
        X_train, X_test, y_train, y_test = _split(data, test_size, seed)
        with ui.step(f"Fitting {describe_model(model)} on {len(X_train)} rows"):
            try:
                model.fit(X_train, y_train)
            except ValueError as error:
                raise InputError(f"cannot fit the model: {str(error).splitlines()[0]}"
                                 ) from None
    with ui.step("Scoring on held-out rows"):
        try:
            score = score_model(model, X_test, y_test, data.task)
        except (ValueError, TypeError) as error:
            raise InputError(f"cannot score the model on this data: "
                             f"{str(error).splitlines()[0]}") from None
    results = {}
    for name in methods:
        if not _measures.is_available(name):
            notes.append(f"{name} importance is not available in this version of sapwood "
                         f"yet (sapwood.importance.{_measures.MEASURES[name][1]}); skipped")
            continue
        with ui.step(f"Computing {name} importance"):
            try:
                results[name] = _measures.compute(name, model, X_test, y_test, seed)
            except (ValueError, TypeError) as error:
                if not fitted:
                    raise
                raise InputError(f"cannot compute {name} importance for this model: "
                                 f"{str(error).splitlines()[0]}") from None
    if not results:
        raise InputError("none of the requested importance measures is available: "
                         + ", ".join(methods))
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
    expected = getattr(model, "n_features_in_", None)
    if expected is not None and expected != data.X.shape[1]:
        raise InputError(f"the model expects {expected} features; the data has "
                         f"{data.X.shape[1]} besides the target")
    names = getattr(model, "feature_names_in_", None)
    if names is not None and list(map(str, names)) != list(data.X.columns):
        raise InputError("the data's columns do not match the model's feature names "
                         f"({', '.join(map(str, list(names)[:6]))}, ...)")


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
