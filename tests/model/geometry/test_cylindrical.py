"""Slice kinematics and equivalent end forces of the cylindrical clearance joint."""

import jax
import jax.numpy as jnp
import numpy as np

from model.geometry.cylindrical import end_forces, slice_kinematics
from model.geometry.quaternion import axis_angle_quaternion, rotation_matrix

Z = jnp.array([0.0, 0.0, 1.0])
U = jnp.array([1.0, 0.0, 0.0])
SLICES = -0.02 + (jnp.arange(5) + 0.5) * 0.04 / 5


def _kinematics(centre, tilt_axis_angle, velocity=jnp.zeros(3), omega=jnp.zeros(3)):
    axis = rotation_matrix(axis_angle_quaternion(jnp.array([1.0, 0.0, 0.0]), tilt_axis_angle)) @ Z
    return slice_kinematics(centre, axis, centre, velocity, omega, jnp.zeros(3), Z, jnp.zeros(3), jnp.zeros(3),
                            jnp.zeros(3), U, 0.011, 1e-3, SLICES)


def test_aligned_journal_has_uniform_slices():
    kin = _kinematics(jnp.array([0.0, -1.2e-3, 0.0]), 0.0)
    np.testing.assert_allclose(kin.penetration, 0.2e-3, rtol=1e-12)
    np.testing.assert_allclose(kin.normal, jnp.tile(jnp.array([0.0, -1.0, 0.0]), (5, 1)), atol=1e-15)


def test_tilt_gives_linear_eccentricity_profile():
    tilt = 1e-3
    kin = _kinematics(jnp.zeros(3), tilt)
    # the axis point at z_k is displaced by z_k sin(tilt) in y (rotation about x)
    np.testing.assert_allclose(np.linalg.norm(kin.eccentricity, axis=1), np.abs(SLICES) * np.sin(tilt), rtol=1e-9)


def test_normal_rate_is_the_time_derivative_of_penetration():
    centre = jnp.array([0.3e-3, -0.9e-3, 0.0])
    velocity, omega = jnp.array([0.1, -0.2, 0.0]), jnp.array([3.0, -2.0, 50.0])
    kin = _kinematics(centre, 2e-3, velocity, omega)

    def penetration(h):
        turn = axis_angle_quaternion(omega / jnp.linalg.norm(omega), jnp.linalg.norm(omega) * h)
        axis = rotation_matrix(turn) @ rotation_matrix(axis_angle_quaternion(jnp.array([1.0, 0, 0]), 2e-3)) @ Z
        moved = centre + velocity * h
        return slice_kinematics(moved, axis, moved, velocity, omega, jnp.zeros(3), Z, jnp.zeros(3), jnp.zeros(3),
                                jnp.zeros(3), U, 0.011, 1e-3, SLICES).penetration

    h = 1e-7
    numeric = (penetration(h) - penetration(-h)) / (2 * h)
    np.testing.assert_allclose(kin.normal_rate, numeric, rtol=1e-6, atol=1e-9)


def test_gradients_finite_at_zero_eccentricity_and_tilt():
    def total(centre, tilt):
        return jnp.sum(_kinematics(centre, tilt).penetration) + jnp.sum(_kinematics(centre, tilt).normal)

    grads = jax.grad(total, argnums=(0, 1))(jnp.zeros(3), 0.0)
    assert all(np.all(np.isfinite(g)) for g in grads)


def test_end_forces_have_the_slice_resultant_and_moment():
    forces = jnp.array(np.random.default_rng(0).normal(size=(5, 3))).at[:, 2].set(0.0)
    end_a, end_b = end_forces(forces, SLICES, 0.04)
    np.testing.assert_allclose(end_a + end_b, forces.sum(0), atol=1e-12)
    moment = jnp.sum(jnp.cross(SLICES[:, None] * Z, forces), axis=0)
    np.testing.assert_allclose(jnp.cross(-0.02 * Z, end_a) + jnp.cross(0.02 * Z, end_b), moment, atol=1e-12)
