"""Summary metrics of a trajectory, as pure JAX (so they batch and differentiate).

Per clearance joint ``J``: ``J.max_normal_force`` (N), ``J.max_penetration`` (m),
``J.first_impact_time`` (s), ``J.first_impact_velocity`` (m/s), ``J.num_impacts``,
``J.contact_fraction``; per body ``B.max_abs_ax``, ``B.max_abs_ay`` (m/s^2) and, on a spatial
mechanism, ``B.max_abs_az``.

All metrics of a trajectory from :func:`model.simulate` or :func:`model.solve_ensemble`
come from its :class:`~model.integrate.peaks.Peaks`, reduced over the solver's accepted
steps (``docs/metrics.md``), so they do not depend on ``output_interval``. For a
trajectory without peaks (states from another integrator) they come from the output
samples, where events shorter than the output interval can be missed.

Every metric but the first impact counts only the window ``t >= start`` of the mechanism's
:meth:`~model.mechanics.interface.AbstractMechanism.metrics_start` (``[metrics] skip``;
0 by default, the whole run), so a start transient can be left out of the peaks; the
contact fraction is over the window's duration. :func:`start_transient` says whether a run
has one.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from .mechanics.interface import AbstractMechanism
from .integrate.peaks import Peaks, with_flexible_bodies
from .integrate.timescales import contact_periods

# The summary metrics, with their dimensions (pipelines.units names).
JOINT_METRICS = {
    "max_normal_force": "force",
    "max_penetration": "length",
    "first_impact_time": "time",
    "first_impact_velocity": "velocity",
    "num_impacts": "dimensionless",
    "contact_fraction": "dimensionless",
}
AXES = "xyz"


def body_metric_dimensions(dimension: int) -> dict[str, str]:
    """The per-body summary metrics of a ``dimension``-D mechanism with their dimension: the
    peak absolute centre-of-mass acceleration along each ground axis."""
    return {f"max_abs_a{axis}": "acceleration" for axis in AXES[:dimension]}


BODY_METRICS = body_metric_dimensions(2)
SPATIAL_BODY_METRICS = body_metric_dimensions(3)

# A contact episode longer than this many contact periods counts as continuous contact
# rather than an impact.
CONTINUOUS_CONTACT_PERIODS = 5.0


class Regime(NamedTuple):
    """Shares of the simulated time per clearance joint (they sum to 1)."""

    free_flight: Float[Array, " joints"]
    impact: Float[Array, " joints"]
    continuous_contact: Float[Array, " joints"]


def contact_onsets(penetration: Float[Array, " times"]) -> Float[Array, " times"]:
    """1.0 at the samples where contact begins (penetration turns positive), else 0."""
    in_contact = penetration > 0.0
    previous = jnp.concatenate([jnp.zeros(1, bool), in_contact[:-1]])
    return (in_contact & ~previous).astype(penetration.dtype)


def _first_impact(t, penetration, memory):
    """Time (interpolated between samples) and closing speed of the first contact."""
    in_contact = penetration > 0.0
    any_contact = jnp.any(in_contact)
    index = jnp.argmax(in_contact)
    before = jnp.maximum(index - 1, 0)
    span = penetration[index] - penetration[before]
    share = jnp.where(span > 0, -penetration[before] / jnp.where(span > 0, span, 1.0), 0.0)
    time = t[before] + jnp.clip(share, 0.0, 1.0) * (t[index] - t[before])
    # the memory froze at the onset, so it holds the closing speed at first contact
    return jnp.where(any_contact, time, jnp.nan), jnp.where(any_contact, memory[index], jnp.nan)


def regime_shares(penetration: Float[Array, " times"], continuous_after_samples: Float[Array, ""]) -> tuple:
    """(free flight, impact, continuous contact) shares of the samples of one joint."""
    in_contact = penetration > 0.0
    episode = jnp.cumsum(contact_onsets(penetration)).astype(int) * in_contact
    samples_per_episode = jax.ops.segment_sum(in_contact.astype(float), episode, num_segments=penetration.size + 1)
    continuous = in_contact & (samples_per_episode[episode] > continuous_after_samples)
    count = penetration.size
    free = jnp.sum(~in_contact) / count
    steady = jnp.sum(continuous) / count
    return free, 1.0 - free - steady, steady


def regimes(mechanism: AbstractMechanism, trajectory) -> Regime:
    """Shares of time in free flight, impact and continuous contact per clearance joint."""
    interval = trajectory.t[1] - trajectory.t[0]
    threshold = CONTINUOUS_CONTACT_PERIODS * contact_periods(mechanism) / interval
    shares = [regime_shares(trajectory.penetration[:, k], threshold[k]) for k in range(len(mechanism.clearance_joints))]
    if not shares:
        empty = jnp.zeros((0,))
        return Regime(empty, empty, empty)
    return Regime(*(jnp.stack(column) for column in zip(*shares)))


def window_duration(t: Float[Array, " times"], start) -> Float[Array, ""]:
    """Time (s) from the window's ``start`` (or the first output time, if later) to the end."""
    return t[-1] - jnp.clip(start, t[0], t[-1])


