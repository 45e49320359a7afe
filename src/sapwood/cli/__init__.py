"""The ``sapwood`` command: which features does a tree model rely on, from a terminal.

Commands (``sapwood COMMAND --help`` for each)::

    sapwood demo     the ground-truth data set: MDI against held-out permutation
    sapwood explain  a CSV or Parquet file: fit a model, rank the features
    sapwood tree     fit one decision tree and print or draw it
    sapwood convert  read an XGBoost, LightGBM or sapwood model file, write a sapwood one
    sapwood warmup   compile the Numba kernels now (in parallel), so no later run waits

Exit codes: 0 on success, 2 on bad input (one line on stderr naming the problem), 1 on
an internal error (one line; ``SAPWOOD_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from joblib import parallel_config

from .._text import visible
from ._errors import InputError
from ._model_files import MODEL_FILE_HELP
from ._warmup import start_ahead, stop

__all__ = ["command", "main"]

DEMO_DATA = ("ground-truth", "iris", "loan")
ENCODING_HELP = ("Text and categorical feature columns are encoded as ordinal codes "
                 "(0, 1, 2, ... for the categories in sorted order; a pandas categorical "
                 "keeps its own order); missing values are kept as missing, not dropped.")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and an :class:`InputError`."""

    def error(self, message):
        raise InputError(f"{self.prog}: {message}")


