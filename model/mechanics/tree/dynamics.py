"""Equations of motion in joint coordinates.

With the absolute coordinates ``q = f(z, p)`` of :func:`~.kinematics.forward_kinematics`,
their velocities ``qd = J zd + J_p pd`` and accelerations ``qdd = J zdd + c`` (``c`` the
convective term at ``zdd = 0``), d'Alembert's principle projected on the tree's
coordinates gives

    ``H zdd = J^T (Q - M c)``,   ``H = J^T M J = sum_b J_b^T M_b J_b``,

the joint-space inertia matrix of the tree (Featherstone 2008, §6.1-6.2; Jalon & Bayo
1994, ch. 5, the velocity transformation), with ``M`` the bodies' diagonal mass matrix and
``Q`` the applied generalised forces of the absolute engine (gravity, torque drivers,
clearance-joint contact, friction and oil film, point loads). ``q``, ``qd``, ``J`` and ``c``
come from one recursion over the tree (:func:`~.kinematics.tree_motion`). ``H`` is block
diagonal as in the spatial tree (:mod:`.columns`): each childless free joint (a flexible
body's segment held by beam elements only, a rocker held by clearance joints only) moves
its body alone, its columns of ``J`` identity rows (left out of the recursion), its block
of ``H`` its body's ``diag(m, m, I)``, divided out directly; the coupled block
``J_c^T M_c J_c`` is factorised by the unrolled Cholesky of
:func:`model.mechanics.linalg.spd_solve`, which vectorises across lanes.

A speed driver's torque is the generalised force its prescribed coordinate needs,
``tau = J_p^T (M qdd - Q + Phi_q^T lambda)`` (the ideal joints of the tree do no virtual
work; the cut joints' reactions do).

Cut joints (:attr:`~.topology.Topology.cuts`, the ideal joints that close loops) keep their
constraint rows ``Phi(q(z, p)) = 0`` (:func:`model.mechanics.constraints.joint_constraints`,
the absolute engine's rows of those joints). With ``G = Phi_q J`` the equations become the
small augmented system (Jalón & Bayo 1994, ch. 5; Nikravesh 1988 for the multipliers)

    ``[[H, G^T], [G, 0]] [zdd; lambda] = [J^T (Q - M c); gamma]``,

``gamma = -Phi_q c - (Phi_q qd)_q qd - 2 alpha dPhi/dt - beta^2 Phi`` with Baumgarte's
(1972) terms of the absolute engine, solved by the Schur complement on the cut rows:
``(G H^-1 G^T) lambda = G H^-1 J^T (Q - M c) - gamma``. ``lambda`` are the absolute
engine's multipliers of the cut joints' rows (``M qdd = Q - Phi_q^T lambda``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.memory import impact_memory_rate
from ..constraints import joint_constraints
from ..dynamics import State, mass_diagonal
from ..linalg import schur_solve, spd_solve
from ..forces import ContactState, contact_forces, gravity_and_torques, normal_accelerations, structural_and_load_forces
from ..mechanism import Mechanism
from .kinematics import forward_kinematics, tree_motion
from .columns import (Columns, block_diagonal_solve, coupled_block, jacobian_times, jacobian_transpose_times,
                      tree_columns)
from .topology import PLANAR_SIZES, Topology


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
    multipliers: Float[Array, " cut_rows"]  # the cut joints' rows (N, N m)
    # M qdd - Q: the generalised forces of every ideal joint and speed driver on the bodies
    # (N, N m), tree and cut joints alike (``-Phi_q^T lambda`` of the absolute description)
    joint_forces: Float[Array, " coords"]


def prescribed_rates(mechanism: Mechanism, topology: Topology) -> Float[Array, " drivers"]:
    """``dp/dt``: the speed drivers' speeds (rad/s)."""
    speeds = [mechanism.drivers[k].speed for k in topology.speed_drivers]
    return jnp.stack(speeds) if speeds else jnp.zeros((0,), mechanism.masses.dtype)


