"""How far the measures agree: rank tables, pairwise rank correlations, top-k overlap,
and the plain-language warning when a training-data measure and a held-out one part."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ._measures import MEASURES

__all__ = ["agreement", "agrees", "default_top_k", "disagreements", "rank_table",
           "warning_text", "warning_texts"]

MAX_DEFAULT_TOP_K = 5
# Two rankings "agree" when their top-k sets are the same and Kendall's tau-b over all
# features is at least this.
KENDALL_AGREE = 0.7


def default_top_k(n_features: int) -> int:
    """5, or one less than the number of features (the top n of n always overlap)."""
    return max(1, min(MAX_DEFAULT_TOP_K, n_features - 1))


def rank_table(results: dict, truth: dict | None = None) -> pd.DataFrame:
    """One row per feature: its rank under each measure (1 = most important), ordered
    by the first measure's rank."""
    first = next(iter(results.values()))
    table = pd.DataFrame({"feature": first.feature_names})
    if truth is not None:
        table["truth"] = [truth.get(name, "") for name in first.feature_names]
    for name, result in results.items():
        table[name] = result.ranks()
    return table.sort_values([next(iter(results)), "feature"], kind="stable"
                             ).reset_index(drop=True)


def top_features(result, k: int) -> list:
    """The k most important features (ties broken by name, as the tables order them)."""
    return result.to_frame()["feature"].head(k).tolist()


def agreement(results: dict, k: int) -> list:
    """Every pair of measures: Spearman's rho and Kendall's tau-b between their
    importances (scipy.stats; None where undefined, e.g. a constant measure) and the
    overlap of their top-k features."""
    from scipy import stats

    names = list(results)
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            a = results[first].importances_mean
            b = results[second].importances_mean
            finite = np.isfinite(a) & np.isfinite(b)
            with warnings.catch_warnings():
                # A constant input has no rank correlation: reported as None.
                warnings.simplefilter("ignore")
                rho = stats.spearmanr(a[finite], b[finite]).statistic
                tau = stats.kendalltau(a[finite], b[finite]).statistic
            top_a = top_features(results[first], k)
            top_b = top_features(results[second], k)
            shared = [name for name in top_a if name in top_b]
            rows.append({"measure_a": first, "measure_b": second,
                         "spearman": _number(rho), "kendall": _number(tau), "top_k": k,
                         "top_k_overlap": len(shared),
                         "only_a": [name for name in top_a if name not in top_b],
                         "only_b": [name for name in top_b if name not in top_a]})
            rows[-1]["agree"] = agrees(rows[-1])
    return rows


def _number(value):
    value = float(value)
    return value if np.isfinite(value) else None


def agrees(row: dict) -> bool:
    """Same top-k features and Kendall's tau-b at least :data:`KENDALL_AGREE`."""
    return (row["top_k_overlap"] == row["top_k"] and row["kendall"] is not None
            and row["kendall"] >= KENDALL_AGREE)


def disagreements(results: dict, pairs: list, held_out: bool = True) -> list:
    """For every pair of a training-data measure (MDI, split gain, Friedman) and a
    held-out measure with an ``effect`` (permutation: not drop or conditional, which
    also give a feature duplicated by another little importance) whose rank agreement
    is poor (:func:`agrees` is False): the features
    the training-data measure ranks above a feature the held-out measure finds useful,
    although the held-out measure finds them useless (the seeds' warning), one dict
    each, with the pair's agreement numbers.

    Held-out importance counts as *useless* when its mean is at most
    max(2 std, 2% of the largest mean) and as *useful* when it is above
    max(2 std, 5% of the largest mean). ``held_out=False`` (the "held-out" rows are
    the training rows) finds nothing.
    """
    found = []
    if not held_out:
        return found
    for pair in pairs:
        if pair["agree"]:
            continue
        first, second = MEASURES[pair["measure_a"]], MEASURES[pair["measure_b"]]
        if first.rows == "train" and second.effect:
            in_sample, other = first, second
        elif second.rows == "train" and first.effect:
            in_sample, other = second, first
        else:
            continue
        found += _useless_above_useful(results[in_sample.name], results[other.name],
                                       in_sample, other, pair)
    return found


def _useless_above_useful(trained, held, in_sample, other, pair) -> list:
    in_ranks = trained.ranks()
    mean, std = held.importances_mean, held.importances_std
    top = max(float(np.nanmax(mean)), 0.0)
    useless = mean <= np.maximum(2 * std, 0.02 * top)
    useful = mean > np.maximum(2 * std, 0.05 * top)
    held_ranks = held.ranks()
    found = []
    for j in np.flatnonzero(useless):
        outranked = [k for k in np.flatnonzero(useful) if in_ranks[k] > in_ranks[j]]
        if not outranked:
            continue
        k = max(outranked, key=lambda k: mean[k])
        found.append({
            "feature": trained.feature_names[j], "in_sample": in_sample.name,
            "measure": other.name, "n_features": trained.n_features,
            "in_sample_rank": int(in_ranks[j]), "other_rank": int(held_ranks[j]),
            "in_sample_value": float(trained.importances_mean[j]),
            "other": float(mean[j]), "other_std": float(std[j]),
            "above": trained.feature_names[k], "above_other": float(mean[k]),
            "above_other_std": float(std[k]), "n_above": len(outranked),
            "spearman": pair["spearman"], "kendall": pair["kendall"],
            "top_k": pair["top_k"], "top_k_overlap": pair["top_k_overlap"],
        })
    return found


def _correlation(value) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def warning_texts(found: list) -> list:
    """One plain-language warning per pair of measures: the first feature in full, the
    others after it."""
    by_pair = {}
    for item in sorted(found, key=lambda item: item["in_sample_rank"]):
        by_pair.setdefault((item["in_sample"], item["measure"]), []).append(item)
    texts = []
    for items in by_pair.values():
        text = warning_text(items[0])
        if len(items) > 1:
            name = items[0]["measure"]
            text += " The same holds for " + "; ".join(
                f"{item['feature']!r} ({MEASURES[item['in_sample']].title} "
                f"#{item['in_sample_rank']}, {name} {item['other']:.4f} "
                f"± {item['other_std']:.4f})" for item in items[1:]) + "."
        texts.append(text)
    return texts


def warning_text(item: dict) -> str:
    """The plain-language warning for one disagreement."""
    label = MEASURES[item["in_sample"]].title
    other = MEASURES[item["measure"]]
    others = f" and {item['n_above'] - 1} more" if item["n_above"] > 1 else ""
    effect = other.effect.format(repr(item["feature"]))
    return (f"{label} and {other.name} disagree (Spearman {_correlation(item['spearman'])}, "
            f"Kendall {_correlation(item['kendall'])}, top-{item['top_k']} overlap "
            f"{item['top_k_overlap']}/{item['top_k']}). {label} ranks {item['feature']!r} "
            f"#{item['in_sample_rank']} of {item['n_features']}, above {item['above']!r}"
            f"{others}; but {effect} barely changes the score "
            f"({other.name} {item['other']:.4f} ± {item['other_std']:.4f}, rank "
            f"#{item['other_rank']}) while {other.effect.format(repr(item['above']))} costs "
            f"{item['above_other']:.4f} ± {item['above_other_std']:.4f}. {label} is computed "
            "on the training data and favours features with many distinct values; trust "
            f"{other.name} here.")
