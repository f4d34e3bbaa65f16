"""The trajectory a simulation returns, post-processed from the saved states: a
:class:`Trajectory` for a planar mechanism, a :class:`SpatialTrajectory` for a spatial one."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ..mechanics.interface import AbstractMechanism
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


def trajectory_from_states(mechanism: AbstractMechanism, t, states, steps=0, rejected_steps=0, result=0,
                           peaks: Peaks | None = None) -> Trajectory | SpatialTrajectory:
    """Accelerations, contact forces, driver torques and joint reactions at the saved
    ``states`` (the mechanism's own state pytree, with a leading time axis): the
    post-processing of :func:`simulate`, also used for states from other integrators. A
    mechanism on the joint-coordinate engine reports its own evaluation
    (:meth:`~model.mechanics.tree.TreeMechanism.outputs`) in the absolute description's
    form; the joint reactions are the description's wrenches of the multipliers
    (:meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.joint_reactions`)."""
    if isinstance(mechanism, TreeMechanism):
        states, out = jax.vmap(mechanism.outputs)(t, states)
        mechanism = mechanism.absolute
    else:
        out = jax.vmap(mechanism.evaluate)(t, states)
    reactions = jax.vmap(mechanism.joint_reactions)(t, states[0], out.multipliers)
    steps, rejected_steps, result = jnp.asarray(steps), jnp.asarray(rejected_steps), jnp.asarray(result)
    c = out.contact
    if mechanism.dimension == 3:
        return SpatialTrajectory(
            t, states.x, states.v, out.acceleration, states.impact_memory, states.driver_work, c.eccentricity,
            c.tilt, c.penetration, c.normal_force, c.normal_force_a, c.normal_force_b, c.tangential_force,
            c.slip_velocity, c.slice_penetration, c.slice_normal_force, out.driver_torques, out.constraint_violation,
            steps, rejected_steps, result, peaks, reactions)
    return Trajectory(
        t=t,
        q=states.q,
        qd=states.qd,
        qdd=out.acceleration,
        impact_memory=states.impact_memory,
        driver_work=states.driver_work,
        eccentricity=c.eccentricity,
        penetration=c.penetration,
        normal_rate=c.normal_rate,
        slip_velocity=c.slip_velocity,
        normal_force=c.normal_force,
        tangential_force=c.tangential_force,
        driver_torques=out.driver_torques,
        constraint_violation=out.constraint_violation,
        steps=steps,
        rejected_steps=rejected_steps,
        result=result,
        peaks=peaks,
        joint_reactions=reactions,
    )
