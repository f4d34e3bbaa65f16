"""Equations of motion of a spatial tree in joint coordinates.

The bodies' twists are linear in the tree's velocities, ``v = J(z) zd + J_p pd``
(:func:`~.spatial_kinematics.body_velocities`), and their rates ``vdot = J zdd + c`` with
``c`` the convective term at ``zdd = 0``. D'Alembert's principle projected on the tree's
velocities gives (Jalon & Bayo 1994, ch. 5, velocity transformations; Featherstone 2008,
§6.1-6.2)

    ``H zdd = J^T (Q - M c)``,   ``H = J^T M J``,

with ``M`` per body ``diag(m I_3, R J_b R^T)`` (mass and world inertia) and ``Q`` the
absolute engine's applied forces on the twists: gravity, loads, torque drivers, every
clearance joint's contact, friction and oil film, and the gyroscopic term
``-omega x (I omega)`` of the Newton-Euler equations (Shabana 2010, §7). ``J`` is
``jax.jacfwd`` of the linear map, ``c`` a forward-mode derivative of ``v`` along the motion;
``H`` is factorised by the unrolled Cholesky of :func:`model.mechanics.linalg.spd_solve`.
A speed driver's torque is ``tau = J_p^T (M vdot - Q)``, as in the planar tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.memory import impact_memory_rate
from ..linalg import spd_solve
from ..spatial.dynamics import SpatialState, gyroscopic_forces, world_inertias
from ..spatial.forces import applied_forces, contact_forces
from .dynamics import TreeState, prescribed_rates
from .spatial_kinematics import body_velocities, coordinate_rate
from .topology import Topology

if TYPE_CHECKING:
    from ..spatial.mechanism import SpatialMechanism


class SpatialTreeEvaluation(NamedTuple):
    """One evaluation of the equations of motion, with the absolute kinematics."""

    zdd: Float[Array, " m"]
    x: Float[Array, " coords"]
    v: Float[Array, " velocities"]
    vdot: Float[Array, " velocities"]
    contact: object  # SpatialContactState
    driver_torques: Float[Array, " drivers"]


def absolute_motion(mechanism: SpatialMechanism, topology: Topology, state: TreeState):
    """``(x, v, c)``: positions, twists and the twists' rate at ``zdd = 0``."""
    pd = prescribed_rates(mechanism, topology)

    def motion(z, p):
        return body_velocities(mechanism, topology, z, state.zd, p, pd)

    (x, v), (_, convective) = jax.jvp(motion, (state.z, state.prescribed),
                                      (coordinate_rate(mechanism, topology, state.z, state.zd), pd))
    return x, v, convective


def _mass_apply(mechanism: SpatialMechanism, inertias, twists):
    """``M`` applied to twist-ordered rows (``... x 6 bodies``)."""
    blocks = twists.reshape(twists.shape[:-1] + (mechanism.num_bodies, 2, 3))
    linear = mechanism.masses[:, None] * blocks[..., 0, :]
    angular = jnp.einsum("bij,...bj->...bi", inertias, blocks[..., 1, :])
    return jnp.stack([linear, angular], axis=-2).reshape(twists.shape)


def evaluate(mechanism: SpatialMechanism, topology: Topology, state: TreeState) -> SpatialTreeEvaluation:
    """Joint accelerations, absolute kinematics, contact state and driver torques."""
    x, v, convective = absolute_motion(mechanism, topology, state)
    generalised_contact, contact = contact_forces(mechanism, x, v, state.impact_memory)
    applied = applied_forces(mechanism, x) + generalised_contact + gyroscopic_forces(mechanism, x, v)
    inertias = world_inertias(mechanism, x)
    pd = prescribed_rates(mechanism, topology)
    jacobian, driver_jacobian = jax.jacfwd(
        lambda zd, pd_: body_velocities(mechanism, topology, state.z, zd, state.prescribed, pd_)[1],
        argnums=(0, 1))(state.zd, pd)
    if topology.rate_size:
        weighted = _mass_apply(mechanism, inertias, jacobian.T).T  # M J (M symmetric)
        inertia = jacobian.T @ weighted
        zdd = spd_solve(inertia, jacobian.T @ (applied - _mass_apply(mechanism, inertias, convective)))
        vdot = jacobian @ zdd + convective
    else:
        zdd, vdot = jnp.zeros((0,), x.dtype), convective
    driving = driver_jacobian.T @ (_mass_apply(mechanism, inertias, vdot) - applied)
    torques = [driving[topology.speed_drivers.index(k)] if driver.kind == "constant_speed" else driver.torque
               for k, driver in enumerate(mechanism.drivers)]
    driver_torques = jnp.stack(torques) if torques else jnp.zeros((0,), x.dtype)
    return SpatialTreeEvaluation(zdd, x, v, vdot, contact, driver_torques)


def vector_field(mechanism: SpatialMechanism, topology: Topology, state: TreeState) -> TreeState:
    """``d state / dt``: the coordinates' rate, the joint accelerations, the impact memory's
    rate of every contact slot and the drivers' power (W), as in the absolute engine."""
    out = evaluate(mechanism, topology, state)
    normal_acceleration = mechanism.contact_normal_accelerations(out.x, out.v, out.vdot)
    memory_rate = impact_memory_rate(out.contact.slice_penetration, out.contact.slice_normal_rate,
                                     normal_acceleration, state.impact_memory)
    power = sum((out.driver_torques[k] * mechanism.driver_rate(out.x, out.v, driver)
                 for k, driver in enumerate(mechanism.drivers)), start=jnp.zeros((), out.x.dtype))
    return TreeState(coordinate_rate(mechanism, topology, state.z, state.zd), out.zdd, memory_rate, power,
                     prescribed_rates(mechanism, topology))


def absolute_state(mechanism: SpatialMechanism, topology: Topology, state: TreeState) -> SpatialState:
    """The absolute engine's :class:`~model.mechanics.spatial.dynamics.SpatialState` of ``state``."""
    x, v = body_velocities(mechanism, topology, state.z, state.zd, state.prescribed,
                           prescribed_rates(mechanism, topology))
    return SpatialState(x, v, state.impact_memory, state.driver_work)


def body_accelerations(mechanism: SpatialMechanism, topology: Topology, state: TreeState, rate: TreeState
                       ) -> Float[Array, "bodies 3"]:
    """Every body's centre-of-mass acceleration (m/s^2): ``d v / dt`` along the motion
    ``(dz/dt, zdd, pd)`` (the speed drivers' ``pdd`` is zero), its linear part."""
    pd = prescribed_rates(mechanism, topology)
    _, vdot = jax.jvp(lambda z, zd, p: body_velocities(mechanism, topology, z, zd, p, pd)[1],
                      (state.z, state.zd, state.prescribed), (rate.z, rate.zd, pd))
    return vdot.reshape(mechanism.num_bodies, 2, 3)[:, 0]
