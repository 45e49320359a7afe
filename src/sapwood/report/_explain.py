"""The job behind ``explain`` and ``demo``: split, fit, score, run the measures."""

from __future__ import annotations

import dataclasses
import inspect
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._errors import InputError
from .._format import category_codes
from .._text import visible
from . import _agreement, _measures, _verdict
from ._columns import match_columns
from ._compiled import uncompiled
from ._data import Prepared, check_enough_rows
from ._models import LoadedModel, describe_model, load_model, score_model

__all__ = ["Options", "Run", "UI", "align_to_model", "run_pipeline", "top_nodes"]

N_TRACE_NODES = 10
# ranger's importance_pvalues(method = "janitza") warns below this many negative values.
JANITZA_MIN_NEGATIVE = 100


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
            self.err.print(visible(f"note: {text}"), markup=False, highlight=False,
                           soft_wrap=True)

    @property
    def shows_progress(self) -> bool:
        return not (self.quiet or self.json) and self.err.is_terminal

    def step(self, label: str):
        """A progress bar for ``label`` on an interactive stderr (it pulses while the
        step runs, then stays as one finished line with its time); nothing otherwise."""
        if not self.shows_progress:
            return _Nothing()
        return _Step(self.err, label)


def _no_step():
    return _Nothing()


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

        # The label holds names from data (a model file's path): shown, never parsed.
        self.progress = Progress(Mark(finished_text="[green]✓"),
                                 TextColumn("{task.description}", markup=False), BarColumn(),
                                 TimeElapsedColumn(), console=console, transient=False)
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
    agreement: list = field(default_factory=list)
    top_k: int | None = None
    pvalues: str | None = None
    n_permutations: int | None = None
    held_out: bool = True
    seed: int = 0
    verdict: object = None
    held_out_index: object = None  # the held-out rows' labels in data.X.index
    rows: list = field(default_factory=list)  # explain --row: RowExplanation each
    selection: object = None

    @property
    def task(self) -> str:
        return self.data.task

    @property
    def ranks(self) -> pd.DataFrame:
        return _agreement.rank_table(self.results, self.truth)


@dataclass(frozen=True)
class Options:
    """How ``run_pipeline`` runs the measures (``explain`` and ``demo`` options)."""

    methods: tuple = _measures.DEFAULT_METHODS
    test_size: float = 0.25
    seed: int = 0
    pvalues: str | None = None
    n_permutations: int = _measures.DEFAULT_N_PERMUTATIONS
    cv: int | None = None
    top_k: int | None = None
    max_rows: int | str | None = "auto"


def split_rows(data: Prepared, test_size: float, seed: int):
    """(X_train, X_test, y_train, y_test): the split every measure of a run reads."""
    return _split(data, test_size, seed)


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


