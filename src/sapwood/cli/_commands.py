"""The ``demo``, ``explain``, ``tree``, ``convert`` and ``warmup`` commands: arguments
in, exit code out."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .._text import shorten, visible
from ..plotting import plot_tree
from ..report import _measures
from ..report._compiled import uncompiled
from ..report._data import column_list, did_you_mean, prepare
from ..report._models import (
    build_model,
    default_model,
    describe_ensemble,
    describe_source,
    model_class,
)
from ..report._steps import Steps
from ._data import (
    check_output,
    load_dask_table,
    load_table,
    read_model_file,
)
from ._errors import InputError
from ._model_files import load_model_file as load_any_model_file
from ._model_files import model_task
from ._ui import UI
from ._warmup import compile_ahead, stop

__all__ = ["convert", "demo", "explain", "tree", "warmup"]

TREE_SUFFIXES = (".txt", ".dot", ".svg", ".png", ".pdf")
# The Agg renderer draws at most 2^16 pixels a side; a larger tree's PNG gets a lower
# resolution (SVG and PDF have none to lower).
PNG_MAX_PIXELS = 60_000


def _finish(report, args, ui: UI, title: str, epilogue=()) -> int:
    """Notes on stderr, then the report: JSON, or the terminal rendering (one screen, or
    every table with ``--details``); the HTML file when asked."""
    from ..report._terminal import print_report

    for text in report.notes:
        ui.note(text)
    written = None
    if args.report:
        with Steps(ui.progress).step(f"Writing {args.report}"):
            written = report.to_html(args.report, title=title)
    if ui.json:
        print(report.to_json())
    elif ui.shows_results:
        print_report(report, ui.out, details=getattr(args, "details", False),
                     hint="Every measure's table, the ranks and the agreement: --details")
        for line in epilogue:
            ui.out.print(visible(line), markup=False, highlight=False, soft_wrap=True)
        if written is not None:
            ui.out.print(visible(f"Report written to {written}"), markup=False,
                         highlight=False, soft_wrap=True)
    return 0


def _settings(args) -> dict:
    """The keyword arguments of :func:`sapwood.explain` that ``args`` sets, checked
    against each other in the command line's words."""
    methods = _measures.parse_methods(args.methods)
    if args.n_permutations is not None and args.pvalues != "altmann":
        raise InputError(f"--n-permutations {args.n_permutations}: only --pvalues altmann "
                         f"permutes the target; got --pvalues {args.pvalues or '(none)'}")
    if args.refits < 0:
        raise InputError(f"--refits {args.refits}: must be 0 or more")
    return {"methods": methods, "random_state": args.seed, "pvalues": args.pvalues,
            "n_permutations": args.n_permutations, "cv": args.cv, "top_k": args.top_k,
            "max_rows": args.max_rows, "n_jobs": args.n_jobs, "scoring": args.scoring,
            "refits": args.refits, "adjust": None if args.adjust == "none" else args.adjust}


def demo(args) -> int:
    if args.report:
        check_output(args.report, "--report")
    if args.n_samples is not None and args.data != "ground-truth":
        raise InputError(f"--n-samples {args.n_samples}: only --data ground-truth is "
                         f"generated; got --data {args.data}")
    X, y, truth, source = _demo_data(args)
    settings = _settings(args)
    ui = UI(quiet=args.quiet, json=args.json)
    model, test_size = None, None
    if args.data == "loan":
        # Seed 003's tree, on all 7 rows as the seed grows it: 7 rows leave none to hold out.
        model = model_class("tree", "classification")(criterion="entropy", max_depth=3,
                                                      random_state=args.seed)
        test_size = 0
        ui.note("the loan table has 7 rows, too few to hold any out: seed 003's tree "
                "(entropy, depth 3) is fit, scored and permuted on all of them, as in the "
                "seed; the numbers describe the fit, not new rows")
    report = _explain(args, ui, X, y, model=model, test_size=test_size, task="classification",
                      source=source, **settings)
    report.truth = truth
    title = {"ground-truth": "sapwood demo: importance on data with known answers",
             "iris": "sapwood demo: what tells iris species apart",
             "loan": "sapwood demo: seed 003's loan table"}[args.data]
    epilogue = [_demo_verdict(report)] if args.data == "ground-truth" else []
    return _finish(report, args, ui, title, epilogue=epilogue)


