"""Which training rows each tree of a bagged forest was grown on.

scikit-learn's forests and sapwood's draw tree t's bootstrap sample from the tree's
integer seed: ``RandomState(seed_t).randint(0, n_samples, n_draws)``, or
``RandomState(seed_t).choice(n_samples, n_draws, p=w / sum(w))`` when the forest was
fit with sample or class weights ``w``, or whole groups of rows when the forest was
fit with ``groups`` (:func:`bootstrap_indices`). :class:`Bootstrap` records those numbers, so
the in-bag counts of every tree are known from the tree format alone (out-of-bag
measures read them) and are regenerated on demand: n_trees x n_samples counts are
never held at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Bootstrap", "bootstrap_indices", "SEED_LIMIT"]

# numpy's RandomState takes integer seeds in [0, 2**32).
SEED_LIMIT = 2**32


def bootstrap_indices(seed, n_samples, n_draws, sample_weight, groups=None):
    """The rows drawn (with replacement) for the tree seeded with ``seed``. With
    ``groups`` (a code 0..G-1 per row): whole groups, ``RandomState(seed).randint(0, G,
    G)``, each drawn group bringing all its rows (in row order, once per draw); the
    weights then do not enter the draw."""
    rng = np.random.RandomState(seed)
    if groups is not None:
        n_groups = int(groups.max()) + 1
        members = np.argsort(groups, kind="stable")
        starts = np.searchsorted(groups[members], np.arange(n_groups + 1))
        drawn = rng.randint(0, n_groups, n_groups)
        return np.concatenate([members[starts[g]:starts[g + 1]] for g in drawn])
    if sample_weight is None:
        return rng.randint(0, n_samples, n_draws)
    return rng.choice(n_samples, n_draws, replace=True, p=sample_weight / np.sum(sample_weight))


@dataclass(frozen=True, eq=False)
class Bootstrap:
    """The bootstrap draw of every tree: seeds (n_trees,), the training set's row
    count, the rows drawn per tree and the drawing weights (None: uniform)."""

    seeds: np.ndarray
    n_samples: int
    n_draws: int
    sample_weight: np.ndarray | None = None
    # A forest bootstrapped by groups: each row's group code (0..G-1); not stored in
    # model files (a file's bootstrap is then null: the draws are not known).
    groups: np.ndarray | None = None

    def __post_init__(self):
        # Imported by _format, which raises FormatError for these; a ValueError here
        # keeps this module free of the format's imports.
        seeds = np.asarray(self.seeds)
        if seeds.ndim != 1 or seeds.dtype.kind not in "iu" or (
                seeds.size and (seeds.min() < 0 or seeds.max() >= SEED_LIMIT)):
            raise ValueError(f"bootstrap seeds must be integers in [0, 2**32); got "
                             f"{seeds.dtype} of shape {seeds.shape}")
        object.__setattr__(self, "seeds", np.ascontiguousarray(seeds, dtype=np.int64))
        for name in ("n_samples", "n_draws"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"bootstrap {name} must be a positive integer; got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.sample_weight is not None:
            weight = np.ascontiguousarray(self.sample_weight, dtype=np.float64)
            if weight.shape != (self.n_samples,) or not np.isfinite(weight).all() or (
                    (weight < 0).any() or not weight.sum() > 0):
                raise ValueError(f"bootstrap sample_weight must hold n_samples="
                                 f"{self.n_samples} finite non-negative weights with a "
                                 "positive sum")
            object.__setattr__(self, "sample_weight", weight)
        if self.groups is not None:
            groups = np.ascontiguousarray(self.groups, dtype=np.intp)
            if groups.shape != (self.n_samples,) or (groups.size and groups.min() < 0):
                raise ValueError(f"bootstrap groups must hold n_samples={self.n_samples} "
                                 "non-negative group codes")
            object.__setattr__(self, "groups", groups)

    def indices(self, t) -> np.ndarray:
        """The rows drawn for tree ``t``, with repeats, in drawing order."""
        return bootstrap_indices(int(self.seeds[t]), self.n_samples, self.n_draws,
                                 self.sample_weight, self.groups)

    def counts(self, t) -> np.ndarray:
        """How many times each training row was drawn for tree ``t`` (0: out of bag)."""
        return np.bincount(self.indices(t), minlength=self.n_samples)