def run_pipeline(data: Prepared, model, options: Options, *, ui: UI, source: str,
                 truth=None, fitted=False, held_out=True) -> Run:
    """Split ``data``, fit ``model`` on the training rows (unless it was loaded,
    ``fitted``), score it on the held-out rows and run each available measure there.

    ``held_out=False``: a table too small to split; the model is fit, scored and
    permuted on all rows (the caller says so in a note)."""
    from sklearn.base import clone

    notes = list(data.notes)
    n_features = data.X.shape[1]
    top_k = _settle_top_k(options.top_k, n_features)
    if held_out:
        check_enough_rows(data, options.test_size)
        X_train, X_test, y_train, y_test = _split(data, options.test_size, options.seed)
    else:
        X_train = X_test = data.X
        y_train = y_test = data.y
    if fitted:
        _check_loaded(model, data)
        notes.append(f"the model was loaded, not trained here: it is scored and permuted "
                     f"on the held-out {len(X_test)} of {len(data.y)} rows (--test-size "
                     f"{options.test_size:g}, --seed {options.seed}), which is only honest "
                     "if it was not trained on them")
    else:
        _fit(model, X_train, y_train, ui)
    rows = "held-out" if held_out else "training"
    with ui.step(f"Scoring on {len(X_test)} {rows} rows"):
        try:
            score = score_model(model, X_test, y_test, data.task)
        except (ValueError, TypeError) as error:
            raise InputError(f"cannot score the model on this data: "
                             f"{str(error).splitlines()[0]}") from None
    if not math.isfinite(score):
        notes.append(f"the model's {rows} score is not a finite number ({score}); --json "
                     "shows it as null")
    inputs = _measures.Inputs(X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
                              random_state=options.seed, cv=options.cv, held_out=held_out,
                              max_rows=options.max_rows,
                              estimator=None if fitted else clone(model))
    results = _compute_all(model, options.methods, inputs, ui, notes, fitted)
    if options.pvalues:
        results = {name: _with_pvalues(name, result, options, inputs, ui, notes)
                   for name, result in results.items()}
    for text in notes:
        ui.note(text)
    pairs = _agreement.agreement(results, top_k) if n_features > 1 else []
    run = Run(source=source, data=data, model=model, model_text=describe_model(model),
              n_train=0 if fitted else len(X_train), n_test=len(X_test),
              score_name=getattr(model, "score_name", None)
              or ("accuracy" if data.task == "classification" else "R²"),
              score=score, results=results, truth=truth, notes=notes,
              fitted_here=not fitted, agreement=pairs, top_k=top_k,
              pvalues=options.pvalues, held_out=held_out, seed=options.seed,
              held_out_index=X_test.index if held_out else None,
              n_permutations=options.n_permutations if options.pvalues == "altmann"
              else None)
    train_score = None
    if not fitted and held_out:
        train_score = score_model(model, X_train, y_train, data.task)
    with ui.step("Checking for identifiers, leakage and correlated features"):
        run.warnings = _verdict.find_warnings(
            run, X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
            encodings=data.encodings, model=model, train_score=train_score)
    run.verdict = _verdict.verdict(run, run.warnings)
    return run


def _fit(model, X, y, ui: UI):
    """Fit ``model``: tree by tree with the time left where the learner counts its trees
    (forests, boosting: ``fit(..., progress=True)``), else under one pulsing bar."""
    label = f"Fitting {describe_model(model)} on {len(X)} rows"
    counts_trees = "progress" in inspect.signature(model.fit).parameters
    try:
        if counts_trees and ui.shows_progress:
            ui.err.print(visible(label), markup=False, highlight=False)
            model.fit(X, y, progress=True)
        else:
            with ui.step(label):
                model.fit(X, y)
    except ValueError as error:
        raise InputError(f"cannot fit the model: {str(error).splitlines()[0]}") from None


def _settle_top_k(top_k, n_features: int) -> int:
    if top_k is None:
        return _agreement.default_top_k(n_features)
    if top_k >= n_features:
        raise InputError(f"--top-k {top_k}: must be less than the number of features "
                         f"({n_features}; the top {n_features} of {n_features} always "
                         "overlap)")
    return top_k


