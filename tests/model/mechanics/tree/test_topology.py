"""The kinematic tree found from a planar mechanism (model/mechanics/tree/topology.py)."""

import jax.numpy as jnp
import pytest

from model.mechanics import GROUND, Driver, Mechanism, RevoluteJoint
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


def test_a_closed_loop_of_ideal_joints_is_cut():
    """The ideal-joint twin of the slider-crank (the pin made ideal, appended after the two
    revolute joints) closes a loop: the walk places crank, slider and conrod as before and
    cuts the pin, whose rows then constrain the two coordinates."""
    twin = absolute("flores_slider_crank.toml").idealised()
    topology = tree_topology(twin)
    assert topology.cuts == (("revolute", len(twin.revolute_joints) - 1),)
    assert topology.size == 2 and len(topology.joints) == 3
    assert tree_topology(absolute("flores_slider_crank.toml")).cuts == ()


def test_a_speed_driven_joint_that_would_be_cut_is_refused():
    """Two bodies, each pinned to the ground, joined by a driven pin: the walk reaches both
    from the ground first, so the driven pin would close the loop."""
    a = lambda *v: jnp.asarray(v, dtype=jnp.float64)  # noqa: E731
    pin = lambda i, j: RevoluteJoint(i, j, a(0.0, 0.0), a(0.0, 0.0))  # noqa: E731
    mechanism = Mechanism(masses=a(1.0, 1.0), inertias=a(1.0, 1.0), gravity=a(0.0, 0.0),
                          initial_positions=a(0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
                          revolute_joints=(pin(0, 1), pin(GROUND, 0), pin(GROUND, 1)), prismatic_joints=(),
                          fixed_joints=(), clearance_joints=(),
                          drivers=(Driver(0, "constant_speed", a(1.0)[0], a(0.0)[0], a(0.0)[0]),))
    with pytest.raises(UnsupportedMechanism, match="speed-driven"):
        tree_topology(mechanism)
