"""Simulated signals of a spatial mechanism, named as the columns of its ``timeseries.parquet``:
per body ``B.x B.y B.z B.q0..B.q3 B.vx B.vy B.vz B.wx B.wy B.wz B.ax B.ay B.az``; per clearance
joint ``J.ex J.ey J.tilt J.penetration J.normal_force J.normal_force_a J.normal_force_b
J.tangential_force J.slip_velocity``; per driver ``D.torque``. Pure JAX.

The quaternion columns are the stored quaternion normalised, as the timeseries writes them.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from model.integrate.trajectory import SpatialTrajectory
from model.mechanics.spatial import SpatialMechanism
from model.mechanics.spatial.mechanism import POSITION_SIZE, VELOCITY_SIZE

from .signal_tables import joint_or_driver_signal, named_units

# Per-body signal -> (trajectory field, index within the body's block, SI unit).
BODY_SIGNALS: dict[str, tuple[str, int, str]] = {
    **{axis: ("x", k, "m") for k, axis in enumerate("xyz")},
    **{f"q{k}": ("x", 3 + k, "") for k in range(4)},
    **{f"v{axis}": ("v", k, "m/s") for k, axis in enumerate("xyz")},
    **{f"w{axis}": ("v", 3 + k, "rad/s") for k, axis in enumerate("xyz")},
    **{f"a{axis}": ("vdot", k, "m/s^2") for k, axis in enumerate("xyz")},
}
JOINT_SIGNALS: dict[str, str] = {
    "ex": "m", "ey": "m", "tilt": "rad", "penetration": "m", "normal_force": "N", "normal_force_a": "N",
    "normal_force_b": "N", "tangential_force": "N", "slip_velocity": "m/s",
}
DRIVER_SIGNALS: dict[str, str] = {"torque": "N*m"}


def spatial_signal_units(mechanism: SpatialMechanism) -> dict[str, str]:
    """Every signal ``mechanism`` produces, with the SI unit of its values."""
    body_units = {name: spec[2] for name, spec in BODY_SIGNALS.items()}
    return named_units(mechanism, body_units, JOINT_SIGNALS, DRIVER_SIGNALS)


def spatial_signal(mechanism: SpatialMechanism, trajectory: SpatialTrajectory, name: str) -> Float[Array, " times"]:
    """One named signal at the output times (SI)."""
    owner, _, kind = name.rpartition(".")
    if owner in mechanism.body_names and kind in BODY_SIGNALS:
        field, index, _ = BODY_SIGNALS[kind]
        body = mechanism.body_names.index(owner)
        if kind.startswith("q"):
            start = POSITION_SIZE * body + 3
            quaternion = trajectory.x[:, start : start + 4]
            return quaternion[:, index - 3] / jnp.sqrt(jnp.sum(quaternion**2, axis=1))
        size = POSITION_SIZE if field == "x" else VELOCITY_SIZE
        return getattr(trajectory, field)[:, size * body + index]
    column = joint_or_driver_signal(mechanism, trajectory, owner, kind, JOINT_SIGNALS, DRIVER_SIGNALS)
    if column is not None:
        return column
    raise KeyError(f"unknown signal {name!r}; signals: {', '.join(spatial_signal_units(mechanism))}")
