"""One simulation of a spatial mechanism, its ideal twin, the contract's columns and plots."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import jax
import numpy as np
import pandas as pd

import model
from model.integrate.settings import SolverSettings
from model.integrate.trajectory import SpatialTrajectory
from model.mechanics.spatial import SpatialMechanism, initial_state, without_redundant_rows
from model.metrics_spatial import spatial_summary_metrics

from .build_spatial import build_spatial, spatial_settings
from .config_spatial import SpatialConfig


@dataclass
class SpatialRun:
    config: SpatialConfig
    mechanism: SpatialMechanism
    settings: SolverSettings
    trajectory: SpatialTrajectory
    ideal: SpatialTrajectory | None
    ideal_mechanism: SpatialMechanism | None
    compile_seconds: float
    run_seconds: float
    status: str


def ideal_twin(mechanism: SpatialMechanism) -> SpatialMechanism:
    """Clearance joints replaced by ideal ones, dependent rows removed at the initial pose
    (``model/mechanics/spatial/redundancy.py``)."""
    twin = mechanism.idealised()
    return without_redundant_rows(twin, initial_state(twin).x)


def _status(trajectory: SpatialTrajectory) -> str:
    message = model.result_message(int(trajectory.result))
    if message != "ok":
        return message
    return "ok" if np.all(np.isfinite(np.asarray(trajectory.x))) else "non-finite state"


def run_spatial(config: SpatialConfig, with_ideal: bool = True, **changes) -> SpatialRun:
    mechanism = build_spatial(config)
    settings = spatial_settings(config, **changes)
    start = time.perf_counter()
    compiled = jax.jit(model.simulate, static_argnums=1).lower(mechanism, settings).compile()
    compiled_at = time.perf_counter()
    trajectory = jax.block_until_ready(compiled(mechanism))
    done = time.perf_counter()
    ideal = twin = None
    if with_ideal and mechanism.clearance_joints:
        twin = ideal_twin(mechanism)
        ideal = jax.jit(model.simulate, static_argnums=1)(twin, settings)
    return SpatialRun(config, mechanism, settings, trajectory, ideal, twin, compiled_at - start, done - compiled_at,
                      _status(trajectory))


def spatial_timeseries(mechanism: SpatialMechanism, trajectory: SpatialTrajectory) -> pd.DataFrame:
    """``B.x .. B.az`` per body and ``J.ex .. J.slip_velocity`` per clearance joint (SI)."""
    columns: dict[str, np.ndarray] = {"t": np.asarray(trajectory.t)}
    x, v, a = (np.asarray(array) for array in (trajectory.x, trajectory.v, trajectory.vdot))
    for b, name in enumerate(mechanism.body_names):
        for k, label in enumerate("xyz"):
            columns[f"{name}.{label}"] = x[:, 7 * b + k]
        quaternion = x[:, 7 * b + 3 : 7 * b + 7]
        quaternion = quaternion / np.linalg.norm(quaternion, axis=1, keepdims=True)
        for k in range(4):
            columns[f"{name}.q{k}"] = quaternion[:, k]
        for k, label in enumerate("xyz"):
            columns[f"{name}.v{label}"] = v[:, 6 * b + k]
        for k, label in enumerate("xyz"):
            columns[f"{name}.w{label}"] = v[:, 6 * b + 3 + k]
        for k, label in enumerate("xyz"):
            columns[f"{name}.a{label}"] = a[:, 6 * b + k]
    for k, name in enumerate(mechanism.clearance_names):
        columns[f"{name}.ex"] = np.asarray(trajectory.eccentricity[:, k, 0])
        columns[f"{name}.ey"] = np.asarray(trajectory.eccentricity[:, k, 1])
        for field in ("tilt", "penetration", "normal_force", "normal_force_a", "normal_force_b", "tangential_force",
                      "slip_velocity"):
            columns[f"{name}.{field}"] = np.asarray(getattr(trajectory, field)[:, k])
    for d, name in enumerate(mechanism.driver_names):
        columns[f"{name}.torque"] = np.asarray(trajectory.driver_torques[:, d])
    return pd.DataFrame(columns)


def spatial_summary(run: SpatialRun) -> dict:
    data: dict = {n: float(v) for n, v in spatial_summary_metrics(run.mechanism, run.trajectory).items()}
    trajectory = run.trajectory
    data["solver"] = {"name": run.settings.solver, "steps": int(trajectory.steps),
                      "rejected_steps": int(trajectory.rejected_steps), "status": run.status,
                      "compile_seconds": run.compile_seconds, "run_seconds": run.run_seconds,
                      "rtol": run.settings.rtol, "atol": run.settings.atol, "dtmax": run.settings.dtmax}
    for k, name in enumerate(run.mechanism.clearance_names):
        data[f"{name}.max_penetration_over_clearance"] = float(
            np.max(np.asarray(trajectory.penetration[:, k])) / float(run.mechanism.clearance_joints[k].clearance))
    data["max_constraint_violation"] = float(np.max(np.asarray(trajectory.constraint_violation)))
    if run.ideal is not None:
        data["ideal"] = {n: float(v) for n, v in spatial_summary_metrics(run.ideal_mechanism, run.ideal).items()}
        data["ideal"]["max_constraint_violation"] = float(np.max(np.asarray(run.ideal.constraint_violation)))
    return data


def plot_spatial(run: SpatialRun, out: Path) -> list[str]:
    """``orbits.png`` (each end of the contact length in the bearing, and the clearance
    circle) and ``forces.png`` (resultant and end normal forces)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mechanism, trajectory = run.mechanism, run.trajectory
    names = []
    if not mechanism.clearance_names:
        return names
    figure, axes = plt.subplots(1, len(mechanism.clearance_names), figsize=(5 * len(mechanism.clearance_names), 5),
                                squeeze=False)
    for k, name in enumerate(mechanism.clearance_names):
        axis = axes[0, k]
        joint = mechanism.clearance_joints[k]
        c = float(joint.clearance) * 1e3
        angle = np.linspace(0, 2 * np.pi, 200)
        axis.plot(c * np.cos(angle), c * np.sin(angle), "k--", lw=0.8, label="clearance")
        e = np.asarray(trajectory.eccentricity[:, k]) * 1e3
        axis.plot(e[:, 0], e[:, 1], lw=0.8, label="centre")
        axis.set_aspect("equal"), axis.set_xlabel("e_u (mm)"), axis.set_ylabel("e_w (mm)"), axis.set_title(name)
        axis.legend(fontsize=7)
    figure.tight_layout(), figure.savefig(out / "orbits.png", dpi=120), plt.close(figure)
    names.append("orbits.png")
    figure, axis = plt.subplots(figsize=(8, 4))
    t = np.asarray(trajectory.t) * 1e3
    for k, name in enumerate(mechanism.clearance_names):
        axis.plot(t, np.asarray(trajectory.normal_force[:, k]), label=f"{name} resultant")
        axis.plot(t, np.asarray(trajectory.normal_force_a[:, k]), "--", label=f"{name} end a")
        axis.plot(t, np.asarray(trajectory.normal_force_b[:, k]), ":", label=f"{name} end b")
    axis.set_xlabel("t (ms)"), axis.set_ylabel("normal force (N)"), axis.legend(fontsize=7)
    figure.tight_layout(), figure.savefig(out / "forces.png", dpi=120), plt.close(figure)
    names.append("forces.png")
    return names
