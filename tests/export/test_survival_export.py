"""A survival tree prints each node with its risk score."""

import numpy as np

from sapwood import export
from sapwood._format import TreeArrays, TreeEnsemble


def test_survival_tree_shows_risk_scores():
    hazard = np.array([[0.1, 0.3], [0.0, 0.2], [0.3, 0.9]])
    tree = TreeArrays(children_left=[1, -1, -1], children_right=[2, -1, -1],
                      feature=[0, -2, -2], threshold=[0.5, -2.0, -2.0], impurity=np.zeros(3),
                      n_node_samples=[4, 2, 2], weighted_n_node_samples=[4.0, 2.0, 2.0],
                      value=np.stack([hazard, np.exp(-hazard)], axis=-1),
                      missing_go_to_left=np.zeros(3), operator=np.zeros(3), n_features=1)
    model = TreeEnsemble(trees=[tree], task="survival", n_features=1, times=[1.0, 2.0],
                         is_event_time=[True, True])
    text = export.export_text(model)
    assert "value: [0.20]" in text and "value: [1.20]" in text
    assert "value = 0.4" in export.export_graphviz(model)
