"""Second-order Gaussian model-X knockoffs (Candès, Fan, Janson & Lv 2018).

For rows x ~ N(mu, Sigma) and D = diag(s), the knockoff of a row is drawn from::

    x~ | x  ~  N( mu + (x - mu) (I - Sigma^-1 D),  2D - D Sigma^-1 D )

so that [X, X~] has mean [mu, mu] and covariance G = [[Sigma, Sigma - D],
[Sigma - D, Sigma]]: swapping any set of columns with their knockoffs leaves G
unchanged, and X~ is drawn without looking at y. G is a covariance (positive
semi-definite) exactly when 0 <= D <= 2 Sigma. On the correlation scale C (Sigma =
diag(sigma) C diag(sigma), s_j = sigma_j^2 s'_j) the constructions choose s':

- equicorrelated: s'_j = min(1, 2 lambda_min(C)) for every j (closed form);
- SDP: maximise sum_j s'_j subject to 0 <= s'_j <= 1 and 2C - diag(s') >= 0, solved
  with cvxpy (the optional extra ``sapwood[knockoffs]``), then scaled down if the
  solver's answer overshoots the constraint.

A larger s_j makes x~_j less correlated with x_j, which is what gives a test power.
Sigma, when not given, is estimated from the data: by default (``shrinkage="auto"``,
as the R package ``knockoff``) the sample covariance when it is positive definite,
else Ledoit-Wolf shrinkage (scikit-learn's ``LedoitWolf``), with a floor on the
eigenvalues so that the matrix is positive definite. Shrinkage is not the default
because it pulls the correlations toward zero: the knockoff of a null feature then
carries less of its correlated neighbours' signal than the feature does, and the
features win too often. In this module's tests (AR(1) rho = 0.3, n = 300, p = 30,
random forest MDI, 40 datasets) Ledoit-Wolf (shrinkage 0.33) gave a mean FDP of 0.23
at q = 0.2, the sample covariance 0.12, the true covariance 0.11.

E. Candès, Y. Fan, L. Janson, J. Lv, "Panning for gold: 'model-X' knockoffs for high
dimensional controlled variable selection", Journal of the Royal Statistical Society
Series B 80(3), 551-577, 2018. doi:10.1111/rssb.12265
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.covariance import LedoitWolf
from sklearn.utils import check_array, check_random_state

__all__ = ["GaussianKnockoffs", "numeric_matrix"]

CONSTRUCTIONS = ("equicorrelated", "sdp")
SHRINKAGES = ("auto", "ledoit_wolf", "none")

# A column with at most this many distinct values is discrete: its Gaussian knockoff
# takes values the column never takes, so the two are not exchangeable (trees split
# between its levels and route the knockoff's values elsewhere).
DISCRETE_LEVELS = 10

# Eigenvalues of the estimated covariance are kept at or above this share of the
# largest one, so that Sigma^-1 exists even for collinear or constant columns.
EIGEN_FLOOR = 1e-8


def numeric_matrix(X, who):
    """X as a float array; a clear error for non-numeric (categorical, text) columns.

    Second-order knockoffs are defined for real-valued columns; a categorical column
    has no mean and covariance to match. One-hot encode it first (the knockoff of
    each indicator is then Gaussian: only its first two moments are matched)."""
    if hasattr(X, "dtypes"):
        bad = [str(name) for name, dtype in X.dtypes.items()
               if not pd.api.types.is_numeric_dtype(dtype)]  # bool counts as 0/1
        if bad:
            raise ValueError(f"{who} needs numeric columns in X (Gaussian knockoffs match "
                             f"means and covariances); got non-numeric columns {bad}. "
                             f"One-hot encode them (e.g. pandas.get_dummies) first.")
        X = X.to_numpy(dtype=np.float64)
    try:
        return check_array(X, dtype=np.float64, input_name="X")
    except ValueError as error:
        raise ValueError(f"{who} needs a finite numeric X for Gaussian knockoffs: "
                         f"{error}") from error


def _sqrt_psd(matrix):
    """A square root R with R R^T = matrix for a symmetric PSD matrix (eigenvalues
    below zero from rounding are set to zero)."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def equicorrelated_s(correlation):
    """s'_j = min(1, 2 lambda_min(C)) for every j, on the correlation scale."""
    lambda_min = np.linalg.eigvalsh(correlation)[0]
    return np.full(correlation.shape[0], min(1.0, 2.0 * max(lambda_min, 0.0)))


