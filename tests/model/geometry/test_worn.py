"""The worn bore's interpolated depth profile (model/geometry/worn.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.geometry.worn import WornBore, bin_angles


def _profile(resolution: int = 64) -> WornBore:
    angles = bin_angles(resolution)
    return WornBore(1e-6 * (1.0 + jnp.cos(angles) + 0.3 * jnp.sin(3.0 * angles)))


def test_interpolant_passes_through_the_nodes_and_is_periodic():
    bore = _profile()
    angles = bin_angles(bore.resolution)
    at_nodes = jax.vmap(bore.at)(angles)
    np.testing.assert_allclose(at_nodes, bore.depth, rtol=0, atol=1e-21)
    np.testing.assert_allclose(jax.vmap(bore.at)(angles + 2.0 * jnp.pi), bore.depth, rtol=0, atol=1e-19)
    np.testing.assert_allclose(jax.vmap(bore.at)(angles - 4.0 * jnp.pi), bore.depth, rtol=0, atol=1e-19)


def test_interpolant_converges_to_a_smooth_profile_at_third_order():
    """Catmull-Rom interpolation of a smooth function: error O(spacing^3)."""

    def error(resolution):
        bore = _profile(resolution)
        phi = jnp.linspace(0.0, 2.0 * jnp.pi, 1001)
        exact = 1e-6 * (1.0 + jnp.cos(phi) + 0.3 * jnp.sin(3.0 * phi))
        return float(jnp.max(jnp.abs(jax.vmap(bore.at)(phi) - exact)))

    ratio = error(64) / error(128)
    assert 7.0 < ratio < 17.0, ratio  # 8 for third order, 16 for fourth


def test_slope_is_continuous_across_nodes():
    bore = _profile(16)
    slope = jax.grad(bore.at)
    spacing = 2.0 * jnp.pi / 16
    for node in (3, 7):
        left, right = slope(node * spacing - 1e-9), slope(node * spacing + 1e-9)
        assert abs(float(left - right)) < 1e-6 * abs(float(left)) + 1e-12


def test_volume_is_the_integral_of_the_interpolant():
    bore = _profile(32)
    phi = jnp.linspace(0.0, 2.0 * jnp.pi, 32 * 64, endpoint=False)
    integral = jnp.mean(jax.vmap(bore.at)(phi)) * 2.0 * jnp.pi * 0.01 * 0.02  # periodic rectangle rule
    np.testing.assert_allclose(bore.volume(0.01, 0.02), integral, rtol=1e-12)


def test_new_bushing_has_zero_depth_everywhere():
    bore = WornBore(jnp.zeros(90))
    assert all(float(bore.at(angle)) == 0.0 for angle in (0.0, 0.3, 2.0, -1.0, 7.5))


def test_journal_rests_on_the_edges_of_a_narrow_groove():
    """A groove one node wide cannot take the rigid journal in: the penetration is held by
    the neighbouring nodes, the rigid circle's reach there (Delta = one node spacing)."""
    count, radius, clearance, distance = 720, 0.01, 5e-4, 5.1e-4  # 10 um in contact
    depth = jnp.zeros(count).at[90].set(50e-6)  # at 45 deg
    bore = WornBore(depth)
    penetration, angle = bore.contact(distance, jnp.pi / 4, radius, clearance)
    spacing = 2 * np.pi / count
    journal = radius - clearance
    reach = distance * np.cos(spacing) + np.sqrt(journal**2 - (distance * np.sin(spacing)) ** 2)
    np.testing.assert_allclose(penetration, reach - radius, rtol=1e-9)
    assert abs(float(angle) - np.pi / 4) == pytest.approx(spacing)
    # a wide, shallow wear scar (smoother than the journal's curvature) is followed along the line of centres
    wide = WornBore(20e-6 * jnp.exp(-((bin_angles(count) - jnp.pi / 4) / 0.5) ** 2))
    penetration, angle = wide.contact(distance, jnp.pi / 4, radius, clearance)
    np.testing.assert_allclose(penetration, distance - clearance - 20e-6, rtol=1e-9)
    assert float(angle) == pytest.approx(np.pi / 4)
