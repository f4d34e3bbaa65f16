"""Whole runs of flexible bodies on the joint-coordinate engine against the absolute engine:
the Flores slider-crank with a flexible conrod (its first impact and the rod's vibration,
2 ms) and the loaded cantilever (20 ms, Rosenbrock), rtol 1e-8. Two compiles of the full
integrator per case: ``validation``. Result: docs/engine.md."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.tree import TreeMechanism
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]


@pytest.mark.parametrize("name, t_end", [("flores_flexible.toml", 2e-3), ("flexible_cantilever.toml", 20e-3)])
def test_flexible_bodies_match_the_absolute_engine(name, t_end):
    """Positions (so every element's deflection) to 1e-9 of the largest, peak body
    accelerations and contact peaks to 1e-5, velocities and joint reactions to 1e-6 of
    their largest; the joint engine's violation of the ideal joints at roundoff."""
    config = load_mechanism(CONFIGS / name)
    settings = solver_settings(config, t_end=t_end, output_interval=t_end / 100, rtol=1e-8, atol=1e-11)
    simulate = jax.jit(model.simulate, static_argnums=1)
    tree = build_mechanism(config)  # auto
    assert isinstance(tree, TreeMechanism)
    joint, absolute = simulate(tree, settings), simulate(build_mechanism(config, "absolute"), settings)
    assert int(joint.result) == 0 and int(absolute.result) == 0
    for field, tolerance in (("q", 1e-9), ("qd", 1e-6), ("joint_reactions", 1e-6)):
        a, b = getattr(joint, field), getattr(absolute, field)
        np.testing.assert_allclose(a, b, rtol=0, atol=tolerance * float(jnp.max(jnp.abs(b))), err_msg=field)
    peak = absolute.peaks.max_abs_acceleration
    np.testing.assert_allclose(joint.peaks.max_abs_acceleration, peak, rtol=0, atol=1e-5 * float(jnp.max(peak)))
    for field in ("max_normal_force", "max_penetration"):
        np.testing.assert_allclose(getattr(joint.peaks, field), getattr(absolute.peaks, field), rtol=1e-5)
    assert float(jnp.max(joint.constraint_violation)) < 1e-13
