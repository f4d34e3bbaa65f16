"""The kinematic tree found from a planar mechanism (model/mechanics/tree/topology.py)."""

import pytest

from model.mechanics.tree import UnsupportedMechanism, tree_topology
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS


def absolute(name: str):
    return build_mechanism(load_mechanism(CONFIGS / name), "absolute")


def test_flores_slider_crank_carries_its_two_degrees_of_freedom():
    topology = tree_topology(absolute("flores_slider_crank.toml"))
    kinds = {joint.body: (joint.kind, joint.parent) for joint in topology.joints}
    # crank driven (no free coordinate), slider on its guide, conrod on the crank; the
    # clearance pin cuts the loop
    assert kinds == {0: ("revolute", -1), 1: ("revolute", 0), 2: ("prismatic", -1)}
    assert topology.size == 2 and topology.speed_drivers == (0,)
    assert [joint.prescribed for joint in topology.joints if joint.body == 0] == [0]


def test_a_body_held_only_by_clearance_joints_gets_a_free_joint():
    topology = tree_topology(absolute("fourbar_two_clearances.toml"))
    free = [joint for joint in topology.joints if joint.kind == "free"]
    assert len(free) == 1 and free[0].parent == -1
    assert topology.size == sum({"revolute": 1, "prismatic": 1, "free": 3}.get(joint.kind, 0)
                                for joint in topology.joints if joint.prescribed is None)


def test_a_closed_loop_of_ideal_joints_is_refused():
    """The ideal-joint twin of the slider-crank (the pin made ideal) closes a loop."""
    with pytest.raises(UnsupportedMechanism, match="loop"):
        tree_topology(absolute("flores_slider_crank.toml").idealised())


def test_flexible_bodies_stay_on_the_absolute_engine():
    mechanism = absolute("flores_flexible.toml")
    with pytest.raises(UnsupportedMechanism, match="flexible"):
        tree_topology(mechanism)
    assert type(build_mechanism(load_mechanism(CONFIGS / "flores_flexible.toml"))) is type(mechanism)
