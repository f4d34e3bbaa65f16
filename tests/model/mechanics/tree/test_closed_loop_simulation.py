"""Whole runs of closed loops on the joint-coordinate engine (cut joints): the ideal
slider-crank against its closed-form kinematics over ten crank revolutions, and the ideal
twins of the Flores slider-crank and of the four-bar with two clearance joints against the
absolute engine. Several compiles of the full integrator: ``validation``. Result:
docs/engine.md."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.constraints import point_position
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS, FLORES

pytestmark = [pytest.mark.slow, pytest.mark.validation]

REVOLUTIONS = 10


def closed_form_slider(mechanism, t):
    """The slider's centre x (m) of an ideal slider-crank whose slider moves along the
    ground's x axis: the crank pin from the driven crank angle, the slider's pin at the
    conrod's length along the guide (the root of a quadratic: Uicker, Pennock & Shigley
    2011, §4.8)."""
    crank_joint, crankpin, pin = mechanism.revolute_joints[0], mechanism.revolute_joints[1], mechanism.revolute_joints[-1]
    driver = mechanism.drivers[0]
    crank, conrod, slider = crank_joint.body_j, crankpin.body_j, pin.body_i
    assert crankpin.body_i == crank and pin.body_j == conrod and mechanism.prismatic_joints[0].body_j == slider
    angle = driver.angle + driver.speed * t  # the crank's angle (ground fixed)
    rotate = lambda a, v: jnp.stack([jnp.cos(a) * v[0] - jnp.sin(a) * v[1], jnp.sin(a) * v[0] + jnp.cos(a) * v[1]])  # noqa: E731
    crank_pin = crank_joint.point_i[:, None] + rotate(angle, crankpin.point_i - crank_joint.point_j)
    length = jnp.linalg.norm(pin.point_j - crankpin.point_j)
    q0 = mechanism.initial_positions
    guide_y = point_position(q0, slider, pin.point_i)[1]  # the slider's pin keeps its height
    pin_x = crank_pin[0] + jnp.sqrt(length**2 - (guide_y - crank_pin[1]) ** 2)
    return pin_x - pin.point_i[0]  # the slider does not turn


@pytest.fixture(scope="module")
def long_ideal_run():
    config = load_mechanism(FLORES)
    twin = build_mechanism(config, "joint").idealised()
    period = 2 * np.pi / float(twin.drivers[0].speed)
    settings = solver_settings(config, t_end=REVOLUTIONS * period, output_interval=period / 50, rtol=1e-8, atol=1e-11)
    return twin, jax.jit(model.simulate, static_argnums=1)(twin, settings)


def test_ideal_slider_crank_follows_its_closed_form(long_ideal_run):
    """Ten revolutions: the slider's position within 1e-8 of the stroke of the closed form,
    and the joints' violation (the cut pin's drift, held by Baumgarte's terms and the
    projection at each step) stays at roundoff."""
    twin, run = long_ideal_run
    assert int(run.result) == 0
    slider = twin.absolute.prismatic_joints[0].body_j
    expected = closed_form_slider(twin.absolute, run.t)
    stroke = float(jnp.max(expected) - jnp.min(expected))
    np.testing.assert_allclose(run.q[:, 3 * slider], expected, rtol=0, atol=1e-8 * stroke)
    assert float(jnp.max(run.constraint_violation)) < 1e-9  # m


@pytest.mark.parametrize("name, t_end", [("flores_slider_crank.toml", 12e-3), ("fourbar_two_clearances.toml", 20e-3)])
def test_ideal_twins_match_the_absolute_engine(name, t_end):
    """The ideal twin on the joint engine (its loop cut at the pin made ideal) against the
    same twin on the absolute engine, rtol 1e-8: peak body accelerations, driver torque,
    positions and joint reactions."""
    config = load_mechanism(CONFIGS / name)
    settings = solver_settings(config, t_end=t_end, output_interval=t_end / 200, rtol=1e-8, atol=1e-11)
    simulate = jax.jit(model.simulate, static_argnums=1)
    joint, absolute = (simulate(build_mechanism(config, engine).idealised(), settings) for engine in ("joint", "absolute"))
    assert int(joint.result) == 0 and int(absolute.result) == 0
    peak = absolute.peaks.max_abs_acceleration
    np.testing.assert_allclose(joint.peaks.max_abs_acceleration, peak, rtol=0, atol=3e-6 * float(jnp.max(peak)))
    for field in ("driver_torques", "q", "joint_reactions"):
        a, b = getattr(joint, field), getattr(absolute, field)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-7 * float(jnp.max(jnp.abs(b))), err_msg=field)