def sdp_s(correlation):
    """The SDP construction: max sum s' s.t. 0 <= s' <= 1, 2C - diag(s') PSD (cvxpy),
    scaled into the feasible set if the solver's answer is slightly outside it."""
    try:  # optional dependency, only this construction needs it
        import cvxpy as cp
    except ImportError as error:
        raise ImportError("the SDP knockoff construction needs cvxpy: pip install "
                          "'sapwood[knockoffs]' (or use construction='equicorrelated')"
                          ) from error
    p = correlation.shape[0]
    s = cp.Variable(p)
    problem = cp.Problem(cp.Maximize(cp.sum(s)),
                         [s >= 0, s <= 1, 2 * correlation - cp.diag(s) >> 0])
    solver = "CLARABEL" if "CLARABEL" in cp.installed_solvers() else "SCS"
    problem.solve(solver=solver)
    if s.value is None:
        raise RuntimeError(f"the SDP knockoff construction failed ({solver}: "
                           f"{problem.status}); use construction='equicorrelated'")
    return _feasible(np.clip(s.value, 0.0, 1.0), correlation)


def _feasible(s, correlation):
    """Scale s down to the largest gamma * s (gamma <= 1) with 2C - gamma diag(s) PSD:
    gamma = 2 / lambda_max(diag(s)^1/2 C^-1 diag(s)^1/2)."""
    root = np.sqrt(s)
    largest = np.linalg.eigvalsh(root[:, None] * np.linalg.inv(correlation) * root)[-1]
    if largest <= 0:
        return s
    return s * min(1.0, 2.0 / largest)


def estimate_covariance(X, shrinkage="auto"):
    """(mean, covariance) of the rows of X: the sample covariance (``"none"``),
    Ledoit-Wolf shrinkage (``"ledoit_wolf"``), or the first when it is positive
    definite (more rows than columns, smallest eigenvalue of the sample correlation
    above EIGEN_FLOOR) and the second otherwise (``"auto"``). Eigenvalues are floored
    at EIGEN_FLOOR times the largest so that the matrix is positive definite."""
    mean = X.mean(axis=0)
    covariance = np.cov(X, rowvar=False, ddof=1).reshape(X.shape[1], X.shape[1]) \
        if X.shape[0] > 1 else np.zeros((X.shape[1], X.shape[1]))
    if shrinkage == "auto":
        sd = np.sqrt(np.diag(covariance))
        definite = X.shape[0] > X.shape[1] and np.all(sd > 0) and np.linalg.eigvalsh(
            covariance / np.outer(sd, sd))[0] > EIGEN_FLOOR
        shrinkage = "none" if definite else "ledoit_wolf"
    if shrinkage == "ledoit_wolf":
        covariance = LedoitWolf().fit(X).covariance_
    values, vectors = np.linalg.eigh(covariance)
    values = np.maximum(values, EIGEN_FLOOR * max(values[-1], EIGEN_FLOOR))
    return mean, (vectors * values) @ vectors.T


