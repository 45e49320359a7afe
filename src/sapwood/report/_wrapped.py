"""Which model each step of :func:`~sapwood.explain` reads when the model is a form that
holds tree models (a search, a calibrated classifier, a transformed target, a quantile
forest, a vote or a stack; :mod:`sapwood.adapters._wrappers`).

The score and the measures that go through predictions (:data:`THROUGH_PREDICTIONS`)
use the model that predicts as the wrapper does; the tree measures read the trees the
wrapper holds, with a note saying what they predict, or are skipped where there is no
one tree ensemble, or where their number would read the target against trees that do
not predict it (a transformed target, calibrated probabilities).
"""

from __future__ import annotations

from .._errors import InputError

__all__ = ["THROUGH_PREDICTIONS", "Reading", "default_scoring", "describe", "reading",
           "unwrapped", "whole_only"]

#: The measures that read a model only through its ``predict`` / ``predict_proba`` (or
#: refit an unfitted copy of it): they take any model, wrappers included.
THROUGH_PREDICTIONS = ("permutation", "drop", "cpi")


def unwrapped(model):
    """:func:`sapwood.adapters._wrappers.unwrap` of ``model``; a form sapwood cannot
    explain (a multi-output model, a search without a refit) is bad input, said in one
    line."""
    from ..adapters import from_model
    from ..adapters._wrappers import unwrap

    try:
        return unwrap(model, from_model)
    except ValueError as error:
        raise InputError(f"model: {error}") from None


class Reading:
    """The model each measure of a run reads (:meth:`model_for`) and why one does not
    apply (:meth:`why_not`): ``model`` itself for a model that is no wrapper."""

    def __init__(self, model, wrapped=None):
        self.model = model
        self.wrapped = wrapped

    @property
    def estimator(self):
        """The model that predicts as the wrapper does: scored, and read by the
        measures that go through predictions."""
        return self.model if self.wrapped is None else self.wrapped.estimator

    def model_for(self, name: str):
        if self.wrapped is None or name in THROUGH_PREDICTIONS or self.wrapped.trees is None:
            return self.estimator
        # The trees as the adapter reads them: a balanced forest's without a bootstrap
        # record that its estimator's bootstrap=True would make the measures assume.
        return self.wrapped.trees

    def why_not(self, name: str, inputs) -> str | None:
        """Why measure ``name`` does not apply here (None: it does): a tree measure that
        cannot read this wrapper's trees, or what the measure itself says of the model
        it reads (:func:`~sapwood.report._measures.why_not`)."""
        from . import _measures

        needs_target = "y" in _measures.MEASURES[name].needs
        return self._wrapper_refuses(name, needs_target) or _measures.why_not(
            name, self.model_for(name), inputs)

    def _wrapper_refuses(self, name: str, needs_target: bool) -> str | None:
        wrapped = self.wrapped
        if wrapped is None or wrapped.exact or name in THROUGH_PREDICTIONS:
            return None
        model = type(self.model).__name__
        if wrapped.trees is None:
            return f"it needs one tree ensemble, and {model} is {wrapped.predicts}"
        if not wrapped.read_by_default:
            return (f"{model} predicts {wrapped.predicts}, not its trees' mean (to explain "
                    "the trees' mean, pass model=sapwood.from_model(model))")
        if needs_target:
            return (f"it reads the trees together with the target, which {model}'s trees "
                    f"do not predict ({model} predicts {wrapped.predicts})")
        return None


def default_scoring(reading: Reading, task: str) -> str | None:
    """``"r2"`` for a wrapper regressor whose own ``score`` is not scikit-learn's R² of
    its ``predict`` (a quantile forest scores the median, whatever it predicts): the
    R² of its predictions, by the scorer whose per-row draws the verdict's intervals
    rest on. None otherwise (explain's own default)."""
    from sklearn.base import RegressorMixin

    estimator = reading.estimator
    if reading.wrapped is None or task != "regression":
        return None
    if getattr(type(estimator), "score", None) is RegressorMixin.score:
        return None
    return "r2"


def whole_only(model) -> str | None:
    """Why ``model`` (a fitted wrapper) has no one tree ensemble that predicts as it does,
    for what reads one (a row's TreeSHAP, effects); None when it has one or is no
    wrapper."""
    wrapped = unwrapped(model)
    if wrapped is None or wrapped.exact:
        return None
    return (f"they read one tree ensemble that predicts as the model does, and "
            f"{type(model).__name__} predicts {wrapped.predicts}")


def reading(model) -> Reading:
    """The :class:`Reading` of a fitted ``model``."""
    return Reading(model, unwrapped(model))


def describe(model, describe_inner) -> str | None:
    """The Model line of a wrapper (``GridSearchCV best_estimator_:
    RandomForestClassifier(...)``), None for a model that is no wrapper.
    ``describe_inner`` describes the model the wrapper holds."""
    from ..adapters import from_model
    from ..adapters._wrappers import unwrap

    try:
        wrapped = unwrap(model, from_model)
    except ValueError:
        return None
    if wrapped is None or not wrapped.note:
        return None
    if wrapped.shown is None:
        return None if wrapped.name == type(model).__name__ else wrapped.name
    return f"{wrapped.name}: {describe_inner(wrapped.shown)}"