def _explain(args, ui: UI, X, y, **settings):
    """:func:`sapwood.explain`, the measures' kernels compiled ahead in a second process
    while the model is fit when they are not cached yet (``_warmup.compile_ahead``, in
    the process ``main`` started, ``args.ahead``, if any), with a note saying so: the
    run waits for compiling that later runs skip."""
    from ..report import explain

    methods = settings["methods"]
    compiling = uncompiled(methods)
    model = settings.get("model")
    task = getattr(model, "task", None) or settings.get("task", "auto")
    # The second process compiles for a classifier or regressor's measures only.
    ahead = compile_ahead(_task_of(_head(y), task), None if task == "survival" else model,
                          methods, getattr(args, "ahead", None))
    try:
        report = explain(X, y, progress=ui.progress, **settings)
    finally:
        stop(ahead)
    if compiling:
        ui.note("sapwood's kernels were not in Numba's cache yet: they compiled during this "
                "run and are cached now, so it took longer than later runs will "
                "(`sapwood warmup` compiles them all ahead of time)")
    return report


def _head(y):
    """``y``, or the first partition of a Dask Series: enough to guess the task by for
    the kernels compiled ahead (the library settles it on the rows it reads)."""
    from ..importance._engine._dask import is_dask_collection

    return y.partitions[0].compute() if is_dask_collection(y) else y


def _task_of(y, task: str) -> str:
    from ..report._data import detect_task

    if task != "auto":
        return task
    try:
        return detect_task(y)
    except (TypeError, ValueError):
        return "classification"


def warmup(args) -> int:
    from ._warmup import warmup as compile_kernels

    jobs = args.jobs or os.cpu_count() or 1
    print(f"Compiling sapwood's Numba kernels in {jobs} processes ...", file=sys.stderr)
    seconds, failures = compile_kernels(jobs)
    for failure in failures:
        print(visible(f"sapwood warmup: {failure}"), file=sys.stderr)
    print(f"Kernels compiled and cached in {seconds:.1f} s"
          + (f"; {len(failures)} part(s) failed" if failures else ""), file=sys.stderr)
    return 1 if failures else 0


def _demo_data(args):
    """(X, y, truth or None, source line) for ``demo --data``."""
    if args.data == "ground-truth":
        from sapwood.datasets import make_ground_truth

        n_samples = args.n_samples or 2000
        X, y, truth = make_ground_truth(n_samples, task="classification",
                                        random_state=args.seed)
        source = f"ground truth (make_ground_truth, seed {args.seed})"
    else:
        from sapwood import datasets

        loader = {"iris": datasets.load_iris, "loan": datasets.load_loan}[args.data]
        X, y = loader(return_X_y=True)
        truth = None
        source = {"iris": "iris (seed 002; sapwood.datasets.load_iris)",
                  "loan": "loan (seed 003; sapwood.datasets.load_loan)"}[args.data]
    X.columns = [str(column) for column in X.columns]
    return X.astype("float64"), y.rename(str(y.name or "y")), truth, source


def _demo_verdict(run) -> str:
    ranks = run.ranks.set_index("feature")
    n = len(ranks)
    shown = [f"{_measures.MEASURES[name].title} rank {ranks.loc['noise_id', name]}/{n}"
             for name in run.results]
    return "The ID column noise_id (pure noise): " + ", ".join(shown)


