"""The derivative a solver carries into its next step, read and replaced in each solver
family's state layout."""

import diffrax
import jax.numpy as jnp

import model
from model.integrate.peaks import PeakTracking, end_rate
from model.integrate.projection import ConstraintProjection
from model.integrate.rosenbrock_w import Ros34PW2, WState
from model.integrate.solver_state import carried_rate, with_carried_rate
from model.integrate.step_guard import NonFiniteStepsCarryNoGradient
from model.integrate.wrapped_solver import state_solver

STALE, FRESH = jnp.zeros(4), jnp.arange(4.0)


def test_an_explicit_runge_kutta_state_carries_its_fsal_derivative():
    state = with_carried_rate(diffrax.Tsit5(), (jnp.array(False), STALE), FRESH)
    assert not bool(state[0]) and (state[1] == FRESH).all()
    assert (carried_rate(diffrax.Tsit5(), state) == FRESH).all()


def test_an_imex_state_carries_its_parts_and_reads_their_sum():
    state = with_carried_rate(diffrax.KenCarp3(), (jnp.array(False), (STALE, STALE)), (FRESH, 2.0 * FRESH))
    assert (state[1][1] == 2.0 * FRESH).all()
    assert (carried_rate(diffrax.KenCarp3(), state) == 3.0 * FRESH).all()


def test_a_rosenbrock_w_state_keeps_its_jacobian_and_age():
    kept = WState(jnp.eye(4), STALE, jnp.array(3, jnp.int32), STALE)
    refreshed = with_carried_rate(Ros34PW2(), kept, FRESH)
    assert (refreshed.field == FRESH).all() and (refreshed.jacobian == kept.jacobian).all() and int(refreshed.age) == 3
    assert (carried_rate(Ros34PW2(), refreshed) == FRESH).all()


def test_a_state_that_carries_no_derivative_is_left_alone():
    assert with_carried_rate(model.Rodas5P(), None, FRESH) is None
    assert carried_rate(model.Rodas5P(), None) is None


def _field(t, y):
    return jnp.stack([y[1], -y[0] + jnp.cos(2.0 * t)])


class _Shrinking:
    """Stands in for a mechanism: its projection moves the state; evaluating its field
    through :func:`model.integrate.peaks.end_rate` fails the test."""

    def project(self, t, y, iterations):
        return 0.999 * y

    def flat_vector_field(self, t, y):
        raise AssertionError("the step end's derivative was evaluated again")


def test_peaks_read_the_rate_carried_through_the_wrappers():
    """Through the reverse-mode step guard and the constraint projection (wrappers that keep
    their solver's state) the peak tracking reads the first-same-as-last derivative the
    step carries, the field at the projected end, instead of evaluating the field again."""
    wrapped = NonFiniteStepsCarryNoGradient(ConstraintProjection(diffrax.Tsit5()))
    assert state_solver(wrapped) == diffrax.Tsit5()
    assert state_solver(PeakTracking(diffrax.Tsit5())) == PeakTracking(diffrax.Tsit5())  # adds to the state
    terms, mechanism = diffrax.ODETerm(lambda t, y, args: _field(t, y)), _Shrinking()
    y0, t0, t1 = jnp.array([0.8, -0.3]), jnp.asarray(0.1), jnp.asarray(0.15)
    state = wrapped.init(terms, t0, t1, y0, mechanism)
    y1, *_, state, result = wrapped.step(terms, t0, t1, y0, mechanism, state, False)
    assert result == diffrax.RESULTS.successful
    rate = end_rate(state_solver(wrapped), state, t1, y1, mechanism)
    assert (rate == _field(t1, y1)).all()
