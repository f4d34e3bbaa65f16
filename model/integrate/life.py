"""The service life of a wearing clearance joint as a differentiable function.

The life loop of Flores (2009, Mech. Mach. Theory 44) and Mukras et al. (2010, Wear 268):
simulate the mechanism with the bushing's current profile, accumulate the Archard wear of
the counted cycles (:func:`model.simulate_with_wear`), scale it to the operating cycles one
update stands for, add it to the profile, repeat. Here the loop is one ``jax.lax.scan``
over the passes, the profile (m per angle bin) carried through it as an array, so that the
whole life is a pure function of the mechanism's parameters: ``jit`` and forward-mode
derivatives (``jax.jvp``, ``jax.jacfwd``; solve with ``SolverSettings(adjoint="forward")``)
go through it.

Pass ``k`` (``k = 0 .. updates``) simulates profile ``k`` (profile 0: a new bushing) and
records, over its counted cycles (``t >= wear.start_time``), the largest depth of the
profile, the equivalent clearance ``c + max h``, the peak normal force of the worn joint and
every body's peak absolute acceleration per ground axis (the exact peaks over the accepted
steps, :mod:`model.integrate.peaks`). The **life** at a limit on one of them
(:func:`service_life`) is the number of operating cycles at which it first exceeds the
limit, linearly interpolated between the two passes that bracket the crossing: continuous
and piecewise differentiable in the parameters wherever the bracketing passes do not change.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, PyTree

from ..contact.wear import ArchardWear
from ..geometry.worn import WornBore
from ..mechanics.mechanism import Mechanism
from ..mechanics.spatial import SpatialMechanism
from ..mechanics.tree import TreeMechanism
from ..window import MetricsWindow
from .settings import SolverSettings
from .solve import simulate_with_wear

LIFE_METRICS = ("max_depth", "equivalent_clearance", "peak_force", "peak_acceleration")


class LifeSchedule(eqx.Module):
    """How a life is simulated: ``updates`` profile updates (static), each standing for
    ``cycles_per_update`` operating cycles (the last for what is left of ``cycles``), from
    the wear of ``simulated_cycles`` counted cycles per pass (the pass's wear is scaled by
    ``cycles_per_update / simulated_cycles``, the extrapolation factor). Cycles are counts
    of the mechanism's operating cycle (e.g. crank turns)."""

    cycles: Float[Array, ""]  # operating cycles of the life
    cycles_per_update: Float[Array, ""]  # operating cycles one update stands for
    simulated_cycles: Float[Array, ""]  # counted cycles simulated per pass
    updates: int = eqx.field(static=True)

    @classmethod
    def covering(cls, cycles: float, cycles_per_update: float, simulated_cycles: float = 1.0) -> "LifeSchedule":
        """The schedule of ``ceil(cycles / cycles_per_update)`` updates: its last pass
        simulates the profile of the whole life and adds no more wear."""
        updates = max(1, math.ceil(cycles / cycles_per_update - 1e-9))
        return cls(jnp.asarray(cycles, float), jnp.asarray(cycles_per_update, float),
                   jnp.asarray(simulated_cycles, float), updates)


class LifeHistory(eqx.Module):
    """Per pass (profile ``0 .. updates``), SI units."""

    cycles: Float[Array, " passes"]  # operating cycles the profile has seen
    max_depth: Float[Array, " passes"]  # m, the profile's largest depth
    equivalent_clearance: Float[Array, " passes"]  # m, c + max depth
    peak_force: Float[Array, " passes"]  # N, the worn joint's peak normal force over the counted cycles
    peak_acceleration: Float[Array, "passes bodies axes"]  # m/s^2, peak |a| per body and ground axis
    load_distance: Float[Array, " passes"]  # N m, int F |v_t| dt over the pass's counted cycles
    result: Float[Array, " passes"]  # the pass's solver result (0: successful)
    depth: Float[Array, " bins"]  # m, the profile at the end of the life (``cycles`` operating cycles)

    def metric(self, name: str, body: int = 0) -> Float[Array, " passes"]:
        """The series ``name`` (one of :data:`LIFE_METRICS`); ``peak_acceleration`` of body
        ``body``, the larger of its ground axes."""
        if name == "peak_acceleration":
            return jnp.max(self.peak_acceleration[:, body], axis=-1)
        if name not in LIFE_METRICS:
            raise ValueError(f"unknown life metric {name!r}; choose from {LIFE_METRICS}")
        return getattr(self, name)