def absolute_motion(mechanism: Mechanism, topology: Topology, state: TreeState, order: int = 1):
    """``(q, qd, c)``: absolute coordinates, velocities and convective accelerations (the
    accelerations at ``zdd = 0``) by the recursion of :func:`~.kinematics.tree_motion`
    (``order`` 0: ``c`` left zero)."""
    motion = tree_motion(mechanism, topology, state.z, state.zd, state.prescribed,
                         prescribed_rates(mechanism, topology), order=order)
    return motion.x, motion.v, motion.convective


def driver_torques(mechanism, topology: Topology, driving: Float[Array, " prescribed"]) -> Float[Array, " drivers"]:
    """Each driver's torque (N m), planar or spatial: a speed driver's the generalised force
    ``driving`` along its prescribed coordinate (``J_p^T (M a - Q + Phi^T lambda)``, module
    docstring), a torque driver's its configured torque."""
    torques = [driving[topology.speed_drivers.index(k)] if driver.kind == "constant_speed" else driver.torque
               for k, driver in enumerate(mechanism.drivers)]
    return jnp.stack(torques) if torques else jnp.zeros((0,), driving.dtype)


def jacobian_columns(mechanism: Mechanism, topology: Topology) -> Columns:
    """How the planar tree's ``J`` splits at its childless free joints (:mod:`.columns`)."""
    return tree_columns(topology, mechanism.num_bodies, PLANAR_SIZES)


def joint_jacobians(mechanism: Mechanism, topology: Topology, z, p):
    """``(J_c, J_p)``: the coupled block of the absolute coordinates' derivatives with
    respect to ``z`` (:func:`~.columns.coupled_block`) and their derivatives with respect to
    ``p`` (:func:`~.kinematics.tree_motion`; they do not depend on the velocities)."""
    columns = jacobian_columns(mechanism, topology)
    motion = tree_motion(mechanism, topology, z, jnp.zeros_like(z), p, jnp.zeros_like(p),
                         carried=tuple(columns.coupled.tolist()))
    return coupled_block(columns, motion.jacobian), motion.driver_jacobian


def _product(matrix, values):
    """``matrix @ values``: the planar tree's products with ``J_c`` (dense, as ``H``'s)."""
    return matrix @ values


def _transpose_product(matrix, values):
    """``matrix^T @ values``."""
    return matrix.T @ values


