"""What the planar and spatial signal modules share: the units of every signal name of a
mechanism, and the per-joint and per-driver columns, which both trajectories store alike
(``eccentricity[:, joint, axis]``, one field per joint quantity, ``driver_torques``)."""

from __future__ import annotations

from collections.abc import Mapping

from jaxtyping import Array, Float


def named_units(mechanism, body_units: Mapping[str, str], joint_units: Mapping[str, str],
                driver_units: Mapping[str, str]) -> dict[str, str]:
    """``{"owner.kind": SI unit}`` for every body, clearance joint and driver of ``mechanism``."""
    units = {f"{body}.{name}": unit for body in mechanism.body_names for name, unit in body_units.items()}
    units.update({f"{joint}.{name}": unit for joint in mechanism.clearance_names for name, unit in joint_units.items()})
    units.update({f"{driver}.{name}": unit for driver in mechanism.driver_names for name, unit in driver_units.items()})
    return units


def joint_or_driver_signal(mechanism, trajectory, owner: str, kind: str, joint_units: Mapping[str, str],
                           driver_units: Mapping[str, str]) -> Float[Array, " times"] | None:
    """The column of clearance joint or driver ``owner``'s signal ``kind``; ``None`` if
    ``owner.kind`` is neither."""
    if owner in mechanism.clearance_names and kind in joint_units:
        k = mechanism.clearance_names.index(owner)
        if kind in ("ex", "ey"):
            return trajectory.eccentricity[:, k, 0 if kind == "ex" else 1]
        return getattr(trajectory, kind)[:, k]
    if owner in mechanism.driver_names and kind in driver_units:
        return trajectory.driver_torques[:, mechanism.driver_names.index(owner)]
    return None
