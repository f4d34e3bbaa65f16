"""The worn bore's interpolated depth profile (model/geometry/worn.py)."""

import jax
import jax.numpy as jnp
import numpy as np

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
