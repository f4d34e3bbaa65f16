"""The finite-difference Reynolds solver against published finite-bearing numbers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model  # noqa: F401  (float64)
from model.lubrication import solve_reynolds

# Raimondi & Boyd, ASLE Trans. 1 (1958), full journal bearing, L/D = 1 (Reynolds boundary
# condition, film starting at the maximum film thickness): eccentricity ratio ->
# (Sommerfeld number S = (R/c)^2 mu N / P, attitude angle phi in degrees).
RAIMONDI_BOYD_L_OVER_D_1 = {
    0.1: (1.33, 79.5),
    0.2: (0.631, 74.02),
    0.4: (0.264, 63.10),
    0.6: (0.121, 50.58),
    0.8: (0.0446, 36.24),
    0.9: (0.0188, 26.45),
    0.97: (0.00474, 15.47),
}


def sommerfeld_and_attitude(coefficients, eps):
    """Steady rotation: W = 3 mu R^3 L omega eps |G| / c^2 and P = W / (2 R L), N = omega / (2 pi),
    so S = 1 / (3 pi eps |G|); phi is the angle between load line and line of centres."""
    radial, tangential = np.asarray(coefficients)
    return 1.0 / (3 * np.pi * eps * np.hypot(radial, tangential)), np.degrees(np.arctan2(abs(tangential), abs(radial)))


def test_raimondi_boyd_full_bearing_l_over_d_1():
    eps = jnp.array(list(RAIMONDI_BOYD_L_OVER_D_1))
    solve = jax.jit(
        jax.vmap(lambda e: solve_reynolds(e, jnp.pi / 2, 1.0, supply_at_maximum_film=True).force_coefficients)
    )
    for e, coefficients in zip(np.asarray(eps), np.asarray(solve(eps))):
        sommerfeld, attitude = sommerfeld_and_attitude(coefficients, e)
        published_s, published_phi = RAIMONDI_BOYD_L_OVER_D_1[float(e)]
        assert sommerfeld == pytest.approx(published_s, rel=0.02)
        assert attitude == pytest.approx(published_phi, abs=1.0)


def test_converged_and_grid_independent():
    coarse = solve_reynolds(0.7, 1.2, 0.5)
    fine = solve_reynolds(0.7, 1.2, 0.5, n_circumferential=240, n_axial=40)
    assert float(coarse.change) < 1e-10
    np.testing.assert_allclose(coarse.force_coefficients, fine.force_coefficients, rtol=5e-3)


def test_cavitation_keeps_pressure_non_negative_and_complementary():
    solution = solve_reynolds(0.6, 2.5, 1.0)  # mixed squeeze and wedge
    pressure = np.asarray(solution.pressure)
    assert pressure.min() >= 0.0
    assert 0.1 < np.mean(pressure > 0) < 0.9  # a film and a cavitated region


def test_pure_squeeze_film_dissipates():
    """beta = 0: the journal approaches along n (eps_dot > 0); beta = pi: it recedes. The
    force along n must oppose the motion in both cases, and there is no tangential motion."""
    for eps in (0.0, 0.5, 0.9):
        approach = solve_reynolds(eps, 0.0, 1.0).force_coefficients
        recede = solve_reynolds(eps, jnp.pi, 1.0).force_coefficients
        assert float(approach[0]) < 0.0 < float(recede[0])