def _compute_all(model, methods, inputs, ui, notes, fitted) -> dict:
    """The result of each measure of ``methods`` that applies, and a note (added to
    ``notes``) for each that does not, in the order of ``methods``. The measures whose
    kernels are compiled run first: on a first run the others compile meanwhile in a
    second process (``_warmup.compile_ahead``)."""
    results = {}
    # Where each result and note is shown: its measure's place in methods (a fallback,
    # its measure's place); the order the measures ran in depends on the cache.
    place = {name: position for position, name in enumerate(methods)}
    told = []  # (place, note)
    not_compiled = uncompiled(methods)
    queue = sorted(methods, key=lambda name: name in not_compiled)
    while queue:
        if not_compiled:
            # A first run: a measure whose kernels the second process has compiled
            # meanwhile goes before those still compiling (looked up again each time).
            not_compiled = uncompiled(queue)
            queue.sort(key=lambda name: name in not_compiled)
        name = queue.pop(0)
        if name in results:
            continue
        measure = _measures.MEASURES[name]
        if not _measures.is_available(name):
            told.append((place[name], f"{name} importance is not available in this "
                                      f"version of sapwood yet (sapwood.importance."
                                      f"{measure.function}); skipped"))
            continue
        where = _measures.where(name)
        if measure.rows == "held-out" and not inputs.held_out:
            where = "on the training rows"
        label = f"Computing {name} importance {where}"
        counted = measure.progress and ui.shows_progress
        if counted:
            # The measure draws its own bar (steps, time left) under this line.
            ui.err.print(visible(label), markup=False, highlight=False)
        with ui.step(label) if not counted else _no_step() as step:
            reason = _measures.why_not(name, model, inputs)
            if reason is not None:
                step.skipped()
                if measure.fallback and _measures.why_not(measure.fallback, model,
                                                          inputs) is None:
                    # XGBoost, LightGBM: no node impurities for MDI; their split gain.
                    instead = _measures.MEASURES[measure.fallback]
                    told.append((place[name], f"{measure.title} skipped: {reason}; showing "
                                               f"its {instead.title} importance instead"))
                    if instead.name not in methods and instead.name not in results:
                        place[instead.name] = place[name]
                        queue.insert(0, instead.name)
                else:
                    told.append((place[name], f"{name} importance skipped: {reason}"))
                continue
            try:
                results[name] = _measures.compute(
                    name, model, dataclasses.replace(inputs, progress=counted))
            except (ValueError, TypeError) as error:
                # Optional measures apply to some kinds of model only; what their
                # function finds out only as it runs (no bagging record, not boosted)
                # skips them with its message.
                if not fitted and not measure.optional:
                    raise
                step.skipped()
                told.append((place[name], f"{name} importance skipped: "
                                           f"{_first_line(error)}"))
    told = [text for _, text in sorted(told, key=lambda item: item[0])]
    notes.extend(told)
    if not results:
        raise InputError("none of the requested importance measures could be computed: "
                         + ", ".join(methods) + (f" ({told[-1]})" if told else ""))
    return dict(sorted(results.items(), key=lambda item: place[item[0]]))


def _first_line(error) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _with_pvalues(name, result, options: Options, inputs, ui, notes):
    """``result`` with the p-values ``options.pvalues`` asks for, or unchanged with a
    note saying why they do not apply."""
    from sapwood import importance

    measure = _measures.MEASURES[name]
    if options.pvalues == "janitza":
        if not measure.janitza:
            applies = ", ".join(m.name for m in _measures.MEASURES.values() if m.janitza)
            notes.append(f"janitza p-values not computed for {name}: they need importances "
                         "that scatter around zero for irrelevant features "
                         f"({applies})")
            return result
        try:
            tested = importance.janitza_pvalues(result)
        except ValueError as error:
            notes.append(f"janitza p-values not computed for {name}: {_first_line(error)} "
                         "(on the command line: --pvalues altmann)")
            return result
        n_negative = int((result.importances_mean < 0).sum())
        if n_negative < JANITZA_MIN_NEGATIVE:
            notes.append(f"janitza p-values for {name} rest on {n_negative} negative "
                         "importance(s) and their mirror images; the test is meant for "
                         "data with many irrelevant features (ranger warns below "
                         f"{JANITZA_MIN_NEGATIVE} negative values): read them as rough")
        return tested
    if inputs.estimator is None:
        notes.append(f"altmann p-values not computed for {name}: they refit the model, and "
                     "a loaded model file cannot be refit")
        return result
    if not measure.altmann:
        why = (f": each of the {options.n_permutations} permutations would refit the model "
               "once per feature" if measure.rows == "refit" else "")
        notes.append(f"altmann p-values not offered for {name}{why}")
        return result
    how = measure.altmann
    if how is True:
        def how(fitted, X, y):
            return _measures.compute(name, fitted, inputs.with_training(X, y))
    with ui.step(f"Altmann p-values for {name}: {options.n_permutations} refits on a "
                 "permuted target"):
        tested = importance.altmann_pvalues(inputs.estimator, inputs.X_train, inputs.y_train,
                                            measure=how,
                                            n_permutations=options.n_permutations,
                                            random_state=options.seed)
    params = {**result.params, "pvalues": "altmann",
              "n_permutations": options.n_permutations}
    return result.replace(pvalues=tested.pvalues, params=params)


def _check_loaded(model, data: Prepared):
    """The data must have as many features as the loaded model (matched by name in
    :func:`align_to_model` when the model names them) and, for a classifier, labels
    among its classes."""
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


