"""Performance metrics: smooth maxima bound the hard ones; errors against the ideal mechanism."""

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from pipelines.design.performance import (
    metric_dimensions,
    needs_ideal,
    smooth_max,
    smooth_min,
    trajectory_metrics,
)

from tests.helpers import FLORES as SPEC


def test_smooth_max_bounds_the_max():
    values = jnp.array([1.0, 3.0, 2.5, -1.0])
    for temperature in (0.01, 0.3, 1.0):
        value = float(smooth_max(values, temperature))
        assert 3.0 <= value <= 3.0 + temperature * np.log(values.size) + 1e-12
    assert float(smooth_min(values, 0.01)) == pytest.approx(-1.0, abs=0.05)


def synthetic_trajectory(mechanism, times, qdd, q, penetration, normal_force):
    n, joints = times.size, len(mechanism.clearance_joints)
    zeros = jnp.zeros((n, joints))
    return model.Trajectory(
        t=times, q=q, qd=jnp.zeros_like(q), qdd=qdd, impact_memory=zeros + 1.0, driver_work=jnp.zeros(n),
        eccentricity=jnp.zeros((n, joints, 2)), penetration=penetration, normal_rate=zeros, slip_velocity=zeros,
        normal_force=normal_force, tangential_force=zeros, driver_torques=jnp.zeros((n, 1)),
        constraint_violation=jnp.zeros(n), steps=jnp.asarray(1), rejected_steps=jnp.asarray(0), result=jnp.asarray(0),
    )


def test_errors_against_the_ideal_mechanism_and_smooth_force():
    mechanism = build_mechanism(load_mechanism(SPEC))
    times = jnp.linspace(0.0, 1e-3, 101)
    q_ideal = jnp.zeros((101, 9))
    slider = 2  # x, y of body 2 are columns 6, 7
    q = q_ideal.at[:, 3 * slider].set(jnp.linspace(0.0, 2e-4, 101))  # position error grows to 0.2 mm
    qdd = jnp.zeros((101, 9)).at[:, 3 * slider].set(3.0).at[:, 3 * slider + 1].set(4.0)  # |a - a_ideal| = 5
    force = jnp.zeros((101, 1)).at[50, 0].set(1000.0).at[51, 0].set(990.0)
    penetration = jnp.where(force > 0, 1e-6, -1e-5)
    trajectory = synthetic_trajectory(mechanism, times, qdd, q, penetration, force)
    ideal = synthetic_trajectory(mechanism, times, jnp.zeros((101, 9)), q_ideal, penetration, force)
    hard = trajectory_metrics(mechanism, trajectory, ideal)
    assert float(hard["slider.rms_acceleration_error"]) == pytest.approx(5.0)
    assert float(hard["slider.max_position_error"]) == pytest.approx(2e-4)
    assert float(hard["crank.rms_acceleration_error"]) == pytest.approx(0.0, abs=1e-12)
    assert float(hard["pin.max_normal_force"]) == 1000.0
    smooth = trajectory_metrics(mechanism, trajectory, ideal, {"pin.max_normal_force": 10.0})
    assert 1000.0 < float(smooth["pin.max_normal_force"]) < 1000.0 + 10.0 * np.log(2) + 1e-6
    assert float(hard["pin.impact_fraction"]) + 99 / 101 == pytest.approx(1.0)  # one 2-sample impact


def test_metric_names_and_ideal_requirement():
    mechanism = build_mechanism(load_mechanism(SPEC))
    names = metric_dimensions(mechanism)
    assert names["pin.max_normal_force"] == "force" and names["slider.max_position_error"] == "length"
    assert needs_ideal(["slider.rms_acceleration_error"]) and not needs_ideal(["pin.max_normal_force"])