def explain(args) -> int:
    inputs = [args.data] + ([args.model] if Path(args.model).is_file() else [])
    if args.report:
        check_output(args.report, "--report", inputs)
    settings = _settings(args)
    ui = UI(quiet=args.quiet, json=args.json)
    read_notes = []  # what reading the file found (duplicate header names)
    fitted = args.model not in ("auto", "tree", "rf", "et", "gb")
    if args.all_trees and not fitted:
        raise InputError("--all-trees reads a loaded boosting model with all its iterations; "
                         "it needs --model MODEL_FILE")
    if args.fdr is not None and args.select is None:
        raise InputError(f"--fdr {args.fdr:g}: only --select knockoffs has a false "
                         "discovery rate; add --select knockoffs")
    if args.select is not None and fitted:
        raise InputError(f"--select {args.select} refits the model with a knockoff copy of "
                         "each feature, so it needs a model sapwood trains (--model "
                         "tree|rf|et|gb), not a loaded model file")
    if fitted:
        if not Path(args.model).is_file():
            raise InputError(f"--model {args.model!r}: not one of tree, rf, et, gb and not "
                             "an existing model file")
        model, loading_notes = load_any_model_file(args.model, all_trees=args.all_trees)
        task = model_task(model)
        if args.task not in ("auto", task):
            raise InputError(f"--task {args.task}: the model in {args.model} is a "
                             f"{task} model")
    if args.event_value is not None and args.event is None:
        raise InputError(f"--event-value {args.event_value!r} names the value of the event "
                         "column: give the column with --event")
    if args.event is not None and args.dask:
        raise InputError("--event: a survival target is not offered with --dask")
    if args.dask:
        if args.row:
            raise InputError(f"--row {args.row[0]}: explaining rows by position is not "
                             "offered with --dask (the rows are read block by block)")
        table = load_dask_table(args.data, sep=args.sep, drop=args.drop, target=args.target,
                                na_values=args.na_values)
        y, positions = table[args.target], []
    else:
        table = load_table(args.data, sep=args.sep, drop=args.drop, target=args.target,
                           na_values=args.na_values, notes=read_notes)
        y = _target(table, args.target, args.event)
        positions = _rows(args.row, len(table))
    X = table.drop(columns=list(getattr(y, "columns", [args.target])))
    for option, column in (("--groups", args.groups), ("--order-by", args.order_by)):
        if column is not None and column not in X.columns:
            names = [str(name) for name in X.columns]
            raise InputError(f"{option} {column!r}: no such column"
                             f"{did_you_mean(column, names)}; columns are: "
                             f"{column_list(names)}")
    settings.update(groups=args.groups, order_by=args.order_by)
    if args.event is not None:
        if args.task not in ("auto", "survival"):
            raise InputError(f"--task {args.task} with --event: a time and an event are a "
                             "survival target")
        args.task = "survival"
        settings["event_value"] = args.event_value
    if fitted:
        # A file may hold the rows the model was trained on: the held-out share only.
        settings.update(model=model, test_size=args.test_size)
    else:
        name = None if args.model == "auto" else args.model
        if args.max_depth is not None:
            task = _task_of(_head(y), args.task)
            name = build_model(name or default_model(task), task, max_depth=args.max_depth,
                               random_state=args.seed)
        settings.update(model=name, test_size=args.test_size, task=args.task)
    report = _explain(args, ui, X, y, rows=positions, select=args.select, fdr=args.fdr,
                      effects=args.effects,
                      source=str(args.data), **settings)
    report.notes[:0] = [*(loading_notes if fitted else []), *read_notes]
    return _finish(report, args, ui, f"sapwood: what drives {args.target!r} in {args.data}")


def _target(table, target: str, event=None):
    """The target column, or with ``event`` the two columns of a survival target."""
    from ..report._data import check_target

    if event is None:
        return check_target(table, target)
    check_target(table, event)
    if event == target:
        raise InputError(f"--event {event!r} is the --target column; the event is another "
                         "column (whether the event was seen at the target's time)")
    if table.shape[1] < 3:
        raise InputError(f"no feature columns: the table has only {target!r} and {event!r}")
    return table[[check_target(table, target).name, event]]


def _rows(positions, n_rows: int) -> list:
    """The distinct ``--row`` positions in the order given; one outside the file's
    rows is bad input."""
    for position in positions:
        if not 0 <= position < n_rows:
            raise InputError(f"--row {position}: the data has {n_rows} rows, at positions "
                             f"0 to {n_rows - 1} (0 is the first row under the header)")
    return list(dict.fromkeys(positions))


