"""One simulation of a configured planar or spatial mechanism, with its ideal-joint twin,
timed and checked; its ``timeseries.parquet`` columns (:mod:`pipelines.columns`) and its
``summary.json``. Only the start check (a planar body's angle, a spatial body's
quaternion), the kinetic energy of the start and the state the status checks tell the
dimensions apart."""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import model
from model.mechanics.interface import AbstractMechanism
from model.integrate.settings import SolverSettings

from .build import build_mechanism, solver_settings
from .config import MechanismConfig
from .config.spatial import SpatialConfig
from .columns import Attachment, as_arrays, output_columns, tracked_point_path
from .errors import ConfigError
from .flexible_outputs import flexible_summary

# Initial positions further than this from the joints' constraint manifold are refused
# (m for positions, rad for angles); smaller violations are projected away with a warning.
POSITION_TOLERANCE = 1e-3
ANGLE_TOLERANCE = 1e-2
PROJECTION_WARNING = 1e-7


@dataclass
class SimulationRun:
    """A finished run: the model, its trajectory, the ideal twin's and the timings."""

    config: MechanismConfig | SpatialConfig
    mechanism: AbstractMechanism
    settings: SolverSettings
    trajectory: model.Trajectory | model.SpatialTrajectory
    ideal: model.Trajectory | model.SpatialTrajectory | None
    ideal_mechanism: AbstractMechanism | None
    compile_seconds: float
    run_seconds: float
    status: str  # "ok" or why the solve failed

    @functools.cached_property
    def tracked(self) -> dict[str, Attachment]:
        """The config's tracked points (:func:`tracked_points`)."""
        return tracked_points(self.config)

    @functools.cached_property
    def columns(self) -> dict[str, np.ndarray]:
        """Every output column (computed once: the timeseries, the summary and the plots
        read them)."""
        return as_arrays(output_columns(self.mechanism, self.trajectory, self.tracked))


def tracked_points(config: MechanismConfig | SpatialConfig) -> dict[str, Attachment]:
    """``[[tracked_points]]`` of a spatial config: name -> (engine body, body-frame point in
    m; on a flexible body the segment that holds the point); none on a planar config."""
    points = getattr(config, "tracked_points", None) or []
    if not points:
        return {}
    from .build_flexible import BodyLayout

    layout = BodyLayout(config)
    return {point["name"]: layout.attach(point["body"], point["point"]) for point in points}


def tracked_point_paths(run, trajectory) -> dict[str, np.ndarray]:
    """Ground-frame positions (times x 3, m) of ``run.config``'s tracked points."""
    return {name: np.asarray(tracked_point_path(trajectory, attachment))
            for name, attachment in tracked_points(run.config).items()}


def _rotation_angle(first: np.ndarray, second: np.ndarray) -> float:
    """Angle (rad) of the rotation between two unit quaternions (scalar first)."""
    cosine = abs(float(np.dot(first, second))) / max(float(np.linalg.norm(first) * np.linalg.norm(second)), 1e-300)
    return 2.0 * float(np.arccos(min(cosine, 1.0)))


@eqx.filter_jit
def _spatial_projection(ideal):
    """The configured positions projected onto the ideal joints, and the joints' residual there."""
    from model.mechanics.spatial.constraints import all_constraints
    from model.mechanics.spatial.dynamics import project_positions

    projected = project_positions(ideal, ideal.initial_positions)
    return projected, all_constraints(ideal, projected, jnp.zeros((), projected.dtype))


def _projection_moves(mechanism: AbstractMechanism) -> tuple[bool, np.ndarray]:
    """Whether the configured positions project onto the ideal joints, and each body's move
    there: (distance in m, rotation angle in rad) per body."""
    given = np.asarray(mechanism.initial_positions)
    if mechanism.dimension == 2:
        from model.mechanics.dynamics import project_onto_constraints

        projection = project_onto_constraints(mechanism.idealised(), mechanism.initial_positions)
        moves = (np.asarray(projection.positions) - given).reshape(-1, 3)
        return bool(projection.converged), np.stack([np.hypot(moves[:, 0], moves[:, 1]), np.abs(moves[:, 2])], axis=1)
    ideal = mechanism.idealised()
    # the joint engine's twin wraps the absolute description, whose rows are projected on
    projected, residual = (np.asarray(a) for a in _spatial_projection(getattr(ideal, "absolute", ideal)))
    converged = not residual.size or float(np.max(np.abs(residual))) < POSITION_TOLERANCE * 1e-3
    blocks = [(projected[7 * b : 7 * b + 7], given[7 * b : 7 * b + 7]) for b in range(len(mechanism.body_names))]
    return converged, np.array([(np.linalg.norm(p[:3] - g[:3]), _rotation_angle(p[3:], g[3:])) for p, g in blocks])


