"""The contact-period step bound (``model.step_bound``) holds every step that starts in
free flight, and only those: resting stiff contact is no longer held to it."""

import pathlib
from dataclasses import replace

import diffrax
import equinox as eqx
import jax
import numpy as np
import pytest

import model
from model.mechanics import flat_vector_field, flatten_state
from model.integrate.solve import make_controller, make_solver
from model.integrate.step_bound import open_joint_step_bound
from model.integrate.timescales import REFERENCE_PENETRATION_SHARE
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

SHARE = 0.2
SIMULATE = jax.jit(model.simulate, static_argnums=1)

pytestmark = pytest.mark.slow  # each test compiles a Flores solve


def load(name, overrides=(), **settings):
    config = load_mechanism(CONFIGS / name, overrides)
    return build_mechanism(config, "absolute"), solver_settings(config, **settings)


@pytest.fixture(scope="module")
def flores_steps():
    """Every accepted step of the Flores benchmark through its first impact (0.35 ms), at a
    tolerance loose enough (rtol 1e-2) that the controller proposes steps the bound cuts:
    without the bound one of them overshoots it."""
    mechanism, settings = load("flores_slider_crank.toml", t_end=3.5e-4, output_interval=1e-6, rtol=1e-2, atol=1e-5)
    solution = diffrax.diffeqsolve(
        diffrax.ODETerm(flat_vector_field), make_solver(settings), 0.0, settings.t_end, None,
        flatten_state(model.initial_state(mechanism)), args=mechanism, saveat=diffrax.SaveAt(steps=True),
        stepsize_controller=make_controller(mechanism, settings), max_steps=settings.max_steps,
    )
    steps = int(solution.stats["num_accepted_steps"])
    return mechanism, settings, np.asarray(solution.ts[:steps]), np.asarray(solution.ys[:steps])


@eqx.filter_jit
def step_bounds(mechanism, ys):
    """``open_joint_step_bound`` at each saved state, in one compiled program."""
    return jax.vmap(lambda y: open_joint_step_bound(mechanism, y, SHARE))(ys)


def test_bound_follows_the_contact_state(flores_steps):
    """On the saved states: inf in contact and within 1 % of c of the wall; in flight,
    share x T_c or the time to reach the wall at the current closing speed, if longer.
    The gap and speed come from ``model.evaluate`` (the force path), not the bound's own."""
    mechanism, _, _, ys = flores_steps
    joints = len(mechanism.clearance_joints)
    bounds = np.asarray(step_bounds(mechanism, ys))
    contact = eqx.filter_jit(jax.vmap(lambda m, y: model.evaluate(m, 0.0, m.unflatten(y)).contact,
                                      (None, 0)))(mechanism, ys)
    gap, speed = -np.asarray(contact.penetration[:, 0]), np.asarray(contact.normal_rate[:, 0])
    period = float(model.contact_periods(mechanism)[0])
    clearance = float(mechanism.clearance_joints[0].clearance)
    in_flight = gap > REFERENCE_PENETRATION_SHARE * clearance
    assert in_flight.any() and (~in_flight).any() and (gap < 0).any()
    assert np.all(np.isinf(bounds[~in_flight]))
    expected = np.maximum(SHARE * period, np.where(speed > 0, gap / np.where(speed > 0, speed, 1.0), np.inf))
    np.testing.assert_allclose(bounds[in_flight], expected[in_flight], rtol=1e-9)


def test_every_step_from_flight_keeps_the_bound(flores_steps):
    mechanism, _, ts, ys = flores_steps
    bounds = np.asarray(step_bounds(mechanism, ys[:-1]))
    steps = np.diff(ts)
    held = np.isfinite(bounds)
    assert held.sum() >= 5
    assert np.all(steps[held] <= bounds[held] * (1 + 1e-12))
    assert np.any(np.isclose(steps[held], bounds[held], rtol=1e-9))  # the bound, not the tolerance, set one


def test_controller_cuts_only_from_flight(flores_steps):
    """A near-zero error estimate makes the PID controller propose ``factormax`` x the
    step: from a flight state the wrapper cuts it to the bound, from a contact state it
    passes the proposal through."""
    mechanism, settings, _, ys = flores_steps
    controller = make_controller(mechanism, replace(settings, dtmax_contact_share=SHARE))
    bounds = np.asarray(step_bounds(mechanism, ys))
    flight_bound = float(bounds[np.isfinite(bounds)][-1])  # the last flight state: share x T_c near the wall
    flight, contact = ys[np.isfinite(bounds)][-1], ys[np.argmax(np.isinf(bounds))]
    assert flight_bound == pytest.approx(SHARE * float(model.contact_periods(mechanism)[0]), rel=1e-12)
    step = flight_bound  # the PID controller proposes 10 x this
    _, state = controller.init(None, 0.0, step, flight, step, mechanism, None, 5)
    for y, expected in ((flight, flight_bound), (contact, 10.0 * step)):
        keep, t0, t1, *_ = controller.adapt_step_size(0.0, step, y, y, mechanism, np.zeros_like(y) + 1e-30, 5, state)
        assert bool(keep) and float(t0) == step
        assert float(t1) - step == pytest.approx(expected, rel=1e-9)


def test_resting_stiff_contact_is_not_held():
    """The low-speed slider-crank resting in its bearing at 1e4 x the Hertz stiffness: a fixed bound of
    0.2 T_c (T_c at 1 % of c, far above the resting penetration) takes 4x the steps of the
    state-aware bound here (measured 2826 against 674) for a force error the latter also
    reaches (docs/integration.md)."""
    overrides = ("joints.pin.contact.stiffness_factor=1e4", "joints.pin.contact.restitution=0.05")
    mechanism, settings = load("low_speed_slider_crank.toml", overrides, t_end=1e-3, output_interval=1e-4, rtol=1e-8,
                               atol=1e-11, max_steps=1_000_000)
    fixed = replace(settings, dtmax_contact_share=None, dtmax=SHARE * float(model.contact_periods(mechanism).min()))
    reference = SIMULATE(mechanism, replace(fixed, solver="dopri8", rtol=1e-10, atol=1e-13))
    state_aware, held = SIMULATE(mechanism, settings), SIMULATE(mechanism, fixed)
    assert int(state_aware.result) == int(held.result) == int(reference.result) == 0
    assert int(state_aware.steps) < 0.5 * int(held.steps)
    peak = np.max(np.abs(np.asarray(reference.normal_force)))
    error = np.max(np.abs(np.asarray(state_aware.normal_force) - np.asarray(reference.normal_force))) / peak
    assert error < 1e-4
