"""Stability said out loud: what a verdict would be under other refits and another score.

Three checks, each adding one line to the verdict at most (docs/measures.md,
"Stability"):

- how often each feature's status holds across refits: the K folds when cross-fitting
  (:mod:`._crossfit` counts them), else, with ``refits=R``, R more runs of the verdict
  measure on another split and model seed each (the main run plus R);
- whether the verdict changes with the score: for a binary target scored by the
  default proper score (Brier) whose rarer class is under :data:`RARE` of the rows or
  whose model shows no skill, the features the model relies on by held-out
  permutation scored by ROC AUC instead; when they differ, the line names both;
- the p-values shown are adjusted for the number of features tested (Holm by
  default, Benjamini-Hochberg on request), the raw ones kept in the result's
  ``extra["raw_pvalues"]``.

Also, in time order, the verdict says that it speaks of the later period.
"""

from __future__ import annotations

import numpy as np

from .. import _splits
from .._text import shorten
from ..importance import adjust_pvalues, permutation_importance
from . import _verdict
from ._models import shown_score

__all__ = ["said_out_loud"]

# How many features a stability line names before counting the rest.
NAMED = 6
# The score check runs where the Brier score and ROC AUC part ways: a rarer class below
# this share of the rows, or a model without skill by the Brier score.
RARE = 0.2


def said_out_loud(report, options, *, steps, adjust="holm", fitted=False, held_out=True,
                  n_train=0) -> None:
    """Add the stability, score and multiplicity findings to ``report`` (in place)."""
    _adjusted(report, adjust)
    if report.verdict is None or report.verdict.measure is None:
        return
    lines = []
    if report.split and report.split.get("kind") == "time":
        split = report.split
        lines.append(f"- About the later period: judged on rows from {split.get('test_from')} "
                     f"to {split.get('test_until')} by a model of earlier rows; it says "
                     "what held then, not what holds at every time")
    stable = report.stability
    if stable is None and options.refits and not fitted and held_out and not n_train:
        with steps.step(f"Refitting on {options.refits} other seeds for the stability"):
            stable = _seed_stability(report, options)
        report.stability = stable
    if stable is not None:
        lines.append(_stability_line(stable))
    if not fitted and held_out and options.cv is None:
        flip = _score_flip(report, options)
        if flip is not None:
            report.stability = {**(report.stability or {}), "scores": flip}
            lines.append(flip["line"])
    if lines:
        verdict_lines = report.verdict.lines
        at = len(verdict_lines) - 1 if verdict_lines[-1].startswith("- ") and (
            "arning" in verdict_lines[-1]) else len(verdict_lines)
        verdict_lines[at:at] = lines


def _adjusted(report, adjust) -> None:
    if adjust is None:
        return
    told = False
    for name, result in list(report.results.items()):
        if result.pvalues is None:
            continue
        raw = np.asarray(result.pvalues, dtype=np.float64)
        report.results[name] = result.replace(
            pvalues=adjust_pvalues(raw, adjust),
            params={**result.params, "adjust": adjust},
            extra={**result.extra, "raw_pvalues": raw})
        told = True
    if told:
        how = ("Holm's adjustment (the chance of any false finding stays at the level "
               "read)" if adjust == "holm" else "Benjamini-Hochberg's adjustment (the "
               "expected share of false findings among those read as significant)")
        report.notes.append(f"p-values are adjusted for the {report.data.X.shape[1]} "
                            f"features tested by {how}; adjust=None (--adjust none) "
                            "shows them raw")


