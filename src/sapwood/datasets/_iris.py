"""Fisher's iris, from the copy scikit-learn ships (no download)."""

from __future__ import annotations

__all__ = ["load_iris"]


def load_iris(*, as_frame: bool = True, return_X_y: bool = False):
    """Load the iris data set (150 flowers, 4 measurements, 3 species).

    A thin wrapper around :func:`sklearn.datasets.load_iris`, which reads a file
    inside the scikit-learn package; sapwood adds nothing but the pandas default.

    Parameters
    ----------
    as_frame : bool, default=True
        pandas DataFrame / Series if True (scikit-learn's default is False).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        As :func:`sklearn.datasets.load_iris`: ``data``, ``target``, ``frame``,
        ``feature_names``, ``target_names``, ``DESCR``.
    """
    from sklearn.datasets import load_iris as sklearn_load_iris

    return sklearn_load_iris(as_frame=as_frame, return_X_y=return_X_y)
