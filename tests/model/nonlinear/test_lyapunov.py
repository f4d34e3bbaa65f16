"""Lyapunov exponents against published values and exact identities.

The sum of all exponents equals the time average of the vector field's divergence, which
is constant for Lorenz (-(sigma + 1 + beta)) and for the Ueda-Duffing oscillator written
autonomously (-0.05), so the sum is checked to the solver's tolerance; the individual
exponents converge as 1/T and are checked against the published values (Lorenz: 0.906,
0, -14.57; Ueda-Duffing: 0.0999, 0, -0.1499; Sprott 2003, "Chaos and Time-Series
Analysis") within what the short runs here resolve. The longer runs are the validation
tier at the end of this file (docs/nonlinear.md records their numbers).
"""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.nonlinear import lyapunov_exponents

SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
LORENZ = (0.906, 0.0, -14.572)
DUFFING = (0.0999, 0.0, -0.1499)


def lorenz(t, y, args):
    sigma, rho, beta = args
    return jnp.stack([sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1], y[0] * y[1] - beta * y[2]])


def duffing(t, y, args):
    """Ueda's oscillator x'' + 0.05 x' + x^3 = 7.5 cos(theta), theta' = 1 (autonomous form)."""
    return jnp.stack([y[1], -0.05 * y[1] - y[0] ** 3 + 7.5 * jnp.cos(y[2]), jnp.ones_like(y[0])])


def _spectrum(field, y0s, args, interval, num_intervals):
    """The spectrum from each of ``y0s``: vmapped over several, one plain solve for one."""
    controller = diffrax.PIDController(rtol=1e-8, atol=1e-8)

    def one(y0):
        return lyapunov_exponents(field, y0, args, t0=0.0, interval=interval, num_intervals=num_intervals,
                                  num_exponents=3, transient_intervals=round(20.0 / interval),
                                  stepsize_controller=controller)

    y0s = jnp.asarray(y0s)
    if len(y0s) > 1:
        return jax.jit(jax.vmap(one))(y0s)
    return jax.tree.map(lambda leaf: leaf[None], jax.jit(one)(y0s[0]))


def test_lorenz_spectrum_two_starts_in_one_batch():
    """Two starting points under vmap, 200 time units each: the attractor's spectrum."""
    result = _spectrum(lorenz, [[1.0, 1.0, 20.0], [-5.0, 3.0, 25.0]], (SIGMA, RHO, BETA), 1.0, 200)
    assert np.all(result.success)
    np.testing.assert_allclose(result.exponents.sum(axis=1), -(SIGMA + 1.0 + BETA), rtol=1e-6)
    for exponents, change in zip(np.asarray(result.exponents), np.asarray(result.change)):
        # at T = 200 the estimate is within a few hundredths (5000 time units: 0.905, docs)
        np.testing.assert_allclose(exponents, LORENZ, atol=0.06)
        assert np.all(change < 0.1)


def test_ueda_duffing_spectrum():
    """300 forcing periods: the sum exactly, the exponents to the run's resolution."""
    result = _spectrum(duffing, [[2.5, 0.0, 0.0]], None, 2.0 * np.pi, 300)
    exponents = np.asarray(result.exponents[0])
    assert bool(result.success[0])
    np.testing.assert_allclose(exponents.sum(), -0.05, rtol=1e-6)
    np.testing.assert_allclose(exponents, DUFFING, atol=0.015)


ANGLE = 0.4
ROTATION = jnp.array([[np.cos(ANGLE), -np.sin(ANGLE)], [np.sin(ANGLE), np.cos(ANGLE)]])


def _linear_exponents(a, adjoint=None):
    """Exponents of ``y' = A y``, ``A = R diag(a, -1) R^T``: ``(a, -1)`` exactly as T grows."""
    matrix = ROTATION @ jnp.diag(jnp.stack([a, -1.0])) @ ROTATION.T
    return lyapunov_exponents(lambda t, y, m: m @ y, jnp.array([1.0, 0.0]), matrix, t0=0.0, interval=1.0,
                              num_intervals=40, num_exponents=2, adjoint=adjoint).exponents


def test_linear_system_exponents_and_their_derivative():
    """``d lambda_1 / d a = 1`` by forward mode through the solves."""
    exponents, tangent = jax.jit(lambda a: jax.jvp(lambda b: _linear_exponents(b, diffrax.ForwardMode()), (a,), (1.0,)))(0.3)
    np.testing.assert_allclose(exponents, [0.3, -1.0], atol=0.03)  # the start's projection, O(1/T)
    np.testing.assert_allclose(tangent, [1.0, 0.0], atol=1e-6)


@pytest.mark.slow
@pytest.mark.validation
def test_linear_system_reverse_mode():
    """The same derivative by reverse mode (``jax.grad``) through the scan of solves."""
    gradient = jax.jit(jax.grad(lambda a: _linear_exponents(a)[0]))(0.3)
    np.testing.assert_allclose(gradient, 1.0, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.validation
def test_long_runs_against_published_values():
    """Lorenz over 10,000 time units, Ueda-Duffing over 10,000 (1,592 periods)."""
    lorenz_result = _spectrum(lorenz, [[1.0, 1.0, 20.0]], (SIGMA, RHO, BETA), 1.0, 10_000)
    np.testing.assert_allclose(lorenz_result.exponents[0], LORENZ, atol=0.005)
    duffing_result = _spectrum(duffing, [[2.5, 0.0, 0.0]], None, 2.0 * np.pi, 1592)
    np.testing.assert_allclose(duffing_result.exponents[0], DUFFING, atol=0.003)
