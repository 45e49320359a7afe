"""The ground-truth generator: shapes, roles, seeding and the ID column."""

import numpy as np
import pytest

from sapwood.datasets._ground_truth import make_ground_truth


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_shapes_and_roles(task):
    X, y, truth = make_ground_truth(300, task=task, random_state=3)
    assert X.shape == (300, 9) and len(y) == 300 and y.name == "y"
    assert list(truth) == list(X.columns)
    assert set(truth.values()) == {"informative", "correlated copy", "noise"}
    assert [c for c, role in truth.items() if role == "informative"] == [
        "inf_1", "inf_2", "inf_3", "inf_4", "inf_5"]
    assert X["noise_id"].nunique() == 300
    assert set(X["inf_5"]) == {0, 1} and set(X["noise_binary"]) == {0, 1}
    assert X["noise_lowcard"].nunique() == 4
    assert np.corrcoef(X["inf_4"], X["inf_4_copy"])[0, 1] > 0.9
    if task == "classification":
        assert set(y) == {0, 1} and abs(y.mean() - 0.5) < 0.1
    else:
        assert y.dtype == np.float64


def test_same_seed_same_data_and_label_noise():
    X1, y1, _ = make_ground_truth(200, random_state=7)
    X2, y2, _ = make_ground_truth(200, random_state=7)
    assert X1.equals(X2) and y1.equals(y2)
    _, clean, _ = make_ground_truth(200, random_state=7, label_noise=0.0)
    assert 0 < (clean != y1).mean() < 0.25


@pytest.mark.parametrize("kwargs, match", [
    ({"task": "ranking"}, "'task'"), ({"n_samples": 1}, "'n_samples'"),
    ({"label_noise": 0.7}, "'label_noise'"), ({"n_levels": 1}, "'n_levels'")])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_ground_truth(**kwargs)
