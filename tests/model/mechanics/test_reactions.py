"""Ideal-joint reactions and driver torques from the multipliers, against statics and
circular motion: a hanging pendulum's pin carries its weight, a link turning at constant
speed pulls its pivot with m omega^2 r, and a driver turning a link against a resisting
torque supplies it (positive power)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.dynamics import State, evaluate
from model.mechanics.flexible import PointLoad
from model.mechanics.mechanism import GROUND, Driver, Mechanism, PrismaticJoint, RevoluteJoint

MASS, INERTIA, ARM, GRAVITY = 0.3, 1.0e-4, 0.05, 9.81  # kg, kg m^2, m (pivot to centre of mass), m/s^2
SPEED, LOAD = 200.0, 0.7  # rad/s, N m (resisting torque)


def link(angle: float, gravity: float, speed: float, load: float = 0.0) -> Mechanism:
    """A link pinned to the ground at the origin, its centre of mass ``ARM`` out along its
    axis at ``angle``, driven at constant ``speed``, a torque ``load`` on it (one structure
    for every case, so one compile)."""
    drivers = (Driver(0, "constant_speed", jnp.asarray(speed), jnp.asarray(0.0), jnp.asarray(angle)),)
    loads = (PointLoad(0, "torque", jnp.zeros(2), jnp.array([load, 0.0])),)
    return Mechanism(
        masses=jnp.array([MASS]), inertias=jnp.array([INERTIA]), gravity=jnp.array([0.0, -gravity]),
        initial_positions=jnp.array([ARM * np.cos(angle), ARM * np.sin(angle), angle]),
        revolute_joints=(RevoluteJoint(GROUND, 0, jnp.zeros(2), jnp.array([-ARM, 0.0])),),
        prismatic_joints=(), fixed_joints=(), clearance_joints=(), drivers=drivers, loads=loads,
        initial_velocities="zero", joint_names=("pivot",))


@eqx.filter_jit
def reactions_at(mechanism: Mechanism, omega: float, t: float = 0.0):
    q = mechanism.initial_positions
    state = State(q, jnp.array([-omega * q[1], omega * q[0], omega]), jnp.zeros(0), jnp.zeros(()))
    out = evaluate(mechanism, jnp.asarray(t), state)
    return out, mechanism.joint_reactions(jnp.asarray(t), q, out.multipliers)


def test_hanging_pendulum_pin_carries_the_weight():
    out, reactions = reactions_at(link(-np.pi / 2, GRAVITY, 0.0), omega=jnp.asarray(0.0))
    np.testing.assert_allclose(out.acceleration, 0.0, atol=1e-12)  # at rest, hanging straight down
    np.testing.assert_allclose(out.driver_torques, 0.0, atol=1e-12)  # no moment to hold
    np.testing.assert_allclose(reactions[0], [0.0, MASS * GRAVITY, 0.0], atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 2.0])
def test_turning_link_is_pulled_to_its_pivot_with_m_omega2_r(angle):
    out, reactions = reactions_at(link(angle, 0.0, SPEED), omega=jnp.asarray(SPEED))
    inward = -np.array([np.cos(angle), np.sin(angle)])
    np.testing.assert_allclose(reactions[0, :2], MASS * SPEED**2 * ARM * inward, rtol=1e-12)
    assert abs(float(reactions[0, 2])) < 1e-12 * MASS * SPEED**2 * ARM**2  # no moment about a pin
    np.testing.assert_allclose(out.driver_torques, 0.0, atol=1e-12)  # constant speed, nothing to overcome


def test_driver_supplies_power_against_a_resisting_torque():
    """``D.torque`` is positive when the driver feeds power into a body turning in the
    driver's positive sense: here it balances the load, ``+LOAD``, at ``omega > 0``."""
    out, _ = reactions_at(link(0.3, 0.0, SPEED, load=-LOAD), omega=jnp.asarray(SPEED))
    assert float(out.driver_torques[0]) == pytest.approx(LOAD, rel=1e-12)
    assert float(out.driver_torques[0]) * SPEED > 0.0


def test_prismatic_reaction_is_normal_to_the_guide_and_balances_the_moment():
    """A block on a horizontal ground guide under gravity: the guide pushes it up with its
    weight; a horizontal force at height h on the block is balanced by the guide's moment."""
    height, push = 0.02, 3.0
    mechanism = Mechanism(
        masses=jnp.array([MASS]), inertias=jnp.array([INERTIA]), gravity=jnp.array([0.0, -GRAVITY]),
        initial_positions=jnp.zeros(3), revolute_joints=(),
        prismatic_joints=(PrismaticJoint(GROUND, 0, jnp.zeros(2), jnp.zeros(2), jnp.array([1.0, 0.0]),
                                         jnp.asarray(0.0)),),
        fixed_joints=(), clearance_joints=(), drivers=(),
        loads=(PointLoad(0, "force", jnp.array([0.0, height]), jnp.array([push, 0.0])),),
        initial_velocities="zero", joint_names=("guide",))
    out, reactions = reactions_at(mechanism, omega=jnp.asarray(0.0))
    reaction = reactions[0]
    assert float(out.acceleration[0]) == pytest.approx(push / MASS, rel=1e-12)
    np.testing.assert_allclose(reaction, [0.0, MASS * GRAVITY, push * height], rtol=1e-12, atol=1e-12)


def test_reactions_are_jittable_and_vmappable():
    mechanism = link(0.0, GRAVITY, SPEED)
    angles = jnp.linspace(0.0, 1.0, 3)
    q = jnp.stack([ARM * jnp.cos(angles), ARM * jnp.sin(angles), angles], axis=1)
    multipliers = jnp.ones((3, 3))
    batched = jax.jit(jax.vmap(lambda q_, m_: mechanism.joint_reactions(jnp.asarray(0.0), q_, m_)))(q, multipliers)
    assert batched.shape == (3, 1, 3)
