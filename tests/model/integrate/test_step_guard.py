"""A step that leaves the vector field's domain is rejected and retried shorter
(``model.integrate.step_guard.RejectNonFinite``), instead of turning the step size into NaN."""

import pathlib

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics import flat_vector_field
from model.integrate.solve import make_controller, make_solver
from model.integrate.step_bound import OpenJointStepBound
from model.integrate.step_guard import NonFiniteStepsCarryNoGradient, RejectNonFinite
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

PID = diffrax.PIDController(rtol=1e-8, atol=1e-10, pcoeff=0.3, icoeff=0.4)
FRESH = (jnp.array(1.0), jnp.array(1.0), jnp.array(False))  # PID state of a new solve


@pytest.mark.parametrize("bad", ["nan error", "inf candidate"])
def test_non_finite_step_is_rejected_at_a_fifth(bad):
    y0 = jnp.array([1.0, 2.0])
    y1 = jnp.array([1.0, jnp.inf]) if bad == "inf candidate" else jnp.array([1.0, 2.5])
    error = jnp.array([jnp.nan, 0.0]) if bad == "nan error" else jnp.array([1e-3, jnp.inf])
    keep, next_t0, next_t1, _, _, _ = RejectNonFinite(PID).adapt_step_size(0.0, 0.5, y0, y1, None, error, 5, FRESH)
    assert not keep and next_t0 == 0.0
    np.testing.assert_allclose(next_t1, PID.factormin * 0.5)
    # what the guard is for: the bare controller proposes a NaN step here
    assert np.isnan(PID.adapt_step_size(0.0, 0.5, y0, y1, None, error, 5, FRESH)[2])


def test_finite_step_is_the_inner_controllers():
    y0, y1, error = jnp.array([1.0, 2.0]), jnp.array([1.1, 2.2]), jnp.array([1e-9, 3e-9])
    guarded = RejectNonFinite(PID).adapt_step_size(0.0, 0.01, y0, y1, None, error, 5, FRESH)
    bare = PID.adapt_step_size(0.0, 0.01, y0, y1, None, error, 5, FRESH)
    for ours, theirs in zip(guarded[:3], bare[:3]):
        assert ours == theirs


def test_solve_recovers_from_a_first_step_that_overflows():
    """``y' = -y^3`` from ``y = 1`` with a first step of 50 s: the stages overflow to
    ``inf``. The bare controller then proposes NaN steps until ``max_steps``; the guarded
    one shrinks the step and matches ``1 / sqrt(1 + 2t)``."""

    def solve(controller):
        return diffrax.diffeqsolve(
            diffrax.ODETerm(lambda t, y, args: -(y**3)), diffrax.Tsit5(), 0.0, 50.0, 50.0, jnp.array([1.0]),
            stepsize_controller=controller, max_steps=500, throw=False,
        )

    guarded = solve(RejectNonFinite(PID))
    assert guarded.result == diffrax.RESULTS.successful
    assert int(guarded.stats["num_rejected_steps"]) >= 1
    np.testing.assert_allclose(guarded.ys[-1], 1.0 / np.sqrt(101.0), rtol=1e-6)
    assert solve(PID).result == diffrax.RESULTS.max_steps_reached


@pytest.mark.parametrize("share", [0.2, None])
def test_every_model_controller_is_guarded(share):
    config = load_mechanism(CONFIGS / "flores_slider_crank.toml")
    settings = solver_settings(config, dtmax_contact_share=share)
    controller = make_controller(build_mechanism(config), settings)
    if share is not None:
        assert isinstance(controller, OpenJointStepBound)
        controller = controller.controller
    assert isinstance(controller, RejectNonFinite)


def test_four_bar_at_a_tight_tolerance_gets_past_its_first_step():
    """Dopri8 at rtol 1e-10 over the four-bar's 10 ms: the initial-step heuristic tries the
    whole window, which overflows; with the model's controller the solve shrinks and
    advances."""
    config = load_mechanism(CONFIGS / "fourbar_two_clearances.toml")
    mechanism = build_mechanism(config)
    settings = solver_settings(config, rtol=1e-10, atol=1e-13, solver="dopri8")

    def accepted(controller):
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(flat_vector_field), make_solver(settings), 0.0, 0.01, None,
            mechanism.flatten(mechanism.initial_state()), args=mechanism, saveat=diffrax.SaveAt(t1=True),
            stepsize_controller=controller, max_steps=60, throw=False,
        )
        return int(solution.stats["num_accepted_steps"])

    # Whether the bare PID stalls here depends on the last bits of the overflowing first
    # stages (it did with an earlier form of the contact laws); the guard's own failure
    # cases are pinned by the tests above, where the bare controller provably stalls.
    assert accepted(make_controller(mechanism, settings)) >= 20


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_reverse_mode_gives_an_overflowing_step_no_gradient():
    """The overflowing first step above, differentiated in reverse mode: the rejected
    step's zero cotangents times its ``inf`` partial derivatives make the bare solver's
    gradient NaN; wrapped, it is ``dy(t)/dy0 = (1 + 2 t y0^2)^(-3/2)``, as forward mode."""

    def end_value(solver, y0, adjoint=diffrax.RecursiveCheckpointAdjoint()):
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(lambda t, y, args: -(y**3)), solver, 0.0, 50.0, 50.0, jnp.array([y0]),
            stepsize_controller=RejectNonFinite(PID), max_steps=500, throw=False, adjoint=adjoint,
        )
        return solution.ys[-1, 0]

    starts = jnp.array([1.0, 0.5])  # under vmap too: each point its own rejections
    guarded = jax.vmap(jax.grad(lambda y0: end_value(NonFiniteStepsCarryNoGradient(diffrax.Tsit5()), y0)))(starts)
    np.testing.assert_allclose(guarded, (1.0 + 100.0 * starts**2) ** -1.5, rtol=1e-5)
    forward = jax.vmap(jax.jacfwd(lambda y0: end_value(diffrax.Tsit5(), y0, diffrax.ForwardMode())))(starts)
    np.testing.assert_allclose(guarded, forward, rtol=1e-12)
    assert np.isnan(jax.grad(lambda y0: end_value(diffrax.Tsit5(), y0))(1.0))


def test_the_wrapper_keeps_the_solvers_identity():
    """Everything diffrax and the peaks read from a solver passes through the wrapper."""
    wrapped = NonFiniteStepsCarryNoGradient(diffrax.Tsit5())
    assert isinstance(wrapped, diffrax.AbstractRungeKutta)
    assert wrapped.interpolation_cls is diffrax.Tsit5().interpolation_cls
    assert wrapped.order(None) == 5
