"""The hand-over from film to dry contact: no jump, no kink, bounded at the wall."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.lubrication import Lubrication, saturated_eccentricity

ONSET, CAP = 0.9, 0.95
CLEARANCE, RADIUS = 5e-4, 0.01


def test_saturation_is_identity_below_onset_and_bounded_above():
    eps = jnp.linspace(0.0, 3.0, 3001)
    eps_h = jax.vmap(saturated_eccentricity, in_axes=(0, None, None))(eps, ONSET, CAP)
    below = eps <= ONSET
    np.testing.assert_array_equal(eps_h[below], eps[below])
    assert float(eps_h.max()) <= CAP  # reached only in floating point, far beyond the wall
    assert np.all(np.diff(np.asarray(eps_h)[eps <= 1.0]) > 0)  # strictly increasing up to the wall
    # beyond the wall tanh is 1 to within an ulp, and XLA's tanh is monotone only to one ulp
    assert np.all(np.diff(np.asarray(eps_h)) >= -np.spacing(CAP))


def test_saturation_slope_and_curvature_continuous_at_onset():
    slope = jax.grad(saturated_eccentricity)
    curvature = jax.grad(slope)
    for derivative, expected in ((slope, 1.0), (curvature, 0.0)):
        left = float(derivative(ONSET - 1e-9, ONSET, CAP))
        right = float(derivative(ONSET + 1e-9, ONSET, CAP))
        assert left == pytest.approx(expected, abs=1e-6) and right == pytest.approx(expected, abs=1e-6)


def joint_normal_force(eps, eps_dot, lubrication, law):
    """Total F_n (engine convention) along the load line for a journal at eps, moving radially."""
    eccentricity = jnp.stack([eps * CLEARANCE, 0.0])
    velocity = jnp.stack([eps_dot * CLEARANCE, 0.0])
    film = lubrication.film_force(eccentricity, velocity, 200.0, 0.0, RADIUS, CLEARANCE)
    dry = model.normal_force(law, (eps - 1.0) * CLEARANCE, eps_dot * CLEARANCE, 0.5)
    return lubrication.joint_forces(film, dry, 0.0)[0]


@pytest.mark.slow  # 4 CPU s, most of it compiling
@pytest.mark.parametrize("bearing", ["short_bearing", "long_bearing", "finite_bearing"])
def test_total_force_continuous_and_bounded_through_the_wall(bearing):
    lubrication = Lubrication(bearing, viscosity=0.4, length=0.02, transition_onset=ONSET, transition_cap=CAP)
    law = model.ContactLaw("lankarani_nikravesh", stiffness=6.6e10)
    force = jax.jit(jax.vmap(lambda e: joint_normal_force(e, 2.0, lubrication, law)))
    eps = jnp.linspace(0.5, 1.04, 10801)
    values = np.asarray(force(eps))
    assert np.all(np.isfinite(values))
    jumps = np.abs(np.diff(values))
    typical = np.abs(values).max() * (eps[1] - eps[0]) * 1e4  # a slope of 1e4 x the largest value per unit eps
    assert jumps.max() < typical
    film_at_wall = float(force(jnp.array([1.0]))[0])
    film_cap = float(force(jnp.array([CAP]))[0])
    assert abs(film_at_wall) < 3 * abs(film_cap)  # levelled off, not singular
    slope = jax.grad(lambda e: joint_normal_force(e, 2.0, lubrication, law))
    slopes = jax.vmap(slope)(jnp.array([ONSET - 1e-7, ONSET + 1e-7]))
    assert float(slopes[0]) == pytest.approx(float(slopes[1]), rel=1e-4)
