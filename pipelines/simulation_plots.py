"""Plots of one simulation, readable at a glance (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import jax  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from model.mechanics.constraints import body_pose  # noqa: E402

from .io import save_figure  # noqa: E402
from .simulation import SimulationRun  # noqa: E402


def drive_angle(run: SimulationRun) -> tuple[np.ndarray, str]:
    """The first driver's joint angle in degrees (unwrapped), or time in ms."""
    mechanism, trajectory = run.mechanism, run.trajectory
    if not mechanism.drivers:
        return np.asarray(trajectory.t) * 1e3, "time (ms)"
    joint = mechanism.revolute_joints[mechanism.drivers[0].joint]
    relative_angle = jax.vmap(lambda row: body_pose(row, joint.body_j)[1] - body_pose(row, joint.body_i)[1])
    return np.degrees(np.asarray(relative_angle(trajectory.q))), f"{mechanism.driver_names[0]} joint angle (deg)"


def plot_orbits(run: SimulationRun, out: Path) -> None:
    """Journal-centre orbit inside the clearance circle, per clearance joint."""
    names = run.mechanism.clearance_names
    figure, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 4.5), squeeze=False)
    for k, (axis, name) in enumerate(zip(axes[0], names)):
        clearance_mm = float(run.mechanism.clearance_joints[k].clearance) * 1e3
        ecc = np.asarray(run.trajectory.eccentricity[:, k, :]) * 1e3
        circle = np.linspace(0, 2 * np.pi, 361)
        axis.plot(clearance_mm * np.cos(circle), clearance_mm * np.sin(circle), "k--", lw=1, label="clearance circle")
        axis.plot(ecc[:, 0], ecc[:, 1], lw=0.8, label="journal centre")
        axis.plot(ecc[0, 0], ecc[0, 1], "go", ms=4, label="start")
        axis.set_aspect("equal")
        axis.set_title(f"{name}: journal orbit")
        axis.set_xlabel("e_x (mm)")
        axis.set_ylabel("e_y (mm)")
        axis.legend(fontsize=7, loc="upper right")
    save_figure(out / "orbits.png", figure)


def plot_normal_forces(run: SimulationRun, out: Path) -> None:
    """Normal contact force against the drive angle, per clearance joint."""
    angle, label = drive_angle(run)
    figure, axis = plt.subplots(figsize=(8, 4))
    for k, name in enumerate(run.mechanism.clearance_names):
        axis.plot(angle, np.asarray(run.trajectory.normal_force[:, k]) * 1e-3, lw=0.8, label=name)
    axis.set_xlabel(label)
    axis.set_ylabel("normal force (kN)")
    axis.set_title("Clearance-joint normal forces")
    axis.legend()
    save_figure(out / "normal_force.png", figure)


def plot_accelerations(run: SimulationRun, out: Path) -> None:
    """Each body's acceleration against the ideal mechanism's."""
    angle, label = drive_angle(run)
    # Segments of flexible bodies (named "B[k]") are left out: their bodies get their own plot.
    bodies = [(b, name) for b, name in enumerate(run.mechanism.body_names) if "[" not in name]
    figure, axes = plt.subplots(len(bodies), 2, figsize=(10, 2.6 * len(bodies)), squeeze=False, sharex=True)
    for row, (b, name) in enumerate(bodies):
        for c, component in enumerate(("ax", "ay")):
            axis = axes[row, c]
            axis.plot(angle, np.asarray(run.trajectory.qdd[:, 3 * b + c]), lw=0.7, label="clearance")
            if run.ideal is not None:
                axis.plot(angle, np.asarray(run.ideal.qdd[:, 3 * b + c]), "k", lw=1.2, label="ideal")
            axis.set_ylabel(f"{name}.{component} (m/s²)")
            if np.ptp(np.asarray(run.trajectory.qdd[:, 3 * b + c])) < 1e-6:
                axis.set_ylim(-1.0, 1.0)  # constrained to zero: hide round-off
            axis.legend(fontsize=7, loc="upper right")
    for axis in axes[-1]:
        axis.set_xlabel(label)
    figure.suptitle("Body accelerations: clearance joints vs ideal joints")
    save_figure(out / "accelerations.png", figure)


def plot_driver_torques(run: SimulationRun, out: Path) -> None:
    """Driver torques, with the ideal mechanism's for comparison."""
    if not run.mechanism.drivers:
        return
    angle, label = drive_angle(run)
    figure, axis = plt.subplots(figsize=(8, 4))
    for d, name in enumerate(run.mechanism.driver_names):
        axis.plot(angle, np.asarray(run.trajectory.driver_torques[:, d]), lw=0.7, label=f"{name} (clearance)")
        if run.ideal is not None:
            axis.plot(angle, np.asarray(run.ideal.driver_torques[:, d]), "k", lw=1.2, label=f"{name} (ideal)")
    axis.set_xlabel(label)
    axis.set_ylabel("torque (N m)")
    axis.set_title("Driver torque")
    axis.legend()
    save_figure(out / "driver_torque.png", figure)


def plot_simulation(run: SimulationRun, out: Path) -> list[str]:
    """All plots of a run; returns the file names written."""
    names = []
    if any("[" not in name for name in run.mechanism.body_names):
        plot_accelerations(run, out)
        names.append("accelerations.png")
    if run.mechanism.clearance_joints:
        plot_orbits(run, out)
        plot_normal_forces(run, out)
        names += ["orbits.png", "normal_force.png"]
    if run.mechanism.drivers:
        plot_driver_torques(run, out)
        names.append("driver_torque.png")
    if run.mechanism.beam_chains:
        from .flexible_outputs import plot_flexible

        columns = {"t": np.asarray(run.trajectory.t), **run.flexible_columns}
        names += [Path(path).name for path in plot_flexible(run.mechanism, columns, out)]
    return names
