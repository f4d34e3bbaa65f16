"""Equations of motion in joint coordinates.

With the absolute coordinates ``q = f(z, p)`` of :func:`~.kinematics.forward_kinematics`,
their velocities ``qd = J zd + J_p pd`` and accelerations ``qdd = J zdd + c`` (``c`` the
convective term at ``zdd = 0``), d'Alembert's principle projected on the tree's
coordinates gives

    ``H zdd = J^T (Q - M c)``,   ``H = J^T M J = sum_b J_b^T M_b J_b``,

the joint-space inertia matrix of the tree (Featherstone 2008, §6.1-6.2; Jalon & Bayo
1994, ch. 5, the velocity transformation), with ``M`` the bodies' diagonal mass matrix and
``Q`` the applied generalised forces of the absolute engine (gravity, torque drivers,
clearance-joint contact, friction and oil film, point loads). ``J``, ``qd`` and ``c`` are
forward-mode derivatives of the forward kinematics; ``H`` is factorised by the unrolled
Cholesky of :func:`model.mechanics.linalg.spd_solve`, which vectorises across lanes.

A speed driver's torque is the generalised force its prescribed coordinate needs,
``tau = J_p^T (M qdd - Q)`` (the ideal joints of the tree do no virtual work).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.memory import impact_memory_rate
from ..dynamics import State, mass_diagonal
from ..linalg import spd_solve
from ..forces import ContactState, contact_forces, gravity_and_torques, normal_accelerations, structural_and_load_forces
from ..mechanism import Mechanism
from .kinematics import forward_kinematics
from .topology import Topology


class TreeState(NamedTuple):
    """ODE state: free joint coordinates ``z`` (rad, m) and rates, one impact memory per
    clearance joint (m/s), the drivers' work (J) and the prescribed coordinates ``p`` (rad;
    their rates are the speed drivers' speeds, so they are integrated exactly)."""

    z: Float[Array, " n"]
    zd: Float[Array, " n"]
    impact_memory: Float[Array, " joints"]
    driver_work: Float[Array, ""]
    prescribed: Float[Array, " drivers"]


class TreeEvaluation(NamedTuple):
    """One evaluation of the equations of motion, with the absolute kinematics."""

    zdd: Float[Array, " n"]
    q: Float[Array, " coords"]
    qd: Float[Array, " coords"]
    qdd: Float[Array, " coords"]
    contact: ContactState
    driver_torques: Float[Array, " drivers"]


def prescribed_rates(mechanism: Mechanism, topology: Topology) -> Float[Array, " drivers"]:
    """``dp/dt``: the speed drivers' speeds (rad/s)."""
    speeds = [mechanism.drivers[k].speed for k in topology.speed_drivers]
    return jnp.stack(speeds) if speeds else jnp.zeros((0,), mechanism.masses.dtype)


def absolute_motion(mechanism: Mechanism, topology: Topology, state: TreeState):
    """``(q, qd, c)``: absolute coordinates, velocities and convective accelerations
    (the accelerations at ``zdd = 0``), by nested forward-mode derivatives."""
    pd = prescribed_rates(mechanism, topology)

    def position(z, p):
        return forward_kinematics(mechanism, topology, z, p)

    def motion(z, p):
        return jax.jvp(position, (z, p), (state.zd, pd))

    (q, qd), (_, convective) = jax.jvp(motion, (state.z, state.prescribed), (state.zd, pd))
    return q, qd, convective


def evaluate(mechanism: Mechanism, topology: Topology, state: TreeState) -> TreeEvaluation:
    """Joint accelerations, absolute kinematics, contact state and driver torques."""
    q, qd, convective = absolute_motion(mechanism, topology, state)
    generalised_contact, contact = contact_forces(mechanism, q, qd, state.impact_memory)
    applied = gravity_and_torques(mechanism, q) + generalised_contact + structural_and_load_forces(mechanism, q, qd)
    mass = mass_diagonal(mechanism)
    jacobian, driver_jacobian = jax.jacfwd(
        lambda z, p: forward_kinematics(mechanism, topology, z, p), argnums=(0, 1))(state.z, state.prescribed)
    if topology.size:
        weighted = jacobian * mass[:, None]
        inertia = jacobian.T @ weighted
        zdd = spd_solve(inertia, jacobian.T @ (applied - mass * convective))
        qdd = jacobian @ zdd + convective
    else:
        zdd, qdd = jnp.zeros((0,), q.dtype), convective
    driving = driver_jacobian.T @ (mass * qdd - applied)
    torques = [driving[topology.speed_drivers.index(k)] if driver.kind == "constant_speed" else driver.torque
               for k, driver in enumerate(mechanism.drivers)]
    driver_torques = jnp.stack(torques) if torques else jnp.zeros((0,), q.dtype)
    return TreeEvaluation(zdd, q, qd, qdd, contact, driver_torques)


def vector_field(mechanism: Mechanism, topology: Topology, state: TreeState) -> TreeState:
    """``d state / dt``."""
    out = evaluate(mechanism, topology, state)
    normal_acceleration = normal_accelerations(mechanism, out.q, out.qd, out.qdd)
    memory_rate = impact_memory_rate(out.contact.penetration, out.contact.normal_rate, normal_acceleration,
                                     state.impact_memory)
    power = sum((out.driver_torques[k] * mechanism.driver_rate(out.q, out.qd, driver)
                 for k, driver in enumerate(mechanism.drivers)), start=jnp.zeros((), out.q.dtype))
    return TreeState(state.zd, out.zdd, memory_rate, power, prescribed_rates(mechanism, topology))


def absolute_state(mechanism: Mechanism, topology: Topology, state: TreeState) -> State:
    """The absolute engine's :class:`~model.mechanics.dynamics.State` of ``state``."""
    q, qd, _ = absolute_motion(mechanism, topology, state)
    return State(q, qd, state.impact_memory, state.driver_work)


def flatten_state(state: TreeState) -> Float[Array, "... n"]:
    """``[z, zd, impact_memory, driver_work, prescribed]`` (leading batch axes kept)."""
    return jnp.concatenate([state.z, state.zd, state.impact_memory, state.driver_work[..., None], state.prescribed],
                           axis=-1)


def unflatten_state(flat: Float[Array, "... n"], size: int, joints: int, drivers: int,
                    rates: int | None = None) -> TreeState:
    """Inverse of :func:`flatten_state`; ``rates``: the entries of ``zd`` (``size`` when None)."""
    rates = size if rates is None else rates
    memory = size + rates
    work = memory + joints
    return TreeState(flat[..., :size], flat[..., size:memory], flat[..., memory:work], flat[..., work],
                     flat[..., work + 1 : work + 1 + drivers])