def with_clearance_joint(mechanism: Mechanism | SpatialMechanism, joint: int, **changes) -> Mechanism | SpatialMechanism:
    """``mechanism`` with clearance joint ``joint``'s fields ``changes`` replaced (a spatial
    mechanism holds its cylindrical clearance joints, first among its clearance joints, in
    ``cylindrical_joints``; a :class:`~model.mechanics.tree.TreeMechanism` holds them in the
    absolute description it wraps)."""
    if isinstance(mechanism, TreeMechanism):
        return dataclasses.replace(mechanism, absolute=with_clearance_joint(mechanism.absolute, joint, **changes))
    field = "cylindrical_joints" if isinstance(mechanism, SpatialMechanism) else "clearance_joints"
    joints = list(getattr(mechanism, field))
    joints[joint] = dataclasses.replace(joints[joint], **changes)
    return dataclasses.replace(mechanism, **{field: tuple(joints)})


def with_profile(mechanism: Mechanism | SpatialMechanism, joint: int,
                 depth: Float[Array, " bins"] | Float[Array, "slices bins"]) -> Mechanism | SpatialMechanism:
    """``mechanism`` with clearance joint ``joint``'s bushing worn to ``depth`` (m per angle
    bin; per slice and bin for a spatial cylindrical joint)."""
    return with_clearance_joint(mechanism, joint, wear=WornBore(depth))


def simulate_life(mechanism: Mechanism, settings: SolverSettings, wear: ArchardWear, schedule: LifeSchedule,
                  y0: PyTree | Callable[[Mechanism], PyTree] | None = None) -> LifeHistory:
    """Run the life loop of the module docstring as a ``jax.lax.scan`` over
    ``schedule.updates + 1`` passes of :func:`model.simulate_with_wear` (each ``settings.t_end``
    long: the warm-up before ``wear.start_time`` and the counted cycles after it). The
    peaks count ``t >= wear.start_time`` (the mechanism's metrics window is replaced).
    ``y0``: every pass's initial state, or a function of the pass's mechanism (its joint
    worn to the pass's profile) returning it, e.g. to seat a journal in the worn bore
    (default: the mechanism's consistent initial state). A planar mechanism on either
    engine (:class:`~model.Mechanism`, :class:`~model.mechanics.tree.TreeMechanism`)."""
    window = MetricsWindow(skip=jnp.asarray(wear.start_time, float), revolutions=jnp.asarray(0.0))
    if isinstance(mechanism, TreeMechanism):
        mechanism = dataclasses.replace(mechanism, absolute=dataclasses.replace(mechanism.absolute,
                                                                                metrics_window=window))
    else:
        mechanism = dataclasses.replace(mechanism, metrics_window=window)
    clearance = mechanism.clearance_joints[wear.joint].clearance

    def one_pass(carry, _):
        depth, cycles = carry
        worn = with_profile(mechanism, wear.joint, depth)
        trajectory, accumulated = simulate_with_wear(worn, settings, wear, y0(worn) if callable(y0) else y0)
        peaks = trajectory.peaks
        largest = jnp.max(depth)
        record = (cycles, largest, clearance + largest, peaks.max_normal_force[wear.joint],
                  peaks.max_abs_acceleration[: mechanism.num_bodies], accumulated.load_distance,
                  trajectory.result.astype(float))
        advance = jnp.minimum(schedule.cycles_per_update, jnp.maximum(schedule.cycles - cycles, 0.0))
        return (depth + accumulated.depth * (advance / schedule.simulated_cycles), cycles + advance), record

    start = (jnp.zeros(wear.resolution, float), jnp.zeros((), float))
    (depth, _), records = jax.lax.scan(one_pass, start, None, length=schedule.updates + 1)
    cycles, max_depth, equivalent, force, acceleration, load_distance, result = records
    return LifeHistory(cycles, max_depth, equivalent, force, acceleration, load_distance, result, depth)


def service_life(cycles: Float[Array, " passes"], values: Float[Array, " passes"], limit: Float[Array, ""]
                 ) -> tuple[Float[Array, ""], Bool[Array, ""]]:
    """``(life, crossed)``: the operating cycles at which ``values`` (one metric per pass,
    at ``cycles``) first exceeds ``limit``, by linear interpolation between the last pass
    below the limit and the first above it,
    ``N = N_{k-1} + (L - m_{k-1}) (N_k - N_{k-1}) / (m_k - m_{k-1})``; ``cycles[0]`` when the
    first pass already exceeds it. Never exceeded: ``(cycles[-1], False)``, the whole
    simulated life. Continuous in the values and differentiable wherever the bracketing
    passes do not change; the index is found without a derivative."""
    above = values > limit
    crossed = jnp.any(above)
    first = jnp.argmax(above)
    before = jnp.maximum(first - 1, 0)
    rise = values[first] - values[before]
    interpolating = crossed & (first > 0)
    share = jnp.where(interpolating, (limit - values[before]) / jnp.where(interpolating, rise, 1.0), 0.0)
    life = cycles[before] + share * (cycles[first] - cycles[before])
    return jnp.where(crossed, life, cycles[-1]), crossed
