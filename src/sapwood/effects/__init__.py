"""How the features matter: partial dependence and ICE, on every tree model sapwood reads."""

from ._partial_dependence import partial_dependence

__all__ = ["partial_dependence"]
