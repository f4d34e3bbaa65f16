"""A spatial worn bushing on the joint-coordinate engine: a short life of the double link's
first joint (a cylindrical clearance joint worn per slice; ``configs/double_link_clearance.toml``
with a ``[wear]`` table like ``configs/wear_double_link.toml``'s, a 10 ms "cycle" of which the
journal falls through the clearance for the first 6.4 ms, two passes: a new bushing, then
the bushing worn by the first pass) on both engines at rtol 1e-8, atol 1e-11. The second
pass runs the worn bore the first pass wrote into the absolute description the tree wraps.
Two compiles of the spatial integrator with wear: ``validation``. Result: docs/engine.md."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from model.mechanics.spatial import SpatialMechanism
from model.mechanics.tree import SpatialTreeMechanism
from pipelines.wear.life import run_life
from pipelines.wear.study import load_wear_study
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]

WEAR = f"""base = "{CONFIGS / 'double_link_clearance.toml'}"

[wear]
joint = "joint1"
coefficient = "8e-14 1/Pa"
cycles = 2500
period = "10 ms"
warmup_cycles = 0
cycles_per_update = 1
extrapolation = 2500
resolution = 360
"""
TOLERANCES = ["simulation.rtol=1e-8", "simulation.atol=1e-11"]


@pytest.fixture(scope="module")
def lives(tmp_path_factory) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """``(profiles, life)`` of the short life on each engine."""
    folder = tmp_path_factory.mktemp("spatial_wear")
    path = folder / "wear.toml"
    path.write_text(WEAR)
    out = {}
    for engine, kind in (("joint", SpatialTreeMechanism), ("absolute", SpatialMechanism)):
        study = load_wear_study(path, [f"simulation.engine={engine}", *TOLERANCES])
        assert type(study.mechanism) is kind and study.cylindrical
        run = run_life(study, Path(folder / engine), progress=False)
        out[engine] = (run.profiles, run.life)
    return out


def test_a_worn_spatial_bushing_wears_as_on_the_absolute_engine(lives):
    """Per pass, the worn volume and ``int F |v_t| dt`` (summed over the slices) to 1e-6
    relative, the deepest bin to 1e-5, the sampled peak force to 1e-5, every bin of every
    slice to 1e-4 of the deepest (docs/engine.md)."""
    (joint_profiles, joint_life), (absolute_profiles, absolute_life) = lives["joint"], lives["absolute"]
    assert list(joint_life["cycles"]) == [0.0, 2500.0] and set(joint_life["status"]) == {"ok"}
    assert set(absolute_life["status"]) == {"ok"}
    assert float(absolute_life["load_distance"].iloc[0]) > 0.0
    for column, rtol in (("load_distance", 1e-6), ("volume", 1e-6), ("max_depth", 1e-5),
                         ("joint1.max_normal_force", 1e-5)):
        np.testing.assert_allclose(joint_life[column], absolute_life[column], rtol=rtol, err_msg=column)
    worn_joint, worn_absolute = (profiles[profiles["update"] == 1]["depth"].to_numpy()
                                 for profiles in (joint_profiles, absolute_profiles))
    largest = float(worn_absolute.max())
    assert largest > 0.0
    np.testing.assert_allclose(worn_joint, worn_absolute, rtol=0, atol=1e-4 * largest)
