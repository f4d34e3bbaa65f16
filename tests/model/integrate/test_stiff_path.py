"""The stiff path: ``StageChord`` (the default root finder of the implicit solvers)
solves stiff problems in f-space (Kvaerno*) and k-space (KenCarp*), keeps ``vmap`` and
``grad`` working, and gets through Flores impacts without a rejection storm."""

import pathlib

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism

from model.integrate import StageChord, make_solver
from tests.helpers import FLORES

CONFIG = FLORES
LAMBDA = 1e4  # 1/s: stiff relaxation of the test problem


def _relaxation(t, y, args):
    # y0' = -L (y0 - cos t) (stiff), y1' = y0 - y1; y0 -> cos t + O(1/L) after ~1/L
    rate = LAMBDA if args is None else args
    return jnp.stack([-rate * (y[0] - jnp.cos(t)), y[0] - y[1]])


def _solve(solver_name, rate=None, rtol=1e-7, atol=1e-10):
    settings = model.SolverSettings(t_end=1.0, output_interval=1.0, solver=solver_name, rtol=rtol, atol=atol)
    solver = make_solver(settings)
    assert isinstance(solver.root_finder, StageChord)
    term = diffrax.ODETerm(_relaxation)
    if solver_name.startswith("kencarp"):
        zero = diffrax.ODETerm(lambda t, y, args: jnp.zeros_like(y))
        term = diffrax.MultiTerm(zero, term)
    return diffrax.diffeqsolve(term, solver, 0.0, 1.0, None, jnp.array([1.0, 0.0]), args=rate,
                               stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
                               max_steps=10_000, throw=False)


def _exact_y0(t, rate=LAMBDA):
    # particular solution (L^2 cos t + L sin t) / (L^2 + 1); the transient decays at e^{-L t}
    return (rate**2 * np.cos(t) + rate * np.sin(t)) / (rate**2 + 1)


@pytest.mark.parametrize("solver_name", ["kvaerno5", "kencarp4"])  # f-space and k-space stages
def test_stage_chord_solves_stiff_relaxation(solver_name):
    solution = _solve(solver_name)
    assert bool(solution.result == diffrax.RESULTS.successful)
    assert float(solution.ys[0, 0]) == pytest.approx(_exact_y0(1.0), rel=1e-6)
    steps = int(solution.stats["num_steps"])
    # explicit stability alone would need > 1e4 * 1 s / 3.3 steps; the L-stable path needs few
    assert steps < 300
    assert int(solution.stats["num_rejected_steps"]) < steps


@pytest.mark.slow
def test_stage_chord_vmap_and_grad():
    def final_y0(rate):
        return _solve("kvaerno5", rate).ys[0, 0]

    rates = jnp.array([1e3, 1e4])
    batched = jax.vmap(final_y0)(rates)
    np.testing.assert_allclose(np.asarray(batched), _exact_y0(1.0, np.asarray(rates)), rtol=1e-6)
    derivative = float(jax.grad(final_y0)(1e4))
    # d/dL of the particular solution at t = 1
    rate, step = 1e4, 1.0
    expected = (_exact_y0(1.0, rate + step) - _exact_y0(1.0, rate - step)) / (2 * step)
    assert derivative == pytest.approx(expected, rel=1e-3, abs=1e-12)


def test_default_jacobian_mode_is_chord():
    settings = model.SolverSettings(t_end=1e-3, output_interval=1e-5, solver="kvaerno5")
    assert settings.jacobian == "chord"
    with pytest.raises(ValueError):
        make_solver(model.SolverSettings(t_end=1e-3, output_interval=1e-5, solver="kvaerno5", jacobian="bogus"))


@pytest.mark.slow
def test_chord_gets_through_flores_impact_like_newton():
    # 0.35 ms covers the first Flores impact. With the f-space test (diffrax's VeryChord)
    # Kvaerno5 needed ~2x the steps and rejected half of them; with full Newton it rebuilt
    # the Jacobian every iteration. StageChord: about the steps of full Newton, one
    # Jacobian per step.
    config = load_mechanism(CONFIG)
    mechanism = build_mechanism(config)
    window = dict(t_end=3.5e-4, output_interval=1e-6, rtol=1e-6, atol=1e-9, solver="kvaerno5")
    simulate = jax.jit(model.simulate, static_argnums=1)
    chord = simulate(mechanism, solver_settings(config, **window))
    newton = simulate(mechanism, solver_settings(config, jacobian="newton", **window))
    assert int(chord.result) == 0 and int(newton.result) == 0
    assert int(chord.steps) <= 1.3 * int(newton.steps)
    assert int(chord.rejected_steps) < 0.5 * int(chord.steps)
    np.testing.assert_allclose(np.max(np.asarray(chord.penetration)), np.max(np.asarray(newton.penetration)), rtol=1e-3)


def test_placeholder_jacobian_is_not_evaluated():
    """diffrax opens each step with ``root_finder.init`` at a zero diagonal (a placeholder
    that ESDIRKs overwrite): StageChord answers ``-I`` without the ``jacfwd``. A relation
    whose Jacobian is NaN shows which branch ran."""
    from model.integrate.chord import StageChord

    chord = StageChord(rtol=1e-6, atol=1e-9)
    y = jnp.ones(3)

    def poisoned(f, args):
        return f * jnp.nan, None

    def factors(diagonal):
        args = (jnp.array(1), jnp.asarray(diagonal), None, None, 0.0, y, None, 1e-3)
        return jax.jit(lambda: chord.init(poisoned, y, args, {}, None, None, frozenset()).lu[0])()

    lu = factors(0.0)
    np.testing.assert_array_equal(jnp.abs(jnp.diag(lu)), jnp.ones(3))
    assert bool(jnp.any(jnp.isnan(factors(0.25))))
