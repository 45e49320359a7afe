"""The importance measures the CLI can run, picked by name, and how it compares them."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["MEASURES", "DEFAULT_METHODS", "compute", "disagreements", "is_available",
           "parse_methods", "rank_table"]

N_REPEATS = 5


# Every measure takes (model, split, random_state); split holds X_train, y_train, X_test,
# y_test as pandas objects.

def _mdi(model, split, random_state):
    from sapwood.importance import mdi

    return mdi(model, feature_names=list(split.X_test.columns))


def _permutation(model, split, random_state):
    from sapwood import importance

    X_test = split.X_test
    result = importance.permutation_importance(model, X_test, split.y_test,
                                               n_repeats=N_REPEATS, random_state=random_state)
    if isinstance(result, importance.ImportanceResult):
        return result
    # A scikit-learn style Bunch: wrap it in the common result type.
    return importance.ImportanceResult(
        importances_mean=result["importances_mean"], importances_std=result["importances_std"],
        feature_names=list(X_test.columns), method="permutation",
        params={"n_repeats": N_REPEATS, "random_state": random_state},
        importances=result.get("importances"))


def _gain(model, split, random_state):
    from sapwood.importance import native_importance

    return native_importance(model, "gain", feature_names=list(split.X_test.columns))


def _oob(model, split, random_state):
    from sapwood.importance import oob_permutation_importance

    return oob_permutation_importance(model, split.X_train, split.y_train,
                                      random_state=random_state)


def _ufi(model, split, random_state):
    from sapwood.importance import unbiased_mdi

    return unbiased_mdi(model, split.X_train, split.y_train)


# name -> (function, sapwood.importance attribute it needs, what it measures)
MEASURES = {
    "mdi": (_mdi, "mdi", "mean decrease in impurity, on the training data"),
    "gain": (_gain, "native_importance",
             "the library's own split-gain importance (XGBoost, LightGBM), on the training "
             "data"),
    "permutation": (_permutation, "permutation_importance",
                    "drop in held-out score when the feature is shuffled"),
    "oob": (_oob, "oob_permutation_importance",
            "drop in each tree's out-of-bag accuracy (or rise in error) when the feature is "
            "shuffled (bagged forests: rf, et)"),
    "ufi": (_ufi, "unbiased_mdi",
            "impurity decrease re-measured on each tree's out-of-bag rows (bagged forests)"),
}
DEFAULT_METHODS = ("mdi", "permutation")
# MDI and split gain are learnt on the training rows; the held-out measures on rows the
# model has not seen.
IN_SAMPLE = ("mdi", "gain")
HELD_OUT = ("permutation",)
LABELS = {"mdi": "MDI", "gain": "split gain"}


def is_available(name: str) -> bool:
    from sapwood import importance

    return hasattr(importance, MEASURES[name][1])


def parse_methods(text: str) -> list:
    """``"mdi,permutation"`` -> list of known names; unknown ones are bad input."""
    from ._data import InputError

    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names:
        raise InputError("--methods is empty; choose from: " + ", ".join(MEASURES))
    unknown = [name for name in names if name not in MEASURES]
    if unknown:
        raise InputError(f"--methods: unknown measure {unknown[0]!r}; choose from: "
                         + ", ".join(MEASURES))
    return list(dict.fromkeys(names))


def compute(name, model, split, random_state):
    """Run measure ``name``; ``split`` has X_train, y_train, X_test, y_test."""
    return MEASURES[name][0](model, split, random_state)


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


def disagreements(results: dict) -> list:
    """Features MDI (or split gain, when there is no MDI) ranks above a feature that a
    held-out measure finds useful, although the held-out measure finds them useless: the
    seeds' warning, one dict each.

    Held-out importance counts as *useless* when its mean is at most
    max(2 std, 2% of the largest mean) and as *useful* when it is above
    max(2 std, 5% of the largest mean).
    """
    present = [name for name in IN_SAMPLE if name in results]
    if not present:
        return []
    in_sample = present[0]
    mdi_result = results[in_sample]
    mdi_ranks = mdi_result.ranks()
    found = []
    for name in HELD_OUT:
        if name not in results:
            continue
        other = results[name]
        mean, std = other.importances_mean, other.importances_std
        top = max(float(mean.max()), 0.0)
        useless = mean <= np.maximum(2 * std, 0.02 * top)
        useful = mean > np.maximum(2 * std, 0.05 * top)
        other_ranks = other.ranks()
        for j in np.flatnonzero(useless):
            outranked = [k for k in np.flatnonzero(useful) if mdi_ranks[k] > mdi_ranks[j]]
            if not outranked:
                continue
            k = max(outranked, key=lambda k: mean[k])
            found.append({
                "feature": mdi_result.feature_names[j], "measure": name,
                "in_sample": LABELS[in_sample],
                "n_features": mdi_result.n_features,
                "mdi_rank": int(mdi_ranks[j]), "other_rank": int(other_ranks[j]),
                "mdi": float(mdi_result.importances_mean[j]),
                "other": float(mean[j]), "other_std": float(std[j]),
                "above": mdi_result.feature_names[k], "above_other": float(mean[k]),
                "above_other_std": float(std[k]), "n_above": len(outranked),
            })
    return found


def warning_text(item: dict) -> str:
    """The plain-language warning for one disagreement."""
    others = f" and {item['n_above'] - 1} more" if item["n_above"] > 1 else ""
    label = item.get("in_sample", "MDI")
    return (f"{label} ranks {item['feature']!r} #{item['mdi_rank']} of {item['n_features']}, "
            f"above {item['above']!r}{others}; but on held-out data shuffling "
            f"{item['feature']!r} barely changes the score ({item['measure']} "
            f"{item['other']:.4f} ± {item['other_std']:.4f}, rank #{item['other_rank']}) while "
            f"shuffling {item['above']!r} costs {item['above_other']:.4f} "
            f"± {item['above_other_std']:.4f}. {label} is computed on the training data and "
            "favours features with many distinct values; trust the held-out measure here.")