def _reached(value):
    """A maximum of the window, NaN where the window held no sample (``-inf``)."""
    return jnp.where(jnp.isfinite(value), value, jnp.nan)


def peak_joint_metrics(peaks: Peaks, duration, k: int) -> dict[str, Array]:
    """Joint ``k``'s metrics from the step-wise peaks (``duration``: the window's time, s,
    :func:`window_duration`)."""
    found = jnp.isfinite(peaks.first_impact_time[k])
    return {
        "max_normal_force": _reached(peaks.max_normal_force[k]),
        "max_penetration": _reached(peaks.max_penetration[k]),
        "first_impact_time": jnp.where(found, peaks.first_impact_time[k], jnp.nan),
        "first_impact_velocity": jnp.where(found, peaks.first_impact_velocity[k], jnp.nan),
        "num_impacts": peaks.num_impacts[k],
        "contact_fraction": peaks.contact_time[k] / duration,
    }


def sampled_joint_metrics(t, penetration, normal_force, impact_memory, start=0.0) -> dict[str, Array]:
    """One joint's metrics from output samples (for states without step-wise peaks), over
    the samples at ``t >= start`` (s); the first impact over all samples."""
    time, speed = _first_impact(t, penetration, impact_memory)
    counted = t >= start
    count = jnp.maximum(jnp.sum(counted), 1)
    return {
        "max_normal_force": _reached(jnp.max(jnp.where(counted, normal_force, -jnp.inf))),
        "max_penetration": _reached(jnp.max(jnp.where(counted, penetration, -jnp.inf))),
        "first_impact_time": time,
        "first_impact_velocity": speed,
        "num_impacts": jnp.sum(contact_onsets(jnp.where(counted, penetration, -1.0))),
        "contact_fraction": jnp.sum(counted & (penetration > 0.0)) / count,
    }


def _contact_slots(mechanism: AbstractMechanism, trajectory) -> tuple[list[int], Float[Array, "times slots"]]:
    """The impact-memory slots of each clearance joint and their penetrations (m): one per
    planar joint; one per slice of a spatial cylindrical joint, one per spherical joint."""
    if mechanism.dimension == 2:
        return [1] * len(mechanism.clearance_joints), trajectory.penetration
    sizes = [joint.slices for joint in mechanism.cylindrical_joints] + [1] * len(mechanism.spherical_joints)
    return sizes, trajectory.slice_penetration


def _sampled_metrics(mechanism: AbstractMechanism, trajectory) -> dict[str, Array]:
    """Every joint's metrics from the output samples: the penetration is the joint's (a
    sliced joint's deepest slice), the first-impact speed the impact memory of the slot
    that touched first."""
    metrics, start = {}, 0
    sizes, slot_penetration = _contact_slots(mechanism, trajectory)
    for k, (name, size) in enumerate(zip(mechanism.clearance_names, sizes)):
        slots = slot_penetration[:, start : start + size]
        first_slot = jnp.argmax(jnp.any(slots > 0.0, axis=0) * (1.0 + jnp.max(slots, axis=0)))
        sampled = sampled_joint_metrics(
            trajectory.t, trajectory.penetration[:, k], trajectory.normal_force[:, k],
            trajectory.impact_memory[:, start + first_slot], mechanism.metrics_start(),
        )
        metrics.update({f"{name}.{key}": value for key, value in sampled.items()})
        start += size
    return metrics


