"""Every output column of a run, defined once: name, SI unit and the pure-JAX function of a
trajectory that gives it. ``timeseries.parquet`` writes them (:mod:`pipelines.simulation`)
and the calibration fits them (:mod:`pipelines.calibration.signals`), so a record column
and a timeseries column of the same name are the same quantity.

In file order: per body (:data:`BODY_COLUMNS`, by dimension), per clearance joint by its
kind (:data:`JOINT_COLUMNS`), the end orbits of each cylindrical joint
(:data:`END_ORBIT_COLUMNS`), per tracked point, per driver, per ideal joint its reaction on
its second body from the multipliers (:data:`REACTION_COLUMNS`: ground axes, moment about
the joint's point), per flexible body :mod:`pipelines.flexible_outputs`. The list with
units: docs/outputs.md. A new joint kind's columns are one entry of :data:`JOINT_COLUMNS`
and of :func:`clearance_joint_kinds`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from model.geometry.quaternion import rotation_matrix
from model.mechanics.interface import AbstractMechanism
from model.mechanics.spatial.mechanism import POSITION_SIZE as SPATIAL_POSITION
from model.mechanics.spatial.mechanism import VELOCITY_SIZE as SPATIAL_VELOCITY

from .flexible_outputs import flexible_columns, flexible_units

Getter = Callable[[Any, int], Float[Array, " times"]]
# A tracked point: the index of the body that carries it and its body-frame position (m).
Attachment = tuple[int, Float[Array, "3"]]

PLANAR_COORDINATES = 3  # x, y, theta per body


def _body_entry(field: str, size: int, index: int, unit: str) -> tuple[str, Getter]:
    return unit, lambda trajectory, b: getattr(trajectory, field)[:, size * b + index]


def _quaternion_entry(index: int) -> tuple[str, Getter]:
    def getter(trajectory, b):
        quaternion = trajectory.x[:, SPATIAL_POSITION * b + 3 : SPATIAL_POSITION * b + 7]
        return quaternion[:, index] / jnp.sqrt(jnp.sum(quaternion**2, axis=1))

    return "", getter


# Per body, by the mechanism's dimension: column suffix -> (SI unit, getter(trajectory, body)).
BODY_COLUMNS: dict[int, dict[str, tuple[str, Getter]]] = {
    2: {
        label: _body_entry(field, PLANAR_COORDINATES, k, unit)
        for k, triple in enumerate((("x", "vx", "ax"), ("y", "vy", "ay"), ("theta", "omega", "alpha")))
        for label, field, unit in zip(triple, ("q", "qd", "qdd"),
                                      ("m", "m/s", "m/s^2") if k < 2 else ("rad", "rad/s", "rad/s^2"))
    },
    3: {
        **{axis: _body_entry("x", SPATIAL_POSITION, k, "m") for k, axis in enumerate("xyz")},
        **{f"q{k}": _quaternion_entry(k) for k in range(4)},
        **{f"v{axis}": _body_entry("v", SPATIAL_VELOCITY, k, "m/s") for k, axis in enumerate("xyz")},
        **{f"w{axis}": _body_entry("v", SPATIAL_VELOCITY, 3 + k, "rad/s") for k, axis in enumerate("xyz")},
        **{f"a{axis}": _body_entry("vdot", SPATIAL_VELOCITY, k, "m/s^2") for k, axis in enumerate("xyz")},
    },
}


def _joint_field(field: str, unit: str) -> tuple[str, Getter]:
    return unit, lambda trajectory, k: getattr(trajectory, field)[:, k]


def _eccentricity(axis: int) -> tuple[str, Getter]:
    return "m", lambda trajectory, k: trajectory.eccentricity[:, k, axis]


_CONTACT = {"penetration": _joint_field("penetration", "m"), "normal_force": _joint_field("normal_force", "N")}
_RUBBING = {"tangential_force": _joint_field("tangential_force", "N"),
            "slip_velocity": _joint_field("slip_velocity", "m/s")}
_IN_PLANE = {"ex": _eccentricity(0), "ey": _eccentricity(1)}

# Per clearance joint kind: column suffix -> (SI unit, getter(trajectory, clearance joint index)).
JOINT_COLUMNS: dict[str, dict[str, tuple[str, Getter]]] = {
    "revolute_clearance": {**_IN_PLANE, **_CONTACT, **_RUBBING},
    "cylindrical_clearance": {**_IN_PLANE, "tilt": _joint_field("tilt", "rad"), **_CONTACT,
                              "normal_force_a": _joint_field("normal_force_a", "N"),
                              "normal_force_b": _joint_field("normal_force_b", "N"), **_RUBBING},
    "spherical_clearance": {**_IN_PLANE, "ez": _eccentricity(2), **_CONTACT, **_RUBBING},
}
# The end orbits of a cylindrical joint: suffix -> (end, component) of end_eccentricities.
END_ORBIT_COLUMNS = {"ex_a": (0, 0), "ey_a": (0, 1), "ex_b": (1, 0), "ey_b": (1, 1)}
DRIVER_COLUMNS = {"torque": ("N*m", lambda trajectory, d: trajectory.driver_torques[:, d])}


def _reaction(component: int, unit: str) -> tuple[str, Getter]:
    return unit, lambda trajectory, k: jnp.asarray(trajectory.joint_reactions)[:, k, component]


# Per ideal joint, by dimension: suffix -> (SI unit, getter(trajectory, ideal joint index)).
REACTION_COLUMNS: dict[int, dict[str, tuple[str, Getter]]] = {
    2: {"reaction_x": _reaction(0, "N"), "reaction_y": _reaction(1, "N"), "reaction_moment": _reaction(2, "N*m")},
    3: {f"reaction_{axis}": _reaction(c, "N" if c < 3 else "N*m")
        for c, axis in enumerate(("x", "y", "z", "mx", "my", "mz"))},
}
TRACKED_POINT_COLUMNS = {"x": "m", "y": "m", "z": "m"}


def clearance_joint_kinds(mechanism: AbstractMechanism) -> tuple[str, ...]:
    """The kind (a key of :data:`JOINT_COLUMNS`) of each clearance joint, in
    ``mechanism.clearance_names`` order: a spatial mechanism lists its cylindrical joints
    before its spherical ones."""
    if mechanism.dimension == 2:
        return ("revolute_clearance",) * len(mechanism.clearance_joints)
    return (("cylindrical_clearance",) * len(mechanism.cylindrical_joints)
            + ("spherical_clearance",) * len(mechanism.spherical_joints))


class ColumnGroup(NamedTuple):
    """Columns computed together: their SI units by name (file order), the function of a
    trajectory that gives them all and, where each column has its own getter, the function
    of a trajectory and a name that gives one."""

    units: dict[str, str]
    values: Callable[[Any], dict[str, Float[Array, " times"]]]
    column: Callable[[Any, str], Float[Array, " times"]] | None = None


def _entries_group(entries: list[tuple[str, str, Getter, int]]) -> ColumnGroup:
    """A group of independent columns: (name, unit, getter, owner index) each."""
    getters = {name: (getter, index) for name, _, getter, index in entries}
    return ColumnGroup({name: unit for name, unit, _, _ in entries},
                       lambda trajectory: {name: getter(trajectory, index) for name, (getter, index) in getters.items()},
                       lambda trajectory, name: getters[name][0](trajectory, getters[name][1]))


def _table_group(owners: tuple[str, ...], table: Mapping[str, tuple[str, Getter]]) -> ColumnGroup:
    return _entries_group([(f"{owner}.{suffix}", unit, getter, index) for index, owner in enumerate(owners)
                           for suffix, (unit, getter) in table.items()])


def _joint_group(mechanism: AbstractMechanism) -> ColumnGroup:
    kinds = zip(mechanism.clearance_names, clearance_joint_kinds(mechanism))
    return _entries_group([(f"{name}.{suffix}", unit, getter, k) for k, (name, kind) in enumerate(kinds)
                           for suffix, (unit, getter) in JOINT_COLUMNS[kind].items()])


def end_eccentricities(mechanism: AbstractMechanism, trajectory) -> Float[Array, "times joints 2 2"]:
    """The journal axis' points at the ends of the contact length (``z = -l/2``: a, ``+l/2``:
    b) relative to the bearing axis, in the bearing's cross-section axes ``(u, w)``:
    times x cylindrical joints x 2 ends x 2 (m)."""
    from model.mechanics.spatial.constraints import body_pose, point_position

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

    return jax.vmap(one_time)(jnp.asarray(trajectory.x))


def _end_orbit_group(mechanism: AbstractMechanism) -> ColumnGroup:
    names = [name for name, kind in zip(mechanism.clearance_names, clearance_joint_kinds(mechanism))
             if kind == "cylindrical_clearance"]

    def values(trajectory):
        ends = end_eccentricities(mechanism, trajectory)
        return {f"{name}.{suffix}": ends[:, k, end, component] for k, name in enumerate(names)
                for suffix, (end, component) in END_ORBIT_COLUMNS.items()}

    return ColumnGroup({f"{name}.{suffix}": "m" for name in names for suffix in END_ORBIT_COLUMNS}, values)


def tracked_point_path(trajectory, attachment: Attachment) -> Float[Array, "times 3"]:
    """Ground-frame path (m) of a body point of a spatial trajectory."""
    b, local = attachment
    x = jnp.asarray(trajectory.x)
    rotations = jax.vmap(rotation_matrix)(x[:, SPATIAL_POSITION * b + 3 : SPATIAL_POSITION * b + 7])
    return x[:, SPATIAL_POSITION * b : SPATIAL_POSITION * b + 3] + rotations @ jnp.asarray(local)


def _tracked_group(tracked: Mapping[str, Attachment]) -> ColumnGroup:
    def values(trajectory):
        paths = {name: tracked_point_path(trajectory, attachment) for name, attachment in tracked.items()}
        return {f"{name}.{axis}": path[:, k] for name, path in paths.items() for k, axis in enumerate("xyz")}

    return ColumnGroup({f"{name}.{axis}": unit for name in tracked for axis, unit in TRACKED_POINT_COLUMNS.items()},
                       values)


def column_groups(mechanism: AbstractMechanism, tracked: Mapping[str, Attachment] | None = None) -> list[ColumnGroup]:
    """The column groups of ``mechanism`` in file order (``tracked``: the tracked points)."""
    return [
        _table_group(mechanism.body_names, BODY_COLUMNS[mechanism.dimension]),
        _joint_group(mechanism),
        _end_orbit_group(mechanism),
        _tracked_group(tracked or {}),
        _table_group(mechanism.driver_names, DRIVER_COLUMNS),
        _table_group(mechanism.joint_names, REACTION_COLUMNS[mechanism.dimension]),
        ColumnGroup(flexible_units(mechanism), lambda trajectory: flexible_columns(mechanism, trajectory)),
    ]


def column_units(mechanism: AbstractMechanism, tracked: Mapping[str, Attachment] | None = None) -> dict[str, str]:
    """Every output column of ``mechanism`` (``t`` aside), in file order, with its SI unit."""
    return {name: unit for group in column_groups(mechanism, tracked) for name, unit in group.units.items()}


def output_columns(mechanism: AbstractMechanism, trajectory,
                   tracked: Mapping[str, Attachment] | None = None) -> dict[str, Float[Array, " times"]]:
    """Every output column (``t`` aside) at the trajectory's output times, in file order (SI)."""
    return {name: column for group in column_groups(mechanism, tracked) if group.units
            for name, column in group.values(trajectory).items()}


def output_column(mechanism: AbstractMechanism, trajectory, name: str,
                  tracked: Mapping[str, Attachment] | None = None) -> Float[Array, " times"]:
    """One named output column (SI); under ``jit`` the rest of its group is never computed."""
    for group in column_groups(mechanism, tracked):
        if name in group.units:
            return group.column(trajectory, name) if group.column else group.values(trajectory)[name]
    raise KeyError(f"unknown signal {name!r}; signals: {', '.join(column_units(mechanism, tracked))}")


def as_arrays(columns: Mapping[str, Array]) -> dict[str, np.ndarray]:
    """The columns as NumPy arrays (for the output files, the summary and the plots)."""
    return {name: np.asarray(column) for name, column in columns.items()}
