"""Lubricated joint forces: derivatives, grad-safety, transformations (jit/vmap) and the
steady state of a loaded journal."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

import model  # noqa: F401  (float64)
from model.lubrication import BEARING_MODELS, Lubrication, film_motion

MODELS = tuple(BEARING_MODELS)
RADIUS = 0.01


def force_vector(lubrication, eccentricity, velocity, clearance, journal_omega=250.0):
    radial, tangential = lubrication.film_force(eccentricity, velocity, journal_omega, 0.0, RADIUS, clearance)
    motion = film_motion(eccentricity, velocity, journal_omega, 0.0, clearance)
    return radial * motion.normal + tangential * motion.tangent


@pytest.mark.parametrize("bearing", MODELS)
def test_forward_derivatives_match_central_differences(bearing):
    eccentricity, velocity = jnp.array([1.2e-4, -2.0e-4]), jnp.array([0.03, 0.05])

    def force(viscosity, clearance, length):
        lubrication = Lubrication(bearing, viscosity=viscosity, length=length)
        return force_vector(lubrication, eccentricity, velocity, clearance)

    point = (0.4, 4e-4, 0.02)
    for argument in range(3):
        tangent = [0.0, 0.0, 0.0]
        tangent[argument] = 1.0
        _, forward = jax.jvp(force, point, tuple(tangent))
        step = 1e-5 * point[argument]
        plus = list(point)
        minus = list(point)
        plus[argument] += step
        minus[argument] -= step
        central = (force(*plus) - force(*minus)) / (2 * step)
        np.testing.assert_allclose(forward, central, rtol=1e-6, atol=1e-9 * float(jnp.abs(central).max()))


@pytest.mark.parametrize("bearing", MODELS)
def test_gradients_finite_at_the_centre_and_at_rest(bearing):
    lubrication = Lubrication(bearing, viscosity=0.4, length=0.02)

    def magnitude(eccentricity, velocity):
        return jnp.sum(force_vector(lubrication, eccentricity, velocity, 5e-4) ** 2)

    for eccentricity, velocity in [(jnp.zeros(2), jnp.array([0.1, 0.0])), (jnp.zeros(2), jnp.zeros(2)),
                                   (jnp.array([2e-4, 0.0]), jnp.zeros(2))]:
        gradients = jax.grad(magnitude, argnums=(0, 1))(eccentricity, velocity)
        assert all(np.all(np.isfinite(g)) for g in gradients)
    at_rest = force_vector(lubrication, jnp.zeros(2), jnp.zeros(2), 5e-4, 0.0)
    np.testing.assert_array_equal(at_rest, 0.0)


def test_vmap_over_viscosity_is_linear():
    eccentricity, velocity = jnp.array([1e-4, 2e-4]), jnp.array([0.1, -0.02])
    force = lambda mu: force_vector(Lubrication("finite_bearing", mu, 0.02), eccentricity, velocity, 5e-4)  # noqa: E731
    forces = jax.jit(jax.vmap(force))
    values = forces(jnp.array([0.1, 0.2, 0.4]))
    np.testing.assert_allclose(values[2], 4 * values[0], rtol=1e-12)


def steady_rotation_force(lubrication, eps, clearance, omega):
    """Force at rest (``de/dt = 0``) with ``e`` along +x: ``(F_x, F_y)``."""
    return force_vector(lubrication, jnp.array([eps * clearance, 0.0]), jnp.zeros(2), clearance, omega)


@pytest.mark.slow
@pytest.mark.parametrize("bearing", ["short_bearing", "finite_bearing"])
def test_loaded_journal_settles_at_the_static_equilibrium(bearing):
    """A journal (mass m, speed omega) under a constant load W along -y: from the centre it
    spirals to the static solution's eccentricity ratio and attitude angle."""
    clearance, omega, mass = 5e-5, 300.0, 0.5
    lubrication = Lubrication(bearing, viscosity=0.05, length=0.01, transition_onset=0.99, transition_cap=0.995)
    target_eps = 0.8
    load = float(jnp.linalg.norm(steady_rotation_force(lubrication, target_eps, clearance, omega)))
    # Static solution, independently: |F(eps)| = W by root finding, attitude from the components.
    def magnitude(eps):
        return float(jnp.linalg.norm(steady_rotation_force(lubrication, eps, clearance, omega))) - load

    static_eps = brentq(magnitude, 0.3, 0.95, xtol=1e-12)
    fx, fy = np.asarray(steady_rotation_force(lubrication, static_eps, clearance, omega))
    static_attitude = np.arctan2(abs(fy), abs(fx))  # angle between load line and line of centres

    def field(t, y, args):
        e, v = y[:2], y[2:]
        acceleration = (force_vector(lubrication, e, v, clearance, omega) + jnp.array([0.0, -load])) / mass
        return jnp.concatenate([v, acceleration])

    solution = diffrax.diffeqsolve(
        diffrax.ODETerm(field), diffrax.Kvaerno5(), 0.0, 0.5, 1e-6, jnp.array([1e-7, 0.0, 0.0, 0.0]),
        stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-12), max_steps=100_000,
    )
    final = np.asarray(solution.ys[-1])
    eps = np.hypot(*final[:2]) / clearance
    load_direction = np.array([0.0, -1.0])
    attitude = np.arccos(np.dot(final[:2], load_direction) / np.hypot(*final[:2]))
    assert eps == pytest.approx(static_eps, abs=1e-4)
    assert np.degrees(attitude) == pytest.approx(np.degrees(static_attitude), abs=0.05)
    assert np.hypot(*final[2:]) < 1e-6 * omega * clearance
