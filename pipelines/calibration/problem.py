"""The calibration problem as one pure-JAX pytree: parameters -> simulation -> residuals.

:class:`CalibrationProblem` holds the mechanism, the parameter setters, the measured record
(already filtered) and the loss. :func:`evaluate_forward` / :func:`evaluate_reverse` give, for
a batch of starting points ``U[start, p]`` (unconstrained, see ``parameters.py``), the loss
``mean(r^2)``, its gradient and the simulated signals, with ``jax.vmap`` over the starts:

- forward mode (``jax.jacfwd``, ``SolverSettings(adjoint="forward")``): also the residual
  Jacobian ``dr/du`` that the Gauss–Newton uncertainty needs; costs about one solve per
  parameter, so it is the choice for the few parameters of a contact calibration;
- reverse mode (``jax.value_and_grad`` with the checkpointed adjoint): cost independent of
  the number of parameters.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

import model
from model import Mechanism, SolverSettings

from ..build import ParameterMap
from .data import LowPass
from .parameters import ParameterTransform
from .signals import sample_at, trajectory_signals

TIME_OFFSET_PATH = "data.time_offset"


class Prediction(NamedTuple):
    """Simulated signals at the measurement times (after the low-pass) and solver status."""

    signals: Float[Array, "samples signals"]
    ok: Bool[Array, ""]
    steps: Float[Array, ""]


class CalibrationProblem(eqx.Module):
    """Residuals of the fitted parameters (see the module docstring)."""

    mechanism: Mechanism
    transform: ParameterTransform
    record_times: Float[Array, " samples"]  # s, record time
    loss: eqx.Module  # TimeDomainLoss | SpectralLoss | PeakLoss
    lowpass: LowPass | None
    fixed_offset: Float[Array, ""]  # s; used when the offset is not fitted
    settings: SolverSettings = eqx.field(static=True)
    signal_names: tuple[str, ...] = eqx.field(static=True)
    # The mechanism paths among the fitted parameters. Kept as strings (hashed by value) and
    # turned into setters while tracing, so that two problems loaded from the same config
    # share one compiled evaluation.
    mechanism_paths: tuple[str, ...] = eqx.field(static=True)
    mechanism_indices: tuple[int, ...] = eqx.field(static=True)  # positions of the mechanism paths in x
    offset_index: int | None = eqx.field(static=True)  # position of the time offset in x, if fitted

    def predict(self, x: Float[Array, " p"]) -> Prediction:
        """Simulate with the physical values ``x`` (SI) and sample the signals at the record's
        times shifted by the offset (simulation time = record time + offset)."""
        mechanism = self.mechanism
        if self.mechanism_paths:
            values = x[jnp.asarray(self.mechanism_indices, int)]
            mechanism = ParameterMap(mechanism, self.mechanism_paths).apply(mechanism, values)
        trajectory = model.simulate(mechanism, self.settings)
        offset = self.fixed_offset if self.offset_index is None else x[self.offset_index]
        signals = sample_at(trajectory.t, trajectory_signals(mechanism, trajectory, self.signal_names), self.record_times + offset)
        if self.lowpass is not None:
            signals = self.lowpass(signals)
        return Prediction(signals, trajectory.result == 0, trajectory.steps.astype(jnp.float64))

    def residuals(self, u: Float[Array, " p"]) -> tuple[Float[Array, " n"], Prediction]:
        """The loss's residual vector at unconstrained ``u`` (NaN where the solver failed)."""
        prediction = self.predict(self.transform.to_physical(u))
        residual = self.loss(prediction.signals)
        return jnp.where(prediction.ok, residual, jnp.nan), prediction

    def value(self, residual: Float[Array, " n"]) -> Float[Array, ""]:
        """``mean(r^2)`` over the residuals that count (masked samples are zeros)."""
        return jnp.sum(residual**2) / self.loss.count


class Evaluation(NamedTuple):
    """One batched evaluation at ``U[start, p]``."""

    loss: Float[Array, " starts"]
    gradient: Float[Array, "starts p"]  # d loss / du
    residuals: Float[Array, "starts n"]
    jacobian: Float[Array, "starts n p"] | None  # d r / du (forward mode only)
    prediction: Prediction  # batched over starts


@eqx.filter_jit
def evaluate_forward(problem: CalibrationProblem, U: Float[Array, "starts p"]) -> Evaluation:
    """Loss, gradient, residuals and residual Jacobian per start, by forward-mode AD."""

    def one(u):
        jacobian, (residual, prediction) = jax.jacfwd(lambda v: (lambda r, p: (r, (r, p)))(*problem.residuals(v)), has_aux=True)(u)
        value = problem.value(residual)
        gradient = 2.0 * jacobian.T @ residual / problem.loss.count
        return value, gradient, residual, jacobian, prediction

    value, gradient, residual, jacobian, prediction = jax.vmap(one)(U)
    return Evaluation(value, gradient, residual, jacobian, prediction)


@eqx.filter_jit
def evaluate_reverse(problem: CalibrationProblem, U: Float[Array, "starts p"]) -> Evaluation:
    """Loss and gradient per start, by reverse-mode AD (no Jacobian)."""

    def loss(u):
        residual, prediction = problem.residuals(u)
        return problem.value(residual), (residual, prediction)

    (value, (residual, prediction)), gradient = jax.vmap(jax.value_and_grad(loss, has_aux=True))(U)
    return Evaluation(value, gradient, residual, None, prediction)


@eqx.filter_jit
def residual_jacobian(problem: CalibrationProblem, u: Float[Array, " p"]) -> tuple[Float[Array, " n"], Float[Array, "n p"]]:
    """``(r, dr/du)`` at one point by forward mode; ``problem.settings.adjoint`` must be ``"forward"``."""
    jacobian, residual = jax.jacfwd(lambda v: (lambda r: (r, r))(problem.residuals(v)[0]), has_aux=True)(u)
    return residual, jacobian
