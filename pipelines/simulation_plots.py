"""Figures of a ``simulate`` run, planar or spatial, written beside ``timeseries.parquet``
(the list: docs/outputs.md). The clearance joints' panels follow their kinds
(:data:`ORBIT_CURVES`, :data:`FORCE_CURVES`, keyed like
:data:`pipelines.columns.JOINT_COLUMNS`) and draw output columns; :data:`FIGURES` says
which figures a run has."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .columns import clearance_joint_kinds, output_column
from .io import save_figure

MM = 1e3
# Per clearance joint kind: the orbit curves (label, x column, y column) and their axes.
ORBIT_CURVES = {
    "revolute_clearance": ((("journal centre", "ex", "ey"),), ("e_x (mm)", "e_y (mm)")),
    "cylindrical_clearance": ((("end a (z = -l/2)", "ex_a", "ey_a"), ("end b (z = +l/2)", "ex_b", "ey_b")),
                              ("e_u (mm)", "e_w (mm)")),
    "spherical_clearance": ((("ball centre (u, w)", "ex", "ey"),), ("e_u (mm)", "e_w (mm)")),
}
# Per clearance joint kind: the force curves (label, column).
FORCE_CURVES = {
    "revolute_clearance": (("normal force", "normal_force"),),
    "cylindrical_clearance": (("end a (z = -l/2)", "normal_force_a"), ("end b (z = +l/2)", "normal_force_b")),
    "spherical_clearance": (("normal force", "normal_force"),),
}
FORCE_FIGURE = {2: "normal_force.png", 3: "end_forces.png"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def drive_angle(run) -> tuple[np.ndarray, str]:
    """The abscissa of the figures over the run: a planar mechanism's first driver's joint
    angle in degrees (unwrapped), else time in ms."""
    mechanism, trajectory = run.mechanism, run.trajectory
    if mechanism.dimension != 2 or not mechanism.drivers:
        return np.asarray(trajectory.t) * MM, "t (ms)"
    import jax

    from model.mechanics.constraints import body_pose

    joint = mechanism.revolute_joints[mechanism.drivers[0].joint]
    relative_angle = jax.vmap(lambda row: body_pose(row, joint.body_j)[1] - body_pose(row, joint.body_i)[1])
    return np.degrees(np.asarray(relative_angle(trajectory.q))), f"{mechanism.driver_names[0]} joint angle (deg)"


def _column(run, name: str) -> np.ndarray:
    return np.asarray(output_column(run.mechanism, run.trajectory, name))


def _with_ideal(axis, run, abscissa, values, label: str) -> None:
    """``values(trajectory)`` of the run (thin) and of its ideal twin (black), if it was run."""
    axis.plot(abscissa, values(run.trajectory), lw=0.7, label=f"{label}clearance")
    if run.ideal is not None:
        axis.plot(abscissa, values(run.ideal), "k", lw=1.2, label=f"{label}ideal")
    axis.legend(fontsize=7, loc="upper right")


def plot_accelerations(run, out: Path) -> list[str]:
    """Each rigid body's acceleration against the ideal mechanism's (planar)."""
    angle, label = drive_angle(run)
    # Segments of flexible bodies (named "B[k]") are left out: their bodies get their own plot.
    bodies = [(b, name) for b, name in enumerate(run.mechanism.body_names) if "[" not in name]
    figure, axes = _pyplot().subplots(len(bodies), 2, figsize=(10, 2.6 * len(bodies)), squeeze=False, sharex=True)
    for row, (b, name) in enumerate(bodies):
        for c, component in enumerate(("ax", "ay")):
            _with_ideal(axes[row, c], run, angle, lambda trajectory: np.asarray(trajectory.qdd[:, 3 * b + c]), "")
            axes[row, c].set_ylabel(f"{name}.{component} (m/s²)")
            if np.ptp(np.asarray(run.trajectory.qdd[:, 3 * b + c])) < 1e-6:
                axes[row, c].set_ylim(-1.0, 1.0)  # constrained to zero: hide round-off
    for axis in axes[-1]:
        axis.set_xlabel(label)
    figure.suptitle("Body accelerations: clearance joints vs ideal joints")
    save_figure(out / "accelerations.png", figure)
    return ["accelerations.png"]


def plot_tracked_points(run, out: Path) -> list[str]:
    """Tracked points: y displacement over time and the paths, against the ideal twin's."""
    from .simulation import tracked_point_paths

    paths = tracked_point_paths(run, run.trajectory)
    ideal = tracked_point_paths(run, run.ideal) if run.ideal is not None else {}
    plt = _pyplot()
    t = np.asarray(run.trajectory.t) * MM
    figure, axes = plt.subplots(len(paths), 3, figsize=(14, 4.2 * len(paths)), squeeze=False, layout="constrained")
    figure.suptitle("Tracked points: clearance joints vs ideal joints")
    for row, (name, path) in enumerate(paths.items()):
        displacement, path_axes = axes[row, 0], axes[row, 1:]
        displacement.plot(t, (path[:, 1] - path[0, 1]) * MM, lw=1.0, label="clearance joints")
        if name in ideal:
            displacement.plot(t, (ideal[name][:, 1] - ideal[name][0, 1]) * MM, "k--", lw=0.9, label="ideal joints")
        displacement.set_xlabel("t (ms)"), displacement.set_ylabel(f"{name}: y displacement (mm)")
        displacement.legend(fontsize=8)
        for axis, (first, label) in zip(path_axes, ((0, "x"), (2, "z"))):
            axis.plot(path[:, first] * MM, path[:, 1] * MM, lw=1.0, label="clearance joints")
            if name in ideal:
                axis.plot(ideal[name][:, first] * MM, ideal[name][:, 1] * MM, "k--", lw=0.9, label="ideal joints")
            axis.plot(path[0, first] * MM, path[0, 1] * MM, "o", ms=4, color="C2", label="start")
            axis.set_xlabel(f"{name}: {label} (mm)"), axis.set_ylabel(f"{name}: y (mm)")
            axis.set_title(f"path in the {label}-y plane", fontsize=10), axis.legend(fontsize=8)
    save_figure(out / "tracked_points.png", figure)
    return ["tracked_points.png"]


