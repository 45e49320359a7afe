"""A data set with known answers: which columns matter, which are noise.

The response is a variant of Friedman's #1 function (Friedman 1991, "Multivariate
adaptive regression splines", *Annals of Statistics* 19(1),
doi:10.1214/aos/1176347963)::

    f(x) = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 3 x5

with ``x1 .. x4 ~ U(0, 1)`` and, instead of Friedman's ``5 x5`` with uniform ``x5``,
a binary ``x5`` (0/1 with probability 1/2): an informative column with a single
split point, the counterpart of the ID column below. For classification the label
is whether ``f(x) + noise`` exceeds its median (so the classes are balanced), with a
fraction of labels flipped at random.

Around the five informative columns sit columns the model cannot use: a noisy copy
of ``inf_4`` (correlated with the response only through ``inf_4``), binary noise,
low-cardinality noise and an ID-like column with one distinct value per row.
Impurity importance (MDI) is biased toward columns with many distinct split points
and is computed on training data (Strobl et al. 2007, doi:10.1186/1471-2105-8-25):
on the classification task a fully grown random forest's MDI ranks the ID column
above the binary informative ``inf_5``, while held-out permutation importance ranks
it below every informative column (checked for 1000 and 2000 rows, seeds 0-2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["GROUND_TRUTH_ROLES", "make_ground_truth"]

INFORMATIVE = "informative"
COPY = "correlated copy"
NOISE = "noise"

#: Column name -> role, in column order.
GROUND_TRUTH_ROLES = {
    "inf_1": INFORMATIVE,
    "inf_2": INFORMATIVE,
    "inf_3": INFORMATIVE,
    "inf_4": INFORMATIVE,
    "inf_5": INFORMATIVE,
    "inf_4_copy": COPY,
    "noise_binary": NOISE,
    "noise_lowcard": NOISE,
    "noise_id": NOISE,
}

_TASKS = ("classification", "regression")


def make_ground_truth(n_samples: int = 2000, task: str = "classification", random_state=0,
                      *, noise: float = 1.0, label_noise: float = 0.1,
                      copy_noise: float = 0.1, n_levels: int = 4):
    """Generate the ground-truth data set: Friedman #1 signal plus labelled noise columns.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of rows (at least 2).
    task : {"classification", "regression"}, default="classification"
        Regression returns ``f(x) + noise * N(0, 1)``; classification returns 1 where
        that exceeds its median, else 0, then flips ``label_noise`` of the labels.
    random_state : int, numpy Generator or None, default=0
    noise : float, default=1.0
        Standard deviation of the Gaussian noise added to ``f(x)``.
    label_noise : float, default=0.1
        Fraction of classification labels flipped at random (ignored for regression).
    copy_noise : float, default=0.1
        Standard deviation of the Gaussian noise added to ``inf_4`` to make
        ``inf_4_copy`` (correlation about 0.95 at 0.1).
    n_levels : int, default=4
        Number of levels of ``noise_lowcard``.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 9)
        Columns ``inf_1`` ... ``inf_4`` (informative, U(0, 1)), ``inf_5``
        (informative, 0/1), ``inf_4_copy``, ``noise_binary`` (0/1), ``noise_lowcard``
        (0 .. n_levels-1) and ``noise_id`` (a random permutation of 0 .. n-1: one
        distinct value per row).
    y : pandas.Series named ``"y"``
        int64 labels 0/1 for classification, float64 for regression.
    truth : dict
        Column name -> ``"informative"``, ``"correlated copy"`` or ``"noise"``.
    """
    if task not in _TASKS:
        raise ValueError(f"The 'task' parameter of make_ground_truth must be one of "
                         f"{_TASKS}. Got {task!r} instead.")
    if not isinstance(n_samples, int | np.integer) or n_samples < 2:
        raise ValueError("The 'n_samples' parameter of make_ground_truth must be an int in "
                         f"the range [2, inf). Got {n_samples!r} instead.")
    if not 0.0 <= label_noise <= 0.5:
        raise ValueError("The 'label_noise' parameter of make_ground_truth must be a float "
                         f"in the range [0, 0.5]. Got {label_noise!r} instead.")
    if noise < 0 or copy_noise < 0:
        raise ValueError("The 'noise' and 'copy_noise' parameters of make_ground_truth must "
                         f"be >= 0. Got {noise!r} and {copy_noise!r} instead.")
    if not isinstance(n_levels, int | np.integer) or n_levels < 2:
        raise ValueError("The 'n_levels' parameter of make_ground_truth must be an int in "
                         f"the range [2, inf). Got {n_levels!r} instead.")
    rng = np.random.default_rng(random_state)
    uniform = rng.uniform(size=(n_samples, 4))
    x1, x2, x3, x4 = uniform.T
    x5 = rng.integers(0, 2, size=n_samples)
    signal = 10 * np.sin(np.pi * x1 * x2) + 20 * (x3 - 0.5) ** 2 + 10 * x4 + 3 * x5
    response = signal + noise * rng.standard_normal(n_samples)

    X = pd.DataFrame(uniform, columns=[f"inf_{j}" for j in range(1, 5)])
    X["inf_5"] = x5
    X["inf_4_copy"] = x4 + copy_noise * rng.standard_normal(n_samples)
    X["noise_binary"] = rng.integers(0, 2, size=n_samples)
    X["noise_lowcard"] = rng.integers(0, n_levels, size=n_samples)
    X["noise_id"] = rng.permutation(n_samples)

    if task == "regression":
        y = pd.Series(response, name="y")
    else:
        labels = (response > np.median(response)).astype(np.int64)
        flip = rng.uniform(size=n_samples) < label_noise
        labels[flip] = 1 - labels[flip]
        y = pd.Series(labels, name="y")
    return X, y, dict(GROUND_TRUTH_ROLES)