def check_initial_positions(config: MechanismConfig | SpatialConfig, mechanism: AbstractMechanism) -> None:
    """Refuse configured positions far from the ideal joints, warn about small corrections
    (a spatial body's rotation measured by the angle between the quaternions).

    The configured positions describe the assembly with every journal centred; the
    initial eccentricities are applied afterwards by :func:`model.initial_state`.
    """
    converged, moves = _projection_moves(mechanism)
    if not converged:
        raise ConfigError(config.source, "bodies", "the initial positions cannot be projected onto the joints "
                          "(Gauss-Newton did not converge); check the body positions, joint points, axes and drivers")
    for name, (shift, angle) in zip(mechanism.body_names, moves):
        body = name.split("[")[0]  # a flexible body's segment B[k] is configured as B
        if not np.isfinite(shift) or shift > POSITION_TOLERANCE or angle > ANGLE_TOLERANCE:
            raise ConfigError(config.source, f"bodies.{body}.position",
                              f"initial position violates the joints by {shift * 1e3:.3g} mm / "
                              f"{np.degrees(angle):.3g} deg; fix the positions (tolerance 1 mm, 0.57 deg)")
        if shift > PROJECTION_WARNING or angle > PROJECTION_WARNING:
            warnings.warn(f"{config.source}: bodies.{body}.position: projected onto the joints "
                          f"(moved {shift * 1e3:.3g} mm, {np.degrees(angle):.3g} deg)", stacklevel=2)


def trajectory_status(trajectory: model.Trajectory | model.SpatialTrajectory) -> str:
    """``"ok"``, the solver's failure, or ``"non-finite state"``; never a silent NaN."""
    message = model.result_message(int(trajectory.result))
    if message != "ok":
        return message
    positions = trajectory.x if isinstance(trajectory, model.SpatialTrajectory) else trajectory.q
    if not np.all(np.isfinite(np.asarray(positions))):
        return "non-finite state"
    return "ok"


def _timed_simulate(mechanism: AbstractMechanism, settings: SolverSettings
                    ) -> tuple[model.Trajectory | model.SpatialTrajectory, float, float]:
    start = time.perf_counter()
    compiled = jax.jit(model.simulate, static_argnums=1).lower(mechanism, settings).compile()
    compiled_at = time.perf_counter()
    trajectory = jax.block_until_ready(compiled(mechanism))
    return trajectory, compiled_at - start, time.perf_counter() - compiled_at


def run_simulation(config: MechanismConfig | SpatialConfig, with_ideal: bool = True, **settings_changes) -> SimulationRun:
    """Build, check, compile and solve ``config`` (planar or spatial); also its ideal-joint
    twin (the clearance joints made ideal, same start)."""
    mechanism = build_mechanism(config)
    check_initial_positions(config, mechanism)
    settings = solver_settings(config, **settings_changes)
    trajectory, compile_seconds, run_seconds = _timed_simulate(mechanism, settings)
    ideal = twin = None
    if with_ideal and mechanism.clearance_joints:
        twin = mechanism.idealised()
        ideal = jax.jit(model.simulate, static_argnums=1)(twin, settings)
    return SimulationRun(config, mechanism, settings, trajectory, ideal, twin, compile_seconds, run_seconds,
                         trajectory_status(trajectory))


def timeseries_frame(run: SimulationRun) -> pd.DataFrame:
    """``timeseries.parquet``: ``t`` and every column of :mod:`pipelines.columns` (SI)."""
    return pd.DataFrame({"t": np.asarray(run.trajectory.t), **run.columns})


def joint_regimes(mechanism, trajectory) -> dict:
    """Per clearance joint ``J`` of a planar or spatial run: ``J.regime`` (shares of the
    output samples in free flight, impact and continuous contact, :func:`model.regimes`),
    ``J.contact_period_estimate`` (s, :func:`model.contact_periods`) and
    ``J.max_penetration_over_clearance`` (over the metrics' window)."""
    regime = model.regimes(mechanism, trajectory)
    counted = np.asarray(trajectory.t) >= float(mechanism.metrics_start())
    periods = model.contact_periods(mechanism)
    data: dict = {}
    for k, name in enumerate(mechanism.clearance_names):
        data[f"{name}.regime"] = {share: float(getattr(regime, share)[k]) for share in model.Regime._fields}
        data[f"{name}.contact_period_estimate"] = float(periods[k])
        data[f"{name}.max_penetration_over_clearance"] = float(
            np.max(np.asarray(trajectory.penetration[:, k])[counted]) / float(mechanism.clearance_joints[k].clearance)
        )
    return data


