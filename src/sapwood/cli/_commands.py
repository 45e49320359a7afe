"""The ``demo``, ``explain``, ``tree`` and ``convert`` commands: arguments in, exit code
out."""

from __future__ import annotations

from pathlib import Path

from . import _measures
from ._data import InputError, load_table, prepare
from ._models import (
    build_model,
    default_model,
    describe_ensemble,
    describe_source,
    load_model_file,
    model_class,
    read_model_file,
)
from ._run import UI, Run, align_to_model, run_pipeline

__all__ = ["convert", "demo", "explain", "tree"]

TREE_SUFFIXES = (".txt", ".dot", ".svg", ".png", ".pdf")


def _finish(run: Run, args, ui: UI, title: str, epilogue=()) -> int:
    from ._render import print_run, run_to_json

    report = None
    if args.report:
        from ._report import write_report

        with ui.step(f"Writing {args.report}"):
            report = write_report(run, args.report, title=title)
    if ui.json:
        print(run_to_json(run, report))
    elif ui.shows_results:
        print_run(run, ui.out)
        for line in epilogue:
            ui.out.print(line, markup=False, highlight=False, soft_wrap=True)
        if report is not None:
            ui.out.print(f"Report written to {report}", markup=False, highlight=False)
    return 0


def demo(args) -> int:
    from sapwood.datasets._ground_truth import make_ground_truth

    from ._data import Prepared

    if args.report:
        from ._report import check_report_path

        check_report_path(args.report)
    ui = UI(quiet=args.quiet, json=args.json)
    X, y, truth = make_ground_truth(args.n_samples, task="classification",
                                    random_state=args.seed)
    data = Prepared(X=X.astype("float64"), y=y, task="classification", target="y")
    name = default_model("classification")
    if name != "rf":
        ui.note("sapwood.learners has no RandomForestClassifier yet: the demo uses a single "
                "decision tree")
    model = build_model(name, "classification", random_state=args.seed)
    run = run_pipeline(data, model, list(_measures.DEFAULT_METHODS), test_size=0.25,
                       seed=args.seed, ui=ui, truth=truth,
                       source=f"ground truth (make_ground_truth, seed {args.seed})")
    return _finish(run, args, ui, "sapwood demo: importance on data with known answers",
                   epilogue=[_demo_verdict(run)])


def _demo_verdict(run: Run) -> str:
    ranks = run.ranks.set_index("feature")
    n = len(ranks)
    line = f"The ID column noise_id (pure noise): MDI rank {ranks.loc['noise_id', 'mdi']}/{n}"
    if "permutation" in ranks:
        line += f", held-out permutation rank {ranks.loc['noise_id', 'permutation']}/{n}"
    return line


def explain(args) -> int:
    if args.report:
        from ._report import check_report_path

        check_report_path(args.report)
    methods = _measures.parse_methods(args.methods)
    ui = UI(quiet=args.quiet, json=args.json)
    fitted = args.model not in ("auto", "tree", "rf", "et", "gb")
    if fitted:
        if not Path(args.model).is_file():
            raise InputError(f"--model {args.model!r}: not one of tree, rf, et, gb and not "
                             "an existing model file")
        model = load_model_file(args.model)
        if args.task not in ("auto", model.task):
            raise InputError(f"--task {args.task}: the model in {args.model} is a "
                             f"{model.task} model")
    table = load_table(args.data)
    if fitted:
        # The loaded model knows its task; the target is read accordingly.
        data = align_to_model(model, prepare(table, args.target, model.task))
    else:
        data = prepare(table, args.target, args.task)
        name = default_model(data.task) if args.model == "auto" else args.model
        model = build_model(name, data.task, max_depth=args.max_depth,
                            random_state=args.seed)
    run = run_pipeline(data, model, methods, test_size=args.test_size, seed=args.seed,
                       ui=ui, source=str(args.data), fitted=fitted)
    return _finish(run, args, ui, f"sapwood: what drives {data.target!r} in {args.data}")


def tree(args) -> int:
    try:
        from sapwood import export
    except ImportError:
        raise InputError("drawing trees needs sapwood.export, which is not available in "
                         "this version yet") from None
    from ._report import write_atomic

    out = Path(args.out) if args.out else None
    if out is not None:
        if out.suffix.lower() not in TREE_SUFFIXES:
            raise InputError(f"--out {out}: unknown format {out.suffix or '(none)'!r}; use "
                             + ", ".join(TREE_SUFFIXES))
        if not out.parent.exists():
            raise InputError(f"--out {out}: directory {out.parent} does not exist")
    table = load_table(args.data)
    data = prepare(table, args.target, args.task)
    cls = model_class("tree", data.task)
    model = cls(max_depth=args.max_depth, random_state=args.seed)
    try:
        model.fit(data.X, data.y)
    except ValueError as error:
        raise InputError(f"cannot fit the tree: {str(error).splitlines()[0]}") from None
    names = list(data.X.columns)
    suffix = out.suffix.lower() if out is not None else ".txt"
    if suffix == ".txt":
        content = export.export_text(model, feature_names=names, max_depth=args.max_depth)
    elif suffix == ".dot":
        content = export.export_graphviz(model, feature_names=names, filled=True,
                                         rounded=True)
    else:
        content = _drawing(export, model, names, suffix, args.max_depth)
    if out is None:
        print(content, end="" if content.endswith("\n") else "\n")
        return 0
    write_atomic(out, content)
    if not args.quiet:
        print(f"Tree ({data.task}, depth {model.get_depth()}, {model.get_n_leaves()} leaves) "
              f"written to {out}")
    return 0


def _drawing(export, model, names, suffix, max_depth):
    import io

    from ._report import new_figure

    depth = model.get_depth()
    figure = new_figure((max(6, 1.1 * 2 ** min(depth, 5)), 1.8 * (depth + 1)))
    export.plot_tree(model, ax=figure.add_subplot(), feature_names=names, filled=True,
                     rounded=True, max_depth=max_depth)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix.lstrip("."), bbox_inches="tight")
    return buffer.getvalue()


def convert(args) -> int:
    """Read a sapwood, XGBoost or LightGBM model file and write it as a sapwood model."""
    import io

    import sapwood

    from ._report import write_atomic

    out = Path(args.out)
    if out.is_dir():
        raise InputError(f"OUT {out}: is a directory")
    if not out.parent.exists():
        raise InputError(f"OUT {out}: directory {out.parent} does not exist")
    ensemble = read_model_file(args.model_file)
    buffer = io.BytesIO()
    try:
        sapwood.save(ensemble, buffer)
    except ValueError as error:
        raise InputError(f"cannot write {args.model_file} as a sapwood model: "
                         f"{str(error).splitlines()[0]}") from None
    write_atomic(out, buffer.getvalue())
    if not args.quiet:
        print(f"Converted {args.model_file} to {out}: {describe_ensemble(ensemble)}; "
              f"source {describe_source(ensemble)}")
    return 0
