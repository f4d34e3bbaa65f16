"""The joint-coordinate engine on spatial mechanisms (model/mechanics/tree/spatial_*.py):
the tree of the shipped spatial configs, the forward kinematics against the absolute
engine's joint rows, the equations of motion against the absolute engine (an independent
formulation: Newton-Euler with Lagrange multipliers on 7 coordinates per body) at single
states, and a spherical pendulum's conservation laws through a solve."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.geometry.quaternion import axis_angle_quaternion, rotation_matrix
from model.integrate import SolverSettings
from model.mechanics.spatial import GROUND, SpatialMechanism
from model.mechanics.spatial.dynamics import angular_momentum, kinetic_energy
from model.mechanics.spatial.joints import SpatialJoint
from model.mechanics.tree import SpatialTreeMechanism, UnsupportedMechanism, tree_mechanism, tree_topology
from model.mechanics.tree.spatial_dynamics import evaluate
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

MASS, LENGTH, G = 1.0, 0.3, 9.81  # kg, m, m/s^2: a rod hanging on a ball joint at its upper end
INERTIA = (MASS * LENGTH**2 / 12, 1e-4, MASS * LENGTH**2 / 12)  # kg m^2, the rod along its y axis
Z, X = jnp.array([0.0, 0.0, 1.0]), jnp.array([1.0, 0.0, 0.0])


def pendulum(kind: str = "spherical", spin: float = 0.0) -> SpatialMechanism:
    """The rod tilted 0.5 rad about z, pinned to the ground at the origin by a ``kind`` joint
    (axis z), started with the angular velocity ``spin`` (rad/s) about the vertical y axis."""
    quaternion = axis_angle_quaternion(Z, 0.5)
    ball = jnp.array([0.0, LENGTH / 2, 0.0])
    position = -rotation_matrix(quaternion) @ ball
    omega = jnp.array([0.0, spin, 0.0])
    joint = SpatialJoint(kind, GROUND, 0, jnp.zeros(3), ball, Z, Z, X, rotation_matrix(quaternion).T @ X,
                         quaternion)
    return SpatialMechanism(
        masses=jnp.array([MASS]), inertias=jnp.diag(jnp.asarray(INERTIA))[None], gravity=jnp.array([0.0, -G, 0.0]),
        initial_positions=jnp.concatenate([position, quaternion]), joints=(joint,), cylindrical_joints=(),
        spherical_joints=(), loads=(), drivers=(), body_names=("rod",), joint_names=("ball",),
        initial_velocity_targets=jnp.concatenate([jnp.cross(omega, position), omega]))


def absolute(name: str):
    return build_mechanism(load_mechanism(CONFIGS / name), "absolute")


@functools.lru_cache
def configs():
    return {name: absolute(name) for name in ("flores_slider_crank_3d.toml", "double_link_clearance.toml")}


def test_trees_of_the_spatial_configs():
    """The slider-crank: crank driven, conrod on the crank, slider on its guide (the pin's
    axial row is implied by the planar loop, so the pin cuts it); the double link: each link
    held axially by its clearance joint (five coordinates: the centre's two in the bearing's
    cross-section and a relative rotation)."""
    flores, double = (tree_topology(m) for m in configs().values())
    assert {j.body: (j.kind, j.parent) for j in flores.joints} == {0: ("revolute", -1), 1: ("revolute", 0),
                                                                    2: ("prismatic", -1)}
    assert (flores.size, flores.rate_size, flores.speed_drivers) == (2, 2, (0,))
    assert {j.body: (j.kind, j.parent) for j in double.joints} == {0: ("axial", -1), 1: ("axial", 0)}
    assert (double.size, double.rate_size) == (12, 10)
    with pytest.raises(UnsupportedMechanism, match="loop"):
        tree_topology(configs()["flores_slider_crank_3d.toml"].idealised())
    # without the axial hold a link is free: position and quaternion
    axial_free = dataclasses.replace(configs()["double_link_clearance.toml"], cylindrical_joints=tuple(
        dataclasses.replace(j, axial_fixed=False) for j in configs()["double_link_clearance.toml"].cylindrical_joints))
    assert [j.kind for j in tree_topology(axial_free).joints] == ["free", "free"]


@pytest.mark.parametrize("kind", ["revolute", "cylindrical", "prismatic", "fixed", "spherical"])
def test_forward_kinematics_satisfy_the_joint_rows(kind):
    """Every ideal joint kind placed by the tree at arbitrary coordinates satisfies the
    absolute engine's rows (model/mechanics/spatial/constraints.py) to rounding, and the
    inverse kinematics give the coordinates back."""
    mechanism = pendulum(kind)
    tree = tree_mechanism(mechanism)
    size = tree.topology.size
    z = {0: jnp.zeros(0), 1: jnp.array([0.8]), 2: jnp.array([-2.1, 0.03]),
         4: jnp.array([0.5, -0.3, 0.7, 0.2]) / jnp.linalg.norm(jnp.array([0.5, -0.3, 0.7, 0.2]))}[size]
    state = tree.initial_state()._replace(z=z)
    x = tree.state_absolute(state).x
    assert float(jnp.max(jnp.abs(mechanism.constraint_values(x, 0.0)))) < 1e-15
    from model.mechanics.tree.spatial_kinematics import joint_coordinates
    back, _ = joint_coordinates(mechanism, tree.topology, x)
    np.testing.assert_allclose(back, z, atol=1e-15)


@functools.lru_cache
def both_engines(name: str):
    """One compiled evaluation of both engines at a state in contact: the joint engine's
    start with its first free coordinate moved by 1.02 clearances (the first clearance
    joint's journal centred at the start: 2 % of the clearance deep), every free velocity
    raised by a share of 0.3 m/s or rad/s."""
    tree = tree_mechanism(configs()[name])

    @jax.jit
    def evaluations(tree):
        start = tree.initial_state()
        flat = tree.flatten(start)
        clearance = tree.clearance_joints[0].clearance
        # the first free coordinate (the slider's travel; the first link's eccentricity along u)
        moving = 0.3 * jnp.ones_like(start.zd) / jnp.sqrt(start.zd.shape[0])  # m/s, rad/s
        state = start._replace(z=start.z.at[0].add(1.02 * clearance), zd=start.zd + moving)
        rate = tree.vector_field(0.0, state)
        absolute_state = tree.state_absolute(state)
        out = evaluate(tree.absolute, tree.topology, state)
        reference = tree.absolute.evaluate(0.0, absolute_state)
        absolute_rate = tree.absolute.vector_field(0.0, absolute_state)
        violation = jnp.max(jnp.abs(tree.absolute.constraint_values(absolute_state.x, 0.0)))
        return rate, out, reference, absolute_rate, violation, tree.flatten(start), tree.state_absolute(start)

    return tree, evaluations(tree)


@pytest.mark.parametrize("name", [
    "flores_slider_crank_3d.toml",
    pytest.param("double_link_clearance.toml", marks=[pytest.mark.slow, pytest.mark.validation]),
])
def test_rates_match_the_absolute_engine_in_contact(name):
    """At a state inside the clearance, moving, the twists' rates, the speed driver's
    torque, the impact memory's rate and the drivers' power equal the absolute engine's; the
    absolute coordinates satisfy every ideal joint to rounding. The double link (two axial
    joints, twenty slices each) is a ``validation`` case: a second compile."""
    _, (rate, out, reference, absolute_rate, violation, _, _) = both_engines(name)
    assert float(violation) < 1e-14
    assert float(np.max(reference.contact.normal_force)) > 1.0  # N: in contact
    scale = float(np.max(np.abs(reference.acceleration)))
    np.testing.assert_allclose(out.vdot, reference.acceleration, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(rate.impact_memory, absolute_rate.impact_memory, rtol=1e-8, atol=1e-12)
    assert float(rate.driver_work) == pytest.approx(float(absolute_rate.driver_work), rel=1e-8, abs=1e-9)
    torque_scale = float(np.max(reference.contact.normal_force)) * 0.05  # N m: the force on a 50 mm arm
    np.testing.assert_allclose(out.driver_torques, reference.driver_torques, rtol=1e-8, atol=1e-10 * torque_scale)


def test_start_is_the_absolute_engines():
    tree, (*_, flat, start, ) = both_engines("flores_slider_crank_3d.toml")
    reference = tree.absolute.initial_state()
    np.testing.assert_allclose(start.x, reference.x, rtol=0, atol=1e-15)
    np.testing.assert_allclose(start.v, reference.v, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(reference.v))))
    np.testing.assert_array_equal(tree.flatten(tree.unflatten(flat)), flat)
    assert tree.project(0.0, flat) is flat and not tree.constrained
    assert isinstance(tree, SpatialTreeMechanism) and tree.dimension == 3


T_PENDULUM = 0.3  # s: about half a swing


@pytest.fixture(scope="module")
def swing():
    """The spinning spherical pendulum solved on the joint engine (its relative quaternion
    integrated with the norm-restoring rate), energy and vertical angular momentum about the
    pivot at each output, and the largest joint-row residual."""
    tree = tree_mechanism(pendulum("spherical", spin=4.0))
    settings = SolverSettings(t_end=T_PENDULUM, output_interval=T_PENDULUM / 30, solver="tsit5", rtol=1e-10,
                              atol=1e-12, dtmax_contact_share=None)

    @jax.jit
    def run(tree):
        trajectory = model.simulate(tree, settings)
        energy = jax.vmap(lambda x, v: kinetic_energy(tree.absolute, x, v) + MASS * G * x[1])(trajectory.x, trajectory.v)
        momentum = jax.vmap(lambda x, v: angular_momentum(tree.absolute, x, v)[1])(trajectory.x, trajectory.v)
        return trajectory, energy, momentum

    return run(tree)


def test_spherical_pendulum_conserves_energy_and_vertical_momentum(swing):
    """Gravity does no work along the motion and has no moment about the vertical through
    the pivot: the energy and the vertical angular momentum stay at their start, to the
    solver's tolerance, while both vary along the motion by orders of magnitude more."""
    trajectory, energy, momentum = swing
    assert int(trajectory.result) == 0
    swing_scale = MASS * G * LENGTH / 2
    assert float(jnp.max(jnp.abs(energy - energy[0]))) < 1e-8 * swing_scale
    assert float(jnp.max(jnp.abs(momentum - momentum[0]))) < 1e-8 * abs(float(momentum[0]))
    # the rod swings: its height changes by a sizeable part of its length
    assert float(jnp.ptp(trajectory.x[:, 1])) > 0.05 * LENGTH
    assert float(jnp.max(trajectory.constraint_violation)) < 1e-14
