"""The repeated-units warning: fires on panels, quiet on ordinary categories."""

import numpy as np
import pandas as pd

from sapwood.diagnostics import find_repeated_units


def _panel(seed=0, n_units=50, per=6, stored_by_unit=True, name="u"):
    """Units measured ``per`` times, each with its own effect, sex and schooling."""
    rng = np.random.default_rng(seed)
    unit = np.repeat(rng.permutation(n_units), per)  # stored unit by unit, ids unsorted
    frame = pd.DataFrame({
        name: unit, "sex": rng.integers(0, 2, n_units)[unit],
        "school": rng.integers(8, 18, n_units)[unit],
        "hours": rng.normal(40, 5, len(unit)), "x": rng.normal(size=len(unit))})
    if not stored_by_unit:
        frame = frame.sample(frac=1, random_state=seed).reset_index(drop=True)
    return frame


def test_fires_on_a_panel_stored_unit_by_unit():
    (finding,) = find_repeated_units(_panel(), command=lambda c: f"--groups {c}")
    assert finding.kind == "repeated units" and finding.features == ("u",)
    assert "each value's rows are consecutive" in finding.message
    assert "'sex', 'school' constant within each value" in finding.message
    assert "overstated" in finding.message and "--groups u" in finding.message


def test_fires_on_a_shuffled_panel_by_its_alike_rows_or_its_name():
    (finding,) = find_repeated_units(_panel(stored_by_unit=False))
    assert finding.details["evidence"] == ["'sex', 'school' constant within each value"]
    named = _panel(stored_by_unit=False, name="person_id").drop(columns=["sex", "school"])
    (finding,) = find_repeated_units(named)
    assert finding.details["evidence"] == ["named like an identifier"]


def test_quiet_on_ordinary_categories():
    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "west", "centre"], n),
        "product_type": rng.choice([f"type {i}" for i in range(12)], n),
        "price": rng.gamma(2, 10, n).round(2), "units_sold": rng.poisson(5, n)})
    assert find_repeated_units(frame) == []


def test_quiet_on_blocks_alone():
    # A table grouped by a shared covariate (strikes listed month by month, each month's
    # industrial production repeated) lies in blocks without being a panel of units.
    frame = _panel().drop(columns=["sex", "school"])
    assert find_repeated_units(frame) == []


def test_quiet_on_a_shuffled_panel_with_nothing_unit_like():
    # Repeats alone (no name, no blocks, nothing constant within) are not units.
    frame = _panel(stored_by_unit=False).drop(columns=["sex", "school"])
    assert find_repeated_units(frame) == []
