"""The impact-velocity memory: tracking, freezing, and capture per joint and per batch
member under jit, vmap and grad."""

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.contact.memory import impact_memory_rate, impact_velocity
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS



def test_memory_tracks_while_apart_and_freezes_in_contact():
    apart = impact_memory_rate(jnp.array(-1e-6), jnp.array(2.0), jnp.array(5.0), jnp.array(2.0), 1e-5)
    assert float(apart) == pytest.approx(5.0)  # follows d(delta_dot)/dt exactly when m = delta_dot
    relaxing = impact_memory_rate(jnp.array(-1e-6), jnp.array(2.0), jnp.array(0.0), jnp.array(1.0), 1e-5)
    assert float(relaxing) == pytest.approx(1e5)  # removes an offset at rate 1/tau
    frozen = impact_memory_rate(jnp.array(1e-6), jnp.array(2.0), jnp.array(5.0), jnp.array(1.0), 1e-5)
    assert abs(float(frozen)) < 1e-15  # 1 um deep: the smoothed switch (20 nm) is closed
    assert float(impact_velocity(jnp.array(1e-9), 1e-3)) == 1e-3  # floored in persistent contact
    assert float(impact_velocity(jnp.array(3.0), 1e-3)) == 3.0


@pytest.fixture(scope="module")
def short_flores():
    config = load_mechanism(CONFIGS / "flores_slider_crank.toml")
    mechanism = build_mechanism(config)
    settings = solver_settings(config, solver="tsit5", t_end=4e-4, output_interval=2e-6)
    return mechanism, settings


@pytest.mark.slow
def test_capture_per_batch_member_under_vmap(short_flores):
    """Each member captures its own closing speed; it matches the unbatched run and the
    estimate sqrt(2 c a) of a pin accelerating at a = 19,419 m/s^2 away from a free slider."""
    mechanism, settings = short_flores
    params = ParameterMap(mechanism, ["joints.pin.clearance"])
    clearances = jnp.array([0.2e-3, 0.5e-3])

    def first_impact_velocity(clearance):
        trajectory = model.simulate(params.apply(mechanism, clearance[None]), settings)
        return model.summary_metrics(mechanism, trajectory)["pin.first_impact_velocity"]

    batched = jax.jit(jax.vmap(first_impact_velocity))(clearances)
    single = jnp.stack([jax.jit(first_impact_velocity)(c) for c in clearances])
    # lockstep batching takes other steps; the onset falls inside a step, which
    # limits the capture to ~1e-4 relative
    np.testing.assert_allclose(batched, single, rtol=3e-4)
    np.testing.assert_allclose(batched, jnp.sqrt(2 * clearances * 19419.0), rtol=0.03)


@pytest.mark.slow
def test_gradient_through_memory_is_finite(short_flores):
    mechanism, settings = short_flores
    params = ParameterMap(mechanism, ["joints.pin.contact.restitution"])

    forward = dataclasses.replace(settings, adjoint="forward")

    def peak_force(restitution):
        trajectory = model.simulate(params.apply(mechanism, restitution[None]), forward)
        return jnp.max(trajectory.normal_force)

    # forward mode, the calibration's default (reverse mode through the same memory is
    # checked against finite differences in tests/model/integrate/test_gradients.py)
    value, gradient = jax.jit(lambda e: (peak_force(e), jax.jacfwd(peak_force)(e)))(jnp.array(0.9))
    assert np.isfinite(float(gradient)) and float(value) > 0
    # more restitution -> less damping -> a higher peak at the rebound's compression
    assert float(gradient) > 0


@pytest.mark.slow
def test_capture_per_joint_in_fourbar():
    config = load_mechanism(CONFIGS / "fourbar_two_clearances.toml")
    mechanism = build_mechanism(config)
    settings = solver_settings(config, solver="tsit5", t_end=3e-3, output_interval=5e-6)
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    for k in range(2):
        penetration = np.asarray(trajectory.penetration[:, k])
        onset = int(np.argmax(penetration > 0))
        assert onset > 0, "each joint has an impact"
        captured = float(trajectory.impact_memory[onset, k])
        closing = float(trajectory.normal_rate[onset - 1, k])
        # frozen at the closing speed of its own joint (sampled one step before onset)
        assert captured == pytest.approx(closing, rel=0.05)
        # frozen: the smoothed switch's weight leaves only rounding (measured 1 ulp)
        np.testing.assert_allclose(np.asarray(trajectory.impact_memory[onset : onset + 3, k]), captured, rtol=1e-13)