def plot_forces(run, out: Path) -> list[str]:
    """Per clearance joint, its normal force (a cylindrical joint's two end forces)."""
    mechanism = run.mechanism
    names, kinds = mechanism.clearance_names, clearance_joint_kinds(mechanism)
    abscissa, label = drive_angle(run)
    plt = _pyplot()
    figure, axes = plt.subplots(len(names), 1, figsize=(10, 3.2 * len(names)), squeeze=False, sharex=True,
                                layout="constrained")
    figure.suptitle("Clearance-joint normal forces")
    for axis, name, kind in zip(axes[:, 0], names, kinds):
        for curve, suffix in FORCE_CURVES[kind]:
            axis.plot(abscissa, _column(run, f"{name}.{suffix}"), lw=0.9, label=curve)
        axis.set_ylabel(f"{name}: force (N)"), axis.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel(label)
    file = FORCE_FIGURE[mechanism.dimension]
    save_figure(out / file, figure)
    return [file]


def plot_orbits(run, out: Path) -> list[str]:
    """Per clearance joint, its journal orbit(s) inside the clearance circle."""
    mechanism = run.mechanism
    names, kinds = mechanism.clearance_names, clearance_joint_kinds(mechanism)
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 5.2), squeeze=False, layout="constrained")
    figure.suptitle("Journal orbits in the clearance circle")
    angle = np.linspace(0.0, 2.0 * np.pi, 361)
    for k, (axis, name, kind) in enumerate(zip(axes[0], names, kinds)):
        c = float(mechanism.clearance_joints[k].clearance) * MM
        axis.plot(c * np.cos(angle), c * np.sin(angle), "k--", lw=0.8, label="clearance circle")
        curves, (xlabel, ylabel) = ORBIT_CURVES[kind]
        for curve, x, y in curves:
            axis.plot(_column(run, f"{name}.{x}") * MM, _column(run, f"{name}.{y}") * MM, lw=0.8, label=curve)
        axis.set_aspect("equal"), axis.set_xlabel(xlabel), axis.set_ylabel(ylabel)
        axis.set_title(name, fontsize=10), axis.legend(fontsize=8, loc="upper right")
        axis.set_xlim(-1.45 * c, 1.45 * c), axis.set_ylim(-1.45 * c, 1.45 * c)
    save_figure(out / "orbits.png", figure)
    return ["orbits.png"]


