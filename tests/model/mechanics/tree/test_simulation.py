"""Simulations on the joint-coordinate engine: the Flores slider-crank against the absolute
engine over its first impact, and jit, vmap (refilling lanes) and derivatives through it.

Compiles three programs of the full integrator (about a minute of CPU at the suite's
optimisation level), so the module is ``validation``; the default run checks the same
equations at single states (``test_dynamics.py``). Result: docs/engine.md."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import FLORES, check_lanes_and_clearance_gradient

pytestmark = [pytest.mark.slow, pytest.mark.validation]

T_END = 0.4e-3  # s: the first impact is at 0.227 ms


@pytest.fixture(scope="module")
def config():
    return load_mechanism(FLORES)


@pytest.fixture(scope="module")
def runs(config):
    settings = solver_settings(config, t_end=T_END, output_interval=1e-5, rtol=1e-8, atol=1e-11)
    simulate = jax.jit(model.simulate, static_argnums=1)
    return {engine: simulate(build_mechanism(config, engine), settings) for engine in ("joint", "absolute")}


def test_joint_engine_matches_the_absolute_engine(runs):
    joint, absolute = runs["joint"], runs["absolute"]
    assert int(joint.result) == 0 and int(absolute.result) == 0
    assert float(absolute.peaks.num_impacts[0]) >= 1.0
    for field in ("max_normal_force", "max_penetration", "first_impact_time", "first_impact_velocity"):
        np.testing.assert_allclose(getattr(joint.peaks, field), getattr(absolute.peaks, field), rtol=1e-5, err_msg=field)
    np.testing.assert_allclose(joint.peaks.max_abs_acceleration, absolute.peaks.max_abs_acceleration, rtol=1e-5,
                               atol=1e-5 * float(jnp.max(absolute.peaks.max_abs_acceleration)))
    for field in ("q", "qd"):
        a, b = getattr(joint, field), getattr(absolute, field)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * float(jnp.max(jnp.abs(b))), err_msg=field)
    force = absolute.normal_force
    np.testing.assert_allclose(joint.normal_force, force, rtol=0, atol=1e-5 * float(jnp.max(force)))
    np.testing.assert_allclose(joint.joint_reactions, absolute.joint_reactions, rtol=0,
                               atol=1e-5 * float(jnp.max(jnp.abs(absolute.joint_reactions))))
    # the tree carries no constraint rows: its absolute coordinates satisfy the joints exactly
    assert float(jnp.max(joint.constraint_violation)) < 1e-14


def test_lanes_and_derivatives_through_the_joint_engine(config):
    """Refilling lanes and reverse-mode derivatives through the planar joint engine
    (:func:`tests.helpers.check_lanes_and_clearance_gradient`)."""
    settings = solver_settings(config, t_end=T_END, output_interval=T_END, rtol=1e-8, atol=1e-11)
    check_lanes_and_clearance_gradient(build_mechanism(config), settings)
