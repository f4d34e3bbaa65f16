"""The spatial mechanism format: the example files load, bad input is one error naming the key."""

from pathlib import Path

import pytest

from pipelines.config import load_mechanism
from pipelines.errors import ConfigError

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
CRANK = CONFIGS / "flores_slider_crank_3d.toml"
LOADS = CONFIGS / "cylindrical_joint_loads.toml"


def test_spatial_examples_load():
    crank = load_mechanism(CRANK)
    assert crank.dimension == 3 and [j["type"] for j in crank.joints][2] == "cylindrical_clearance"
    loads = load_mechanism(LOADS)
    assert [load["enabled"] for load in loads.loads] == [True, False, False]
    assert loads.joints[0]["stiffness_marker"] == "palmgren" and loads.joints[0]["slices"] == 20


@pytest.mark.parametrize(
    ("path", "override", "key"),
    [
        (CRANK, "joints.main.axis=[0.0, 0.0, 2.0]", "joints.main.axis"),
        (CRANK, "joints.main.axis=[0.0, 0.0, 0.0]", "joints.main.axis"),
        (CRANK, "joints.pin.slices=0", "joints.pin.slices"),
        (CRANK, 'joints.pin.length="0 mm"', "joints.pin.length"),
        (CRANK, 'joints.pin.length="3 m"', "joints.pin.length"),
        (CRANK, "joints.pin.type=revolute_clearance", "joints.pin.type"),
        (LOADS, "loads.end_force.body=crank", "loads.end_force.body"),
        (CRANK, 'bodies.crank.position=["1 mm", "2 mm"]', "bodies.crank.position"),
        (LOADS, "joints.bush.axial=sliding", "joints.bush.axial"),
    ],
)
def test_bad_spatial_input_names_the_key(path, override, key):
    with pytest.raises(ConfigError) as error:
        load_mechanism(path, [override])
    assert error.value.key == key and str(path) == error.value.file


def test_spatial_joint_in_planar_file_is_refused():
    with pytest.raises(ConfigError) as error:
        load_mechanism(CONFIGS / "flores_slider_crank.toml", ["joints.pin.type=cylindrical_clearance"])
    assert "joints" in error.value.key


def test_redundant_user_constraints_are_named():
    from pipelines.build_spatial import build_spatial

    config = load_mechanism(CRANK, ["joints.pin.type=revolute"])
    with pytest.raises(ConfigError) as error:
        build_spatial(config)
    assert "redundant" in error.value.message and error.value.key == "joints"
