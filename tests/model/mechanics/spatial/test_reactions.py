"""Spatial ideal-joint reactions and driver torques from the multipliers: a hanging link's
pin carries its weight, a link turning at constant speed about a principal axis pulls its
pivot with m omega^2 r and no moment, a driver against a resisting torque supplies it."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

from model.geometry.quaternion import axis_angle_quaternion
from model.mechanics.spatial import GROUND, Load, SpatialDriver, SpatialJoint, SpatialMechanism, SpatialState, evaluate

MASS, ARM, GRAVITY = 0.3, 0.05, 9.81  # kg, m (pivot to centre of mass), m/s^2
INERTIA = (2.0e-5, 1.0e-4, 1.1e-4)  # kg m^2, principal, body frame
SPEED, LOAD = 200.0, 0.7  # rad/s, N m
Z = jnp.array([0.0, 0.0, 1.0])


def link(kind: str, angle: float, gravity: float, speed: float | None = None, load: float = 0.0) -> SpatialMechanism:
    """A link on an ideal ``kind`` joint at the ground's origin, turned by ``angle`` about
    the ground z axis, its centre of mass ``ARM`` out along its x axis."""
    turn = axis_angle_quaternion(Z, angle)
    joint = SpatialJoint(kind, GROUND, 0, jnp.zeros(3), jnp.array([-ARM, 0.0, 0.0]), Z, Z,
                         jnp.array([np.cos(angle), np.sin(angle), 0.0]), jnp.array([1.0, 0.0, 0.0]),
                         jnp.asarray(turn))
    drivers = () if speed is None else (SpatialDriver(0, "constant_speed", jnp.asarray(speed), jnp.asarray(0.0),
                                                      jnp.asarray(0.0)),)  # speed None: a spherical joint
    return SpatialMechanism(
        masses=jnp.array([MASS]), inertias=jnp.diag(jnp.array(INERTIA))[None], gravity=jnp.array([0.0, -gravity, 0.0]),
        initial_positions=jnp.concatenate([jnp.array([ARM * np.cos(angle), ARM * np.sin(angle), 0.0]), turn]),
        joints=(joint,), cylindrical_joints=(), spherical_joints=(),
        loads=(Load(0, "torque", jnp.zeros(3), -load * Z, jnp.asarray(1.0)),), drivers=drivers,
        initial_velocities="zero", body_names=("link",), joint_names=("pivot",))


@eqx.filter_jit
def at(mechanism: SpatialMechanism, omega: float):
    x = mechanism.initial_positions
    v = jnp.concatenate([jnp.cross(omega * Z, x[:3]), omega * Z])
    out = evaluate(mechanism, jnp.asarray(0.0), SpatialState(x, v, jnp.zeros(0), jnp.zeros(())))
    return out, mechanism.joint_reactions(jnp.asarray(0.0), x, out.multipliers)


@pytest.mark.parametrize("kind, speed", [("revolute", 0.0), ("spherical", None)])
def test_hanging_link_pin_carries_the_weight(kind, speed):
    out, reactions = at(link(kind, -np.pi / 2, GRAVITY, speed), omega=jnp.asarray(0.0))
    np.testing.assert_allclose(out.acceleration, 0.0, atol=1e-12)
    np.testing.assert_allclose(reactions[0], [0.0, MASS * GRAVITY, 0.0, 0.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 2.0])
def test_turning_link_is_pulled_to_its_pivot_with_m_omega2_r(angle):
    out, reactions = at(link("revolute", angle, 0.0, speed=SPEED), omega=jnp.asarray(SPEED))
    inward = -np.array([np.cos(angle), np.sin(angle), 0.0])
    np.testing.assert_allclose(reactions[0, :3], MASS * SPEED**2 * ARM * inward, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(reactions[0, 3:], 0.0, atol=1e-10)  # principal axis: no gyroscopic moment
    np.testing.assert_allclose(out.driver_torques, 0.0, atol=1e-10)


def test_driver_supplies_power_against_a_resisting_torque():
    out, reactions = at(link("revolute", 0.3, 0.0, speed=SPEED, load=LOAD), omega=jnp.asarray(SPEED))
    assert float(out.driver_torques[0]) == pytest.approx(LOAD, rel=1e-10)
    assert float(out.driver_torques[0]) * SPEED > 0.0
    # the pin itself takes no moment about the axis: the driver carries the load torque
    assert abs(float(reactions[0, 5])) < 1e-10
