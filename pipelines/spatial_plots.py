"""Figures of a spatial ``simulate`` run (written beside ``timeseries.parquet``).

- ``tracked_points.png``: per ``[[tracked_points]]`` entry, the y displacement against time and
  the paths in the x–y and z–y planes, with the ideal twin (clearance joints made ideal, same
  start) dashed when it was run;
- ``end_forces.png``: per clearance joint, the two end forces ``normal_force_a/b`` of a
  cylindrical joint (the normal force of a spherical one);
- ``orbits.png``: per cylindrical joint, the journal axis' points at both ends of the
  contact length in the bearing's cross-section, with the clearance circle (a spherical
  joint: the ball centre's (u, w) projection);
- ``friction.png``: per clearance joint, the slip speed at the deepest slice and the friction
  coefficient the law gives there, ``mu(slip)``, while the joint is in contact. (The ratio of
  the resultants ``F_t / F_n`` is no friction coefficient: when a tilted journal bears on
  opposite sides at its two ends, the slice normal forces cancel in the resultant while
  their friction forces need not.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

MM = 1e3


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_tracked_points(run, out: Path) -> list[str]:
    from .simulation_spatial import tracked_point_paths

    if not run.config.tracked_points:
        return []
    plt = _pyplot()
    paths = tracked_point_paths(run, run.trajectory)
    ideal = tracked_point_paths(run, run.ideal) if run.ideal is not None else {}
    t = np.asarray(run.trajectory.t) * MM
    figure, axes = plt.subplots(len(paths), 3, figsize=(14, 4.2 * len(paths)), squeeze=False, layout="constrained")
    for row, (name, path) in enumerate(paths.items()):
        displacement, path_axes = axes[row, 0], axes[row, 1:]
        start = path[0]
        displacement.plot(t, (path[:, 1] - start[1]) * MM, lw=1.0, label="clearance joints")
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
    figure.savefig(out / "tracked_points.png", dpi=110), plt.close(figure)
    return ["tracked_points.png"]


def plot_end_forces(run, out: Path) -> list[str]:
    mechanism, trajectory = run.mechanism, run.trajectory
    names = mechanism.clearance_names
    plt = _pyplot()
    figure, axes = plt.subplots(len(names), 1, figsize=(10, 3.2 * len(names)), squeeze=False, sharex=True,
                                layout="constrained")
    t = np.asarray(trajectory.t) * MM
    for k, name in enumerate(names):
        axis = axes[k, 0]
        if k < len(mechanism.cylindrical_joints):
            axis.plot(t, np.asarray(trajectory.normal_force_a[:, k]), lw=0.9, label="end a (z = -l/2)")
            axis.plot(t, np.asarray(trajectory.normal_force_b[:, k]), lw=0.9, label="end b (z = +l/2)", alpha=0.8)
        else:
            axis.plot(t, np.asarray(trajectory.normal_force[:, k]), lw=0.9, label="normal force")
        axis.set_ylabel(f"{name}: force (N)"), axis.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("t (ms)")
    figure.savefig(out / "end_forces.png", dpi=110), plt.close(figure)
    return ["end_forces.png"]


def plot_orbits(run, out: Path) -> list[str]:
    from .simulation_spatial import end_eccentricities

    mechanism, trajectory = run.mechanism, run.trajectory
    names = mechanism.clearance_names
    ends = end_eccentricities(mechanism, trajectory) * MM
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 5.2), squeeze=False, layout="constrained")
    angle = np.linspace(0.0, 2.0 * np.pi, 240)
    for k, name in enumerate(names):
        axis = axes[0, k]
        c = float(mechanism.clearance_joints[k].clearance) * MM
        axis.plot(c * np.cos(angle), c * np.sin(angle), "k--", lw=0.8, label="clearance circle")
        if k < len(mechanism.cylindrical_joints):
            axis.plot(ends[:, k, 0, 0], ends[:, k, 0, 1], lw=0.8, label="end a (z = -l/2)")
            axis.plot(ends[:, k, 1, 0], ends[:, k, 1, 1], lw=0.8, label="end b (z = +l/2)", alpha=0.8)
        else:
            centre = np.asarray(trajectory.eccentricity[:, k]) * MM
            axis.plot(centre[:, 0], centre[:, 1], lw=0.8, label="ball centre (u, w)")
        axis.set_aspect("equal"), axis.set_xlabel("e_u (mm)"), axis.set_ylabel("e_w (mm)")
        axis.set_title(name, fontsize=10), axis.legend(fontsize=8, loc="upper right")
        axis.set_xlim(-1.45 * c, 1.45 * c), axis.set_ylim(-1.45 * c, 1.45 * c)
    figure.savefig(out / "orbits.png", dpi=110), plt.close(figure)
    return ["orbits.png"]


def plot_friction(run, out: Path) -> list[str]:
    from model.contact.friction import friction_coefficient

    mechanism, trajectory = run.mechanism, run.trajectory
    rubbing = [(k, name) for k, name in enumerate(mechanism.clearance_names)
               if mechanism.clearance_joints[k].friction.model != "none"]
    if not rubbing:  # no friction law anywhere: nothing to plot
        return []
    plt = _pyplot()
    figure, axes = plt.subplots(len(rubbing), 2, figsize=(12, 3.2 * len(rubbing)), squeeze=False, sharex=True,
                                layout="constrained")
    figure.suptitle("friction at the clearance joints")
    t = np.asarray(trajectory.t) * MM
    for row, (k, name) in enumerate(rubbing):
        slip = np.asarray(trajectory.slip_velocity[:, k])
        in_contact = np.asarray(trajectory.penetration[:, k]) > 0.0
        law = mechanism.clearance_joints[k].friction
        coefficient = np.where(in_contact, np.abs(np.asarray(friction_coefficient(law, slip))), np.nan)
        axes[row, 0].plot(t, slip * MM, lw=0.8)
        axes[row, 0].set_ylabel(f"{name}: slip speed,\ndeepest slice (mm/s)"), axes[row, 0].set_yscale("symlog", linthresh=1.0)
        axes[row, 1].plot(t, coefficient, ".", ms=2)
        axes[row, 1].set_ylabel(f"{name}: friction coefficient\nmu(slip), in contact (-)")
    for axis in axes[-1]:
        axis.set_xlabel("t (ms)")
    figure.savefig(out / "friction.png", dpi=110), plt.close(figure)
    return ["friction.png"]


def plot_all(run, out: Path) -> list[str]:
    names = plot_tracked_points(run, out)
    if run.mechanism.clearance_names:
        for plot in (plot_end_forces, plot_orbits, plot_friction):
            names += plot(run, out)
    if run.mechanism.beam_chains:
        from .flexible_outputs import plot_flexible

        columns = {"t": np.asarray(run.trajectory.t), **run.flexible_columns}
        names += [Path(path).name for path in plot_flexible(run.mechanism, columns, out)]
    return names
