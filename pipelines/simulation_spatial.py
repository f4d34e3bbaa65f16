"""One simulation of a spatial mechanism, its ideal twin, the contract's columns and plots."""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import model
from model.integrate.settings import SolverSettings
from model.integrate.trajectory import SpatialTrajectory
from model.geometry.quaternion import rotation_matrix
from model.mechanics.spatial import SpatialMechanism
from model.mechanics.spatial.constraints import all_constraints, body_pose, point_position
from model.mechanics.spatial.dynamics import project_positions
from model.metrics_spatial import spatial_summary_metrics

from .build import solver_settings
from .build_spatial import SpatialLayout, build_spatial
from .flexible_outputs import flexible_arrays, flexible_summary
from .config.spatial import SpatialConfig
from .errors import ConfigError
from .simulation import (ANGLE_TOLERANCE, POSITION_TOLERANCE, PROJECTION_WARNING, joint_regimes, velocity_projection,
                         window_and_transients)


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

    @functools.cached_property
    def flexible_columns(self) -> dict[str, np.ndarray]:
        """The flexible bodies' output columns (computed once: the timeseries, the summary
        and the plot all read them)."""
        return flexible_arrays(self.mechanism, self.trajectory)


def _status(trajectory: SpatialTrajectory) -> str:
    message = model.result_message(int(trajectory.result))
    if message != "ok":
        return message
    return "ok" if np.all(np.isfinite(np.asarray(trajectory.x))) else "non-finite state"


def _rotation_angle(first: np.ndarray, second: np.ndarray) -> float:
    """Angle (rad) of the rotation between two unit quaternions (scalar first)."""
    cosine = abs(float(np.dot(first, second))) / max(float(np.linalg.norm(first) * np.linalg.norm(second)), 1e-300)
    return 2.0 * float(np.arccos(min(cosine, 1.0)))


@eqx.filter_jit
def _projection(ideal: SpatialMechanism):
    """The configured positions projected onto the ideal joints, and the joints' residual there."""
    projected = project_positions(ideal, ideal.initial_positions)
    return projected, all_constraints(ideal, projected, jnp.zeros((), projected.dtype))


def check_initial_positions(config: SpatialConfig, mechanism: SpatialMechanism) -> None:
    """Refuse configured poses far from the ideal joints, warn about small corrections: the
    planar check (:func:`pipelines.simulation.check_initial_positions`, same tolerances) on
    the spatial poses, the rotation measured by the angle between the quaternions.

    The configured poses describe the assembly with every journal centred; the initial
    eccentricities are applied afterwards by :func:`model.initial_state`.
    """
    given = np.asarray(mechanism.initial_positions)
    projected, residual = (np.asarray(a) for a in _projection(mechanism.idealised()))
    if residual.size and not float(np.max(np.abs(residual))) < POSITION_TOLERANCE * 1e-3:
        raise ConfigError(config.source, "bodies", "the initial positions cannot be projected onto the joints "
                                                   "(Gauss-Newton did not converge); check the body positions, joint points and axes")
    for b, name in enumerate(mechanism.body_names):
        shift = float(np.linalg.norm(projected[7 * b : 7 * b + 3] - given[7 * b : 7 * b + 3]))
        angle = _rotation_angle(projected[7 * b + 3 : 7 * b + 7], given[7 * b + 3 : 7 * b + 7])
        body = name.split("[")[0]  # a flexible body's segment B[k] is configured as B
        if not np.isfinite(shift) or shift > POSITION_TOLERANCE or angle > ANGLE_TOLERANCE:
            raise ConfigError(config.source, f"bodies.{body}.position",
                              f"initial position violates the joints by {shift * 1e3:.3g} mm / {np.degrees(angle):.3g} deg; "
                              "fix the positions (tolerance 1 mm, 0.57 deg)")
        if shift > PROJECTION_WARNING or angle > PROJECTION_WARNING:
            warnings.warn(f"{config.source}: bodies.{body}.position: projected onto the joints "
                          f"(moved {shift * 1e3:.3g} mm, {np.degrees(angle):.3g} deg)", stacklevel=2)


def run_spatial(config: SpatialConfig, with_ideal: bool = True, **changes) -> SpatialRun:
    mechanism = build_spatial(config)
    check_initial_positions(config, mechanism)
    settings = solver_settings(config, **changes)
    start = time.perf_counter()
    compiled = jax.jit(model.simulate, static_argnums=1).lower(mechanism, settings).compile()
    compiled_at = time.perf_counter()
    trajectory = jax.block_until_ready(compiled(mechanism))
    done = time.perf_counter()
    ideal = twin = None
    if with_ideal and mechanism.clearance_joints:
        twin = mechanism.idealised()  # without the twin's redundant rows (found at build time)
        ideal = jax.jit(model.simulate, static_argnums=1)(twin, settings)
    return SpatialRun(config, mechanism, settings, trajectory, ideal, twin, compiled_at - start, done - compiled_at,
                      _status(trajectory))


CYLINDRICAL_FIELDS = ("tilt", "penetration", "normal_force", "normal_force_a", "normal_force_b", "tangential_force",
                      "slip_velocity")
SPHERICAL_FIELDS = ("penetration", "normal_force", "tangential_force", "slip_velocity")
# per ideal joint: the force (N) and moment (N m, about the joint's point) on its second
# body, ground frame, from the multipliers (model.mechanics.spatial.dynamics.joint_reactions)
SPATIAL_REACTIONS = ("reaction_x", "reaction_y", "reaction_z", "reaction_mx", "reaction_my", "reaction_mz")


