"""One entry point from "a model a user holds" to a :class:`TreeEnsemble`."""

from __future__ import annotations

from .._format import TreeArrays, TreeEnsemble


def as_ensemble(model, feature_names=None) -> TreeEnsemble:
    """Return ``model`` in the tree format.

    Accepts a :class:`TreeEnsemble`, a single :class:`TreeArrays`, or a fitted sapwood
    estimator (anything with a ``to_ensemble()`` method).
    """
    if isinstance(model, TreeEnsemble):
        return model
    if isinstance(model, TreeArrays):
        return TreeEnsemble(trees=(model,), task="regression", n_features=model.n_features,
                            feature_names=feature_names)
    to_ensemble = getattr(model, "to_ensemble", None)
    if callable(to_ensemble):
        return to_ensemble()
    raise TypeError(
        f"sapwood cannot read a model of type {type(model).__name__}: expected a fitted "
        "sapwood estimator, a TreeEnsemble or a TreeArrays")
