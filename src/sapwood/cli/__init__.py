"""The ``sapwood`` command: which features does a tree model rely on, from a terminal.

Commands (``sapwood COMMAND --help`` for each)::

    sapwood demo     the ground-truth data set: MDI against held-out permutation
    sapwood explain  a CSV or Parquet file: fit a model, rank the features
    sapwood tree     fit one decision tree and print or draw it
    sapwood convert  read an XGBoost, LightGBM or sapwood model file, write a sapwood one

Exit codes: 0 on success, 2 on bad input (one line on stderr naming the problem), 1 on
an internal error (one line; ``SAPWOOD_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys

from ._data import InputError

__all__ = ["main"]

ENCODING_HELP = ("Text and categorical feature columns are encoded as ordinal codes "
                 "(0, 1, 2, ... for the categories in sorted order; a pandas categorical "
                 "keeps its own order); missing values are kept as missing, not dropped.")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and an :class:`InputError`."""

    def error(self, message):
        raise InputError(f"{self.prog}: {message}")


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}")
    return value


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


def build_parser() -> argparse.ArgumentParser:
    from . import _commands
    from ._measures import DEFAULT_METHODS, MEASURES

    parser = _Parser(prog="sapwood", description=__doc__.splitlines()[0],
                     epilog="Exit codes: 0 on success, 2 on bad input.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    demo = commands.add_parser(
        "demo", help="importance on the bundled ground-truth data set",
        description="Generate the ground-truth data set (Friedman #1 signal, a noisy copy, "
                    "binary, low-cardinality and ID-like noise), fit a model on 75%% of "
                    "it and compare MDI with held-out permutation importance.")
    demo.add_argument("--n-samples", type=_positive_int, default=2000,
                      help="rows to generate (default: 2000)")
    _output_options(demo)
    demo.set_defaults(handler=_commands.demo)

    explain = commands.add_parser(
        "explain", help="rank the features of a CSV or Parquet table",
        description="Fit a model on a training split of DATA, score it on the held-out "
                    "rows and rank its features by each importance measure (MDI from the "
                    "fitted trees; permutation on the held-out rows). A loaded model "
                    "(--model FILE) is scored and permuted on the same held-out rows; "
                    "XGBoost and LightGBM trees record no impurities, so for them MDI is "
                    "replaced by the library's split gain (gain). " + ENCODING_HELP)
    explain.add_argument("data", metavar="DATA", help="CSV file, or Parquet (.parquet, .pq)")
    explain.add_argument("--target", required=True, metavar="COL", help="column to explain")
    explain.add_argument("--model", default="auto", metavar="tree|rf|et|gb|MODEL_FILE",
                         help="model to train, or a saved sapwood, XGBoost or LightGBM model "
                              "file to load (default: rf when available, else tree)")
    explain.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                         help=f"comma-separated measures from: {', '.join(MEASURES)} "
                              f"(default: {','.join(DEFAULT_METHODS)}; gain needs an "
                              "XGBoost or LightGBM model)")
    explain.add_argument("--test-size", type=_fraction, default=0.25,
                         help="share of rows held out for scoring and permutation "
                              "(default: 0.25)")
    explain.add_argument("--task", choices=("auto", "classification", "regression"),
                         default="auto",
                         help="auto: classification for a non-numeric target or one with "
                              "at most 20 distinct integer values, else regression")
    explain.add_argument("--max-depth", type=_positive_int, default=None,
                         help="maximum tree depth (default: 8 for tree, unlimited for "
                              "ensembles)")
    _output_options(explain)
    explain.set_defaults(handler=_commands.explain)

    tree = commands.add_parser(
        "tree", help="fit one decision tree and print or draw it",
        description="Fit a decision tree on all of DATA and print its rules, or write "
                    "them as text (.txt), Graphviz (.dot) or a drawing (.svg, .png, .pdf). "
                    + ENCODING_HELP)
    tree.add_argument("data", metavar="DATA", help="CSV file, or Parquet (.parquet, .pq)")
    tree.add_argument("--target", required=True, metavar="COL", help="column to predict")
    tree.add_argument("--max-depth", type=_positive_int, default=3,
                      help="maximum depth (default: 3)")
    tree.add_argument("--task", choices=("auto", "classification", "regression"),
                      default="auto", help="as for explain")
    tree.add_argument("--out", metavar="tree.txt|.dot|.svg",
                      help="write to this file instead of printing")
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


def _version() -> str:
    from sapwood import __version__

    return f"sapwood {__version__}"


def main(argv=None) -> int:
    """Run the ``sapwood`` command with ``argv`` (default: ``sys.argv[1:]``); returns the
    exit code."""
    try:
        args = build_parser().parse_args(argv)
        return args.handler(args)
    except InputError as error:
        print(f"sapwood: error: {error}", file=sys.stderr)
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
        print(f"sapwood: internal error: {type(error).__name__}"
              f"{': ' + text[0] if text else ''} (set SAPWOOD_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return 1
