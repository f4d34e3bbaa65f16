"""The joint-coordinate engine on spatial mechanisms (model/mechanics/tree/spatial_*.py) at
single states: a chain of every ideal joint kind against the absolute engine's joint rows
and its equations of motion (an independent formulation: Newton-Euler with Lagrange
multipliers on 7 coordinates per body), and the trees of bodies held by clearance joints.
Solves and the shipped configs' contact: ``test_spatial_simulation.py`` (validation)."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.joints import Driver
from model.mechanics.spatial import GROUND, SpatialMechanism
from model.mechanics.spatial.joints import SpatialJoint
from model.mechanics.tree import SpatialTreeMechanism, UnsupportedMechanism, tree_mechanism, tree_topology
from model.mechanics.tree.dynamics import TreeState
from model.mechanics.tree.spatial_dynamics import body_accelerations, evaluate
from model.mechanics.tree.spatial_kinematics import joint_coordinates
from tests.model.mechanics.spatial.cases import bushing

KINDS = ("revolute", "cylindrical", "prismatic", "fixed", "spherical")  # joint k holds body k on body k - 1
AXES = ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0))
REFERENCES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (1.0, 0.0, 0.0))
REVERSED = (1, 3, 4)  # joints whose child is their body_i (the tree inverts their placement)
DRIVER_ANGLE, DRIVER_SPEED = 0.4, 30.0  # rad, rad/s


def chain() -> SpatialMechanism:
    """Five 0.1 m links along x, each held on the previous one (the first on the ground) by
    the joint of :data:`KINDS` at their common end (the child its ``body_j``, or its
    ``body_i`` for :data:`REVERSED`), full inertia tensors, gravity, the first joint driven
    at constant speed."""
    a = lambda *v: jnp.asarray(v, dtype=jnp.float64)  # noqa: E731
    rng = np.random.default_rng(3)
    inertias = []
    for _ in KINDS:
        root = rng.normal(size=(3, 3)) * 1e-2
        inertias.append(root @ root.T + 1e-4 * np.eye(3))  # kg m^2, symmetric positive definite
    joints = []
    for k, (kind, axis, reference) in enumerate(zip(KINDS, AXES, REFERENCES)):
        parent = (GROUND if k == 0 else k - 1, a(0.0, 0.0, 0.0) if k == 0 else a(0.05, 0.0, 0.0))
        child = (k, a(-0.05, 0.0, 0.0))
        (body_i, point_i), (body_j, point_j) = (child, parent) if k in REVERSED else (parent, child)
        joints.append(SpatialJoint(kind, body_i, body_j, point_i, point_j, a(*axis), a(*axis), a(*reference),
                                   a(*reference), a(1.0, 0.0, 0.0, 0.0)))
    joints = tuple(joints)
    positions = jnp.concatenate([a(0.05 + 0.1 * k, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0) for k in range(len(KINDS))])
    return SpatialMechanism(
        masses=a(0.3, 0.2, 0.25, 0.15, 0.1), inertias=jnp.asarray(np.stack(inertias)), gravity=a(0.0, -9.81, 0.0),
        initial_positions=positions, joints=joints, cylindrical_joints=(), spherical_joints=(), loads=(),
        drivers=(Driver(0, "constant_speed", jnp.asarray(DRIVER_SPEED), jnp.asarray(0.0), jnp.asarray(DRIVER_ANGLE)),),
        body_names=tuple(f"link{k}" for k in range(len(KINDS))), joint_names=KINDS)


@jax.jit
def chain_evaluations(tree: SpatialTreeMechanism):
    """At arbitrary joint coordinates and velocities: the absolute state, the joint rows
    there, the coordinates the inverse kinematics gives back, both engines' twist rates and
    driver torques, and the absolute engine's velocity rows."""
    rng = np.random.default_rng(7)
    quaternion = jnp.asarray(rng.normal(size=4))
    z = jnp.concatenate([jnp.asarray(rng.normal(size=3)), quaternion / jnp.linalg.norm(quaternion)])
    state = TreeState(z, jnp.asarray(rng.normal(size=tree.topology.rate_size)) * 3.0, jnp.zeros(0), jnp.zeros(()),
                      jnp.asarray([DRIVER_ANGLE]))
    absolute = tree.state_absolute(state)
    mechanism = tree.absolute
    out = evaluate(mechanism, tree.topology, state)
    return (state, absolute, mechanism.constraint_values(absolute.x, 0.0),
            mechanism.constraint_rate(absolute.x, absolute.v, 0.0), joint_coordinates(mechanism, tree.topology, absolute.x),
            out, mechanism.evaluate(0.0, absolute),
            body_accelerations(mechanism, tree.topology, state, state._replace(zd=out.zdd)))


@pytest.fixture(scope="module")
def chain_results():
    tree = tree_mechanism(chain())
    return tree, chain_evaluations(tree)


def test_chain_tree():
    topology = tree_topology(chain())
    assert [(j.kind, j.parent, j.coordinate, j.rate) for j in topology.joints] == [
        ("revolute", -1, None, None), ("cylindrical", 0, 0, 0), ("prismatic", 1, 2, 2), ("fixed", 2, None, None),
        ("spherical", 3, 3, 3)]
    assert (topology.size, topology.rate_size, topology.speed_drivers) == (7, 6, (0,))