def _seed_stability(report, options) -> dict:
    """The main run plus ``options.refits`` runs of its verdict measure on new seeds."""
    from sklearn.base import clone

    status_word = {"relies_on": "relies", "does_not": "not", "uncertain": "uncertain"}
    # Each feature's own standing: one relied on only through its group stands alone
    # as uncertain, as the refits' standings are read.
    main = {e["feature"]: "uncertain" if e["through_group"] else status_word[e["status"]]
            for e in report.verdict.features}
    no_skill = "baseline" in report.verdict.warnings
    data, plan = report.data, options.plan
    held = {feature: [True] for feature in main}
    for i in range(1, options.refits + 1):
        seed = options.seed + i
        train, test = _splits.holdout(len(data.y), options.test_size, seed, plan=plan,
                                      y=data.y if data.task == "classification" else None)
        model = clone(report.model)
        if "random_state" in model.get_params():
            model.set_params(random_state=seed)
        model.fit(data.X.iloc[train], data.y.iloc[train])
        result = permutation_importance(model, data.X.iloc[test], data.y.iloc[test],
                                        scoring=options.scoring, n_repeats=5,
                                        random_state=seed)
        if plan is not None and plan.groups is not None:
            result = _splits.regroup(result, plan.groups[test])
        placed = _verdict.standing(result, n_rows=report.n_test, name="permutation",
                                   accuracy=report.score_name == "accuracy")
        if no_skill:  # as the verdict reads a model without skill
            placed = {f: "uncertain" if v == "relies" else v for f, v in placed.items()}
        for feature in main:
            held[feature].append(placed.get(feature) == main[feature])
    how = "model seeds" if plan is not None and plan.order is not None else "seeds"
    return {"refits": options.refits + 1, "how": how,
            "features": {f: float(np.mean(v)) for f, v in held.items()}}


def _stability_line(stable: dict) -> str:
    shares = stable["features"]
    n = stable["refits"]
    what = {"folds": f"the {n} cross-fitting folds",
            "seeds": f"{n} fits (this one and {n - 1} on another split and model seed)",
            "model seeds": f"{n} fits (this one and {n - 1} with another model seed; the "
                           "time split stays)"}[stable["how"]]
    shaky = sorted((share, feature) for feature, share in shares.items() if share < 1)
    if not shaky:
        return f"- Stable: every feature's status held in all of {what}"
    named = ", ".join(f"{shorten(f)} {round(share * n)}/{n}" for share, f in shaky[:NAMED])
    more = f" and {len(shaky) - NAMED} more" if len(shaky) > NAMED else ""
    return f"- Stability over {what}: every status held but {named}{more}"


def _score_flip(report, options) -> dict | None:
    """For a binary target under the default proper score: the features the model
    relies on by held-out permutation scored by ROC AUC, when they differ from the
    verdict's."""
    if (report.task != "classification" or options.scoring is not None
            or report.data.y.nunique() != 2 or report.held_out_index is None
            or "permutation" not in report.results
            or not hasattr(report.model, "predict_proba")):
        return None
    rarer = float(report.data.y.value_counts(normalize=True).min())
    if rarer >= RARE and "baseline" not in report.verdict.warnings:
        return None  # the two scores part ways where a class is rare or skill is unshown
    rows = report.data.X.index.get_indexer(report.held_out_index)
    X_test, y_test = report.data.X.iloc[rows], report.data.y.iloc[rows]
    try:
        # As many shuffles as the verdict's measure: like is compared with like.
        repeats = report.results["permutation"].params.get("n_repeats", 5)
        result = permutation_importance(report.model, X_test, y_test, scoring="roc_auc",
                                        n_repeats=repeats, random_state=report.seed)
    except (ValueError, TypeError):
        return None
    plan = options.plan
    if plan is not None and plan.groups is not None:
        result = _splits.regroup(result, plan.groups[rows])
    placed = _verdict.standing(result, n_rows=report.n_test, name="permutation")
    by_auc = [f for f in report.verdict.order if placed.get(f) == "relies"]
    verdict = list(report.verdict.relies_on)
    if set(by_auc) == set(verdict):
        return None
    said = ", ".join(shorten(f) for f in verdict[:NAMED]) or "nothing"
    auc = ", ".join(shorten(f) for f in by_auc[:NAMED]) or "nothing"
    words = shown_score(report.score_name, report.score)[0]
    line = (f"- Depends on the score: by ROC AUC instead of the {words} the model "
            f"relies on {auc} (above: {said}); read both before acting on either")
    return {"roc_auc": by_auc, "default": verdict, "line": line}

