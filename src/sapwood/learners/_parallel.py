"""How many threads a call uses: its ``n_jobs``, or the enclosing joblib configuration's.

scikit-learn's convention: an explicit ``n_jobs`` is honoured (``-1`` is every core,
``-2`` all but one); ``n_jobs=None`` means the ``n_jobs`` of an enclosing
``joblib.parallel_config`` / ``parallel_backend`` and one thread outside any. Passing
``None`` straight to ``Parallel(prefer="threads")`` does not do that: joblib 1.6 swaps
the default process backend for threads and with it drops the configured ``n_jobs``
to 1, so a forest fit under ``parallel_config(n_jobs=2)`` grew its trees on one thread.
Every learner and measure that runs work in parallel resolves its ``n_jobs`` here once
and passes the number on explicitly.
"""

from __future__ import annotations

from joblib import effective_n_jobs

__all__ = ["resolve_n_jobs"]


def resolve_n_jobs(n_jobs):
    """The number of parallel jobs ``n_jobs`` stands for here and now (an int >= 1).

    ``None`` takes the active joblib configuration's ``n_jobs`` (1 when there is none,
    and inside a worker of an outer parallel call, where joblib nests sequentially),
    negative values count back from the number of cores, as ``joblib`` does.
    ``n_jobs=0`` raises ``ValueError``.
    """
    return max(1, int(effective_n_jobs(n_jobs)))