class GaussianKnockoffs:
    """Sampler of second-order Gaussian model-X knockoffs.

    Parameters
    ----------
    construction : {"equicorrelated", "sdp"}, default="equicorrelated"
        How D = diag(s) is chosen (see the module docstring); "sdp" needs cvxpy.
    mean, covariance : array-like or None, default=None
        The distribution of the rows when it is known (model-X assumes it is). None:
        estimated by :meth:`fit`: the sample mean and a covariance by ``shrinkage``.
    shrinkage : {"auto", "ledoit_wolf", "none"}, default="auto"
        How an estimated covariance is made: "auto" takes the sample covariance when
        it is positive definite and Ledoit-Wolf shrinkage otherwise (p >= n,
        collinear or constant columns); see the module docstring for why shrinkage
        is not always used.

    Attributes
    ----------
    mean_, covariance_ : ndarray
        Set by :meth:`fit`, as the attributes below.
    s_ : ndarray of shape (n_features,)
        The diagonal of D, on the scale of the data.

    Examples
    --------
    >>> import numpy as np
    >>> sampler = GaussianKnockoffs(covariance=[[1.0, 0.5], [0.5, 1.0]], mean=[0, 0])
    >>> sampler.fit(np.zeros((5, 2))).s_
    array([1., 1.])
    >>> sampler.sample(np.zeros((5, 2)), random_state=0).shape
    (5, 2)
    """

    def __init__(self, construction="equicorrelated", *, mean=None, covariance=None,
                 shrinkage="auto"):
        if construction not in CONSTRUCTIONS:
            raise ValueError(f"construction must be one of {CONSTRUCTIONS}; got "
                             f"{construction!r}")
        if shrinkage not in SHRINKAGES:
            raise ValueError(f"shrinkage must be one of {SHRINKAGES}; got {shrinkage!r}")
        if (mean is None) != (covariance is None):
            raise ValueError("GaussianKnockoffs takes mean and covariance together (both "
                             "known) or neither (both estimated)")
        self.construction = construction
        self.mean = mean
        self.covariance = covariance
        self.shrinkage = shrinkage

    def fit(self, X):
        """Estimate (unless given) the mean and covariance, then D and the conditional
        law of the knockoffs given X."""
        names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
        X = numeric_matrix(X, "GaussianKnockoffs")
        _warn_if_discrete(X, names)
        if self.covariance is None:
            mean, covariance = estimate_covariance(X, self.shrinkage)
        else:
            mean = np.asarray(self.mean, dtype=np.float64)
            covariance = np.asarray(self.covariance, dtype=np.float64)
            if covariance.shape != (X.shape[1],) * 2 or mean.shape != (X.shape[1],):
                raise ValueError(f"GaussianKnockoffs: mean and covariance must have shapes "
                                 f"({X.shape[1]},) and {(X.shape[1],) * 2} for X with "
                                 f"{X.shape[1]} columns; got {mean.shape} and "
                                 f"{covariance.shape}")
        sigma = np.sqrt(np.diag(covariance))
        correlation = covariance / np.outer(sigma, sigma)
        scaled = (equicorrelated_s if self.construction == "equicorrelated"
                  else sdp_s)(correlation)
        s = scaled * sigma ** 2
        inverse_times_d = np.linalg.solve(covariance, np.diag(s))   # Sigma^-1 D
        self.mean_, self.covariance_, self.s_ = mean, covariance, s
        self.transform_ = np.eye(s.shape[0]) - inverse_times_d      # I - Sigma^-1 D
        self.root_ = _sqrt_psd(2 * np.diag(s) - np.diag(s) @ inverse_times_d)
        return self

    def sample(self, X, random_state=None):
        """One knockoff copy of every row of X (an array of the same shape):
        mu + (x - mu)(I - Sigma^-1 D) + z R^T, z ~ N(0, I), R R^T = 2D - D Sigma^-1 D."""
        X = numeric_matrix(X, "GaussianKnockoffs")
        rng = check_random_state(random_state)
        noise = rng.standard_normal(X.shape)
        return self.mean_ + (X - self.mean_) @ self.transform_ + noise @ self.root_.T

    def joint_covariance(self):
        """G = [[Sigma, Sigma - D], [Sigma - D, Sigma]], the covariance of [X, X~]."""
        off = self.covariance_ - np.diag(self.s_)
        return np.block([[self.covariance_, off], [off, self.covariance_]])


def _warn_if_discrete(X, names=None):
    """Warn, naming them, about columns with at most DISCRETE_LEVELS distinct values:
    second-order knockoffs match their mean and variance only, so a test or selection
    that compares such a column with its knockoff may not hold its error rate."""
    discrete = [j for j in range(X.shape[1])
                if np.unique(X[:, j]).shape[0] <= DISCRETE_LEVELS]
    if discrete:
        shown = [str(names[j]) if names is not None else f"column {j}" for j in discrete]
        warnings.warn(f"Gaussian knockoffs match the first two moments only; "
                      f"{', '.join(shown[:5])}{' and others' if len(shown) > 5 else ''} "
                      f"{'has' if len(shown) == 1 else 'have'} at most {DISCRETE_LEVELS} "
                      f"distinct values, so their knockoffs "
                      f"(continuous) are not exchangeable with them and the error rates "
                      f"for them may not hold", UserWarning, stacklevel=3)


def as_sampler(knockoff_sampler, who):
    """A fresh (unfitted) sampler from the ``knockoff_sampler`` argument."""
    if isinstance(knockoff_sampler, str):
        names = {"gaussian": "equicorrelated", "gaussian_sdp": "sdp"}
        if knockoff_sampler not in names:
            raise ValueError(f"knockoff_sampler of {who} must be 'gaussian', "
                             f"'gaussian_sdp' or a GaussianKnockoffs; got "
                             f"{knockoff_sampler!r}")
        return GaussianKnockoffs(names[knockoff_sampler])
    if isinstance(knockoff_sampler, GaussianKnockoffs):
        return GaussianKnockoffs(knockoff_sampler.construction, mean=knockoff_sampler.mean,
                                 covariance=knockoff_sampler.covariance,
                                 shrinkage=knockoff_sampler.shrinkage)
    raise ValueError(f"knockoff_sampler of {who} must be 'gaussian', 'gaussian_sdp' or a "
                     f"GaussianKnockoffs; got {type(knockoff_sampler).__name__}")


def seed(rng):
    """One int seed from a RandomState (the convention every draw here follows)."""
    return int(rng.randint(np.iinfo(np.int32).max))