def inertia_solve(mechanism: Mechanism, columns: Columns, coupled_jacobian: Float[Array, "rows m"],
                  rhs: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``H^-1 rhs`` with ``H = J^T M J`` block diagonal (:func:`~.columns.block_diagonal_solve`;
    Golub & Van Loan 2013, §4.2): the coupled block ``J_c^T M_c J_c`` (kg, kg m, kg m^2 by
    coordinate) factorised by :func:`~model.mechanics.linalg.spd_solve`, each childless
    free joint's ``diag(m, m, I)`` divided out, so the factorised system is the size of the
    mechanism's coupled part whatever the number of a flexible body's segments."""
    mass = mass_diagonal(mechanism)
    coupled_mass = mass if not columns.free.size else mass[columns.coupled_rows]
    inertia = coupled_jacobian.T @ (coupled_jacobian * coupled_mass[:, None])
    free_mass = mass[columns.free_rows]
    return block_diagonal_solve(columns, inertia,
                                lambda free: free / free_mass.reshape((-1,) + (1,) * (free.ndim - 1)), rhs)


def cut_constraints(mechanism: Mechanism, topology: Topology, q: Float[Array, " coords"]) -> Float[Array, " m"]:
    """``Phi``: the cut joints' constraint rows at the absolute coordinates ``q`` (m, rad)."""
    return joint_constraints(mechanism, q, topology.cuts)


def _cut_rows(mechanism: Mechanism, topology: Topology, q, qd, convective):
    """``(Phi_q, gamma)`` of the cut joints (module docstring)."""
    rows = lambda q_: cut_constraints(mechanism, topology, q_)  # noqa: E731
    rate_along = lambda q_: jax.jvp(rows, (q_,), (qd,))[1]  # noqa: E731
    phi, rate = jax.jvp(rows, (q,), (qd,))
    _, curvature = jax.jvp(rate_along, (q,), (qd,))
    cut_jacobian = jax.jacfwd(rows)(q)
    alpha, beta = mechanism.baumgarte_alpha, mechanism.baumgarte_beta
    gamma = -(cut_jacobian @ convective + curvature) - 2.0 * alpha * rate - beta**2 * phi
    return cut_jacobian, gamma


def evaluate(mechanism: Mechanism, topology: Topology, state: TreeState) -> TreeEvaluation:
    """Joint accelerations, absolute kinematics, contact state, driver torques and the
    cut joints' multipliers."""
    columns = jacobian_columns(mechanism, topology)
    q, qd, jacobian, driver_jacobian, convective = tree_motion(mechanism, topology, state.z, state.zd,
                                                               state.prescribed, prescribed_rates(mechanism, topology),
                                                               carried=tuple(columns.coupled.tolist()))
    generalised_contact, contact = contact_forces(mechanism, q, qd, state.impact_memory)
    applied = gravity_and_torques(mechanism, q) + generalised_contact + structural_and_load_forces(mechanism, q, qd)
    mass = mass_diagonal(mechanism)
    multipliers, reaction = jnp.zeros((0,), q.dtype), None
    if topology.size:
        jacobian = coupled_block(columns, jacobian)
        rhs = jacobian_transpose_times(columns, jacobian, applied - mass * convective, _transpose_product)
        solve = lambda b: inertia_solve(mechanism, columns, jacobian, b)  # noqa: E731
        if topology.cuts:
            cut_jacobian, gamma = _cut_rows(mechanism, topology, q, qd, convective)
            coupling = jacobian_transpose_times(columns, jacobian, cut_jacobian.T, _transpose_product).T  # Phi_q J
            zdd, multipliers = schur_solve(solve, rhs, coupling, gamma)
            reaction = cut_jacobian.T @ multipliers
        else:
            zdd = solve(rhs)
        qdd = jacobian_times(columns, jacobian, zdd, _product) + convective
    else:
        zdd, qdd = jnp.zeros((0,), q.dtype), convective
    joint_forces = mass * qdd - applied
    # the cut joints' reactions -Phi_q^T lambda act on the bodies like applied forces
    driving = driver_jacobian.T @ (joint_forces if reaction is None else joint_forces + reaction)
    return TreeEvaluation(zdd, q, qd, qdd, contact, driver_torques(mechanism, topology, driving), multipliers,
                          joint_forces)


def project_state(mechanism: Mechanism, topology: Topology, state: TreeState, iterations: int = 1) -> TreeState:
    """``state`` moved back onto the cut joints' constraints: ``iterations`` Gauss-Newton
    steps on ``Phi(q(z, p)) = 0`` for ``z``, then ``zd`` onto ``dPhi/dt = 0``, both the
    correction of least kinetic-energy norm ``-H^-1 G^T (G H^-1 G^T)^-1 r`` (the metric of
    the absolute engine's projection, Bayo & Ledesma 1996, Blajer 2002: the kinetic energy
    is ``zd^T H zd / 2``), with ``G`` and ``H`` taken once at the given state. The
    prescribed coordinates, impact memory and driver work are kept."""
    if not (topology.cuts and topology.size):
        return state
    p, pd = state.prescribed, prescribed_rates(mechanism, topology)

    def rows(z, p_):
        return cut_constraints(mechanism, topology, forward_kinematics(mechanism, topology, z, p_))

    jacobian, _ = joint_jacobians(mechanism, topology, state.z, p)
    coupling = jax.jacfwd(rows)(state.z, p)
    spread = inertia_solve(mechanism, jacobian_columns(mechanism, topology), jacobian, coupling.T)

    def correction(residual):
        return -spread @ spd_solve(coupling @ spread, residual)

    z = state.z
    for _ in range(iterations):
        z = z + correction(rows(z, p))
    rate = jax.jvp(rows, (z, p), (state.zd, pd))[1]
    return state._replace(z=z, zd=state.zd + correction(rate))


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
    q, qd, _ = absolute_motion(mechanism, topology, state, order=0)
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
