"""Performance metrics of a mechanism with clearance joints, robust over uncertain parameters.

Per simulated sample (one draw of the uncertain parameters), on the output grid:

- every contract summary metric (``model.summary_metrics``): ``J.max_normal_force`` (N),
  ``J.max_penetration`` (m), ``J.first_impact_time`` (s), ``J.first_impact_velocity``
  (m/s), ``J.num_impacts``, ``J.contact_fraction``, ``B.max_abs_ax``, ``B.max_abs_ay``
  (and ``B.max_abs_az`` for a spatial mechanism; m/s^2);
- ``J.impact_fraction``: share of time in impacts, from ``model.regimes`` (contact
  episodes shorter than a few contact periods);
- against the ideal mechanism (``mechanism.idealised()``, every clearance joint made an
  ideal pin, simulated with the same settings): ``B.rms_acceleration_error`` (m/s^2), the
  RMS over time of ``|a_B - a_B,ideal|`` (the centre-of-mass acceleration vector), and
  ``B.max_position_error`` (m), the peak of ``|r_B - r_B,ideal|``.

Maxima over time are differentiable almost everywhere (the derivative is the one of the
peak sample); for design they can be replaced by the smooth upper bound
``T log sum exp(x / T)`` (``max <= smooth_max <= max + T log N``), which spreads the
derivative over the samples within a few ``T`` of the peak. Counts and shares
(``num_impacts``, ``contact_fraction``, ``impact_fraction``) are piecewise constant: their
derivative is zero, so the optimiser cannot steer them and only the verification sweep
checks them (:data:`ZERO_GRADIENT_METRICS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

import model
from model import metrics as model_metrics
from model.mechanics.interface import AbstractMechanism
from model.integrate.settings import SolverSettings
from model.integrate.trajectory import Trajectory

# metric -> dimension (pipelines.units names), per clearance joint and per body.
# The contract's metrics plus the design pipeline's own.
DESIGN_JOINT_METRICS = {**model_metrics.JOINT_METRICS, "impact_fraction": "dimensionless"}
IDEAL_BODY_METRICS = {"rms_acceleration_error": "acceleration", "max_position_error": "length"}
ZERO_GRADIENT_METRICS = ("num_impacts", "contact_fraction", "impact_fraction")
# Maxima over time that have a smooth (LogSumExp) version.
SMOOTHABLE_METRICS = ("max_normal_force", "max_penetration", "max_abs_ax", "max_abs_ay", "max_abs_az", "max_position_error")


def design_body_metrics(dimension: int) -> dict[str, str]:
    """The per-body metrics of a ``dimension``-D mechanism with their dimension."""
    return {**model_metrics.body_metric_dimensions(dimension), **IDEAL_BODY_METRICS}

_TINY = 1e-30  # keeps sqrt differentiable at exactly zero error (t = 0)


def metric_dimensions(mechanism: AbstractMechanism) -> dict[str, str]:
    """Every metric :func:`trajectory_metrics` can produce for ``mechanism``, with its dimension."""
    names = {f"{joint}.{m}": dim for joint in mechanism.clearance_names for m, dim in DESIGN_JOINT_METRICS.items()}
    body = design_body_metrics(mechanism.dimension)
    names.update({f"{name}.{m}": dim for name in mechanism.body_names for m, dim in body.items()})
    return names


def metric_kind(name: str) -> str:
    """The metric part of ``"<joint or body>.<metric>"``."""
    return name.rsplit(".", 1)[-1]


def needs_ideal(names: Sequence[str]) -> bool:
    """Whether any metric compares against the ideal mechanism."""
    return any(metric_kind(name) in IDEAL_BODY_METRICS for name in names)


def smooth_max(values: Float[Array, " n"], temperature: float | Array) -> Float[Array, ""]:
    """``T log sum exp(x / T)``: a smooth upper bound of ``max(x)``, within ``T log n`` of it."""
    return temperature * jax.nn.logsumexp(values / temperature)


def smooth_min(values: Float[Array, " n"], temperature: float | Array) -> Float[Array, ""]:
    """Smooth lower bound of ``min(x)``: ``-smooth_max(-x)``."""
    return -smooth_max(-values, temperature)


def _time_max(series: Float[Array, " times"], name: str, temperatures: Mapping[str, float]) -> Float[Array, ""]:
    return smooth_max(series, temperatures[name]) if name in temperatures else jnp.max(series)


def trajectory_metrics(
    mechanism: AbstractMechanism,
    trajectory: Trajectory,
    ideal: Trajectory | None = None,
    temperatures: Mapping[str, float] | None = None,
) -> dict[str, Array]:
    """All metrics of one simulated sample (SI), keyed ``"<joint>.<metric>"``/``"<body>.<metric>"``.

    ``ideal``: the idealised mechanism's trajectory on the same output grid (without it the
    ideal-based metrics are left out). ``temperatures``: metric name -> ``T`` (in the
    metric's unit) for those maxima over time to be replaced by :func:`smooth_max`.
    """
    temperatures = dict(temperatures or {})
    metrics = dict(model.summary_metrics(mechanism, trajectory))
    impact_share = model.regimes(mechanism, trajectory).impact
    for k, joint in enumerate(mechanism.clearance_names):
        metrics[f"{joint}.impact_fraction"] = impact_share[k]
        metrics[f"{joint}.max_normal_force"] = _time_max(trajectory.normal_force[:, k], f"{joint}.max_normal_force", temperatures)
        metrics[f"{joint}.max_penetration"] = _time_max(trajectory.penetration[:, k], f"{joint}.max_penetration", temperatures)
    accelerations = trajectory.body_accelerations  # [times, bodies, dimension]
    for b, body in enumerate(mechanism.body_names):
        for axis, label in enumerate(model_metrics.AXES[: mechanism.dimension]):
            name = f"{body}.max_abs_a{label}"
            metrics[name] = _time_max(jnp.abs(accelerations[:, b, axis]), name, temperatures)
        if ideal is None:
            continue
        acceleration_error = accelerations[:, b] - ideal.body_accelerations[:, b]
        metrics[f"{body}.rms_acceleration_error"] = jnp.sqrt(jnp.mean(jnp.sum(acceleration_error**2, axis=1)) + _TINY)
        position_error = trajectory.body_positions[:, b] - ideal.body_positions[:, b]
        distance = jnp.sqrt(jnp.sum(position_error**2, axis=1) + _TINY)
        metrics[f"{body}.max_position_error"] = _time_max(distance, f"{body}.max_position_error", temperatures)
    return metrics


def simulate_metrics(
    mechanism: AbstractMechanism,
    settings: SolverSettings,
    with_ideal: bool,
    temperatures: Mapping[str, float] | None = None,
) -> dict[str, Array]:
    """Simulate ``mechanism`` (and its ideal twin when ``with_ideal``) once and return its
    hard metrics, ``"smooth:<name>"`` for each metric in ``temperatures`` (its smooth
    maximum over time), ``"solver.result"`` (0 = ok, for both runs) and ``"solver.steps"``."""
    trajectory = model.simulate(mechanism, settings)
    ideal = model.simulate(mechanism.idealised(), settings) if with_ideal else None
    metrics = trajectory_metrics(mechanism, trajectory, ideal)
    if temperatures:
        smooth = trajectory_metrics(mechanism, trajectory, ideal, temperatures)
        metrics.update({f"smooth:{name}": smooth[name] for name in temperatures})
    result = trajectory.result if ideal is None else jnp.maximum(trajectory.result, ideal.result)
    metrics["solver.result"] = result
    metrics["solver.steps"] = trajectory.steps
    return metrics
