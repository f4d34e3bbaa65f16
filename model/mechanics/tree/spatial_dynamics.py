"""Equations of motion of a spatial tree in joint coordinates.

The bodies' twists are linear in the tree's velocities, ``v = J(z) zd + J_p pd``, and
their rates ``vdot = J zdd + c`` with ``c`` the convective term at ``zdd = 0``, all from
one recursion over the tree (:func:`~.spatial_kinematics.tree_motion`). D'Alembert's principle projected on the tree's
velocities gives (Jalon & Bayo 1994, ch. 5, velocity transformations; Featherstone 2008,
§6.1-6.2)

    ``H zdd = J^T (Q - M c)``,   ``H = J^T M J``,

with ``M`` per body ``diag(m I_3, R J_b R^T)`` (mass and world inertia) and ``Q`` the
absolute engine's applied forces on the twists: gravity, loads, torque drivers, every
clearance joint's contact, friction and oil film, and the gyroscopic term
``-omega x (I omega)`` of the Newton-Euler equations (Shabana 2010, §7). ``H`` is
factorised by the unrolled Cholesky of :func:`model.mechanics.linalg.spd_solve`.
A speed driver's torque is ``tau = J_p^T (M vdot - Q)``, as in the planar tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.memory import impact_memory_rate
from ..linalg import spd_solve
from ..spatial.dynamics import SpatialState, gyroscopic_forces, world_inertias
from ..spatial.forces import applied_forces, contact_forces
from .dynamics import TreeState, prescribed_rates
from .spatial_kinematics import coordinate_rate, tree_motion
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


def _mass_apply(mechanism: SpatialMechanism, inertias, twists):
    """``M`` applied to twist-ordered rows (``... x 6 bodies``)."""
    blocks = twists.reshape(twists.shape[:-1] + (mechanism.num_bodies, 2, 3))
    linear = mechanism.masses[:, None] * blocks[..., 0, :]
    angular = jnp.einsum("bij,...bj->...bi", inertias, blocks[..., 1, :])
    return jnp.stack([linear, angular], axis=-2).reshape(twists.shape)


def evaluate(mechanism: SpatialMechanism, topology: Topology, state: TreeState) -> SpatialTreeEvaluation:
    """Joint accelerations, absolute kinematics, contact state and driver torques."""
    pd = prescribed_rates(mechanism, topology)
    x, v, jacobian, driver_jacobian, convective = tree_motion(mechanism, topology, state.z, state.zd,
                                                              state.prescribed, pd)
    generalised_contact, contact = contact_forces(mechanism, x, v, state.impact_memory)
    applied = applied_forces(mechanism, x) + generalised_contact + gyroscopic_forces(mechanism, x, v)
    inertias = world_inertias(mechanism, x)
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
    motion = tree_motion(mechanism, topology, state.z, state.zd, state.prescribed, prescribed_rates(mechanism, topology),
                         order=0)
    return SpatialState(motion.x, motion.v, state.impact_memory, state.driver_work)


def body_accelerations(mechanism: SpatialMechanism, topology: Topology, state: TreeState, rate: TreeState
                       ) -> Float[Array, "bodies 3"]:
    """Every body's centre-of-mass acceleration (m/s^2): the linear part of
    ``vdot = J zdd + c`` (the speed drivers' ``pdd`` is zero), by the recursion without
    the Jacobians."""
    motion = tree_motion(mechanism, topology, state.z, state.zd, state.prescribed, prescribed_rates(mechanism, topology),
                         zdd=rate.zd, order=1)
    return motion.convective.reshape(mechanism.num_bodies, 2, 3)[:, 0]
