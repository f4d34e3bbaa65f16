"""The tabulated finite bearing reproduces the Reynolds solver between its nodes, matches a
published finite-bearing table and meets the closed forms in their limits."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model  # noqa: F401  (float64)
from model.lubrication import (SUPPLY_CONDITIONS, FilmMotion, short_bearing_force, solve_reynolds,
                               tabulated_coefficients)
from model.lubrication.finite_bearing import finite_bearing_force, stored_table
from model.lubrication.table import SOLVER_GRID, length_factor, singular_factor

# Butenschön (1976), "Das hydrodynamische, zylindrische Gleitlager endlicher Breite unter
# instationärer Belastung" (Karlsruhe), steady rotation, as tabulated by the test of MBDyn's
# hydrodynamic plain bearing module: rotation Sommerfeld number So = F psi^2 / (B D eta omega)
# and attitude angle (deg) for width ratios B/D (columns) and eccentricity ratios (rows).
BUTENSCHOEN_WIDTH_RATIOS = (1.0, 1 / 2, 1 / 4, 1 / 8)
BUTENSCHOEN = {  # eps: ((So per B/D), (attitude per B/D))
    0.1: ((0.1196, 0.0368, 0.0098, 0.0025), (79.410, 81.767, 82.481, 82.653)),
    0.3: ((0.4091, 0.1304, 0.0354, 0.0091), (68.264, 68.493, 68.204, 68.211)),
    0.5: ((0.8903, 0.3124, 0.0888, 0.0231), (56.705, 54.993, 54.069, 53.784)),
    0.7: ((2.0432, 0.8595, 0.2708, 0.0732), (43.859, 40.803, 39.326, 38.865)),
    0.9: ((8.4352, 5.0881, 2.1595, 0.6776), (26.482, 23.566, 21.790, 21.089)),
    0.95: ((18.7895, 13.3083, 6.9248, 2.5202), (19.450, 17.265, 15.632, 14.832)),
}

# Points between the table's nodes in all three coordinates (eps, beta, L/D).
OFF_NODE_POINTS = [
    (0.05, 0.3, 0.2),
    (0.35, 1.61, 0.7),
    (0.55, 2.9, 1.3),
    (0.72, 4.2, 2.2),
    (0.83, 5.5, 0.45),
    (0.93, 1.2, 1.0),
    (0.965, 0.13, 3.1),
]


def test_table_matches_butenschoen():
    """Default table (film supplied at the largest gap), steady rotation (``beta = pi/2``):
    ``So = 1.5 eps |G|`` within 3 % and the attitude within 1 degree."""
    eps, ratio = (jnp.array(axis) for axis in zip(*[(e, r) for e in BUTENSCHOEN for r in BUTENSCHOEN_WIDTH_RATIOS]))
    radial, tangential = np.asarray(jax.vmap(tabulated_coefficients, (0, None, 0))(eps, jnp.pi / 2, ratio)).T
    sommerfeld = 1.5 * np.asarray(eps) * np.hypot(radial, tangential)
    attitude = np.degrees(np.arctan2(np.abs(tangential), np.abs(radial)))
    published_so = np.concatenate([row[0] for row in BUTENSCHOEN.values()])
    published_attitude = np.concatenate([row[1] for row in BUTENSCHOEN.values()])
    np.testing.assert_allclose(sommerfeld, published_so, rtol=0.03)
    np.testing.assert_allclose(attitude, published_attitude, atol=1.0)


@pytest.mark.parametrize("supply", SUPPLY_CONDITIONS)
def test_table_reproduces_the_solver_between_nodes(supply):
    solve = jax.jit(jax.vmap(lambda e, b, lam: solve_reynolds(
        e, b, lam, supply_at_maximum_film=supply == "maximum_gap", **SOLVER_GRID).force_coefficients))
    points = jnp.array(OFF_NODE_POINTS)
    solved = np.asarray(solve(points[:, 0], points[:, 1], points[:, 2]))
    interpolated = np.asarray(jax.vmap(lambda e, b, lam: tabulated_coefficients(e, b, lam, supply))(
        points[:, 0], points[:, 1], points[:, 2]))
    errors = np.hypot(*(interpolated - solved).T) / np.hypot(*solved.T)
    assert np.all(errors < 0.01), errors  # the solver itself is within ~0.7 % of a grid twice as fine


@pytest.mark.parametrize("supply", SUPPLY_CONDITIONS)
def test_table_on_its_nodes_is_the_stored_solution(supply):
    table = stored_table(supply)
    for i_l, i_e, i_b in [(0, 0, 5), (0, 3, 5), (4, 10, 20), (8, 19, 35)]:
        eps, beta, lam = -np.expm1(-table["u"][i_e]), table["beta"][i_b], np.exp(table["log_length_ratio"][i_l])
        stored = table["values"][i_l, i_e, i_b] * singular_factor(eps) * length_factor(lam)
        np.testing.assert_allclose(tabulated_coefficients(eps, beta, lam, supply), stored, rtol=1e-10)


def test_short_limit_matches_the_closed_form():
    """At L/D = 1/8 the Reynolds solution is within 5 % of the short bearing for eps <= 0.75
    (tests/model/lubrication/test_closed_forms.py); the table must carry that over."""
    for eps in (0.2, 0.5, 0.75):
        motion = FilmMotion(jnp.asarray(eps), jnp.asarray(0.0), jnp.asarray(eps * 300.0), jnp.zeros(2), jnp.zeros(2))
        finite = np.array(finite_bearing_force(motion, 0.1, 0.01, 5e-5, 0.0025))
        short = np.array(short_bearing_force(motion, 0.1, 0.01, 5e-5, 0.0025))
        assert np.hypot(*(finite - short)) / np.hypot(*finite) < 0.05


@pytest.mark.parametrize("eps", [0.0, 0.4, 0.9])
def test_homogeneous_in_the_motion(eps):
    """Doubling every speed doubles the force (Reynolds is linear in the speeds, cavitation
    positively homogeneous)."""
    base = FilmMotion(jnp.asarray(eps), jnp.asarray(3.0), jnp.asarray(-40.0), jnp.zeros(2), jnp.zeros(2))
    double = base._replace(squeeze_rate=6.0, wedge_rate=-80.0)
    doubled = finite_bearing_force(double, 0.1, 0.01, 5e-5, 0.02)
    np.testing.assert_allclose(doubled, 2 * np.array(finite_bearing_force(base, 0.1, 0.01, 5e-5, 0.02)), rtol=1e-12)
