"""Simulated signals named as the columns of ``timeseries.parquet``, sampled at measurement times.

Everything here is pure JAX, so the fit differentiates through it (also with respect to a
time offset between the record and the simulation, through the linear interpolation).

Column names: per body ``B.x B.y B.theta B.vx B.vy B.omega B.ax B.ay
B.alpha``; per clearance joint ``J.ex J.ey J.penetration J.normal_force J.tangential_force
J.slip_velocity``; per driver ``D.torque``; per flexible body the columns of
:mod:`pipelines.flexible_outputs` (``B.deflection``, ``B.bending_moment_k``, ...); a spatial
mechanism's: :mod:`pipelines.calibration.signals_spatial`.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from model import Mechanism, Trajectory
from model.mechanics.spatial import SpatialMechanism

from ..flexible_outputs import flexible_columns, flexible_units
from .signal_tables import joint_or_driver_signal, named_units
from .signals_spatial import spatial_signal, spatial_signal_units

# Per-body signal -> (trajectory field, coordinate within the body's (x, y, theta)), with its SI unit.
BODY_SIGNALS: dict[str, tuple[str, int, str]] = {
    "x": ("q", 0, "m"),
    "y": ("q", 1, "m"),
    "theta": ("q", 2, "rad"),
    "vx": ("qd", 0, "m/s"),
    "vy": ("qd", 1, "m/s"),
    "omega": ("qd", 2, "rad/s"),
    "ax": ("qdd", 0, "m/s^2"),
    "ay": ("qdd", 1, "m/s^2"),
    "alpha": ("qdd", 2, "rad/s^2"),
}
# Per clearance joint signal -> SI unit.
JOINT_SIGNALS: dict[str, str] = {
    "ex": "m",
    "ey": "m",
    "penetration": "m",
    "normal_force": "N",
    "tangential_force": "N",
    "slip_velocity": "m/s",
}
DRIVER_SIGNALS: dict[str, str] = {"torque": "N*m"}


def signal_units(mechanism: Mechanism) -> dict[str, str]:
    """Every signal ``mechanism`` produces, with the SI unit of its values."""
    if isinstance(mechanism, SpatialMechanism):
        units = spatial_signal_units(mechanism)
    else:
        units = named_units(mechanism, {name: spec[2] for name, spec in BODY_SIGNALS.items()}, JOINT_SIGNALS, DRIVER_SIGNALS)
    return {**units, **flexible_units(mechanism)}


def _signal(mechanism: Mechanism, trajectory: Trajectory, name: str) -> Float[Array, " times"]:
    if name in flexible_units(mechanism):
        return flexible_columns(mechanism, trajectory)[name]
    if isinstance(mechanism, SpatialMechanism):
        return spatial_signal(mechanism, trajectory, name)
    owner, _, kind = name.rpartition(".")
    if owner in mechanism.body_names and kind in BODY_SIGNALS:
        field, coordinate, _ = BODY_SIGNALS[kind]
        return getattr(trajectory, field)[:, 3 * mechanism.body_names.index(owner) + coordinate]
    column = joint_or_driver_signal(mechanism, trajectory, owner, kind, JOINT_SIGNALS, DRIVER_SIGNALS)
    if column is not None:
        return column
    raise KeyError(f"unknown signal {name!r}; signals: {', '.join(signal_units(mechanism))}")


def trajectory_signals(mechanism: Mechanism, trajectory: Trajectory, names: Sequence[str]) -> Float[Array, "times signals"]:
    """The named signals at the trajectory's output times, one column each (SI units)."""
    return jnp.stack([_signal(mechanism, trajectory, name) for name in names], axis=1)


def sample_at(grid: Float[Array, " times"], values: Float[Array, "times signals"], times: Float[Array, " samples"]) -> Float[Array, "samples signals"]:
    """Linear interpolation of each column of ``values`` (given on the increasing ``grid``)
    at ``times`` (s). Differentiable in ``values`` and in ``times``; held constant outside
    the grid (the data loader refuses records that reach outside the simulation)."""
    return jax.vmap(lambda column: jnp.interp(times, grid, column), in_axes=1, out_axes=1)(values)
