"""The projection onto the ideal joints' constraints after every step
(:class:`model.integrate.projection.ConstraintProjection`): one projection puts a perturbed
state back on the constraints with the least kinetic-energy correction (planar and
spatial), and a long run stays on them: the ideal Flores slider-crank over 1 s (83
revolutions at 5000 rpm), where Baumgarte stabilisation alone drifts by micrometres
(docs/integration.md), keeps every joint within 0.1 micrometre and the slider on its
analytic path."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.constraints import constraint_jacobian, constraint_rate, constraints
from model.mechanics.dynamics import mass_diagonal
from model.mechanics.spatial.constraints import all_constraints
from model.mechanics.spatial.constraints import constraint_rate as spatial_constraint_rate
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

CRANK, CONROD = 0.05, 0.12  # m, Flores slider-crank
BOUND = 1e-7  # m
# m, m/s, rad, rad/s: the size of a few steps' drift; the Jacobian is taken once, at the
# perturbed positions, so what remains is quadratic in it
PERTURBATION = 1e-8


def slider_x(phi):
    """Analytic slider position (m) of the ideal slider-crank at crank angle ``phi``."""
    return CRANK * np.cos(phi) + np.sqrt(CONROD**2 - (CRANK * np.sin(phi)) ** 2)


@pytest.mark.slow
# a second of motion (a physics validation over a long run); the default run keeps the
# projection's path: the least-kinetic-energy correction below, and the Flores simulate's
# constraint violation in tests/pipelines/test_simulation.py::test_flores_physics
@pytest.mark.validation
def test_one_second_of_the_flores_slider_crank_stays_on_its_joints():
    config = load_mechanism(CONFIGS / "flores_slider_crank.toml")
    mechanism = build_mechanism(config, "absolute").idealised()
    settings = solver_settings(config, t_end=1.0, output_interval=1e-3)
    assert settings.projection_iterations > 0  # the default
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    assert int(trajectory.result) == 0
    assert float(np.max(trajectory.constraint_violation)) < BOUND
    slider = 3 * mechanism.body_names.index("slider")
    phi = float(mechanism.drivers[0].speed) * np.asarray(trajectory.t)
    assert np.max(np.abs(np.asarray(trajectory.q[:, slider]) - slider_x(phi))) < BOUND


def _perturbed(flat, scale, key):
    return flat + scale * jax.random.normal(key, flat.shape, flat.dtype)


@eqx.filter_jit
def planar_projection(mechanism, moved, t, coords: int):
    """The projected state and, at its ``coords`` positions, the constraints, their rate and
    Jacobian, in one compiled program."""
    projected = mechanism.project(t, moved, 2)
    q, qd = projected[:coords], projected[coords : 2 * coords]
    return (projected, constraints(mechanism, q, t), constraint_rate(mechanism, q, qd, t), constraint_jacobian(mechanism, q, t),
            mass_diagonal(mechanism))


def test_planar_projection_is_the_least_kinetic_energy_correction():
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank.toml"), "absolute")
    state = mechanism.initial_state()
    flat = mechanism.flatten(state)
    coords = state.q.size
    moved = _perturbed(flat, PERTURBATION, jax.random.PRNGKey(0)).at[2 * coords :].set(flat[2 * coords :])
    projected, position_error, rate_error, jacobian, masses = planar_projection(mechanism, moved, jnp.asarray(0.0), coords)
    q = projected[:coords]
    assert float(jnp.max(jnp.abs(position_error))) < 1e-20
    assert float(jnp.max(jnp.abs(rate_error))) < 1e-13
    # M dq lies in the range of Phi_q^T: no component along the constraint manifold
    jacobian = np.asarray(jacobian)
    null_space = np.linalg.svd(jacobian)[2][jacobian.shape[0]:]
    weighted = np.asarray(masses) * np.asarray(q - moved[:coords])
    assert np.max(np.abs(null_space @ weighted)) < 1e-8 * np.max(np.abs(weighted))
    np.testing.assert_array_equal(projected[2 * coords :], moved[2 * coords :])  # memory, work kept


@eqx.filter_jit
def spatial_projection(mechanism, moved, t):
    """The projected state and, at it, the constraints, their rate and the quaternions'
    norms, in one compiled program."""
    state = mechanism.unflatten(mechanism.project(t, moved, 2))
    return (all_constraints(mechanism, state.x, t), spatial_constraint_rate(mechanism, state.x, state.v, t),
            jnp.linalg.norm(state.x.reshape(-1, 7)[:, 3:], axis=1))


@pytest.mark.slow  # 9 CPU s, most of it compiling
def test_spatial_projection_returns_to_the_constraints():
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank_3d.toml"), "absolute")
    flat = mechanism.flatten(mechanism.initial_state())
    moved = _perturbed(flat, PERTURBATION, jax.random.PRNGKey(1))
    position_error, rate_error, norms = spatial_projection(mechanism, moved, jnp.asarray(0.0))
    assert float(jnp.max(jnp.abs(position_error))) < 1e-20
    assert float(jnp.max(jnp.abs(rate_error))) < 1e-13
    np.testing.assert_allclose(norms, 1.0, atol=1e-15)

