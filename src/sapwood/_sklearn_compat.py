"""Every private scikit-learn name sapwood uses, each with the reason there is no public way.

scikit-learn may change or remove a private name (a leading underscore in the module or
the name) in any release without a deprecation cycle. Keeping them all here means a new
scikit-learn release breaks one file, and this file says what each import is for. No
other module of sapwood imports a private scikit-learn module or name
(``tests/test_sklearn_private.py`` scans the sources). It is the bottom layer: it
imports nothing from sapwood.
"""

# ``fit`` decorated with ``_fit_context`` validates ``_parameter_constraints`` and honours
# ``sklearn.config_context(skip_parameter_validation=...)`` as scikit-learn's own
# estimators' ``fit`` does; no public decorator or method does both.
from sklearn.base import _fit_context
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    RandomTreesEmbedding,
)

# Whether a scorer is the model's own ``score`` (scoring=None), alone or among several.
# ``check_scoring`` returns a passthrough scorer for None and a multimetric scorer for a
# list or dict; neither class is public, and nothing public tells them apart.
# Permutation importance must know: its tree evaluator stands in for the model and
# answers ``score`` only when the model's ``score`` is the one scikit-learn defines.
from sklearn.metrics._scorer import _MultimetricScorer, _PassthroughScorer

# The class of a fitted tree estimator's ``tree_``: the adapters read a bare ``Tree``
# (an estimator's ``tree_`` passed on its own) and must recognise one; scikit-learn
# exports no public name for the class.
from sklearn.tree._tree import Tree as SklearnTree

# Rows or columns of an array, a sparse matrix, a list or a DataFrame, as scikit-learn's
# own ``permutation_importance`` takes them. Listed in scikit-learn's API reference but
# marked there as private ("backward compatibility might be broken without any
# deprecation cycle").
from sklearn.utils import _safe_indexing

# Parameter validation. sapwood's estimators and functions check their arguments with
# scikit-learn's constraint language (``_parameter_constraints`` and
# ``@validate_params``), so a bad argument raises scikit-learn's InvalidParameterError
# (a ValueError and a TypeError) in scikit-learn's words, as the estimators they stand
# in for do. The language has no public home. (Its ``Integral`` and ``Real`` are
# ``numbers.Integral`` / ``numbers.Real``: import those from ``numbers``.)
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    RealNotInt,
    StrOptions,
    validate_params,
)

# scikit-learn's weighted percentile (the lower weighted percentile, its own tie rule).
# GradientBoosting's initial values and leaf values for the absolute-error, Huber and
# quantile losses use it, and sapwood's boosting reproduces those numbers bit for bit;
# ``numpy.percentile(weights=...)`` is a different rule.
from sklearn.utils.stats import _weighted_percentile

# _check_sample_weight: sample weights checked, converted and defaulted to ones exactly
# as scikit-learn's estimators do (dtype, shape and sign errors); no public function.
# _num_samples: the number of rows of any array-like as scikit-learn's checks count
# them (``shape[0]``, else ``len``; a clear error for a scalar); no public function.
from sklearn.utils.validation import _check_sample_weight, _num_samples

__all__ = [
    "SKLEARN_FORESTS",
    "SklearnTree",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "RealNotInt",
    "StrOptions",
    "_check_sample_weight",
    "_fit_context",
    "_num_samples",
    "_safe_indexing",
    "_weighted_percentile",
    "hist_gradient_boosting_categories",
    "is_passthrough_scorer",
    "uses_estimator_score",
    "validate_params",
]

#: scikit-learn's forests: the public classes deriving from the private
#: ``sklearn.ensemble._forest.BaseForest`` (a test checks the list is complete), for
#: ``isinstance`` checks that would otherwise import BaseForest.
SKLEARN_FORESTS = (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
                   ExtraTreesRegressor, RandomTreesEmbedding)


def is_passthrough_scorer(scorer):
    """True when ``scorer`` calls the model's own ``score`` (what ``scoring=None`` gives)."""
    return isinstance(scorer, _PassthroughScorer)


def uses_estimator_score(scorer):
    """True when ``scorer``, or one of the scorers it combines, is the model's ``score``."""
    if isinstance(scorer, _MultimetricScorer):
        return any(uses_estimator_score(s) for s in scorer._scorers.values())
    return is_passthrough_scorer(scorer)


def hist_gradient_boosting_categories(model):
    """The categorical features of a fitted HistGradientBoosting model, as its trees
    read them, or None when it has none: ``(columns, categories)``. Its fitted
    preprocessor (``_preprocessor``, a ColumnTransformer, no public accessor) puts the
    categorical columns first, ordinal-encoded, then the numeric ones, and the trees
    index that order: ``columns[k]`` is the user's column that tree feature ``k`` reads.
    ``categories[c]`` are the OrdinalEncoder's categories of the c-th categorical
    column (its missing value, listed last when seen, dropped: it encodes as NaN); the
    trees test the positions in it, and a value not among them reaches them as NaN.
    Each tree's left-category bitsets are its predictor's public
    ``raw_left_cat_bitsets``."""
    is_categorical = getattr(model, "is_categorical_", None)
    if is_categorical is None or not any(is_categorical):
        return None
    preprocessor = model._preprocessor
    encoded = preprocessor.output_indices_["encoder"]
    numeric = preprocessor.output_indices_["numerical"]
    flags = list(is_categorical)
    categorical = [j for j, flag in enumerate(flags) if flag]
    others = [j for j, flag in enumerate(flags) if not flag]
    columns = [0] * len(flags)
    for k, j in zip(range(encoded.start, encoded.stop), categorical, strict=True):
        columns[k] = j
    for k, j in zip(range(numeric.start, numeric.stop), others, strict=True):
        columns[k] = j
    categories = []
    for values in preprocessor.named_transformers_["encoder"].categories_:
        values = list(values)
        if values and isinstance(values[-1], float) and values[-1] != values[-1]:
            values = values[:-1]
        categories.append(values)
    return columns, categories
