"""What the trees of an unfitted estimator will record, for measures that refit one.

A measure that grows its own model from a user's estimator (AIR refits a clone on X
plus shadow columns) must know before fitting whether the trees it gets will carry
node impurities, or only the split gains of a boosting library. The library classes
are known here, with the adapters, so that measures need not test them.
"""

from __future__ import annotations

from sklearn import ensemble as sklearn_ensemble
from sklearn import tree as sklearn_tree

from .. import learners

__all__ = ["split_statistic"]

#: Estimators whose trees record node impurities and take ``max_features``:
#: sapwood's learners and the scikit-learn classes they reproduce.
_IMPURITY_ESTIMATORS = (
    learners.DecisionTreeClassifier, learners.DecisionTreeRegressor,
    learners.RandomForestClassifier, learners.RandomForestRegressor,
    learners.ExtraTreesClassifier, learners.ExtraTreesRegressor,
    learners.GradientBoostingClassifier, learners.GradientBoostingRegressor,
    sklearn_tree.DecisionTreeClassifier, sklearn_tree.DecisionTreeRegressor,
    sklearn_ensemble.RandomForestClassifier, sklearn_ensemble.RandomForestRegressor,
    sklearn_ensemble.ExtraTreesClassifier, sklearn_ensemble.ExtraTreesRegressor,
    sklearn_ensemble.GradientBoostingClassifier, sklearn_ensemble.GradientBoostingRegressor,
)


def _boosting_libraries():
    """The scikit-learn-API base classes of XGBoost and LightGBM that are installed."""
    classes = []
    # Optional, heavy libraries: imported only when asked about an estimator.
    try:
        from xgboost import XGBModel
        classes.append(XGBModel)
    except ImportError:
        pass
    try:
        from lightgbm import LGBMModel
        classes.append(LGBMModel)
    except ImportError:
        pass
    return tuple(classes)


def split_statistic(estimator) -> str | None:
    """How the fitted trees of ``estimator`` measure a split: ``"impurity"`` (node
    impurities, and the estimator takes ``max_features``: sapwood's learners and the
    scikit-learn DecisionTree*, RandomForest*, ExtraTrees*, GradientBoosting* classes),
    ``"gain"`` (XGBoost's and LightGBM's scikit-learn estimators) or None (anything
    else)."""
    if isinstance(estimator, _IMPURITY_ESTIMATORS):
        return "impurity"
    if isinstance(estimator, _boosting_libraries()):
        return "gain"
    return None
