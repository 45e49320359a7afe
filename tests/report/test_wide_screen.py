"""A wide table on one screen: 300 columns in 40 correlated blocks of 5 (and 100 noise
columns) give a terminal report within 60 lines with the verdict in the first 12, the
entangled groups summarised (the largest three, then a count), each group said once
(no warning line repeating it), the feature table cut with the rest counted, and an
HTML verdict card that stays small with the full lists folded under it."""

import re

import numpy as np
import pandas as pd
import pytest

import sapwood
from sapwood.report._html import _card, _warnings
from sapwood.report._screen import MAX_GROUPS

BLOCKS, SIZE, NOISE = 40, 5, 100


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(0)
    n = 400
    latent = rng.normal(size=(n, BLOCKS))
    columns = {f"b{b}_{k}": latent[:, b] + 0.15 * rng.normal(size=n)
               for b in range(BLOCKS) for k in range(SIZE)}
    columns |= {f"noise_{j}": rng.normal(size=n) for j in range(NOISE)}
    X = pd.DataFrame(columns)
    y = latent[:, :4] @ np.array([3.0, 2.0, 1.5, 1.0]) + rng.normal(size=n)
    return sapwood.explain(X, y, model=sapwood.RandomForestRegressor(n_estimators=10),
                           methods="permutation")


def test_the_wide_table_gives_one_screen(report):
    assert len(report.verdict.groups) == BLOCKS
    lines = report.to_text(width=80).splitlines()
    assert len(lines) <= 60
    assert any(line.startswith("Verdict") for line in lines[:12])
    entangled = [line for line in lines if line.startswith("- Entangled:")]
    assert len(entangled) == MAX_GROUPS
    # The largest groups: the blocks the target is made of.
    assert entangled[0].startswith("- Entangled: b0_0")
    assert any(f"- And {BLOCKS - MAX_GROUPS} more entangled groups" in line
               for line in lines)
    assert not any(line.startswith("Warning (correlated)") for line in lines)
    assert any(re.match(r"\.\.\. and \d+ more features: ", line) for line in lines)


def test_details_list_every_group(report):
    text = report.to_text(width=80, details=True)
    assert text.count("- Entangled:") == BLOCKS


def test_the_html_card_stays_small_and_folds_the_full_lists(report):
    card = _card(report)
    shown = card[:card.index("<details>")]
    assert len(shown) < 3_000
    folded = card[card.index("<details>"):]
    assert folded.count("Entangled group") == BLOCKS
    assert "noise_99" in folded  # every feature, by verdict
    page = _warnings(report)
    # The groups' whole warnings: once, folded, not each a warning box of its own.
    assert page.count("<strong>Warning (correlated)") == 0
    assert page.count("groups of strongly associated features") == 1


def test_relied_on_through_a_group_only_when_the_group_is(report):
    groups = {tuple(group["features"]): group for group in report.verdict.groups}
    # The target's blocks matter together; most of the 40 do not.
    assert sum(group["low"] > 0 for group in groups.values()) >= 2
    assert sum(group["low"] <= 0 for group in groups.values()) >= 20
    for entry in report.verdict.features:
        group = groups.get(tuple(entry["group"] or ()))
        if entry["through_group"]:
            assert group is not None and group["low"] > 0
        elif group is not None and group["low"] <= 0:
            assert entry["status"] != "relies_on" or entry["low"] > 0
