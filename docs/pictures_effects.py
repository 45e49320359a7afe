"""Draw the README's effects picture: docs/images/effects.png.

    PYTHONPATH=src python docs/pictures_effects.py

A generated table of flat sales that reads like a real one: the price rises with the
floor area, faster near the centre (area and distance interact), and the number of
rooms follows the area closely (a correlated pair the price does not depend on by
itself). A sapwood forest is fitted on three quarters of the rows; on the held-out
quarter the picture shows the floor area's partial dependence with 60 of the rows' ICE
curves (left) and its accumulated local effects with the 95% band (right). Everything
is computed here, with fixed seeds, so the README shows real output.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import sapwood  # noqa: E402
from sapwood import effects, plotting  # noqa: E402

IMAGES = Path(__file__).resolve().parent / "images"


def flats(n=3000, seed=0):
    """Floor area (m²), rooms, distance to the centre (km), age (years), floor; the
    price in thousands."""
    rng = np.random.default_rng(seed)
    area = np.round(rng.gamma(6.0, 12.0, size=n) + 20, 0)
    rooms = np.clip(np.round(area / 28 + rng.normal(0, 0.5, size=n)), 1, 8)
    distance = np.round(rng.gamma(2.0, 3.0, size=n), 1)
    age = rng.integers(0, 120, size=n)
    floor = rng.integers(0, 12, size=n)
    price = (area * (4.0 + 3.0 * np.exp(-distance / 4)) - 0.6 * age + 4 * floor
             + rng.normal(0, 40, size=n))
    X = pd.DataFrame({"area": area, "rooms": rooms, "distance_km": distance, "age": age,
                      "floor": floor})
    return X, pd.Series(np.round(price, 1), name="price")


def main():
    X, y = flats()
    X_train, X_test, y_train, _ = train_test_split(X, y, random_state=0)
    model = sapwood.RandomForestRegressor(n_estimators=100, min_samples_leaf=5,
                                          random_state=0).fit(X_train, y_train)
    rows = X_test.iloc[:500]
    curve = effects.partial_dependence(model, rows, "area", kind="both", grid_resolution=40,
                                       percentiles=(0.0, 1.0))
    local = effects.ale(model, rows, "area", include_CI=True)
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    plotting.partial_dependence(curve, ax=left, feature_names=["area (m²)"],
                                max_ice_lines=60)
    left.set_title("partial dependence and ICE", loc="left", fontsize="medium")
    plotting.ale(local, ax=right)
    right.set_xlabel("area (m²)")
    right.set_title("accumulated local effects, 95% band", loc="left", fontsize="medium")
    figure.tight_layout()
    figure.savefig(IMAGES / "effects.png", dpi=90, bbox_inches="tight")
    plt.close(figure)
    h = effects.h_statistic(model, rows.iloc[:300], random_state=0)
    print(h[h["kind"] == "pair"].head(3).to_string(index=False))


if __name__ == "__main__":
    main()