def spatial_timeseries(run: SpatialRun, tracked: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """``B.x .. B.az`` per body, ``J.ex .. J.slip_velocity`` per clearance joint, the end
    orbits ``J.ex_a J.ey_a J.ex_b J.ey_b`` per cylindrical joint and ``P.x P.y P.z`` per
    tracked point, and the flexible bodies' columns (SI)."""
    mechanism, trajectory = run.mechanism, run.trajectory
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
    cylinders = len(mechanism.cylindrical_joints)
    for k, name in enumerate(mechanism.clearance_names):
        columns[f"{name}.ex"] = np.asarray(trajectory.eccentricity[:, k, 0])
        columns[f"{name}.ey"] = np.asarray(trajectory.eccentricity[:, k, 1])
        # a spherical joint: its third component and no axis (tilt, end forces)
        fields = CYLINDRICAL_FIELDS if k < cylinders else SPHERICAL_FIELDS
        if k >= cylinders:
            columns[f"{name}.ez"] = np.asarray(trajectory.eccentricity[:, k, 2])
        for field in fields:
            columns[f"{name}.{field}"] = np.asarray(getattr(trajectory, field)[:, k])
    ends = end_eccentricities(mechanism, trajectory)
    for k, joint in enumerate(mechanism.cylindrical_joints):
        name = mechanism.clearance_names[k]
        for e, end in enumerate("ab"):
            columns[f"{name}.ex_{end}"], columns[f"{name}.ey_{end}"] = ends[:, k, e, 0], ends[:, k, e, 1]
    for name, path in (tracked or {}).items():
        for k, label in enumerate("xyz"):
            columns[f"{name}.{label}"] = path[:, k]
    for d, name in enumerate(mechanism.driver_names):
        columns[f"{name}.torque"] = np.asarray(trajectory.driver_torques[:, d])
    reactions = np.asarray(trajectory.joint_reactions)
    for k, name in enumerate(mechanism.joint_names):
        for c, label in enumerate(SPATIAL_REACTIONS):
            columns[f"{name}.{label}"] = reactions[:, k, c]
    columns.update(run.flexible_columns)
    return pd.DataFrame(columns)


def spatial_summary(run: SpatialRun) -> dict:
    data: dict = {n: float(v) for n, v in spatial_summary_metrics(run.mechanism, run.trajectory).items()}
    trajectory = run.trajectory
    data["solver"] = {"name": run.settings.solver, "steps": int(trajectory.steps),
                      "rejected_steps": int(trajectory.rejected_steps), "status": run.status,
                      "compile_seconds": run.compile_seconds, "run_seconds": run.run_seconds,
                      "rtol": run.settings.rtol, "atol": run.settings.atol, "dtmax": run.settings.dtmax}
    data.update(joint_regimes(run.mechanism, trajectory))
    data.update(window_and_transients(run.mechanism, trajectory))
    data.update(velocity_projection(run.mechanism, trajectory))
    data["max_constraint_violation"] = float(np.max(np.asarray(trajectory.constraint_violation)))
    if run.mechanism.beam_chains:
        data.update(flexible_summary(run.mechanism, run.flexible_columns, trajectory.t))
    if run.ideal is not None:
        data["ideal"] = {n: float(v) for n, v in spatial_summary_metrics(run.ideal_mechanism, run.ideal).items()}
        data["ideal"]["max_constraint_violation"] = float(np.max(np.asarray(run.ideal.constraint_violation)))
    return data


def tracked_point_paths(run: SpatialRun, trajectory: SpatialTrajectory) -> dict[str, np.ndarray]:
    """Ground-frame positions (times x 3, m) of the config's ``[[tracked_points]]`` (on a
    flexible body: carried by the segment that holds the point)."""
    layout = SpatialLayout(run.config)
    x = np.asarray(trajectory.x)
    paths = {}
    for point in run.config.tracked_points:
        b, local = layout.attach(point["body"], point["point"])
        rotations = jax.vmap(rotation_matrix)(jnp.asarray(x[:, 7 * b + 3 : 7 * b + 7]))
        paths[point["name"]] = x[:, 7 * b : 7 * b + 3] + np.asarray(rotations @ jnp.asarray(local))
    return paths


def end_eccentricities(mechanism: SpatialMechanism, trajectory: SpatialTrajectory) -> np.ndarray:
    """The journal axis' points at the ends of the contact length (``z = -l/2``: a, ``+l/2``:
    b) relative to the bearing axis, in the bearing's cross-section axes ``(u, w)``:
    times x cylindrical joints x 2 ends x 2 (m)."""
    def one_time(x):
        ends = []
        for joint in mechanism.cylindrical_joints:
            rotation_b = rotation_matrix(body_pose(x, joint.bearing_body)[1])
            axis_j = rotation_matrix(body_pose(x, joint.journal_body)[1]) @ joint.journal_axis
            centre = point_position(x, joint.journal_body, joint.journal_point)
            offsets = centre + jnp.array([-0.5, 0.5])[:, None] * joint.length * axis_j \
                - point_position(x, joint.bearing_body, joint.bearing_point)
            ends.append(offsets @ jnp.stack([rotation_b @ joint.bearing_u, rotation_b @ joint.bearing_w]).T)
        return jnp.stack(ends) if ends else jnp.zeros((0, 2, 2), x.dtype)

    return np.asarray(jax.vmap(one_time)(trajectory.x))


def plot_spatial(run: SpatialRun, out: Path) -> list[str]:
    """The figures of :mod:`pipelines.spatial_plots`."""
    from .spatial_plots import plot_all

    return plot_all(run, out)
