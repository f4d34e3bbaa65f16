"""The calibration problem as one pure-JAX pytree: parameters -> simulations -> residuals.

:class:`CalibrationProblem` holds one :class:`RecordModel` per measured record (the
mechanism with that record's settings, the parameter setters, the record, already filtered,
and its loss) and the parameter transform; the residuals of all records form one vector. :func:`evaluate_forward` / :func:`evaluate_reverse` give, for
a batch of starting points ``U[start, p]`` (unconstrained, see ``parameters.py``), the loss
``mean(r^2)``, its gradient and the simulated signals, with ``jax.vmap`` over the starts:

- forward mode (``jax.jacfwd``, ``SolverSettings(adjoint="forward")``): also the residual
  Jacobian ``dr/du`` that the Gauss–Newton uncertainty needs; costs about one solve per
  parameter, so it is the choice for the few parameters of a contact calibration;
- reverse mode (``jax.value_and_grad`` with the checkpointed adjoint): cost independent of
  the number of parameters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
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


class RecordModel(eqx.Module):
    """One measured record and the simulation that should reproduce it: the mechanism (with
    the record's own settings, e.g. its driver speed), its loss and its time offset.

    It reads its values from the full vector ``x`` of fitted physical values (SI): the
    mechanism paths at ``mechanism_indices`` (shared by every record) and its own time
    offset at ``offset_index``."""

    mechanism: Mechanism
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
    offset_index: int | None = eqx.field(static=True)  # position of this record's time offset in x, if fitted

    def mechanism_at(self, x: Float[Array, " p"]) -> Mechanism:
        if not self.mechanism_paths:
            return self.mechanism
        values = x[jnp.asarray(self.mechanism_indices, int)]
        return ParameterMap(self.mechanism, self.mechanism_paths).apply(self.mechanism, values)

    def offset(self, x: Float[Array, " p"]) -> Float[Array, ""]:
        return self.fixed_offset if self.offset_index is None else x[self.offset_index]

    def predict(self, x: Float[Array, " p"]) -> Prediction:
        """Simulate with the physical values ``x`` (SI) and sample the signals at the record's
        times shifted by the offset (simulation time = record time + offset)."""
        mechanism = self.mechanism_at(x)
        trajectory = model.simulate(mechanism, self.settings)
        signals = sample_at(trajectory.t, trajectory_signals(mechanism, trajectory, self.signal_names), self.record_times + self.offset(x))
        if self.lowpass is not None:
            signals = self.lowpass(signals)
        return Prediction(signals, trajectory.result == 0, trajectory.steps.astype(jnp.float64))

    def residuals(self, x: Float[Array, " p"]) -> tuple[Float[Array, " n"], Prediction]:
        """This record's residual vector at physical ``x`` (NaN where the solver failed)."""
        prediction = self.predict(x)
        residual = self.loss(prediction.signals)
        return jnp.where(prediction.ok, residual, jnp.nan), prediction


class CalibrationProblem(eqx.Module):
    """Residuals of the fitted parameters over one or more records (see the module
    docstring): the records' residual vectors, concatenated; one loss over all of them."""

    records: tuple[RecordModel, ...]
    transform: ParameterTransform

    def residuals(self, u: Float[Array, " p"]) -> tuple[Float[Array, " n"], tuple[Prediction, ...]]:
        """The residual vector at unconstrained ``u`` and each record's prediction."""
        x = self.transform.to_physical(u)
        parts = [record.residuals(x) for record in self.records]
        return jnp.concatenate([residual for residual, _ in parts]), tuple(prediction for _, prediction in parts)

    @property
    def count(self) -> Float[Array, ""]:
        """Number of residuals that count (masked samples are zeros)."""
        return sum(record.loss.count for record in self.records)

    @property
    def loss(self) -> eqx.Module:
        """The loss of a single-record problem."""
        if len(self.records) != 1:
            raise AttributeError("a problem with several records has one loss per record (records[i].loss)")
        return self.records[0].loss

    def value(self, residual: Float[Array, " n"]) -> Float[Array, ""]:
        """``mean(r^2)`` over the residuals that count."""
        return jnp.sum(residual**2) / self.count

    def split(self, rows: np.ndarray) -> list[np.ndarray]:
        """Residuals (or Jacobian rows, along the first axis) cut into the records' parts,
        each reshaped to ``[samples, signals, ...]`` (time-domain losses)."""
        rows = np.asarray(rows)
        shapes = [record.loss.measured.shape for record in self.records]
        ends = np.cumsum([samples * signals for samples, signals in shapes])[:-1]
        return [part.reshape(shape + rows.shape[1:]) for part, shape in zip(np.split(rows, ends, axis=0), shapes)]

    def with_records(self, records) -> "CalibrationProblem":
        return eqx.tree_at(lambda p: p.records, self, tuple(records))

    def with_settings(self, change: Callable[[SolverSettings], SolverSettings]) -> "CalibrationProblem":
        """The problem with ``change(settings)`` as every record's solver settings."""
        return self.with_records([dataclasses.replace(record, settings=change(record.settings)) for record in self.records])


class Evaluation(NamedTuple):
    """One batched evaluation at ``U[start, p]``."""

    loss: Float[Array, " starts"]
    gradient: Float[Array, "starts p"]  # d loss / du
    residuals: Float[Array, "starts n"]
    jacobian: Float[Array, "starts n p"] | None  # d r / du (forward mode only)
    predictions: tuple[Prediction, ...]  # per record, batched over starts


@eqx.filter_jit
def evaluate_forward(problem: CalibrationProblem, U: Float[Array, "starts p"]) -> Evaluation:
    """Loss, gradient, residuals and residual Jacobian per start, by forward-mode AD."""

    def one(u):
        jacobian, (residual, prediction) = jax.jacfwd(lambda v: (lambda r, p: (r, (r, p)))(*problem.residuals(v)), has_aux=True)(u)
        value = problem.value(residual)
        gradient = 2.0 * jacobian.T @ residual / problem.count
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
def evaluate_loss(problem: CalibrationProblem, U: Float[Array, "points p"]) -> Float[Array, " points"]:
    """The loss ``mean(r^2)`` at each point, without derivatives (NaN where the solver failed)."""
    return jax.vmap(lambda u: problem.value(problem.residuals(u)[0]))(U)


@eqx.filter_jit
def residual_jacobian(problem: CalibrationProblem, u: Float[Array, " p"]) -> tuple[Float[Array, " n"], Float[Array, "n p"]]:
    """``(r, dr/du)`` at one point by forward mode; ``problem.settings.adjoint`` must be ``"forward"``."""
    jacobian, residual = jax.jacfwd(lambda v: (lambda r: (r, r))(problem.residuals(v)[0]), has_aux=True)(u)
    return residual, jacobian


@eqx.filter_jit
def simulated_signals(record: RecordModel, x: Float[Array, " p"]) -> tuple[Float[Array, " times"], Float[Array, "times signals"], Bool[Array, ""]]:
    """The record's signals on the simulation's output grid at physical ``x`` (no offset, no
    low-pass): what the time-offset estimate slides the record along."""
    mechanism = record.mechanism_at(x)
    trajectory = model.simulate(mechanism, record.settings)
    return trajectory.t, trajectory_signals(mechanism, trajectory, record.signal_names), trajectory.result == 0
