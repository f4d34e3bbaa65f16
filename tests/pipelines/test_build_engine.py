"""``simulation.engine``: which engine the builder picks, its errors, and a sweep's groups
built on the joint-coordinate engine with their parameters written through the same paths."""

import numpy as np
import pytest

from model.mechanics import Mechanism, TreeMechanism
from model.mechanics.spatial import SpatialMechanism
from model.mechanics.tree import SpatialTreeMechanism, UnsupportedMechanism
from pipelines.build import ParameterMap, build_mechanism
from pipelines.cli import main
from pipelines.config import load_mechanism
from pipelines.errors import ConfigError
from pipelines.sweeping.plan import plan_groups
from pipelines.sweeping.study import load_sweep
from tests.helpers import CONFIGS, FLORES, write_sweep


@pytest.mark.parametrize("name, engine, kind", [
    ("flores_slider_crank.toml", "auto", TreeMechanism),
    ("flores_slider_crank.toml", "joint", TreeMechanism),
    ("flores_slider_crank.toml", "absolute", Mechanism),
    ("fourbar_two_clearances.toml", "auto", TreeMechanism),  # the rocker on a free joint
    ("flores_flexible.toml", "auto", TreeMechanism),  # the rod's segments on free joints
    ("double_link_clearance.toml", "joint", SpatialTreeMechanism),  # each link on an axial joint
    ("double_link_clearance.toml", "auto", SpatialMechanism),  # spatial: absolute unless asked
    ("spherical_pendulum.toml", "joint", SpatialTreeMechanism),  # the rod on a free joint under its ball
    ("flexible_cantilever_3d.toml", "joint", SpatialTreeMechanism),  # the segments on spatial free joints
])
def test_the_engine_the_config_asks_for(name, engine, kind):
    config = load_mechanism(CONFIGS / name, [f"simulation.engine={engine}"])
    assert type(build_mechanism(config)) is kind


def test_joint_engine_where_it_does_not_apply_is_one_config_error(monkeypatch, capsys):
    """The reason the tree gives (here the one of two speed drivers on one joint) becomes one
    ``error:`` line naming the key."""

    def refuse(mechanism):
        raise UnsupportedMechanism("two speed drivers act on one joint")

    monkeypatch.setattr("pipelines.build.tree_mechanism", refuse)
    assert main(["simulate", str(CONFIGS / "double_link_clearance.toml"), "--set", "simulation.engine=joint",
                 "--no-plots", "--out", "unused"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "simulation.engine" in lines[0]
    assert "does not apply: two speed drivers act on one joint" in lines[0]


def test_an_unknown_engine_is_refused():
    with pytest.raises(ConfigError, match="simulation.engine"):
        load_mechanism(FLORES, ["simulation.engine=tree"])


def test_parameters_are_the_same_leaves_on_both_engines():
    """A dotted path reads and writes the absolute description inside the joint engine."""
    config = load_mechanism(FLORES)
    paths = ["joints.pin.clearance", "bodies.conrod.mass", "joints.pin.contact.restitution", "drivers.motor.speed"]
    values = np.array([3e-4, 0.25, 0.7, 400.0])
    tree, absolute = build_mechanism(config), build_mechanism(config, "absolute")
    written = ParameterMap(tree, paths).apply(tree, values)
    assert type(written) is TreeMechanism and written.topology == tree.topology
    np.testing.assert_array_equal(ParameterMap(tree, paths).read(written), values)
    reference = ParameterMap(absolute, paths).apply(absolute, values)
    for a, b in zip(ParameterMap(absolute, paths).read(reference), ParameterMap(tree, paths).read(written)):
        assert float(a) == float(b)
    assert float(written.absolute.clearance_joints[0].clearance) == 3e-4


def test_sweep_groups_run_on_the_joint_engine(tmp_path):
    path = write_sweep(tmp_path, 'design = "grid"', 'path = "joints.pin.clearance"\nrange = ["0.2 mm", "0.4 mm"]\nnum = 2',
                       'path = "joints.pin.contact.model"\nvalues = ["hunt_crossley", "lankarani_nikravesh"]')
    design, base = load_sweep(path)
    groups = plan_groups(design, base)  # checks that the setters reproduce each group's build
    assert len(groups) == 2 and all(type(group.mechanism) is TreeMechanism for group in groups)
