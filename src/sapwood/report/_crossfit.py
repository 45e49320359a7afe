"""Cross-fitting (``explain(cv=K)``, ``--cv K``): K refits, every row held out once.

The folds come from :func:`sapwood._splits.folds` (K-fold, GroupKFold under groups,
forward chaining in time order). Each fold is one ordinary run (``run_pipeline``
on the fold's training rows, judged on its held-out rows); the runs are then pooled:

- a measure with one draw per held-out row (held-out permutation by a score that is
  a mean over rows, ...) pools those draws over all rows, each row scored by the model
  that did not see it: its importance is their mean and its interval the Student-t
  interval of that mean (by groups: each group one draw). That is the cross-fitted
  estimator of Williamson et al. (2023), whose interval rests on the per-row influence
  values of every fold; their spread includes the differences between the K models.
- any other measure (MDI, drop-column) is the mean of its K fold values, its interval
  the Student-t interval over the K folds (each a refit and new rows).

The score is the row-weighted mean of the folds' held-out scores; the warnings are
those of any fold (the skill and small-data warnings found again on the pooled rows);
the verdict rests on the pooled intervals; and how often each feature's status held
across the K fold verdicts is kept as the stability (docs/measures.md,
"Cross-fitting").
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import _splits
from ..importance._engine._result import ImportanceResult, mean_interval
from . import _agreement, _verdict
from ._baseline import Baseline, baseline_warning
from ._measures import MEASURES

__all__ = ["cross_fit"]


def cross_fit(data, model, options, *, run, steps, source):
    """The pooled :class:`Report` of ``options.cv`` folds (a model trained here); ``run``
    is :func:`~sapwood.report._explain.run_pipeline`, the run of one fold."""
    from sklearn.base import clone

    plan = options.plan
    k = options.cv
    folds = _splits.folds(len(data.y), k, options.seed, plan=plan,
                          y=data.y if data.task == "classification" else None)
    reports = []
    for i, (train, test) in enumerate(folds):
        order = np.concatenate([train, test])
        fold = dataclasses.replace(data, X=data.X.iloc[order], y=data.y.iloc[order])
        fold_options = dataclasses.replace(
            options, cv=None, refits=0, plan=None if plan is None else plan.subset(order))
        steps.line(f"Fold {i + 1} of {len(folds)}: training on {len(train)} rows, holding "
                   f"out {len(test)}")
        reports.append(run(fold, clone(model), fold_options, steps=steps,
                           source=source, fitted=False, held_out=True, n_train=len(train)))
    return _pooled(reports, folds, data, plan, options)


def _pooled(reports, folds, data, plan, options):
    first = reports[0]
    sizes = np.array([report.n_test for report in reports], dtype=np.float64)
    weights = sizes / sizes.sum()
    n_test = int(sizes.sum())
    names = [name for name in first.results if all(name in r.results for r in reports)]
    held = np.concatenate([test for _, test in folds])
    groups = None if plan is None or plan.groups is None else plan.groups[held]
    results = {name: _pooled_result([r.results[name] for r in reports], sizes, len(folds),
                                    groups) for name in names}
    notes = list(dict.fromkeys(note for report in reports for note in report.notes))
    notes.append(f"cross-fitted: {len(folds)} models; the one kept (Report.model: rows "
                 f"explained, effects, selection) is the first fold's, trained on "
                 f"{len(folds[0][0])} rows and judged on the other {len(folds[0][1])}")
    skipped = [name for name in first.results if name not in names]
    if skipped:
        notes.append(f"{', '.join(skipped)}: not computed in every fold, so not pooled")
    if any(report.pvalues and any(r.pvalues is not None for r in report.results.values())
           for report in reports):
        notes.append("p-values are per split: they are not pooled across the "
                     f"{len(folds)} folds, so none is shown")
    score = float(np.dot(weights, [report.score for report in reports]))
    accuracy = None if first.accuracy is None else float(
        np.dot(weights, [report.accuracy for report in reports]))
    pooled = dataclasses.replace(
        first, data=data, results=results, notes=notes, n_test=n_test,
        n_train=int(round(np.mean([len(train) for train, _ in folds]))), score=score,
        accuracy=accuracy, baseline=_pooled_baseline(reports, weights),
        # The report's model is the first fold's: what reads it with "the held-out
        # rows" (rows asked for, effects) reads that fold's.
        held_out_index=data.X.index[folds[0][1]],
        agreement=_agreement.agreement(results, first.top_k) if data.X.shape[1] > 1 else [],
        split={**_splits.summary(plan, None, held),
               "kind": "random" if plan is None else plan.kind, "folds": len(folds)},
        pvalues=None)
    pooled.warnings = _pooled_warnings(reports, pooled)
    pooled.verdict = _verdict.verdict(pooled, pooled.warnings)
    pooled.stability = {"refits": len(folds), "how": "folds",
                        "features": _held(pooled, reports)}
    return pooled


def _pooled_result(results, sizes, k, groups) -> ImportanceResult:
    """One measure's K fold results as one (see the module's docstring)."""
    first = results[0]
    means = np.stack([r.importances_mean for r in results], axis=1)  # (n_features, K)
    per_fold = {**first.params, "cv": k}
    low, high = mean_interval(means)
    row_draws = [_row_draws(r, int(n)) for r, n in zip(results, sizes, strict=True)]
    intervals = {"ci": f"the {k} refits (cross-fitting folds)"}
    if all(draws is not None for draws in row_draws):
        draws = np.concatenate(row_draws, axis=1)
        intervals["rank"] = f"new rows, each held out once by one of {k} refits"
        if groups is not None:
            draws = _splits.group_draws(draws, groups)
            intervals["rank"] = (f"new groups, each held out once by one of {k} refits "
                                 f"({len(np.unique(groups))} groups)")
        return ImportanceResult(importances_mean=draws.mean(axis=1),
                                importances_std=means.std(axis=1),
                                feature_names=first.feature_names, method=first.method,
                                params=per_fold, importances=means, ci_low=low, ci_high=high,
                                extra={"intervals": intervals, "folds": means},
                                rank_draws=draws)
    return ImportanceResult(importances_mean=means.mean(axis=1),
                            importances_std=means.std(axis=1),
                            feature_names=first.feature_names, method=first.method,
                            params=per_fold, importances=means, ci_low=low, ci_high=high,
                            extra={"intervals": {**intervals, "rank": intervals["ci"]},
                                   "folds": means})


def _row_draws(result, n_rows: int):
    """A fold result's per-row draws (before any pooling by group), or None when it has
    none (random blocks of rows)."""
    draws = result.extra.get("row_draws", result.rank_draws)
    if draws is None or draws.ndim != 2 or draws.shape[1] != n_rows:
        return None
    return draws


def _pooled_baseline(reports, weights):
    """The constant model's pooled score and the model's pooled gain over it: the
    weighted mean of the folds' gains, its standard error from theirs (independent
    folds of rows)."""
    found = [report.baseline for report in reports]
    if any(b is None for b in found):
        return None
    score = float(np.dot(weights, [b.score for b in found]))
    if any(b.low is None for b in found):
        return Baseline(score, test=found[0].test)
    centre = np.array([(b.low + b.high) / 2 for b in found])
    half = np.array([(b.high - b.low) / 2 for b in found])
    mean = float(np.dot(weights, centre))
    spread = float(np.sqrt(np.sum((weights * half) ** 2)))
    return Baseline(score, mean - spread, mean + spread, test=found[0].test)


def _pooled_warnings(reports, pooled) -> list:
    """Each fold's warnings once (by kind and features, the first fold's wording), the
    skill and small-data warnings found again on the pooled rows."""
    seen, found = set(), []
    skill = baseline_warning(pooled.baseline, pooled.score_name, pooled.score, pooled.n_test)
    if skill is not None:
        found.append(skill)
    for report in reports:
        for finding in report.warnings:
            key = (finding.kind, tuple(finding.features))
            if finding.kind in ("baseline", "small-data") or key in seen:
                continue
            seen.add(key)
            found.append(finding)
    small = _verdict.small_data(pooled.n_test, True, pooled.score_name)
    if small is not None:
        found.append(small)
    return found


def _held(pooled, reports) -> dict:
    """Feature -> the share of the folds in which it stood as it stands pooled, each by
    its own interval (relies, not, uncertain: :func:`_verdict.standing`), before the
    rules that read the whole verdict (a model without skill relies on nothing; a group
    speaks for its members): a fold that is a K-th of the rows cannot show skill as
    the pooled rows do."""
    final = _standing(pooled)
    folds = [_standing(report) for report in reports]
    return {feature: float(np.mean([fold.get(feature) == status for fold in folds]))
            for feature, status in final.items()}


def _standing(report) -> dict:
    name = _verdict.verdict_measure(report.results)
    if name is None:
        return {}
    scored = MEASURES[name].rows == "held-out"
    return _verdict.standing(report.results[name], name=name,
                             n_rows=report.n_test if scored else None,
                             accuracy=scored and report.score_name == "accuracy")
