"""One simulation of a configured mechanism, with its ideal-joint twin, timed and checked."""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass

import jax
import numpy as np
import pandas as pd

import model
from model.mechanics.dynamics import project_onto_constraints
from model.mechanics.mechanism import Mechanism
from model.integrate.settings import SolverSettings
from model.integrate.trajectory import Trajectory

from .build import build_mechanism, solver_settings
from .config import MechanismConfig
from .errors import ConfigError
from .flexible_outputs import flexible_arrays, flexible_summary

# Initial positions further than this from the joints' constraint manifold are refused
# (m for positions, rad for angles); smaller violations are projected away with a warning.
POSITION_TOLERANCE = 1e-3
ANGLE_TOLERANCE = 1e-2
PROJECTION_WARNING = 1e-7
# per ideal joint: the force (N, ground x and y) and moment (N m, about the joint's point)
# on its second body, from the multipliers (model.mechanics.dynamics.joint_reactions)
PLANAR_REACTIONS = ("reaction_x", "reaction_y", "reaction_moment")


@dataclass
class SimulationRun:
    """A finished run: the model, its trajectory, the ideal mechanism's and the timings."""

    config: MechanismConfig
    mechanism: Mechanism
    settings: SolverSettings
    trajectory: Trajectory
    ideal: Trajectory | None
    compile_seconds: float
    run_seconds: float
    status: str  # "ok" or why the solve failed

    @functools.cached_property
    def flexible_columns(self) -> dict[str, np.ndarray]:
        """The flexible bodies' output columns (computed once: the timeseries, the summary
        and the plot all read them)."""
        return flexible_arrays(self.mechanism, self.trajectory)


def check_initial_positions(config: MechanismConfig, mechanism: Mechanism) -> None:
    """Refuse configured positions far from the ideal joints, warn about small corrections.

    The configured positions describe the assembly with every journal centred; the
    initial eccentricities are applied afterwards by :func:`model.initial_state`.
    """
    given = np.asarray(mechanism.initial_positions)
    projection = project_onto_constraints(mechanism.idealised(), mechanism.initial_positions)
    if not bool(projection.converged):
        raise ConfigError(
            config.source, "bodies",
            "the initial positions cannot be projected onto the joints (Gauss-Newton did not converge); "
            "check the body positions, joint points and drivers",
        )
    projected = np.asarray(projection.positions)
    for body, (dx, dy, dtheta) in zip(mechanism.body_names, (projected - given).reshape(-1, 3)):
        shift = float(np.hypot(dx, dy))
        if not np.isfinite(shift) or shift > POSITION_TOLERANCE or abs(dtheta) > ANGLE_TOLERANCE:
            raise ConfigError(
                config.source, f"bodies.{body}.position",
                f"initial position violates the joints by {shift * 1e3:.3g} mm / {np.degrees(dtheta):.3g} deg; "
                "fix the positions (tolerance 1 mm, 0.57 deg)",
            )
        if shift > PROJECTION_WARNING or abs(dtheta) > PROJECTION_WARNING:
            warnings.warn(
                f"{config.source}: bodies.{body}.position: projected onto the joints "
                f"(moved {shift * 1e3:.3g} mm, {np.degrees(dtheta):.3g} deg)", stacklevel=2
            )


def trajectory_status(trajectory: Trajectory) -> str:
    """``"ok"``, the solver's failure, or ``"non-finite state"``; never a silent NaN."""
    message = model.result_message(int(trajectory.result))
    if message != "ok":
        return message
    if not np.all(np.isfinite(np.asarray(trajectory.q))):
        return "non-finite state"
    return "ok"


def _timed_simulate(mechanism: Mechanism, settings: SolverSettings) -> tuple[Trajectory, float, float]:
    start = time.perf_counter()
    compiled = jax.jit(model.simulate, static_argnums=1).lower(mechanism, settings).compile()
    compiled_at = time.perf_counter()
    trajectory = jax.block_until_ready(compiled(mechanism))
    return trajectory, compiled_at - start, time.perf_counter() - compiled_at


