"""Summary metrics of a spatial trajectory: the planar metric names (``model/metrics.py``)
plus ``B.max_abs_az``; per clearance joint the penetration is the deepest slice's and the
first-impact speed the impact memory of the slice that touched first."""

import jax.numpy as jnp
from jaxtyping import Array

from .integrate.spatial import SpatialTrajectory
from .mechanics.spatial import SpatialMechanism
from .metrics import _first_impact, contact_onsets


def spatial_summary_metrics(mechanism: SpatialMechanism, trajectory: SpatialTrajectory) -> dict[str, Array]:
    metrics, start = {}, 0
    sizes = [j.slices for j in mechanism.cylindrical_joints] + [1] * len(mechanism.spherical_joints)
    for k, (name, size) in enumerate(zip(mechanism.clearance_names, sizes)):
        penetration = trajectory.penetration[:, k]
        slots = trajectory.slice_penetration[:, start : start + size]
        first_slot = jnp.argmax(jnp.any(slots > 0.0, axis=0) * (1.0 + jnp.max(slots, axis=0)))
        time, speed = _first_impact(trajectory.t, penetration, trajectory.impact_memory[:, start + first_slot])
        metrics[f"{name}.max_normal_force"] = jnp.max(trajectory.normal_force[:, k])
        metrics[f"{name}.max_penetration"] = jnp.max(penetration)
        metrics[f"{name}.first_impact_time"] = time
        metrics[f"{name}.first_impact_velocity"] = speed
        metrics[f"{name}.num_impacts"] = jnp.sum(contact_onsets(penetration))
        metrics[f"{name}.contact_fraction"] = jnp.mean(penetration > 0.0)
        start += size
    accelerations = trajectory.vdot.reshape(trajectory.vdot.shape[0], -1, 2, 3)[:, :, 0, :]
    for b, name in enumerate(mechanism.body_names):
        for axis, label in enumerate("xyz"):
            metrics[f"{name}.max_abs_a{label}"] = jnp.max(jnp.abs(accelerations[:, b, axis]))
    return metrics
