"""adjust_pvalues against statsmodels' multipletests (Holm, Benjamini-Hochberg)."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from sapwood.importance import adjust_pvalues


@pytest.mark.parametrize("method, theirs", [("holm", "holm"), ("bh", "fdr_bh")])
def test_as_statsmodels(method, theirs):
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(size=15), rng.uniform(0, 0.01, size=5), [0.02, 0.02]])
    assert adjust_pvalues(p, method) == pytest.approx(multipletests(p, method=theirs)[1],
                                                      abs=1e-15)


def test_nan_stays_nan_and_is_not_counted():
    p = np.array([0.01, np.nan, 0.04])
    assert np.allclose(adjust_pvalues(p, "holm"), [0.02, np.nan, 0.04], equal_nan=True)


def test_bad_method():
    with pytest.raises(ValueError, match="'holm' or 'bh'"):
        adjust_pvalues([0.1], "bonferroni")