def run_simulation(config: MechanismConfig, with_ideal: bool = True, **settings_changes) -> SimulationRun:
    """Build, check, compile and solve ``config``; also its ideal-joint twin."""
    mechanism = build_mechanism(config)
    check_initial_positions(config, mechanism)
    settings = solver_settings(config, **settings_changes)
    trajectory, compile_seconds, run_seconds = _timed_simulate(mechanism, settings)
    ideal = None
    if with_ideal and mechanism.clearance_joints:
        ideal = jax.jit(model.simulate, static_argnums=1)(mechanism.idealised(), settings)
    return SimulationRun(config, mechanism, settings, trajectory, ideal, compile_seconds, run_seconds,
                         trajectory_status(trajectory))


def timeseries_frame(run: SimulationRun) -> pd.DataFrame:
    """The contract's ``timeseries.parquet`` columns (SI units)."""
    mechanism, trajectory = run.mechanism, run.trajectory
    columns: dict[str, np.ndarray] = {"t": np.asarray(trajectory.t)}
    q, qd, qdd = (np.asarray(a) for a in (trajectory.q, trajectory.qd, trajectory.qdd))
    for b, name in enumerate(mechanism.body_names):
        for k, (pos, vel, acc) in enumerate((("x", "vx", "ax"), ("y", "vy", "ay"), ("theta", "omega", "alpha"))):
            columns[f"{name}.{pos}"] = q[:, 3 * b + k]
            columns[f"{name}.{vel}"] = qd[:, 3 * b + k]
            columns[f"{name}.{acc}"] = qdd[:, 3 * b + k]
    for k, name in enumerate(mechanism.clearance_names):
        columns[f"{name}.ex"] = np.asarray(trajectory.eccentricity[:, k, 0])
        columns[f"{name}.ey"] = np.asarray(trajectory.eccentricity[:, k, 1])
        columns[f"{name}.penetration"] = np.asarray(trajectory.penetration[:, k])
        columns[f"{name}.normal_force"] = np.asarray(trajectory.normal_force[:, k])
        columns[f"{name}.tangential_force"] = np.asarray(trajectory.tangential_force[:, k])
        columns[f"{name}.slip_velocity"] = np.asarray(trajectory.slip_velocity[:, k])
    for d, name in enumerate(mechanism.driver_names):
        columns[f"{name}.torque"] = np.asarray(trajectory.driver_torques[:, d])
    reactions = np.asarray(trajectory.joint_reactions)
    for k, name in enumerate(mechanism.joint_names):
        for c, label in enumerate(PLANAR_REACTIONS):
            columns[f"{name}.{label}"] = reactions[:, k, c]
    columns.update(run.flexible_columns)
    return pd.DataFrame(columns)


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
        data[f"{name}.regime"] = {
            "free_flight": float(regime.free_flight[k]),
            "impact": float(regime.impact[k]),
            "continuous_contact": float(regime.continuous_contact[k]),
        }
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


def summary(run: SimulationRun) -> dict:
    """``summary.json``: the contract's metrics plus regimes, ideal-joint figures and
    the solver record."""
    mechanism, trajectory = run.mechanism, run.trajectory
    data: dict = {name: float(value) for name, value in model.summary_metrics(mechanism, trajectory).items()}
    data["solver"] = {
        "name": run.settings.solver,
        "steps": int(trajectory.steps),
        "rejected_steps": int(trajectory.rejected_steps),
        "status": run.status,
        "compile_seconds": run.compile_seconds,
        "run_seconds": run.run_seconds,
        "rtol": run.settings.rtol,
        "atol": run.settings.atol,
        "dtmax": run.settings.dtmax,
    }
    data.update(joint_regimes(mechanism, trajectory))
    data.update(window_and_transients(mechanism, trajectory))
    data.update(velocity_projection(mechanism, trajectory))
    data.update(flexible_summary(mechanism, run.flexible_columns, trajectory.t))
    data["max_constraint_violation"] = float(np.max(np.asarray(trajectory.constraint_violation)))
    if run.ideal is not None:
        data["ideal"] = {
            name: float(value)
            for name, value in model.summary_metrics(mechanism.idealised(), run.ideal).items()
        }
        data["ideal"]["max_constraint_violation"] = float(np.max(np.asarray(run.ideal.constraint_violation)))
    return data