def _rubbing(run) -> list[tuple[int, str]]:
    joints = run.mechanism.clearance_joints
    return [(k, name) for k, name in enumerate(run.mechanism.clearance_names) if joints[k].friction.model != "none"]


def plot_friction(run, out: Path) -> list[str]:
    """Slip speed and the friction law's coefficient in contact, per rubbing joint."""
    from model.contact.friction import friction_coefficient

    rubbing = _rubbing(run)
    if not rubbing:  # no friction law anywhere: nothing to plot
        return []
    plt = _pyplot()
    figure, axes = plt.subplots(len(rubbing), 2, figsize=(12, 3.2 * len(rubbing)), squeeze=False, sharex=True,
                                layout="constrained")
    figure.suptitle("friction at the clearance joints")
    t = np.asarray(run.trajectory.t) * MM
    for row, (k, name) in enumerate(rubbing):
        slip = _column(run, f"{name}.slip_velocity")
        in_contact = _column(run, f"{name}.penetration") > 0.0
        law = run.mechanism.clearance_joints[k].friction
        coefficient = np.where(in_contact, np.abs(np.asarray(friction_coefficient(law, slip))), np.nan)
        axes[row, 0].plot(t, slip * MM, lw=0.8)
        axes[row, 0].set_ylabel(f"{name}: slip speed,\ndeepest slice (mm/s)")
        axes[row, 0].set_yscale("symlog", linthresh=1.0)
        axes[row, 1].plot(t, coefficient, ".", ms=2)
        axes[row, 1].set_ylabel(f"{name}: friction coefficient\nmu(slip), in contact (-)")
    for axis in axes[-1]:
        axis.set_xlabel("t (ms)")
    save_figure(out / "friction.png", figure)
    return ["friction.png"]


def plot_driver_torques(run, out: Path) -> list[str]:
    """Driver torques, with the ideal mechanism's for comparison."""
    angle, label = drive_angle(run)
    figure, axis = _pyplot().subplots(figsize=(8, 4))
    for d, name in enumerate(run.mechanism.driver_names):
        _with_ideal(axis, run, angle, lambda trajectory: np.asarray(trajectory.driver_torques[:, d]), f"{name} ")
    axis.set_xlabel(label), axis.set_ylabel("torque (N m)"), axis.set_title("Driver torque")
    save_figure(out / "driver_torque.png", figure)
    return ["driver_torque.png"]


def plot_flexible_bodies(run, out: Path) -> list[str]:
    from .flexible_outputs import plot_flexible

    columns = {"t": np.asarray(run.trajectory.t), **run.columns}
    return [Path(path).name for path in plot_flexible(run.mechanism, columns, out)]


# (figure, whether the run has it), in the order they are drawn.
FIGURES = (
    (plot_accelerations, lambda run: run.mechanism.dimension == 2
     and any("[" not in body for body in run.mechanism.body_names)),
    (plot_tracked_points, lambda run: bool(getattr(run.config, "tracked_points", None))),
    (plot_forces, lambda run: bool(run.mechanism.clearance_joints)),
    (plot_orbits, lambda run: bool(run.mechanism.clearance_joints)),
    (plot_friction, lambda run: run.mechanism.dimension == 3 and bool(run.mechanism.clearance_joints)),
    (plot_driver_torques, lambda run: run.mechanism.dimension == 2 and bool(run.mechanism.drivers)),
    (plot_flexible_bodies, lambda run: bool(run.mechanism.beam_chains)),
)


def plot_simulation(run, out: Path) -> list[str]:
    """Every figure the run has; returns the file names written."""
    return [name for plot, applies in FIGURES if applies(run) for name in plot(run, out)]