def velocity_projection(mechanism, trajectory) -> dict:
    """``initial_velocity_projection``: how far the start's velocities ``v`` (the first output
    sample) are from the requested ones ``v*`` (``initial_velocity_targets``; zero when none
    were requested), in the kinetic-energy metric: ``change`` = ``1/2 (v - v*)^T M (v - v*)``
    (J; ``M`` the mass matrix, rotational inertias included), ``requested`` =
    ``1/2 v*^T M v*`` (J) and ``relative`` = ``sqrt(change / requested)`` (the share of the
    requested motion the joints and drivers refused or added; null when nothing was
    requested)."""
    if mechanism.dimension == 2:
        from model.mechanics.dynamics import kinetic_energy

        start = trajectory.qd[0]
        energy = lambda velocities: kinetic_energy(mechanism, velocities)  # noqa: E731
    else:
        from model.mechanics.spatial.dynamics import kinetic_energy

        start = trajectory.v[0]
        energy = lambda velocities: kinetic_energy(mechanism, trajectory.x[0], velocities)  # noqa: E731
    targets = mechanism.initial_velocity_targets
    targets = np.zeros(start.shape) if targets is None or mechanism.initial_velocities == "zero" else targets
    change, requested = float(energy(start - targets)), float(energy(np.asarray(targets, float)))
    return {"initial_velocity_projection": {
        "change": change, "requested": requested,
        "relative": float(np.sqrt(change / requested)) if requested > 0.0 else None}}


def window_and_transients(mechanism, trajectory) -> dict:
    """``metrics_window`` (the ``[metrics]`` window the peaks count: ``skip`` in s,
    ``skip_revolutions``, and its ``start`` in s) and ``start_transient``
    (:func:`model.start_transient` per clearance joint, from the output samples, and whether
    the window leaves each transient out) of a planar or spatial run."""
    window = mechanism.metrics_window
    start = float(mechanism.metrics_start())
    found = model.start_transient(trajectory.t, trajectory.normal_force)
    joints = {}
    for k, name in enumerate(mechanism.clearance_names):
        detected = bool(found.detected[k])
        end = float(found.end_time[k]) if detected else None
        joints[name] = {"detected": detected, "end_time": end, "peak": float(found.peak[k]),
                        "later_peak": float(found.later_peak[k]),
                        "excluded": detected and start >= end}
    ends = [joint["end_time"] for joint in joints.values() if joint["detected"]]
    return {
        "metrics_window": {"skip": float(window.skip), "skip_revolutions": float(window.revolutions), "start": start},
        "start_transient": {"detected": bool(ends), "end_time": max(ends) if ends else None,
                            "excluded": bool(ends) and all(joint["excluded"] for joint in joints.values()
                                                           if joint["detected"]),
                            "joints": joints},
    }


def _metrics(mechanism: AbstractMechanism, trajectory) -> dict:
    """:func:`model.summary_metrics` as floats, and ``max_constraint_violation`` (m)."""
    data: dict = {name: float(value) for name, value in model.summary_metrics(mechanism, trajectory).items()}
    data["max_constraint_violation"] = float(np.max(np.asarray(trajectory.constraint_violation)))
    return data


def summary(run: SimulationRun) -> dict:
    """``summary.json``: the contract's metrics plus regimes, start transients, the start's
    velocity projection, flexible bodies' peaks, ideal-joint figures and the solver record."""
    mechanism, trajectory = run.mechanism, run.trajectory
    data = _metrics(mechanism, trajectory)
    violation = data.pop("max_constraint_violation")
    data["solver"] = {"name": run.settings.solver, "steps": int(trajectory.steps),
                      "rejected_steps": int(trajectory.rejected_steps), "status": run.status,
                      "compile_seconds": run.compile_seconds, "run_seconds": run.run_seconds,
                      "rtol": run.settings.rtol, "atol": run.settings.atol, "dtmax": run.settings.dtmax}
    data.update(joint_regimes(mechanism, trajectory))
    data.update(window_and_transients(mechanism, trajectory))
    data.update(velocity_projection(mechanism, trajectory))
    data.update(flexible_summary(mechanism, run.columns, trajectory.t))
    data["max_constraint_violation"] = violation
    if run.ideal is not None:
        data["ideal"] = _metrics(run.ideal_mechanism, run.ideal)
    return data
