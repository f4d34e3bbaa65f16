"""Archard wear law and the Hertz pressure over the bushing's angle bins (model/contact/wear.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.contact.wear import ArchardWear, bin_pressures, hertz_half_width_squared
from model.geometry.worn import WornBore

E_STAR = 1.137e11  # Pa, steel on steel
R, C, L = 0.01, 1e-4, 0.02  # m


def _half_width(force):
    return float(jnp.sqrt(hertz_half_width_squared(force, L, E_STAR, R, C)))


def test_half_width_is_johnsons_line_contact():
    """b = sqrt(4 P R*/(pi E*)), P = F/L, 1/R* = 1/R_j - 1/R_b (Johnson 1985, eq. 4.43)."""
    inverse_radius = 1.0 / (R - C) - 1.0 / R
    expected = np.sqrt(4.0 * (1000.0 / L) / (np.pi * E_STAR * inverse_radius))
    np.testing.assert_allclose(_half_width(1000.0), expected, rtol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1.234, -2.9, 3.14159])
@pytest.mark.parametrize("resolution", [36, 720])
def test_bins_carry_exactly_the_force(angle, resolution):
    """sum_k p_k R (2 pi/N) L = F at any resolution, even with the contact narrower than a bin."""
    force = 800.0
    pressures = bin_pressures(force, angle, hertz_half_width_squared(force, L, E_STAR, R, C), R, L, resolution)
    assert float(jnp.min(pressures)) >= 0.0
    np.testing.assert_allclose(jnp.sum(pressures) * R * 2.0 * jnp.pi / resolution * L, force, rtol=1e-13)


def test_fine_bins_sample_the_hertz_ellipse():
    """Bins much narrower than the contact: the bin pressure is p0 sqrt(1 - x^2/b^2) at its centre."""
    force, resolution = 1000.0, 7200
    b = _half_width(force)
    p0 = 2.0 * force / (np.pi * b * L)
    pressures = np.asarray(bin_pressures(force, 0.0, b**2, R, L, resolution))
    x = R * np.asarray(jnp.mod(jnp.arange(resolution) * 2 * jnp.pi / resolution + jnp.pi, 2 * jnp.pi) - jnp.pi)
    inside = np.abs(x) < 0.9 * b
    np.testing.assert_allclose(pressures[inside], p0 * np.sqrt(1.0 - (x[inside] / b) ** 2), rtol=2e-4)
    assert np.all(pressures[np.abs(x) > b + R * 2 * np.pi / resolution] == 0.0)


def test_depth_rate_is_archard_and_differentiable_at_zero_force():
    wear = ArchardWear(coefficient=jnp.asarray(8e-14), length=jnp.asarray(L), start_time=jnp.asarray(0.0), joint=0,
                       resolution=360)
    rate = wear.depth_rate(500.0, -2.0, 0.5, E_STAR, R, C)
    # the worn volume rate is k_w F |v|
    np.testing.assert_allclose(WornBore(rate).volume(R, L), 8e-14 * 500.0 * 2.0, rtol=1e-12)
    gradient = jax.grad(lambda f, v: jnp.sum(wear.depth_rate(f, v, 0.5, E_STAR, R, C)), argnums=(0, 1))(0.0, 1.0)
    assert all(np.isfinite(float(g)) for g in gradient)
    np.testing.assert_allclose(gradient[0] * R * 2 * np.pi / 360 * L, 8e-14, rtol=1e-12)
