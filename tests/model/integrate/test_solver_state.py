"""The derivative a solver carries into its next step, read and replaced in each solver
family's state layout."""

import diffrax
import jax.numpy as jnp

import model
from model.integrate.rosenbrock_w import Ros34PW2, WState
from model.integrate.solver_state import carried_rate, with_carried_rate

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
