"""Simultaneous confidence intervals for the ranks of the features.

From the draws a measure already has (rows, trees, folds or repeats: the columns of
``ImportanceResult.rank_draws``, else of ``importances``, paired across features), a
max-t bound over all pairwise differences (Mogstad, Romano, Shaikh & Wilhelm 2024,
"Inference for ranks with applications to mobility across neighbourhoods and academic
achievement across countries", *Review of Economic Studies* 91(1),
doi:10.1093/restud/rdad006)::

    d_jk = mean_i (D_ji - D_ki),   se_jk = sd_i(D_ji - D_ki) / sqrt(n)
    j above k  <=>  d_jk / se_jk > c
    rank_low_j  = 1 + #{k : k above j}
    rank_high_j = p - #{k : j above k}

where c is the 95% quantile of ``max_{j != k} |T*_jk|`` under the joint null, so that
all the statements "j above k" hold together with probability at least 95%, and with
them every feature's rank lies in its interval at once.

c is simulated with Gaussian multipliers on the centred draws (``Z = Dc G``), which
keeps the draws' covariance even when it is singular (few draws, many features). With
fewer than :data:`STUDENTISED_BELOW` draws every simulated pair is studentised again,
so that c carries the heavy tails of a t statistic on few draws; with more, the
standard errors are fixed at their estimates (the normal limit), which costs far less.
The simulation uses a fixed seed: the same draws give the same intervals.

Pairs whose differences never vary are decided exactly: equal draws are a tie (never
"above"); draws that differ by the same nonzero amount every time are ordered.

Definition: docs/measures.md, section 'Rank intervals'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TREES_ONLY", "RankIntervals", "covariance_draws", "rank_intervals", "row_blocks"]

LEVEL = 0.95
N_SIMULATIONS = 1000
STUDENTISED_BELOW = 50
SEED = 0
# Simulated numbers per batch (features^2 x draws x simulations), to bound memory.
_BATCH_ELEMENTS = 2 ** 24
# Per-row draws kept at most (more rows are summed into this many random blocks).
MAX_ROW_DRAWS = 10_000
# A difference's spread at most this share of its scale counts as no spread at all
# (sums in floating point leave a little noise on draws that differ by a constant).
_EXACT = 1e-12


@dataclass(frozen=True, eq=False)
class RankIntervals:
    """Simultaneous 95% confidence intervals for the ranks (1 = most important).

    low, high : int arrays (n_features,); -1 where the importance is not finite.
    above : bool array (n_features, n_features); ``above[j, k]``: feature j is
        significantly more important than feature k (jointly over all pairs).
    critical_value : the simulated 95% quantile c of the max |t| over pairs.
    n_draws : the draws the intervals rest on.
    """

    low: np.ndarray
    high: np.ndarray
    above: np.ndarray
    critical_value: float
    n_draws: int


def rank_intervals(draws, level: float = LEVEL, n_simulations: int = N_SIMULATIONS
                   ) -> RankIntervals | None:
    """Simultaneous rank intervals from ``draws`` of shape (n_features, n_draws), or None
    with fewer than two draws."""
    draws = np.asarray(draws, dtype=np.float64)
    p, n = draws.shape
    if n < 2:
        return None
    finite = np.isfinite(draws).all(axis=1)
    D = draws[finite]
    m = D.shape[0]
    means = D.mean(axis=1)
    centred = D - means[:, None]
    diff = means[:, None] - means[None, :]
    # Variance of each pair's differences from the covariance of the draws.
    cov = centred @ centred.T / (n - 1)
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    scale = np.maximum(np.abs(D).max(axis=1, initial=0.0)[:, None],
                       np.abs(D).max(axis=1, initial=0.0)[None, :])
    exact = var <= (_EXACT * np.maximum(scale, 1e-300)) ** 2
    se = np.sqrt(np.where(exact, 1.0, var) / n)
    pairs = ~exact & ~np.eye(m, dtype=bool)
    # Many small matrix products: BLAS threads only add their start-up (on a busy
    # machine, tenfold).
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        critical = _critical_value(centred, se, pairs, level, n_simulations)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = diff / se
    above_finite = np.where(exact, diff > _EXACT * scale, pairs & (t > critical))
    np.fill_diagonal(above_finite, False)
    above = np.zeros((p, p), dtype=bool)
    index = np.flatnonzero(finite)
    above[np.ix_(index, index)] = above_finite
    low = np.full(p, -1, dtype=np.int64)
    high = np.full(p, -1, dtype=np.int64)
    low[index] = 1 + above_finite.sum(axis=0)
    high[index] = m - above_finite.sum(axis=1)
    return RankIntervals(low=low, high=high, above=above, critical_value=float(critical),
                         n_draws=n)


def _critical_value(centred, se, pairs, level, n_simulations) -> float:
    """The ``level`` quantile of max |T*| over ``pairs`` under the joint null.

    Each simulation's max runs over the whole feature x feature matrix (the pairs
    outside ``pairs`` weigh zero): contiguous passes and one matrix product per
    simulation cost far less than gathering every pair, as many features have many
    pairs (1,500 features: 1.1 million)."""
    m, n = centred.shape
    if not pairs.any():
        return np.inf
    rng = np.random.default_rng(SEED)
    pairs = np.triu(pairs) | np.triu(pairs).T
    maxima = np.empty(n_simulations)
    if n < STUDENTISED_BELOW:
        # Z = Dc G / sqrt(n - 1): n simulated draws with the draws' covariance, each
        # pair studentised by its own simulated spread.
        batch = max(1, _BATCH_ELEMENTS // max(1, m * n))
        outside = ~pairs
        for start in range(0, n_simulations, batch):
            size = min(batch, n_simulations - start)
            gaussian = rng.standard_normal((size, n, n))
            Z = centred @ gaussian.transpose(1, 0, 2).reshape(n, size * n) / np.sqrt(n - 1)
            for s in range(size):
                draws = Z[:, s * n:(s + 1) * n]
                mean = draws.mean(axis=1)
                spread = draws - mean[:, None]
                S = spread @ spread.T / (n - 1)
                diagonal = np.diag(S).copy()
                var = np.add.outer(diagonal, diagonal)
                var -= 2 * S
                var[outside] = np.inf
                with np.errstate(invalid="ignore", divide="ignore"):
                    t2 = np.subtract.outer(mean, mean) ** 2 / var
                maxima[start + s] = np.sqrt(n * np.max(t2, where=np.isfinite(t2),
                                                       initial=0.0))
    else:
        # The simulated means m* = F g ~ N(0, cov / n), with F F' = cov / n: the centred
        # draws themselves, or for many draws (rows) a square root of the covariance.
        if n <= m:
            factor = centred / np.sqrt(n * (n - 1))
        else:
            values, vectors = np.linalg.eigh(centred @ centred.T / (n * (n - 1)))
            factor = vectors * np.sqrt(np.clip(values, 0.0, None))
        # Single precision for the passes over the matrix: c needs three digits.
        inverse = np.where(pairs, 1.0 / np.where(pairs, se, 1.0), 0.0).astype(np.float32)
        buffer = np.empty((m, m), dtype=np.float32)
        batch = max(1, _BATCH_ELEMENTS // max(1, m * factor.shape[1]))
        for start in range(0, n_simulations, batch):
            size = min(batch, n_simulations - start)
            means = (factor @ rng.standard_normal((factor.shape[1], size))).astype(
                np.float32)
            for s in range(size):
                np.subtract.outer(means[:, s], means[:, s], out=buffer)
                np.abs(buffer, out=buffer)
                buffer *= inverse
                maxima[start + s] = buffer.max()
    return float(np.quantile(maxima, level))


# What ``ci_low`` / ``ci_high`` of a mean over trees cover (``extra["intervals"]``).
TREES_ONLY = ("the spread over the trees only: the trees share their rows (and their "
              "training sample), so it understates the error over new rows "
              "(docs/measures.md, 'Rank intervals')")


def row_blocks(draws, max_draws: int = MAX_ROW_DRAWS) -> np.ndarray:
    """Per-row draws (n_features, n_rows), or for more than ``max_draws`` rows the draws
    of ``max_draws`` blocks of rows: a fixed random partition into blocks whose sizes
    differ by at most one, each block's draw its sum times ``max_draws / n_rows``. The
    mean is unchanged, and the blocks' spread gives the same standard error of it (iid
    rows in random blocks), in bounded memory."""
    draws = np.asarray(draws, dtype=np.float64)
    n = draws.shape[1]
    if n <= max_draws:
        return draws
    block = np.empty(n, dtype=np.intp)
    block[np.random.default_rng(SEED).permutation(n)] = np.arange(n) % max_draws
    # Per feature, each block's rows added in row order from 0 (what np.add.at on the
    # transposed sums does, the same bits), much faster.
    sums = np.array([np.bincount(block, weights=row, minlength=max_draws) for row in draws])
    sums = sums.reshape(draws.shape[0], max_draws)
    return sums * (max_draws / n)


def covariance_draws(mean, covariance) -> np.ndarray:
    """Draws (n_features, n) whose mean is ``mean`` and whose standard error of the mean
    (sample covariance / n) is ``covariance``, negative eigenvalues set to 0: for a
    measure whose standard errors come from a formula rather than from draws, so that
    the rank intervals rest on them. n = max(STUDENTISED_BELOW, n_features + 1), so
    that the normal limit is used (the covariance is no estimate from n draws).

    Built as ``mean + sqrt(n (n - 1)) L Q'`` with L L' = covariance and Q (n x p)
    orthonormal columns orthogonal to the ones vector (a QR factor of a fixed centred
    Gaussian matrix): every draw is a pseudo-draw, only their mean and covariance
    mean anything."""
    mean = np.asarray(mean, dtype=np.float64)
    p = mean.shape[0]
    n = max(STUDENTISED_BELOW, p + 1)
    values, vectors = np.linalg.eigh(np.asarray(covariance, dtype=np.float64))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    gaussian = np.random.default_rng(SEED).standard_normal((n, p))
    q, _ = np.linalg.qr(gaussian - gaussian.mean(axis=0))
    return mean[:, None] + np.sqrt(n * (n - 1)) * root @ q.T
