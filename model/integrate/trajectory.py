"""The trajectory a simulation returns, post-processed from the saved states: a
:class:`Trajectory` for a planar mechanism, a :class:`SpatialTrajectory` for a spatial one."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ..mechanics.dynamics import State, evaluate
from ..mechanics.interface import AbstractMechanism
from ..mechanics.mechanism import Mechanism
from ..mechanics.spatial import SpatialMechanism, SpatialState
from ..mechanics.spatial import evaluate as evaluate_spatial
from ..mechanics.tree import TreeMechanism
from .peaks import Peaks
from ._diffrax import result_message as result_message  # its codes are Trajectory.result


def planar_centres(coordinates: Float[Array, "... coords"]) -> Float[Array, "... bodies 2"]:
    """The centre-of-mass components (x, y) of planar body coordinates ``(x, y, theta)``
    or velocities ``(vx, vy, omega)`` per body (leading axes kept)."""
    return coordinates.reshape(coordinates.shape[:-1] + (-1, 3))[..., :2]


def spatial_centres(positions: Float[Array, "... coords"] | None = None,
                    velocities: Float[Array, "... velocities"] | None = None) -> Float[Array, "... bodies 3"]:
    """The centre-of-mass positions of spatial body coordinates ``(r, quaternion)``, or
    the linear velocities of ``(rdot, omega)``, per body (leading axes kept)."""
    if positions is not None:
        return positions.reshape(positions.shape[:-1] + (-1, 7))[..., :3]
    return velocities.reshape(velocities.shape[:-1] + (-1, 2, 3))[..., 0, :]


class Trajectory(eqx.Module):
    """A solved trajectory sampled at the output times (SI units).

    Per-joint arrays have the clearance joints on their last axis (``eccentricity``: the
    last two axes are joint, component).
    """

    t: Float[Array, " times"]
    q: Float[Array, "times coords"]
    qd: Float[Array, "times coords"]
    qdd: Float[Array, "times coords"]
    impact_memory: Float[Array, "times joints"]
    driver_work: Float[Array, " times"]
    eccentricity: Float[Array, "times joints 2"]
    penetration: Float[Array, "times joints"]
    normal_rate: Float[Array, "times joints"]
    slip_velocity: Float[Array, "times joints"]
    normal_force: Float[Array, "times joints"]
    tangential_force: Float[Array, "times joints"]
    driver_torques: Float[Array, "times drivers"]
    constraint_violation: Float[Array, " times"]
    steps: Int[Array, ""]
    rejected_steps: Int[Array, ""]
    result: Int[Array, ""]  # diffrax.RESULTS index; 0 = successful
    # contact peaks reduced over the accepted steps (model/integrate/peaks.py); None when
    # the states came from elsewhere, and the metrics then use the output samples
    peaks: Peaks | None = None
    # per ideal joint (``Mechanism.joint_names``): force (N, x, y) and moment (N m, about
    # the joint's point) on its second body, ground frame (AbstractAbsoluteMechanism.joint_reactions)
    joint_reactions: Float[Array, "times ideal_joints 3"] | None = None

    @property
    def body_positions(self) -> Float[Array, "times bodies 2"]:
        """Centre-of-mass positions (m), ground frame."""
        return planar_centres(self.q)

    @property
    def body_velocities(self) -> Float[Array, "times bodies 2"]:
        """Centre-of-mass velocities (m/s), ground frame."""
        return planar_centres(self.qd)

    @property
    def body_accelerations(self) -> Float[Array, "times bodies 2"]:
        """Centre-of-mass accelerations (m/s^2), ground frame."""
        return self.qdd.reshape(self.qdd.shape[0], -1, 3)[:, :, :2]


class SpatialTrajectory(eqx.Module):
    """A solved spatial trajectory at the output times (SI); per-joint arrays have the
    clearance joints (cylindrical, then spherical) on their last axis (``eccentricity``:
    joint, component ``(u, w, axial)``); ``slice_*`` and ``impact_memory`` have one column
    per contact slot."""

    t: Float[Array, " times"]
    x: Float[Array, "times coords"]
    v: Float[Array, "times velocities"]
    vdot: Float[Array, "times velocities"]
    impact_memory: Float[Array, "times memory"]
    driver_work: Float[Array, " times"]
    eccentricity: Float[Array, "times joints 3"]
    tilt: Float[Array, "times joints"]
    penetration: Float[Array, "times joints"]
    normal_force: Float[Array, "times joints"]
    normal_force_a: Float[Array, "times joints"]
    normal_force_b: Float[Array, "times joints"]
    tangential_force: Float[Array, "times joints"]
    slip_velocity: Float[Array, "times joints"]
    slice_penetration: Float[Array, "times memory"]
    slice_normal_force: Float[Array, "times memory"]
    driver_torques: Float[Array, "times drivers"]
    constraint_violation: Float[Array, " times"]
    steps: Int[Array, ""]
    rejected_steps: Int[Array, ""]
    result: Int[Array, ""]
    peaks: Peaks | None = None  # as Trajectory.peaks
    # per ideal joint (``SpatialMechanism.joint_names``): force (N, x y z) and moment (N m, x y z,
    # about the joint's point) on its second body, ground frame (AbstractAbsoluteMechanism.joint_reactions)
    joint_reactions: Float[Array, "times ideal_joints 6"] | None = None

    @property
    def body_positions(self) -> Float[Array, "times bodies 3"]:
        """Centre-of-mass positions (m), ground frame (each body's coordinates are its
        position and its unit quaternion)."""
        return spatial_centres(positions=self.x)

    @property
    def body_velocities(self) -> Float[Array, "times bodies 3"]:
        """Centre-of-mass velocities (m/s), ground frame (each body's velocities are its
        linear and angular velocity)."""
        return spatial_centres(velocities=self.v)

    @property
    def body_accelerations(self) -> Float[Array, "times bodies 3"]:
        """Centre-of-mass accelerations (m/s^2), ground frame (each body's velocities are
        its linear and angular velocity)."""
        return self.vdot.reshape(self.vdot.shape[0], -1, 2, 3)[:, :, 0, :]


def _spatial_trajectory(mechanism: SpatialMechanism, t, states: SpatialState, steps, rejected_steps, result,
                        peaks) -> SpatialTrajectory:
    out = jax.vmap(lambda t_, y_: evaluate_spatial(mechanism, t_, y_))(t, states)
    c = out.contact
    return SpatialTrajectory(
        t, states.x, states.v, out.acceleration, states.impact_memory, states.driver_work, c.eccentricity, c.tilt,
        c.penetration, c.normal_force, c.normal_force_a, c.normal_force_b, c.tangential_force, c.slip_velocity,
        c.slice_penetration, c.slice_normal_force, out.driver_torques, out.constraint_violation,
        jnp.asarray(steps), jnp.asarray(rejected_steps), jnp.asarray(result), peaks,
        jax.vmap(mechanism.joint_reactions)(t, states.x, out.multipliers))


def trajectory_from_states(mechanism: AbstractMechanism, t, states, steps=0, rejected_steps=0, result=0,
                           peaks: Peaks | None = None) -> Trajectory | SpatialTrajectory:
    """Accelerations, contact forces and driver torques at the saved ``states`` (the
    mechanism's own state pytree, with a leading time axis): the post-processing of
    :func:`simulate`, also used for states from other integrators. A mechanism on the
    joint-coordinate engine reports the absolute description at its absolute states."""
    if isinstance(mechanism, TreeMechanism):
        absolute = jax.vmap(mechanism.absolute_state)(mechanism.flatten(states))
        return trajectory_from_states(mechanism.absolute, t, absolute, steps, rejected_steps, result, peaks)
    if isinstance(mechanism, SpatialMechanism):
        return _spatial_trajectory(mechanism, t, states, steps, rejected_steps, result, peaks)
    outputs = jax.vmap(lambda t_, y_: evaluate(mechanism, t_, y_))(t, states)
    return Trajectory(
        t=t,
        q=states.q,
        qd=states.qd,
        qdd=outputs.acceleration,
        impact_memory=states.impact_memory,
        driver_work=states.driver_work,
        eccentricity=outputs.contact.eccentricity,
        penetration=outputs.contact.penetration,
        normal_rate=outputs.contact.normal_rate,
        slip_velocity=outputs.contact.slip_velocity,
        normal_force=outputs.contact.normal_force,
        tangential_force=outputs.contact.tangential_force,
        driver_torques=outputs.driver_torques,
        constraint_violation=outputs.constraint_violation,
        steps=jnp.asarray(steps),
        rejected_steps=jnp.asarray(rejected_steps),
        result=jnp.asarray(result),
        peaks=peaks,
        joint_reactions=jax.vmap(mechanism.joint_reactions)(
            t, states.q, outputs.multipliers),
    )