@pytest.mark.slow  # 4 CPU s, most of it compiling
def test_every_joint_kind_satisfies_the_absolute_rows(chain_results):
    """The forward kinematics satisfy every row of every joint kind (and the speed
    driver's) to rounding, positions and velocities; the inverse kinematics give the
    coordinates back."""
    _, (state, _, rows, rates, (z, p), *_) = chain_results
    assert rows.shape == (5 + 4 + 5 + 6 + 3 + 1,)
    assert float(jnp.max(jnp.abs(rows))) < 1e-15
    assert float(jnp.max(jnp.abs(rates))) < 1e-13
    np.testing.assert_allclose(z, state.z, rtol=0, atol=1e-15)
    np.testing.assert_allclose(p, state.prescribed, rtol=0, atol=1e-15)


def test_chain_rates_match_the_absolute_engine(chain_results):
    """Twist rates (gyroscopic terms of full inertia tensors, every joint kind's convective
    terms), the centres' accelerations and the speed driver's torque equal the absolute
    engine's at the same state."""
    _, (*_, out, reference, centres) = chain_results
    scale = float(jnp.max(jnp.abs(reference.acceleration)))
    np.testing.assert_allclose(out.vdot, reference.acceleration, rtol=0, atol=1e-11 * scale)
    # the peaks' query: the centres' accelerations by the recursion without Jacobians
    np.testing.assert_allclose(centres, reference.acceleration.reshape(-1, 2, 3)[:, 0], rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(out.driver_torques, reference.driver_torques, rtol=1e-10)


def test_bodies_held_only_by_clearance_joints():
    """A pin held axially in a fixed bushing by its cylindrical clearance joint: an axial
    joint (the centre's two coordinates in the bearing's cross-section and a relative
    rotation: six coordinates, five velocities); without the axial hold a free joint
    (position and quaternion: seven and six); held axially twice, a loop whose second hold is
    cut and whose one row repeats the first hold's (no independent cut row)."""
    held = bushing()
    assert [(j.kind, j.parent, j.body) for j in tree_topology(held).joints] == [("axial", GROUND, 0)]
    assert (tree_topology(held).size, tree_topology(held).rate_size) == (6, 5)
    joint = held.cylindrical_joints[0]
    free = dataclasses.replace(held, cylindrical_joints=(dataclasses.replace(joint, axial_fixed=False),))
    assert [j.kind for j in tree_topology(free).joints] == ["free"]
    assert (tree_topology(free).size, tree_topology(free).rate_size) == (7, 6)
    looped = dataclasses.replace(held, cylindrical_joints=(joint, joint))
    twice = tree_topology(looped)
    assert twice.cuts == (("axial", 1),) and twice.cut_rows == ()
    # the choice of rows needs values: under a trace the engine does not apply
    with pytest.raises(UnsupportedMechanism, match="trace"):
        eqx.filter_jit(lambda mechanism: tree_topology(mechanism).size)(looped)


def test_a_free_body_beside_the_chain_moves_as_on_the_absolute_engine():
    """The chain and a sixth body held by no joint (a free joint without children: its
    columns of ``J`` an identity block the field leaves out of the recursion, its block of
    ``H`` its mass matrix inverted apart), tilted and spinning about all three axes with a
    full inertia tensor: every twist rate, the sixth body's gyroscopic one included, and the
    driver's torque equal the absolute engine's at the same state."""
    base = chain()
    rng = np.random.default_rng(11)
    root = rng.normal(size=(3, 3)) * 1e-2
    inertia = jnp.asarray(root @ root.T + 1e-4 * np.eye(3))[None]
    start = jnp.asarray([0.8, 0.1, -0.2, 1.0, 0.0, 0.0, 0.0])
    mechanism = dataclasses.replace(base, masses=jnp.append(base.masses, 0.4),
                                    inertias=jnp.concatenate([base.inertias, inertia]),
                                    initial_positions=jnp.concatenate([base.initial_positions, start]),
                                    body_names=base.body_names + ("loose",))
    tree = tree_mechanism(mechanism)
    free = [joint for joint in tree.topology.joints if joint.kind == "free"]
    assert [(joint.body, joint.parent) for joint in free] == [(5, GROUND)]

    @jax.jit
    def evaluations(tree):
        state = tree.initial_state()
        turn = jnp.asarray(rng.normal(size=4))
        at = free[0].coordinate + 3
        z = state.z.at[at : at + 4].set(turn / jnp.linalg.norm(turn))
        state = state._replace(z=z, zd=jnp.asarray(rng.normal(size=tree.topology.rate_size)) * 3.0)
        absolute = tree.state_absolute(state)
        return evaluate(tree.absolute, tree.topology, state), tree.absolute.evaluate(0.0, absolute)

    out, reference = evaluations(tree)
    scale = float(jnp.max(jnp.abs(reference.acceleration)))
    np.testing.assert_allclose(out.vdot, reference.acceleration, rtol=0, atol=1e-11 * scale)
    spin = reference.acceleration[-3:]
    assert float(jnp.max(jnp.abs(spin))) > 1e-3 * scale  # the loose body's gyroscopic rate counts
    np.testing.assert_allclose(out.driver_torques, reference.driver_torques, rtol=1e-10)
