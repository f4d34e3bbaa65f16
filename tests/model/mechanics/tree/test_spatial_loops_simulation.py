"""The ideal twin of the spatial Flores slider-crank (its clearance pin made a revolute
joint: a closed spatial loop, the pin cut, two of its five rows independent) solved on the
joint-coordinate engine against its closed-form kinematics and the absolute engine.

Compiles the full integrator twice (minutes of CPU at the suite's optimisation level), so
the module is ``validation``; the default run checks the same equations at one state
(``test_spatial_loops.py``). Results: docs/engine.md."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.tree import SpatialTreeMechanism
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]

CRANK, CONROD = 0.05, 0.12  # m: the config's crank and connecting rod
SLIDER = 2  # the slider's body index


@functools.lru_cache
def runs():
    """Both engines' ideal twins over the config's window at rtol 1e-8."""
    config = load_mechanism(CONFIGS / "flores_slider_crank_3d.toml")
    settings = solver_settings(config, rtol=1e-8, atol=1e-11)
    simulate = jax.jit(model.simulate, static_argnums=1)
    return {engine: simulate(build_mechanism(config, engine).idealised(), settings)
            for engine in ("joint", "absolute")}


def test_the_twin_runs_on_the_joint_engine():
    config = load_mechanism(CONFIGS / "flores_slider_crank_3d.toml")
    assert isinstance(build_mechanism(config, "joint").idealised(), SpatialTreeMechanism)


def test_slider_follows_the_closed_form_kinematics():
    """``x = r cos(theta) + sqrt(l^2 - r^2 sin^2 theta)`` with ``theta = omega t``."""
    joint = runs()["joint"]
    assert int(joint.result) == 0
    omega = 5000 * 2 * np.pi / 60  # rad/s
    theta = omega * np.asarray(joint.t)
    exact = CRANK * np.cos(theta) + np.sqrt(CONROD**2 - (CRANK * np.sin(theta)) ** 2)
    slider = np.asarray(joint.x).reshape(len(theta), -1, 7)[:, SLIDER, 0]
    np.testing.assert_allclose(slider - slider[0], exact - exact[0], rtol=0, atol=1e-9)
    assert float(jnp.max(joint.constraint_violation)) < 1e-10


def test_driver_torque_matches_the_absolute_engine():
    """The crank's driver torque, the bodies' positions and the ideal joints' reactions
    agree with the absolute engine's to 1e-6 of their scale at rtol 1e-8."""
    joint, absolute_run = runs()["joint"], runs()["absolute"]
    assert int(absolute_run.result) == 0
    scale = float(jnp.max(jnp.abs(absolute_run.driver_torques)))
    np.testing.assert_allclose(joint.driver_torques, absolute_run.driver_torques, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(joint.x, absolute_run.x, rtol=0, atol=1e-6 * float(jnp.max(jnp.abs(absolute_run.x))))
