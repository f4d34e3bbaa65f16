"""The short- and long-bearing closed forms against independent formulations: quadrature of
their own pressure fields, a finite-difference solve of the long-bearing equation, and the
Reynolds solver in the short and long limits."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import quad

import model  # noqa: F401  (float64)
from model.lubrication import FilmMotion, long_bearing_force, short_bearing_force, solve_reynolds

NO_DIRECTION = jnp.zeros(2)
MOTIONS = [(0.0, 0.3, 0.0), (0.5, 0.0, 120.0), (0.7, -40.0, 300.0), (0.85, 25.0, -80.0), (0.3, 60.0, 0.0)]


def motion(eps, eps_dot, omega_bar):
    return FilmMotion(jnp.asarray(eps), jnp.asarray(eps_dot), jnp.asarray(eps * omega_bar), NO_DIRECTION, NO_DIRECTION)


def half_film_integrals(z_integrated_pressure, radius):
    """``-R int_pi^2pi P(psi) (cos, sin) dpsi`` by adaptive quadrature."""
    def component(direction):
        integrand = lambda psi: -radius * z_integrated_pressure(psi) * direction(psi)  # noqa: E731
        return quad(integrand, np.pi, 2 * np.pi, epsabs=1e-13, epsrel=1e-12)[0]

    return component(np.cos), component(np.sin)


@pytest.mark.parametrize("eps, eps_dot, omega_bar", MOTIONS)
def test_short_bearing_integrates_its_pressure(eps, eps_dot, omega_bar):
    mu, radius, clearance, length = 0.4, 0.01, 5e-4, 0.02
    # Axially integrated Ocvirk pressure: -(mu L^3 / (2 c^2 h^3)) (eps w sin - 2 eps_dot cos).
    pressure = lambda psi: -(mu * length**3 / (2 * clearance**2 * (1 - eps * np.cos(psi)) ** 3)) * (  # noqa: E731
        eps * omega_bar * np.sin(psi) - 2 * eps_dot * np.cos(psi)
    )
    expected = half_film_integrals(pressure, radius)
    got = short_bearing_force(motion(eps, eps_dot, omega_bar), mu, radius, clearance, length)
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-9, atol=1e-12 * max(map(abs, expected)))


def long_bearing_half_film_fd(eps, eps_dot, omega_bar, mu, radius, clearance, length, nodes=4001):
    """``d/dpsi(h^3 dp/dpsi) = 6 mu R^2/c^2 (eps w sin - 2 eps_dot cos)`` on ``[pi, 2 pi]``, ``p = 0``
    at both ends: second-order finite differences, dense solve."""
    psi = np.linspace(np.pi, 2 * np.pi, nodes)
    d = psi[1] - psi[0]
    h3 = lambda angle: (1 - eps * np.cos(angle)) ** 3  # noqa: E731
    east, west = h3(psi[1:-1] + d / 2) / d**2, h3(psi[1:-1] - d / 2) / d**2
    matrix = np.diag(-(east + west)) + np.diag(east[:-1], 1) + np.diag(west[1:], -1)
    rhs = 6 * mu * radius**2 / clearance**2 * (eps * omega_bar * np.sin(psi[1:-1]) - 2 * eps_dot * np.cos(psi[1:-1]))
    pressure = np.zeros_like(psi)
    pressure[1:-1] = np.linalg.solve(matrix, rhs)
    weights = np.full(nodes, d)
    weights[[0, -1]] = d / 2
    return tuple(-radius * length * np.sum(weights * pressure * f(psi)) for f in (np.cos, np.sin))


@pytest.mark.slow  # 8 CPU s, most of it compiling
@pytest.mark.parametrize("eps, eps_dot, omega_bar", MOTIONS)
def test_long_bearing_solves_the_half_film_problem(eps, eps_dot, omega_bar):
    args = (0.4, 0.01, 5e-4, 0.05)
    expected = long_bearing_half_film_fd(eps, eps_dot, omega_bar, *args)
    got = long_bearing_force(motion(eps, eps_dot, omega_bar), *args)
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-5, atol=1e-6 * max(map(abs, expected)))


def reynolds_force(eps, length_ratio, cavitation):
    """Pure rotation (beta = pi/2), mu = R = c = 1, w = 1: F = 3 L eps G with L = 2 lambda."""
    coefficients = solve_reynolds(eps, jnp.pi / 2, length_ratio, cavitation=cavitation).force_coefficients
    return 3.0 * 2.0 * length_ratio * eps * coefficients


def relative_error(closed, solved):
    return np.hypot(*(np.asarray(closed) - solved)) / np.hypot(*solved)


def test_short_bearing_is_the_small_length_limit_of_the_reynolds_solution():
    """Error of the closed form against the Reynolds (Swift-Stieber) solution; in the short
    limit the cavitation conditions coincide. It holds to 5 % for L/D <= 1/8 up to eps = 0.75
    and falls as (L/D)^2."""
    solve = jax.jit(jax.vmap(reynolds_force, in_axes=(0, None, None)), static_argnums=2)
    eps = jnp.array([0.1, 0.4, 0.75])
    errors = {}
    for length_ratio in (0.125, 0.25):
        forces = solve(eps, length_ratio, "reynolds")
        closed = [short_bearing_force(motion(e, 0.0, 1.0), 1.0, 1.0, 1.0, 2 * length_ratio) for e in eps]
        errors[length_ratio] = np.array([relative_error(c, f) for c, f in zip(closed, forces)])
    assert np.all(errors[0.125] < 0.05)
    assert np.all(errors[0.25] / errors[0.125] > 3.0)  # (1/4 / 1/8)^2 = 4: second order in L/D


def test_long_bearing_is_the_large_length_limit_of_the_reynolds_solution():
    """Half-Sommerfeld (Gumbel) clipping, pure rotation, mid-plane pressure of a long bearing."""
    for eps in (0.3, 0.7):
        solution = solve_reynolds(eps, jnp.pi / 2, 40.0, cavitation="half_sommerfeld", n_circumferential=240, n_axial=8)
        mid_plane = np.asarray(solution.pressure[:, 0])
        psi = np.arange(240) * 2 * np.pi / 240
        # per unit length (L = 1, mu = R = c = 1, w = 1): F = -6 M int P (cos, sin) dpsi
        sums = np.array([np.sum(mid_plane * np.cos(psi)), np.sum(mid_plane * np.sin(psi))])
        per_length = -6 * eps * (2 * np.pi / 240) * sums
        closed = np.array(long_bearing_force(motion(eps, 0.0, 1.0), 1.0, 1.0, 1.0, 1.0))
        assert relative_error(closed, per_length) < 2e-3


@pytest.mark.parametrize("force_law", [short_bearing_force, long_bearing_force])
def test_pure_squeeze_dissipates(force_law):
    """No rotation, journal moving along the line of centres: the film force opposes the motion."""
    for eps in np.linspace(0.0, 0.95, 7):
        for eps_dot in (-50.0, -1.0, 1.0, 50.0):
            radial, _ = force_law(motion(eps, eps_dot, 0.0), 0.4, 0.01, 5e-4, 0.02)
            assert float(radial) * eps_dot * 5e-4 < 0.0  # power F . v, v = c eps_dot n
