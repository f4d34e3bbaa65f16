"""Summary metrics of a spatial trajectory: the planar metric names (``model/metrics.py``)
plus ``B.max_abs_az``. The joint metrics come from the step-wise peaks when the trajectory
has them (:mod:`model.integrate.peaks`: a sliced joint's penetration and closing speed are
its deepest slice's, its force the resultant of the slice forces); otherwise from the
output samples, where the penetration is the deepest slice's and the first-impact speed the
impact memory of the slice that touched first."""

import jax.numpy as jnp
from jaxtyping import Array

from .integrate.trajectory import SpatialTrajectory
from .mechanics.spatial import SpatialMechanism
from .metrics import body_metric_dimensions, body_metrics, peak_joint_metrics, sampled_joint_metrics, window_duration

SPATIAL_BODY_METRICS = body_metric_dimensions(3)


def _sampled(mechanism: SpatialMechanism, trajectory: SpatialTrajectory) -> dict[str, Array]:
    metrics, start = {}, 0
    sizes = [j.slices for j in mechanism.cylindrical_joints] + [1] * len(mechanism.spherical_joints)
    for k, (name, size) in enumerate(zip(mechanism.clearance_names, sizes)):
        penetration = trajectory.penetration[:, k]
        slots = trajectory.slice_penetration[:, start : start + size]
        first_slot = jnp.argmax(jnp.any(slots > 0.0, axis=0) * (1.0 + jnp.max(slots, axis=0)))
        sampled = sampled_joint_metrics(
            trajectory.t, penetration, trajectory.normal_force[:, k], trajectory.impact_memory[:, start + first_slot],
            mechanism.metrics_start(),
        )
        metrics.update({f"{name}.{key}": value for key, value in sampled.items()})
        start += size
    return metrics


def spatial_summary_metrics(mechanism: SpatialMechanism, trajectory: SpatialTrajectory) -> dict[str, Array]:
    """The summary metrics, keyed ``"<joint>.<metric>"`` / ``"<body>.<metric>"``."""
    if trajectory.peaks is None:
        metrics = _sampled(mechanism, trajectory)
    else:
        duration = window_duration(trajectory.t, trajectory.peaks.window_start)
        metrics = {f"{name}.{key}": value for k, name in enumerate(mechanism.clearance_names)
                   for key, value in peak_joint_metrics(trajectory.peaks, duration, k).items()}
    metrics.update(body_metrics(mechanism, trajectory))
    return metrics