def align_to_model(model: LoadedModel, data: Prepared):
    """``(model, data)`` with the data's columns matched to the loaded model's features
    (:func:`~sapwood.cli._columns.match_columns`, which refuses missing and ambiguous
    ones): in the model's order, the columns it does not use left out with a note. A
    model whose library respelled the names (LightGBM's ``unit_price`` for ``unit
    price``) is relabelled with the data's, so that every measure names a feature as
    the data does."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        X, encodings = recode_categories(model.ensemble, data.X, data.encodings)
        return model, dataclasses.replace(data, X=X, encodings=encodings)
    matching = match_columns(model.ensemble.kind.library, names, data.X.columns,
                             target=data.target)
    if matching.respelled:
        ensemble = dataclasses.replace(model.ensemble, feature_names=tuple(matching.columns))
        model = load_model(ensemble, model.path)
    X = data.X if matching.columns == list(data.X.columns) else data.X[matching.columns]
    encodings = {name: values for name, values in data.encodings.items() if name in X}
    X, encodings = recode_categories(model.ensemble, X, encodings)
    return model, dataclasses.replace(data, X=X, encodings=encodings,
                                      notes=data.notes + matching.notes(),
                                      n_missing=int(X.isna().sum().sum()))


def recode_categories(ensemble, X: pd.DataFrame, encodings):
    """``X`` with every text column the CLI encoded (sorted codes, ``encodings``) re-coded
    to the loaded model's own category codes where the model records its category
    labels (LightGBM's pandas categories): a label the model does not know becomes
    missing, as in the library's own pandas input, and the column's encoding is then
    the model's labels in the model's order. Other columns are left alone.
    Returns the recoded ``X`` and the encodings of its columns.

    A CatBoost model (:attr:`~sapwood.TreeEnsemble.hashed_categories`) keeps only its
    categories' hashes: its features' columns, numbers too (CatBoost reads 3 as "3"),
    are recoded by the hash of their labels, and the encodings then list per model code
    the data's label, then the data's labels the model does not know, as codes past
    the model's: every one-hot split sends them where it sends an unknown category, and
    tables show them as they are, not as missing."""
    categories = ensemble.categories
    if categories is None:
        return X, encodings
    hashed = ensemble.hashed_categories
    recoded, encodings = X.copy(), dict(encodings)
    for j, name in enumerate(X.columns):
        if j >= len(categories) or categories[j] is None:
            continue
        labels = categories[j]
        if name in encodings:
            values = X[name].to_numpy(dtype=np.float64)
            codes = np.where(np.isnan(values), -1, values).astype(np.intp)
            values = texts = encodings[name]
        elif hashed:
            column = pd.Categorical(X[name])  # numbers: 3.0 is hashed as "3"
            codes, values = column.codes, list(column.categories)
            texts = [f"{value:.17g}" for value in values]
        else:
            continue
        if not hashed:
            # The column now holds the model's codes: its labels name them, in the
            # model's order (not the data's sorted one).
            recoded[name] = category_codes(codes, values, labels)
            encodings[name] = [str(label) for label in labels]
            continue
        # The model's code of each of the data's labels; the unknown ones next.
        lookup = category_codes(np.arange(len(values)), values, labels, True)
        unknown = np.flatnonzero(np.isnan(lookup))
        lookup[unknown] = len(labels) + np.arange(unknown.size)
        recoded[name] = np.where(codes < 0, np.nan, lookup[np.clip(codes, 0, None)]) \
            if lookup.size else np.full(len(codes), np.nan)
        shown = [str(label) for label in labels] + [texts[i] for i in unknown]
        for i, code in enumerate(lookup):
            shown[int(code)] = texts[i]
        encodings[name] = shown
    return recoded, encodings


def top_nodes(run: Run, n: int = N_TRACE_NODES) -> pd.DataFrame | None:
    """The first tree's split nodes with the largest impurity decrease (MDI evidence)."""
    result = run.results.get("mdi")
    if result is None:
        return None
    # Tree by tree, so that a large forest's whole trace is never built for the CLI.
    for tree in range(result.params.get("n_trees", 1)):
        first = result.tree_trace(tree)
        if first is None:
            return None
        if len(first):  # the first tree with a split
            break
    columns = ["node", "feature", "threshold", "w", "impurity", "w_left", "impurity_left",
               "w_right", "impurity_right", "decrease"]
    return first.nlargest(n, "decrease")[columns].reset_index(drop=True)