def summary_metrics(mechanism: AbstractMechanism, trajectory) -> dict[str, Array]:
    """The summary metrics of a planar or spatial trajectory, keyed ``"<joint>.<metric>"``
    / ``"<body>.<metric>"``. From the step-wise peaks when the trajectory has them (a sliced
    joint's penetration and closing speed are its deepest slice's, its force the resultant
    of the slice forces, :mod:`model.integrate.peaks`), else from the output samples."""
    if trajectory.peaks is None:
        metrics = _sampled_metrics(mechanism, trajectory)
    else:
        duration = window_duration(trajectory.t, trajectory.peaks.window_start)
        metrics = {f"{name}.{key}": value for k, name in enumerate(mechanism.clearance_names)
                   for key, value in peak_joint_metrics(trajectory.peaks, duration, k).items()}
    metrics.update(body_metrics(mechanism, trajectory))
    return metrics


def body_metrics(mechanism: AbstractMechanism, trajectory) -> dict[str, Array]:
    """``B.max_abs_a<axis>`` (m/s^2) of every body, along each ground axis of the mechanism;
    a flexible body's from the acceleration of its segments' centre of mass (its segments
    ``B[k]`` have their own). From the step-wise peaks when the trajectory has them (the
    accelerations over each accepted step: the field at its ends, the interpolant's
    derivative inside, :mod:`model.integrate.peaks`), else from the output samples; over
    the metrics' window."""
    names = list(mechanism.body_names) + [chain.name for chain in mechanism.beam_chains]
    if trajectory.peaks is not None:
        peaks = _reached(trajectory.peaks.max_abs_acceleration)
    else:
        reported = jax.vmap(lambda accelerations: with_flexible_bodies(mechanism, accelerations))
        counted = trajectory.t >= mechanism.metrics_start()
        magnitudes = jnp.where(counted[:, None, None], jnp.abs(reported(trajectory.body_accelerations)), -jnp.inf)
        peaks = _reached(jnp.max(magnitudes, axis=0))
    return {
        f"{name}.max_abs_a{axis}": peaks[b, index]
        for b, name in enumerate(names)
        for index, axis in enumerate(AXES[: mechanism.dimension])
    }


# A start transient: contact forces above this multiple of the largest force of the later
# half of the run (docs/metrics.md, "Start transients").
TRANSIENT_FACTOR = 2.0


class StartTransient(NamedTuple):
    """Per clearance joint: whether the run starts with a transient, when it ends (s, NaN
    when none), the run's largest sampled contact force and the later half's (N)."""

    detected: Bool[Array, " joints"]
    end_time: Float[Array, " joints"]
    peak: Float[Array, " joints"]
    later_peak: Float[Array, " joints"]


def start_transient(t: Float[Array, " times"], normal_force: Float[Array, "times joints"]) -> StartTransient:
    """Start transients of each clearance joint, from the output samples of its contact
    force (N) at times ``t`` (s).

    The later half of the run (``t >= (t_0 + t_end)/2``) is taken as the settled motion,
    steady or periodic; its largest force is ``F_late``. A joint has a start transient when
    some sample exceeds ``TRANSIENT_FACTOR * F_late`` (any contact at all where
    ``F_late = 0``); the transient ends at the output time after the last such sample.
    Every such sample lies in the first half, so a transient is found when it has died
    down within half the run.
    """
    later = t >= 0.5 * (t[0] + t[-1])
    late_peak = jnp.max(jnp.where(later[:, None], normal_force, 0.0), axis=0)
    above = (normal_force > TRANSIENT_FACTOR * late_peak) & (normal_force > 0.0)
    detected = jnp.any(above, axis=0)
    last = t.size - 1 - jnp.argmax(above[::-1], axis=0)
    end_time = t[jnp.minimum(last + 1, t.size - 1)]
    return StartTransient(detected, jnp.where(detected, end_time, jnp.nan), jnp.max(normal_force, axis=0), late_peak)