def _number(convert, allowed, expected):
    """An argparse type: the text read by ``convert`` (int or float) and refused, with
    the message "must be ``expected``", when it does not read or is not ``allowed``."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}") from None
        if not allowed(value):
            raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}")
        return value
    return parse


_fraction = _number(float, lambda value: 0 < value < 1, "a number in (0, 1)")
_positive_int = _number(int, lambda value: value >= 1, "a positive integer")
_at_least_two = _number(int, lambda value: value >= 2, "an integer of at least 2")
_row_position = _number(int, lambda value: value >= 0,
                        "a row position, 0 or more (0 is the first row under the header)")
_n_jobs = _number(int, lambda value: value != 0,
                  "a positive number of threads, or -1 for every core")


def _max_rows(text: str):
    word = text.strip().lower()
    if word in ("all", "auto"):
        return None if word == "all" else "auto"
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"must be a positive integer, 'auto' or 'all'; got {text!r}") from None


def _output_options(parser):
    parser.add_argument("--report", metavar="OUT.html",
                        help="also write a self-contained HTML report (no network needed)")
    parser.add_argument("--seed", type=int, default=0,
                        help="random seed for the split, the model and the measures "
                             "(default: 0)")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing on success (errors still go to stderr)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document on stdout instead of tables")
    parser.add_argument("--details", action="store_true",
                        help="print every measure's table, the ranks side by side, the "
                             "agreement table and each warning in full (default: one "
                             "screen, the verdict first)")


def _measure_options(parser, default_methods):
    from ..report._measures import (
        DEFAULT_MAX_ROWS,
        DEFAULT_N_PERMUTATIONS,
        MEASURES,
        MIN_SHAP_ROWS,
        PVALUE_METHODS,
        cross_validated,
    )

    parser.add_argument("--methods", default=",".join(default_methods), metavar="M1,M2,...",
                        help=f"comma-separated measures from: {', '.join(MEASURES)} "
                             f"(default: {','.join(default_methods)}; see 'measures' below)")
    parser.add_argument("--pvalues", choices=PVALUE_METHODS, default=None,
                        help="add a p-value column to each measure it applies to (see "
                             "'p-values' below; default: none)")
    parser.add_argument("--n-permutations", type=_positive_int, default=None, metavar="S",
                        help="permutations of the target for --pvalues altmann (default: "
                             f"{DEFAULT_N_PERMUTATIONS}); each one refits the model")
    parser.add_argument("--cv", type=_at_least_two, default=None, metavar="K",
                        help="cross-fit: K models, each judged on the fold it did not see, "
                             "so that every row is held out once and the intervals include "
                             "the refits (by --groups: whole groups; by --order-by: "
                             f"forward-chaining folds); {', '.join(cross_validated())} "
                             "refits per fold")
    parser.add_argument("--refits", type=int, default=0, metavar="R",
                        help="without --cv: refit on R other seeds (split and model) and "
                             "say how often each feature's status holds (default: 0)")
    parser.add_argument("--adjust", choices=("holm", "bh", "none"), default="holm",
                        help="multiplicity adjustment of --pvalues across the features: "
                             "holm (default; any false finding), bh (Benjamini-Hochberg; "
                             "the share of false findings) or none")
    parser.add_argument("--top-k", type=_positive_int, default=None, metavar="K",
                        help="how many top features the rank-agreement table compares "
                             "(default: 5, or one less than the number of features)")
    parser.add_argument("--max-rows", type=_max_rows, default="auto", metavar="N",
                        help="per-row measures (shap) explain a random sample of at most N "
                             "held-out rows; 'all' for every row; default 'auto': at most "
                             f"{DEFAULT_MAX_ROWS}, fewer for a large model (about 20 s of "
                             f"work, at least {MIN_SHAP_ROWS} rows). The output says how "
                             "many, and the 95%% intervals include the sampling")
    parser.add_argument("--scoring", default=None, metavar="NAME",
                        help="a scikit-learn scorer name (roc_auc, neg_log_loss, "
                             "balanced_accuracy, r2, neg_mean_absolute_error, ...) for the "
                             "model's score, permutation, drop and the baseline (default: "
                             "the Brier score for a classifier, its accuracy shown beside "
                             "it; R² for a regressor; ROC AUC for an anomaly detector's "
                             "model file); for a survival target concordance_index "
                             "(Harrell's, the default), concordance_index_ipcw (Uno's) or "
                             "neg_integrated_brier_score")
    parser.add_argument("--n-jobs", type=_n_jobs, default=-1, metavar="N",
                        help="threads for fitting the model and computing the measures "
                             "(default: -1, every core); the numbers do not depend on it")


def _table_options(parser):
    """How DATA is read: --sep, --na-values, --drop."""
    parser.add_argument("--sep", default=None, metavar="CHAR",
                        help="the CSV delimiter, e.g. ';' or tab (default: sniffed from the "
                             "first lines among comma, semicolon and tab; in a "
                             "semicolon-separated file decimal commas, 3,5, read as numbers)")
    parser.add_argument("--na-values", action="append", default=[], metavar="TOKEN",
                        help="cells equal to TOKEN are missing values, in every column; "
                             "repeat for more tokens (besides pandas' own: empty, NA, n/a, "
                             "NaN, null, ...). A number column with a few cells ?, -, ., "
                             "missing (at most 5%%) is read as numbers without it, with a "
                             "note")
    parser.add_argument("--drop", action="append", default=[], metavar="COL",
                        help="leave column COL out (an exported row index, an ID); repeat "
                             "for more columns")


def build_parser() -> argparse.ArgumentParser:
    from ..report._measures import DEFAULT_METHODS, DEMO_METHODS, methods_help
    from ..report._selection import DEFAULT_FDR, SELECTORS
    from . import _commands

    parser = _Parser(prog="sapwood", description=__doc__.splitlines()[0],
                     epilog="Exit codes: 0 on success, 2 on bad input.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    demo = commands.add_parser(
        "demo", help="importance on a bundled data set (ground truth, iris, loan)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_wrap(
            "Fit a model on a bundled data set and compare its importance measures. "
            "ground-truth (default): generated data whose informative columns are known "
            "(Friedman #1 signal, a noisy copy, binary, low-cardinality and ID-like noise); "
            "a random forest on 75% of it. iris: Fisher's iris (seed 002), a random forest "
            "on 75% of it. loan: seed 003's 7-row loan table, too small to hold rows out: "
            "seed 003's tree (entropy, depth 3) on all rows, as the seed computes it."),
        epilog=methods_help(DEMO_METHODS))
    demo.add_argument("--data", choices=DEMO_DATA, default="ground-truth",
                      help="which data set (default: ground-truth)")
    demo.add_argument("--n-samples", type=_positive_int, default=None,
                      help="rows to generate for --data ground-truth (default: 2000)")
    _measure_options(demo, DEMO_METHODS)
    _output_options(demo)
    demo.set_defaults(handler=_commands.demo)

    warmup = commands.add_parser(
        "warmup", help="compile sapwood's kernels now, so that no later run waits for them",
        description=_wrap(
            "Compile every Numba kernel sapwood's commands and library call into Numba's "
            "cache (NUMBA_CACHE_DIR when set, else beside the installed package), in "
            "parallel processes. A first run with an empty cache otherwise compiles them "
            "one after another as it reaches them. `make install` runs this."))
    warmup.add_argument("--jobs", type=_positive_int, default=None,
                        help="processes to compile in (default: one per core)")
    warmup.set_defaults(handler=_commands.warmup)

    explain = commands.add_parser(
        "explain", help="rank the features of a CSV or Parquet table",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_wrap(
            "Fit a model on a training split of DATA, score it on the held-out rows and "
            "rank its features by each importance measure, then compare the rankings "
            "(Spearman, Kendall, top-k overlap). A loaded model (--model FILE) is scored and "
            "permuted on the same held-out rows; its features are DATA's columns of the "
            "same names, as the library stored them (LightGBM writes a space as an "
            "underscore: 'unit price' is its 'unit_price'), and columns it does not use are "
            "left out. XGBoost and LightGBM trees record no impurities, so for them MDI is "
            "replaced by the library's split gain (gain).")
        + "\n\n" + _wrap(ENCODING_HELP),
        epilog=methods_help())
    explain.add_argument("data", metavar="DATA",
                         help="CSV file, Excel (.xlsx, first sheet) or Parquet (.parquet, "
                              ".pq); with --dask also a directory of Parquet files or a "
                              "pattern such as 'data/*.csv'")
    explain.add_argument("--target", required=True, metavar="COL",
                         help="column to explain (with --event: the time column)")
    explain.add_argument("--event", default=None, metavar="COL",
                         help="a survival target: the column saying whether the event was "
                              "seen at --target's time (1/0, true/false, or two values with "
                              "--event-value); the task is then survival")
    explain.add_argument("--event-value", default=None, metavar="VALUE",
                         help="the value of --event that marks an event (e.g. dead), when "
                              "it is not 1 or true")
    _table_options(explain)
    explain.add_argument("--model", default="auto", metavar="tree|rf|et|gb|MODEL_FILE",
                         help="model to train (default: rf when available, else tree), or "
                              f"{MODEL_FILE_HELP}")
    explain.add_argument("--all-trees", action="store_true",
                         help="read an early-stopped XGBoost or LightGBM model (--model "
                              "MODEL_FILE) with all its iterations, not only up to the best "
                              "one its library predicts with")
    _measure_options(explain, DEFAULT_METHODS)
    explain.add_argument("--groups", default=None, metavar="COL",
                         help="rows with the same value of COL belong together (a person, "
                              "a firm): the split, the folds and the intervals keep each "
                              "group whole; COL is then not a feature")
    explain.add_argument("--order-by", default=None, metavar="COL",
                         help="dates, datetimes or numbers: train on the earliest rows, "
                              "judge on the latest --test-size of them (the cut shown); "
                              "COL is then not a feature")
    explain.add_argument("--test-size", type=_fraction, default=0.25,
                         help="share of rows held out for scoring and permutation "
                              "(default: 0.25)")
    explain.add_argument("--task", choices=("auto", "classification", "regression",
                                            "survival"),
                         default="auto",
                         help="auto: survival with --event, classification for a "
                              "non-numeric target or one with at most 20 distinct integer "
                              "values, else regression")
    explain.add_argument("--max-depth", type=_positive_int, default=None,
                         help="maximum tree depth (default: the model's own: 8 for tree, "
                              "3 for gb, unlimited for rf and et)")
    explain.add_argument("--row", type=_row_position, action="append", default=[],
                         metavar="N",
                         help="also explain the prediction for row N of DATA (0 is the first "
                              "row under the header; repeat for more rows): its base value "
                              "and each feature's value and TreeSHAP contribution, largest "
                              "first; the report shows its waterfall")
    explain.add_argument("--dask", action="store_true",
                         help="read DATA with Dask, block by block, for a table larger "
                              "than memory (needs sapwood[dask]): the model is fit on the "
                              "training rows that fit in memory (a sample of a million "
                              "beyond), the score and permutation importance run on every "
                              "held-out row; the notes say what ran where")
    explain.add_argument("--effects", action="store_true",
                         help="also show how the top features matter (partial dependence "
                              "with ICE, ALE) and their strongest interactions (Friedman's "
                              "H, mean |SHAP interaction|): a line each here, the pictures "
                              "in --report, the curves in --json")
    explain.add_argument("--select", choices=SELECTORS, default=None,
                         help="also select features with a controlled false discovery "
                              "rate: knockoffs refits the model on the training rows with "
                              "a Gaussian knockoff copy of each feature and selects by "
                              "W = importance(feature) - importance(knockoff) (knockoff+)")
    explain.add_argument("--fdr", type=_fraction, default=None, metavar="Q",
                         help=f"target false discovery rate of --select (default: "
                              f"{DEFAULT_FDR})")
    _output_options(explain)
    explain.set_defaults(handler=_commands.explain)

    tree = commands.add_parser(
        "tree", help="fit one decision tree and print or draw it",
        description="Fit a decision tree on all of DATA and print its rules, or write "
                    "them as text (.txt), Graphviz (.dot) or a drawing (.svg, .png, .pdf). "
                    + ENCODING_HELP)
    tree.add_argument("data", metavar="DATA",
                      help="CSV file, Excel (.xlsx, first sheet) or Parquet (.parquet, .pq)")
    tree.add_argument("--target", required=True, metavar="COL", help="column to predict")
    _table_options(tree)
    tree.add_argument("--max-depth", type=_positive_int, default=3,
                      help="maximum depth (default: 3)")
    tree.add_argument("--task", choices=("auto", "classification", "regression"),
                      default="auto", help="as for explain")
    tree.add_argument("--out", metavar="tree.txt|.dot|.svg",
                      help="write to this file instead of printing; a drawing (.svg, .png, "
                           ".pdf) keeps its text at a readable size and grows with the tree")
    tree.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    tree.add_argument("--quiet", action="store_true", help="print nothing on success")
    tree.set_defaults(handler=_commands.tree)

    convert = commands.add_parser(
        "convert", help="write an XGBoost, LightGBM or sapwood model file as a sapwood one",
        description="Read MODEL_FILE (XGBoost JSON or UBJSON from save_model, a LightGBM "
                    "text model from save_model, or a sapwood model file), check it, and "
                    "write it to OUT in sapwood's model format (a ZIP of JSON and NumPy "
                    "arrays, no pickle; load it with sapwood.load). Prints one line: "
                    "source, trees, features and task.")
    convert.add_argument("model_file", metavar="MODEL_FILE", help="the model to read")
    convert.add_argument("out", metavar="OUT", help="the sapwood model file to write "
                                                    "(conventionally .sapwood)")
    convert.add_argument("--quiet", action="store_true", help="print nothing on success")
    convert.set_defaults(handler=_commands.convert)
    return parser


def _wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, width=88)


def _version() -> str:
    from sapwood import __version__

    return f"sapwood {__version__}"


def command() -> int:
    """The ``sapwood`` executable (and ``python -m sapwood.cli``): :func:`main` on the
    process's arguments, for a process that ends when it returns."""
    code = main()
    # The interpreter's exit collects every object the run left, a walk through two
    # thousand modules' and Numba's compiled kernels' objects that took half a second
    # of a six-second demo. Frozen, the collector leaves them to the operating system;
    # what needs closing was closed (the command's files) or runs at exit anyway
    # (atexit, weakref.finalize, the standard streams' flush).
    gc.freeze()
    return code


def main(argv=None) -> int:
    """Run the ``sapwood`` command with ``argv`` (default: ``sys.argv[1:]``); returns the
    exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # Before the parser (which imports every measure): see _warmup.start_ahead.
    ahead = start_ahead(argv)
    try:
        args = build_parser().parse_args(argv)
        args.ahead = ahead
        # Every fit and measure leaves n_jobs unset, so joblib takes it from here.
        with parallel_config(n_jobs=getattr(args, "n_jobs", None)):
            return args.handler(args)
    except InputError as error:
        print(visible(f"sapwood: error: {error}"), file=sys.stderr)
        return 2
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0
    except KeyboardInterrupt:
        print("sapwood: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        # A bug, not bad input: still one line, with the traceback on request.
        if os.environ.get("SAPWOOD_DEBUG"):
            raise
        text = (str(error).strip() or "").splitlines()[:1]
        print(visible(f"sapwood: internal error: {type(error).__name__}"
                      f"{': ' + text[0] if text else ''} (set SAPWOOD_DEBUG=1 for the "
                      "traceback)"), file=sys.stderr)
        return 1
    finally:
        stop(ahead)  # when the command did not get to use it
