"""The clearance-kinematics worked example (docs/reference.md), value by value to 4 significant digits."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model import clearance_kinematics

MM = 1e-3
BEARING_RADIUS = 20.0 * MM
JOURNAL_RADIUS = 19.8 * MM
CLEARANCE = BEARING_RADIUS - JOURNAL_RADIUS


def kinematics(journal_centre_mm, journal_velocity=(0.0, 0.0)):
    return clearance_kinematics(
        journal_centre=jnp.asarray(journal_centre_mm) * MM,
        journal_velocity=jnp.asarray(journal_velocity),
        journal_omega=jnp.asarray(0.0),
        bearing_centre=jnp.zeros(2),
        bearing_velocity=jnp.zeros(2),
        bearing_omega=jnp.asarray(0.0),
        bearing_radius=jnp.asarray(BEARING_RADIUS),
        clearance=jnp.asarray(CLEARANCE),
    )


def test_no_contact_case():
    k = kinematics([0.15, 0.10])
    assert float(k.distance) / MM == pytest.approx(0.1803, rel=5e-4)
    assert float(k.penetration) < 0.0


def test_contact_case():
    k = kinematics([0.20, 0.12], journal_velocity=(0.5, 0.0))
    assert float(k.distance) / MM == pytest.approx(0.2332, rel=5e-4)
    np.testing.assert_allclose(k.normal, [0.8575, 0.5145], rtol=5e-4)
    assert float(k.penetration) / MM == pytest.approx(0.0332, rel=5e-3)  # 0.03324 mm
    assert float(k.penetration) > 0.0
    np.testing.assert_allclose(k.tangent, [-0.5145, 0.8575], rtol=5e-4)
    assert float(k.normal_rate) == pytest.approx(0.4288, rel=5e-4)
    assert float(k.slip_velocity) == pytest.approx(-0.2573, rel=5e-4)


def test_contact_points_on_line_of_centres():
    k = kinematics([0.20, 0.12])
    np.testing.assert_allclose(k.bearing_point, BEARING_RADIUS * k.normal, rtol=1e-12)
    np.testing.assert_allclose(k.journal_point, k.eccentricity + JOURNAL_RADIUS * k.normal, rtol=1e-12)


def test_grad_finite_at_zero_eccentricity():
    def scalar(centre):
        k = kinematics(centre / MM, journal_velocity=(0.3, -0.2))
        return k.penetration + k.normal_rate + k.slip_velocity + k.bearing_point.sum()

    gradient = jax.grad(scalar)(jnp.zeros(2))
    assert np.all(np.isfinite(gradient))


def test_rotate_is_the_rotation_matrix_product():
    from model.geometry.planar import perp, rotate, rotation

    angles, vectors = jnp.linspace(-4.0, 4.0, 7), jnp.asarray(np.random.default_rng(5).normal(size=(7, 2)))
    expected = jnp.einsum("nij,nj->ni", jax.vmap(rotation)(angles), vectors)
    np.testing.assert_allclose(jax.jit(jax.vmap(rotate))(angles, vectors), expected, rtol=1e-14, atol=1e-15)
    theta, vector = angles[2], vectors[2]
    rotated = expected[2]
    # d(R v)/d theta = perp(R v), d2(R v)/d theta2 = -R v, d(R v)/d v = R; both modes
    np.testing.assert_allclose(jax.jacfwd(rotate)(theta, vector), perp(rotated), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jax.jacrev(rotate)(theta, vector), perp(rotated), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jax.jacfwd(jax.jacfwd(rotate))(theta, vector), -rotated, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jax.jacrev(jax.jacfwd(rotate))(theta, vector), -rotated, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jax.jacrev(rotate, argnums=1)(theta, vector), rotation(theta), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jax.jacfwd(rotate, argnums=1)(theta, vector), rotation(theta), rtol=1e-14, atol=1e-15)
    # mixed: d/d theta of d(R v)/d v = perp applied to R's columns
    mixed = jax.jacfwd(jax.jacrev(rotate, argnums=1), argnums=0)(theta, vector)
    np.testing.assert_allclose(mixed, jax.jacfwd(rotation)(theta), rtol=1e-14, atol=1e-15)
