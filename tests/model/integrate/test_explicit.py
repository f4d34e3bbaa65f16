"""The lean explicit Runge-Kutta steps against diffrax's own: same step, same solve, same
derivatives, under jit and vmap."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model  # noqa: F401  (float64)
from model.integrate import explicit

PAIRS = [(explicit.Tsit5, diffrax.Tsit5), (explicit.Dopri5, diffrax.Dopri5),
         (explicit.Dopri8, diffrax.Dopri8), (explicit.Bosh3, diffrax.Bosh3)]


def forced_oscillator(t, y, args):
    """A forced van der Pol oscillator: nonlinear and explicitly time-dependent, so a wrong
    stage node or weight shows."""
    mu, frequency = args
    return jnp.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0] + jnp.cos(frequency * t)])


TERM = diffrax.ODETerm(forced_oscillator)
ARGS = (jnp.asarray(1.5), jnp.asarray(2.0))
Y0 = jnp.array([0.8, -0.3])


@pytest.mark.parametrize("ours, theirs", PAIRS)
@pytest.mark.parametrize("first_step", [True, False])
def test_one_step_equals_diffrax(ours, theirs, first_step):
    state = (jnp.asarray(first_step), forced_oscillator(0.1, Y0, ARGS) * (not first_step))
    mine = ours().step(TERM, 0.1, 0.35, Y0, ARGS, state, made_jump=False)
    reference = theirs().step(TERM, 0.1, 0.35, Y0, ARGS, state, made_jump=False)
    for name, a, b in (("y1", mine[0], reference[0]), ("error", mine[1], reference[1]),
                       ("k", mine[2]["k"], reference[2]["k"]), ("f1", mine[3][1], reference[3][1])):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15, err_msg=name)
    assert not bool(mine[3][0])
    assert mine[4] == diffrax.RESULTS.successful
    # the step is not the identity: a wrong tableau would fail the comparison above
    assert float(jnp.max(jnp.abs(mine[0] - Y0))) > 1e-2


def test_fresh_lane_in_a_batch_evaluates_its_first_stage():
    solver = explicit.Tsit5()
    starts = jnp.stack([Y0, 0.5 * Y0])
    states = (jnp.array([True, False]), jnp.stack([jnp.zeros(2), forced_oscillator(0.0, starts[1], ARGS)]))
    batched = jax.jit(jax.vmap(lambda y, s: solver.step(TERM, 0.0, 0.2, y, ARGS, s, False)[0]))(starts, states)
    for lane in range(2):
        single = diffrax.Tsit5().step(TERM, 0.0, 0.2, starts[lane], ARGS,
                                      (jnp.asarray(True), jnp.zeros(2)), made_jump=False)[0]
        np.testing.assert_allclose(batched[lane], single, rtol=1e-13)


def _solve(solver, args, adjoint=diffrax.RecursiveCheckpointAdjoint()):
    return diffrax.diffeqsolve(TERM, solver, 0.0, 6.0, None, Y0, args,
                               saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 6.0, 13)),
                               stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-10), adjoint=adjoint)


@pytest.mark.parametrize("ours, theirs", PAIRS[:1] + PAIRS[2:3])
def test_adaptive_solve_equals_diffrax(ours, theirs):
    mine, reference = _solve(ours(), ARGS), _solve(theirs(), ARGS)
    assert int(mine.stats["num_steps"]) == int(reference.stats["num_steps"]) > 20
    np.testing.assert_allclose(mine.ys, reference.ys, rtol=1e-10, atol=1e-12)


@pytest.mark.slow  # 7 CPU s, most of it compiling
def test_derivatives_equal_diffrax_in_both_modes():
    def final(solver, adjoint):
        return lambda args: _solve(solver, args, adjoint).ys[-1, 0]

    for mode, adjoint in ((jax.grad, diffrax.RecursiveCheckpointAdjoint()), (jax.jacfwd, diffrax.ForwardMode())):
        mine = jax.jit(mode(final(explicit.Tsit5(), adjoint)))(ARGS)
        reference = jax.jit(mode(final(diffrax.Tsit5(), adjoint)))(ARGS)
        np.testing.assert_allclose(mine, reference, rtol=1e-8)
        assert abs(float(mine[0])) > 1e-3


def test_vmap_of_solves_equals_each_solve():
    mus = jnp.array([0.5, 1.5, 3.0])
    batched = jax.jit(jax.vmap(lambda mu: _solve(explicit.Tsit5(), (mu, ARGS[1])).ys[-1]))(mus)
    for lane, mu in enumerate(mus):
        np.testing.assert_allclose(batched[lane], _solve(diffrax.Tsit5(), (mu, ARGS[1])).ys[-1], rtol=1e-9)


def test_rejects_an_implicit_tableau():
    with pytest.raises(NotImplementedError, match="explicit tableau"):
        explicit.explicit_step(diffrax.Kvaerno5.tableau, TERM, 0.0, 0.1, Y0, ARGS,
                               (jnp.asarray(False), Y0), False)


@pytest.mark.parametrize("adjoint, reverse, lean", [("checkpoint", None, False), ("forward", None, True),
                                                     ("checkpoint", False, True), ("forward", True, False)])
def test_lean_stages_only_where_no_reverse_pass_recomputes_the_steps(adjoint, reverse, lean):
    settings = model.SolverSettings(t_end=1e-3, output_interval=1e-4, adjoint=adjoint)
    solver = model.integrate.make_solver(settings, reverse_differentiable=reverse)
    assert isinstance(solver, diffrax.Tsit5)
    assert isinstance(solver, explicit.Tsit5) == lean
