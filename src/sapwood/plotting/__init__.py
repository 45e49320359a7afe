"""matplotlib pictures of importance results (imported lazily by the result type)."""

from ._importance import plot_importance

__all__ = ["plot_importance"]