def tree(args) -> int:
    try:
        from sapwood import export
    except ImportError:
        raise InputError("drawing trees needs sapwood.export, which is not available in "
                         "this version yet") from None
    from ..report._html import write_atomic

    out = Path(args.out) if args.out else None
    if out is not None:
        if out.suffix.lower() not in TREE_SUFFIXES:
            raise InputError(f"--out {out}: unknown format {out.suffix or '(none)'!r}; use "
                             + ", ".join(TREE_SUFFIXES))
        check_output(out, "--out", [args.data])
    read_notes = []
    table = load_table(args.data, sep=args.sep, drop=args.drop, target=args.target,
                       na_values=args.na_values, notes=read_notes)
    data = prepare(table, args.target, args.task)
    ui = UI(quiet=args.quiet)
    for text in read_notes + data.notes:  # rows left out, dates read as numbers
        ui.note(text)
    cls = model_class("tree", data.task)
    model = cls(max_depth=args.max_depth, random_state=args.seed)
    try:
        model.fit(data.X, data.y)
    except ValueError as error:
        raise InputError(f"cannot fit the tree: {str(error).splitlines()[0]}") from None
    names = list(data.X.columns)
    suffix = out.suffix.lower() if out is not None else ".txt"
    # Where the data has missing values every split says where they go (and a split
    # that only separates them reads "is missing", not "<= inf").
    missing = data.n_missing > 0
    if suffix == ".txt":
        content = export.export_text(model, feature_names=names, max_depth=args.max_depth,
                                     show_missing=missing)
    elif suffix == ".dot":
        classes = ([str(label) for label in model.classes_] if data.task == "classification"
                   else None)
        content = export.export_graphviz(model, feature_names=names, class_names=classes,
                                         filled=True, rounded=True, show_missing=missing)
    else:
        # A drawing shows names as the tables do: escaped, very long ones cut.
        content = _drawing(model, [shorten(name) for name in names], suffix,
                           args.max_depth, missing)
    if out is None:
        # Names from the data, shown as characters: a control character is escaped.
        print("\n".join(visible(line) for line in content.splitlines()))
        return 0
    write_atomic(out, content)
    if not args.quiet:
        print(visible(f"Tree ({data.task}, depth {model.get_depth()}, "
                      f"{model.get_n_leaves()} leaves) written to {out}"))
    return 0


def _drawing(model, names, suffix, max_depth, missing):
    """The tree drawn with its text at a readable size, the figure as large as the
    tree needs (a PNG's resolution lowered where it would exceed what a PNG holds)."""
    import io

    from ..report._html import new_figure

    figure = new_figure((6.0, 4.0))
    plot_tree(model, ax=figure.add_subplot(), feature_names=names, filled=True,
              rounded=True, max_depth=max_depth, show_missing=True if missing else "auto",
              scale="figure")
    dpi = 100.0
    if suffix == ".png":
        dpi = min(dpi, PNG_MAX_PIXELS / max(figure.get_size_inches()))
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix.lstrip("."), bbox_inches="tight", dpi=dpi)
    return buffer.getvalue()


def convert(args) -> int:
    """Read a sapwood, XGBoost or LightGBM model file and write it as a sapwood model."""
    import io

    import sapwood

    from ..report._html import write_atomic

    out = check_output(args.out, "OUT", [args.model_file])
    ensemble = read_model_file(args.model_file)
    buffer = io.BytesIO()
    try:
        sapwood.save(ensemble, buffer)
    except ValueError as error:
        raise InputError(f"cannot write {args.model_file} as a sapwood model: "
                         f"{str(error).splitlines()[0]}") from None
    write_atomic(out, buffer.getvalue())
    if not args.quiet:
        print(visible(f"Converted {args.model_file} to {out}: "
                      f"{describe_ensemble(ensemble)}; source {describe_source(ensemble)}"))
    return 0
