"""Ideal joints and drivers on small mechanisms with closed-form answers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.constraints import constraint_jacobian, constraints
from model.mechanics.mechanism import GROUND, Driver, FixedJoint, Mechanism, PrismaticJoint, RevoluteJoint

a = jnp.asarray


def bar(revolute=(), prismatic=(), fixed=(), drivers=(), gravity=(0.0, 0.0), positions=(0.1, 0.0, 0.0)):
    """One bar of 0.2 m (mass 1 kg, I = 0.01 kg m^2) whose left end is at the origin."""
    return Mechanism(
        masses=a([1.0]), inertias=a([0.01]), gravity=a(gravity), initial_positions=a(positions),
        revolute_joints=tuple(revolute), prismatic_joints=tuple(prismatic), fixed_joints=tuple(fixed),
        clearance_joints=(), drivers=tuple(drivers), body_names=("bar",),
        driver_names=tuple(f"d{i}" for i in range(len(drivers))),
    )


PIVOT = RevoluteJoint(GROUND, 0, a([0.0, 0.0]), a([-0.1, 0.0]))


@pytest.mark.slow  # 4 CPU s, most of it compiling
def test_constant_torque_spins_a_pivoted_bar():
    torque = 0.5
    mechanism = bar(revolute=[PIVOT], drivers=[Driver(0, "constant_torque", a(0.0), a(torque), a(0.0))])
    settings = model.SolverSettings(t_end=0.05, output_interval=0.01, rtol=1e-10, atol=1e-12)
    trajectory = model.simulate(mechanism, settings)
    pivot_inertia = 0.01 + 1.0 * 0.1**2
    expected = 0.5 * torque / pivot_inertia * trajectory.t**2
    np.testing.assert_allclose(trajectory.q[:, 2], expected, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(trajectory.driver_torques[:, 0], torque)


def test_pendulum_energy_and_small_period():
    """A compound pendulum released at 5 deg: energy is conserved and the period is
    2 pi sqrt(I_p / (m g d)) to within the small-angle correction."""
    angle = np.radians(-90 + 5)
    position = (0.1 * np.cos(angle), 0.1 * np.sin(angle), angle)
    mechanism = bar(revolute=[PIVOT], gravity=(0.0, -9.81), positions=position)
    period = 2 * np.pi * np.sqrt((0.01 + 0.1**2) / (9.81 * 0.1))
    settings = model.SolverSettings(t_end=float(period), output_interval=float(period) / 400, rtol=1e-10, atol=1e-12)
    trajectory = model.simulate(mechanism, settings)
    height = trajectory.q[:, 1]
    energy = jax.vmap(lambda qd: model.kinetic_energy(mechanism, qd))(trajectory.qd) + 9.81 * height
    assert float(jnp.max(jnp.abs(energy - energy[0]))) < 1e-9
    # back at the release angle after one period (5 deg: period longer by ~0.05 %)
    assert float(trajectory.q[-1, 2]) == pytest.approx(angle, abs=np.radians(0.05))
    assert float(jnp.min(trajectory.q[:, 2])) == pytest.approx(np.radians(-95), abs=1e-6)


def test_prismatic_joint_keeps_line_and_angle():
    guide = PrismaticJoint(GROUND, 0, a([0.0, 0.0]), a([0.0, 0.0]), a([np.sqrt(0.5), np.sqrt(0.5)]), a(0.3))
    mechanism = bar(prismatic=[guide], gravity=(0.0, -9.81), positions=(0.0, 0.0, 0.3))
    settings = model.SolverSettings(t_end=0.1, output_interval=0.01, rtol=1e-10, atol=1e-12)
    trajectory = model.simulate(mechanism, settings)
    # slides down a 45 deg incline: acceleration g sin(45) along it
    travelled = -(trajectory.q[:, 0] + trajectory.q[:, 1]) / np.sqrt(2)
    np.testing.assert_allclose(travelled, 0.5 * 9.81 * np.sqrt(0.5) * trajectory.t**2, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(trajectory.q[:, 0], trajectory.q[:, 1], atol=1e-10)
    np.testing.assert_allclose(trajectory.q[:, 2], 0.3, atol=1e-10)


def test_fixed_joint_holds_under_gravity():
    weld = FixedJoint(GROUND, 0, a([0.0, 0.0]), a([-0.1, 0.0]), a(0.0))
    mechanism = bar(fixed=[weld], gravity=(0.0, -9.81))
    settings = model.SolverSettings(t_end=0.1, output_interval=0.01)
    trajectory = model.simulate(mechanism, settings)
    np.testing.assert_allclose(trajectory.q, np.tile([0.1, 0.0, 0.0], (trajectory.t.size, 1)), atol=1e-12)


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_speed_driver_and_jacobian_from_autodiff():
    omega = 10.0
    mechanism = bar(revolute=[PIVOT], drivers=[Driver(0, "constant_speed", a(omega), a(0.0), a(0.0))])
    q = a([0.1, 0.0, 0.0])
    jacobian = constraint_jacobian(mechanism, q, a(0.0))
    # revolute rows d(P_j - P_i)/dq = [I, d(R s)/dtheta]; the driver row picks theta
    np.testing.assert_allclose(jacobian, [[1, 0, 0], [0, 1, -0.1], [0, 0, 1]], atol=1e-15)
    assert float(constraints(mechanism, q, a(0.1))[-1]) == pytest.approx(-omega * 0.1)
    state = model.initial_state(mechanism)
    np.testing.assert_allclose(state.qd, [0.0, omega * 0.1, omega], atol=1e-12)
    settings = model.SolverSettings(t_end=0.2, output_interval=0.05)
    trajectory = model.simulate(mechanism, settings)
    np.testing.assert_allclose(trajectory.q[:, 2], omega * trajectory.t, atol=1e-9)
    # torque to spin at constant speed with no load is zero
    np.testing.assert_allclose(trajectory.driver_torques[:, 0], 0.0, atol=1e-9)
