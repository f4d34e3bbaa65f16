"""``clearance wear`` of a cylindrical clearance joint: the life loop's per-slice tables and
the axial map on a short life of the spatial double link (a 10 ms "cycle", of which the
journal falls through the clearance for the first 6.4 ms; three passes).
Validation tier (a compile of the spatial solve with wear, about a minute of CPU); the
default run checks the per-slice wear through the model's tests and the config through
``test_schema_spatial.py``. docs/wear.md records the result."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]

SHORT_LIFE = ["--set", "wear.period=10 ms", "--set", "wear.cycles=5000", "--set", "wear.extrapolation=2500"]
SLICES, RESOLUTION = 20, 360


@pytest.fixture(scope="module")
def life(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wear")
    assert main(["wear", str(CONFIGS / "wear_double_link.toml"), "--out", str(out), "--no-progress", *SHORT_LIFE]) == 0
    return out


def test_life_tables_follow_archard_per_slice(life):
    table = pd.read_parquet(life / "life.parquet")
    profiles = pd.read_parquet(life / "profiles.parquet")
    assert list(table["cycles"]) == [0.0, 2500.0, 5000.0] and set(table["status"]) == {"ok"}
    assert list(profiles.columns) == ["update", "cycles", "slice", "axial", "angle", "depth"]
    assert len(profiles) == 3 * SLICES * RESOLUTION
    radius, slice_length, k_w, factor = 0.01, 0.02 / SLICES, 8e-14, 2500.0
    for update, row in table.iterrows():
        rows = profiles[profiles["update"] == update]
        assert row["max_depth"] == rows["depth"].max()
        assert row["max_depth_axial"] == rows["axial"].iloc[int(np.argmax(rows["depth"].to_numpy()))]
        np.testing.assert_allclose(row["volume"], rows["depth"].sum() * radius * 2 * np.pi / RESOLUTION * slice_length,
                                   rtol=1e-12)
    # each update adds k_w x extrapolation x int F |v| dt, summed over the slices, of the pass before it
    np.testing.assert_allclose(np.diff(table["volume"]), k_w * factor * table["load_distance"][:-1], rtol=1e-9)
    assert np.all(np.diff(table["volume"]) > 0) and "link1.max_abs_az" in table
    for name in ("wear_profiles.png", "wear_growth.png", "wear_dynamics.png", "wear_axial_map.png"):
        assert (life / name).stat().st_size > 10_000
