"""Equations of motion of a spatial tree in joint coordinates.

The bodies' twists are linear in the tree's velocities, ``v = J(z) zd + J_p pd``, and
their rates ``vdot = J zdd + c`` with ``c`` the convective term at ``zdd = 0``, all from
one recursion over the tree (:func:`~.spatial_kinematics.tree_motion`). D'Alembert's principle projected on the tree's
velocities gives (Jalon & Bayo 1994, ch. 5, velocity transformations; Featherstone 2008,
§6.1-6.2)

    ``H zdd = J^T (Q - M c)``,   ``H = J^T M J``,

with ``M`` per body ``diag(m I_3, R J_b R^T)`` (mass and world inertia) and ``Q`` the
absolute engine's forces on the twists (:func:`model.mechanics.spatial.dynamics.body_forces`):
gravity, loads, torque drivers, every clearance joint's contact, friction and oil film,
the gyroscopic term ``-omega x (I omega)`` of the Newton-Euler equations (Shabana 2010,
§7) and the beam elements of flexible bodies, whose segments are bodies of the tree. ``H``
is block diagonal: each childless free joint (a free body, a flexible body's segment held by
beam elements only) moves its body alone, its columns of ``J`` an identity block, its block
of ``H`` its body's mass matrix, inverted directly; the rest, the coupled velocities, is
formed by the composite-rigid-body algorithm (:func:`composite_inertia`; Featherstone 2008,
§6.2) and factorised by the unrolled Cholesky of :func:`model.mechanics.linalg.spd_solve`.
``J`` is computed and carried for the coupled velocities only.
A speed driver's torque is ``tau = J_p^T (M vdot - Q + Phi_v^T lambda)``, as in the
planar tree.

Cut joints (the ideal joints that close loops) keep their independent rows
(:attr:`~.topology.Topology.cut_rows`) of the absolute engine's constraints
(:func:`model.mechanics.spatial.constraints.frame_jets`: ``Phi``, ``dPhi/dt`` and the
convective term ``k`` written out per row type). With ``G = Phi_v J`` the equations are
solved as in the planar tree (:mod:`.dynamics`) by the Schur complement on those rows,

    ``(G H^-1 G^T) lambda = G H^-1 J^T (Q - M c) - gamma``,
    ``gamma = -Phi_v c - k - 2 alpha dPhi/dt - beta^2 Phi``

(Jalón & Bayo 1994, ch. 5; Baumgarte 1972), ``lambda`` the absolute engine's multipliers
of those rows; :func:`project_state` moves a state back onto them.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.memory import impact_memory_rate
from ...geometry.vectors import dot, matmul
from ..linalg import schur_solve, spd_solve
from ..spatial.dynamics import SpatialState, body_forces, world_inertias, world_inverse_inertias
from ..spatial.constraints import constraint_jacobian, constraint_jets
from ..spatial.joints import GROUND
from .columns import (Columns, block_diagonal_solve, coupled_block, jacobian_times, jacobian_transpose_times,
                      tree_columns)
from .dynamics import TreeState, driver_torques, prescribed_rates
from .spatial_kinematics import coordinate_rate, tree_motion
from .topology import SPATIAL_SIZES, Topology

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
    multipliers: Float[Array, " cut_rows"]  # the cut joints' independent rows (N, N m)
    # M vdot - Q: the wrenches of every ideal joint and speed driver on the bodies (N, N m),
    # tree and cut joints alike (``-Phi_v^T lambda`` of the absolute description)
    joint_forces: Float[Array, " velocities"]


def _mass_apply(masses, inertias, twists):
    """``M`` of bodies with ``masses`` (kg) and world ``inertias`` (kg m^2) applied to
    twist-ordered rows (``... x 6 bodies``)."""
    blocks = twists.reshape(twists.shape[:-1] + (masses.shape[0], 2, 3))
    linear = masses[:, None] * blocks[..., 0, :]
    angular = dot(inertias, blocks[..., 1, None, :])
    return jnp.stack([linear, angular], axis=-2).reshape(twists.shape)


def _times(matrix, values):
    """``matrix @ values`` (``values``: a vector or a matrix) as a broadcast product and a
    sum (:mod:`model.geometry.vectors`: no ``dot`` kernel per lane under ``vmap``)."""
    return dot(matrix, values) if values.ndim == 1 else matmul(matrix, values)


def _transpose_times(matrix, values):
    """``matrix^T @ values`` (``values``: a vector or a matrix), as :func:`_times`."""
    if values.ndim == 1:
        return jnp.sum(matrix * values[:, None], axis=0)
    return jnp.sum(matrix[:, :, None] * values[:, None, :], axis=0)


def cut_view(mechanism: SpatialMechanism, topology: Topology) -> SpatialMechanism:
    """``mechanism`` whose constraint rows are the cut joints' independent rows only."""
    return dataclasses.replace(mechanism, kept_rows=topology.cut_rows)


def _cut_rows(mechanism: SpatialMechanism, topology: Topology, x, v, convective):
    """``(Phi_v, gamma)`` of the cut joints' rows (module docstring)."""
    cut = cut_view(mechanism, topology)
    jets = constraint_jets(cut, x, v, 0.0)
    cut_jacobian = constraint_jacobian(cut, x, 0.0)
    gamma = (-(_times(cut_jacobian, convective) + jets.second) - 2.0 * mechanism.baumgarte_alpha * jets.rate
             - mechanism.baumgarte_beta**2 * jets.value)
    return cut_jacobian, gamma


def _free_solve(mechanism: SpatialMechanism, columns: Columns, x, free):
    """The childless free joints' part of ``H^-1 rhs`` (``free``: their velocities x ...):
    each body's block ``diag(m I_3, R J R^T)`` inverted as ``1/m`` and ``R J^-1 R^T``."""
    trailing = free.shape[1:]
    blocks = free.reshape((-1, 2, 3) + trailing)
    masses = mechanism.masses[columns.free_bodies].reshape((-1, 1) + (1,) * len(trailing))
    inverse = world_inverse_inertias(mechanism, x)[columns.free_bodies]
    angular = dot(inverse, blocks[:, 1, None, :]) if not trailing else jnp.sum(
        inverse[..., None] * blocks[:, 1, None, :, :], axis=2)
    return jnp.stack([blocks[:, 0] / masses, angular], axis=1).reshape((-1,) + trailing)


def _inertia_solve(mechanism: SpatialMechanism, columns: Columns, x, coupled_inertia, rhs):
    """``H^-1 rhs`` (``rhs``: velocities x ...), ``H = J^T M J`` block diagonal
    (:func:`~.columns.block_diagonal_solve`): the coupled block ``coupled_inertia``
    (:func:`composite_inertia`) factorised, each childless free joint's block inverted
    directly (:func:`_free_solve`)."""
    return block_diagonal_solve(columns, coupled_inertia, lambda free: _free_solve(mechanism, columns, x, free), rhs)


def _jacobian_times(columns: Columns, coupled_jacobian, rates):
    """``J rates`` (``rates``: velocities x ...) as :func:`_times` products."""
    return jacobian_times(columns, coupled_jacobian, rates, _times)


def _jacobian_transpose_times(columns: Columns, coupled_jacobian, twists):
    """``J^T twists`` (``twists``: 6 bodies x ...) as :func:`_transpose_times` products."""
    return jacobian_transpose_times(columns, coupled_jacobian, twists, _transpose_times)


class _Composite(NamedTuple):
    """How the composite-rigid-body algorithm runs on a tree's coupled block (static): per
    coupled joint, its child body's place among the coupled bodies, its columns' slice of the
    coupled velocities and the coupled joints above it (itself included); the coupled bodies'
    places in placing order and, per place, its parent's place (-1: on the ground)."""

    joints: tuple[tuple[int, slice, tuple[int, ...]], ...]
    order: tuple[int, ...]
    parents: tuple[int, ...]


def _composite(topology: Topology, columns: Columns) -> _Composite:
    """:class:`_Composite` of ``topology`` split as ``columns``."""
    bodies = columns.coupled_bodies.tolist()
    place = {body: k for k, body in enumerate(bodies)}
    coupled = set(columns.coupled.tolist())
    first = {rate: k for k, rate in enumerate(columns.coupled.tolist())}
    placing = {joint.body: joint for joint in topology.joints}
    owner = {}  # body -> the coupled joint that places it, for the coupled joints
    joints = []
    for joint in topology.joints:
        if joint.rate is None or joint.rate not in coupled:
            continue
        above, body = [], joint.body
        while body != GROUND:  # the coupled joints on the path to the ground, itself first
            if body in owner:
                above.append(owner[body])
            body = placing[body].parent
        owner[joint.body] = len(joints)
        start = first[joint.rate]
        joints.append((place[joint.body], slice(start, start + SPATIAL_SIZES[joint.kind][1]),
                       (len(joints),) + tuple(above)))
    order = tuple(place[joint.body] for joint in topology.joints if joint.body in place)
    parents = tuple(place.get(placing[body].parent, -1) for body in bodies)
    return _Composite(tuple(joints), order, parents)


def composite_inertia(mechanism: SpatialMechanism, topology: Topology, x, coupled_jacobian, inertias):
    """``H_c = J_c^T M_c J_c``, the coupled block of the joint-space inertia matrix, by the
    composite-rigid-body algorithm (Featherstone 2008, §6.2) in the ground frame: each
    body's spatial inertia about one reference point ``o`` (the first coupled body's
    centre), ``m``, ``h = m (r - o)`` and ``K = I + m (|r - o|^2 1 - (r - o)(r - o)^T)``
    (``I = R J R^T``), summed over each subtree from the leaves up; a joint's columns as
    motions about ``o``, ``S = [omega; v_o]`` with ``v_o = v_c - omega x (r_c - o)`` from its
    child's rows of ``J_c``; then ``H_jk = S_j^T I^C_k S_k`` for ``j`` the joint ``k`` or
    a joint above it, with ``I^C_k S = [K omega + h x v_o; m v_o - h x omega]`` the
    composite inertia of ``k``'s subtree applied, and zero for joints on separate branches.
    Each body's rows enter only the columns of the joints above it (the tree's sparsity),
    and the lower half of ``H_c`` is the transpose of the upper."""
    columns = tree_columns(topology, mechanism.num_bodies, SPATIAL_SIZES)
    plan = _composite(topology, columns)
    bodies = columns.coupled_bodies
    masses, inertias = mechanism.masses[bodies], inertias[bodies]
    centres = x.reshape(-1, 7)[bodies, :3]
    arms = centres - centres[0]
    squared = jnp.sum(arms * arms, axis=-1)
    rotational = (inertias + masses[:, None, None] * (squared[:, None, None] * jnp.eye(3, dtype=x.dtype)
                                                      - arms[:, :, None] * arms[:, None, :]))
    composite = [[masses[k], masses[k] * arms[k], rotational[k]] for k in range(len(plan.parents))]
    for k in reversed(plan.order):  # leaves first: each subtree summed before its parent
        if plan.parents[k] >= 0:
            composite[plan.parents[k]] = [a + b for a, b in zip(composite[plan.parents[k]], composite[k])]
    motions, forces = [], []
    for child, span, _ in plan.joints:
        linear = coupled_jacobian[6 * child : 6 * child + 3, span]
        omega = coupled_jacobian[6 * child + 3 : 6 * child + 6, span]
        origin = linear - jnp.cross(omega, arms[child][:, None], axisa=0, axisb=0, axisc=0)
        mass, moment, rotation = composite[child]
        forces.append((matmul(rotation, omega) + jnp.cross(moment[:, None], origin, axisa=0, axisb=0, axisc=0),
                       mass * origin - jnp.cross(moment[:, None], omega, axisa=0, axisb=0, axisc=0)))
        motions.append((omega, origin))
    blocks = {}
    for k, (_, _, above) in enumerate(plan.joints):
        angular, linear = forces[k]
        for j in above:
            omega, origin = motions[j]
            blocks[j, k] = (jnp.sum(omega[:, :, None] * angular[:, None, :], axis=0)
                            + jnp.sum(origin[:, :, None] * linear[:, None, :], axis=0))
    widths = [span.stop - span.start for _, span, _ in plan.joints]
    rows = []
    for j in range(len(plan.joints)):
        row = [blocks[j, k] if (j, k) in blocks else blocks[k, j].T if (k, j) in blocks
               else jnp.zeros((widths[j], widths[k]), x.dtype) for k in range(len(plan.joints))]
        rows.append(jnp.concatenate(row, axis=1))
    return jnp.concatenate(rows)


def evaluate(mechanism: SpatialMechanism, topology: Topology, state: TreeState) -> SpatialTreeEvaluation:
    """Joint accelerations, absolute kinematics, contact state, driver torques and the cut
    joints' multipliers. ``J`` is carried as its coupled columns only (:class:`~.columns.Columns`), so
    the free segments of a flexible body add nothing to the recursion nor to a forward-mode
    derivative of the field."""
    pd = prescribed_rates(mechanism, topology)
    columns = tree_columns(topology, mechanism.num_bodies, SPATIAL_SIZES)
    x, v, jacobian, driver_jacobian, convective = tree_motion(mechanism, topology, state.z, state.zd,
                                                              state.prescribed, pd, carried=tuple(columns.coupled.tolist()))
    applied, contact = body_forces(mechanism, x, v, state.impact_memory)
    inertias = world_inertias(mechanism, x)
    multipliers, reaction = jnp.zeros((0,), x.dtype), None
    if topology.rate_size:
        jacobian = coupled_block(columns, jacobian)
        inertia = composite_inertia(mechanism, topology, x, jacobian, inertias) if columns.coupled.size else None
        solve = lambda b: _inertia_solve(mechanism, columns, x, inertia, b)  # noqa: E731
        rhs = _jacobian_transpose_times(columns, jacobian,
                                        applied - _mass_apply(mechanism.masses, inertias, convective))
        if topology.cut_rows:
            cut_jacobian, gamma = _cut_rows(mechanism, topology, x, v, convective)
            coupling = _jacobian_transpose_times(columns, jacobian, cut_jacobian.T).T  # Phi_v J
            zdd, multipliers = schur_solve(solve, rhs, coupling, gamma)
            reaction = _transpose_times(cut_jacobian, multipliers)
        else:
            zdd = solve(rhs)
        vdot = _jacobian_times(columns, jacobian, zdd) + convective
    else:
        zdd, vdot = jnp.zeros((0,), x.dtype), convective
    joint_forces = _mass_apply(mechanism.masses, inertias, vdot) - applied
    # the cut joints' reactions -Phi_v^T lambda act on the bodies like applied forces
    driving = _transpose_times(driver_jacobian, joint_forces if reaction is None else joint_forces + reaction)
    return SpatialTreeEvaluation(zdd, x, v, vdot, contact, driver_torques(mechanism, topology, driving), multipliers,
                                 joint_forces)


def project_state(mechanism: SpatialMechanism, topology: Topology, state: TreeState, iterations: int = 1
                  ) -> TreeState:
    """``state`` moved back onto the cut joints' independent rows, as the planar tree's
    :func:`~.dynamics.project_state`: ``iterations`` Gauss-Newton steps on ``Phi = 0``,
    each the velocity-space correction ``du = -H^-1 G^T (G H^-1 G^T)^-1 Phi`` of least
    kinetic-energy norm applied to ``z`` through the coordinates' rate
    (:func:`~.spatial_kinematics.coordinate_rate`, first order in ``du``; the forward
    kinematics normalises the quaternions), then ``zd`` onto ``dPhi/dt = 0`` the same way,
    with ``G`` and ``H`` taken once at the given state."""
    if not (topology.cut_rows and topology.rate_size):
        return state
    cut = cut_view(mechanism, topology)
    pd = prescribed_rates(mechanism, topology)
    columns = tree_columns(topology, mechanism.num_bodies, SPATIAL_SIZES)
    motion = tree_motion(mechanism, topology, state.z, state.zd, state.prescribed, pd,
                         carried=tuple(columns.coupled.tolist()))
    jacobian = coupled_block(columns, motion.jacobian)
    inertia = (composite_inertia(mechanism, topology, motion.x, jacobian, world_inertias(mechanism, motion.x))
               if columns.coupled.size else None)
    coupling = _jacobian_transpose_times(columns, jacobian, constraint_jacobian(cut, motion.x, 0.0).T).T
    spread = _inertia_solve(mechanism, columns, motion.x, inertia, coupling.T)

    def correction(residual):
        return -_times(spread, spd_solve(_times(coupling, spread), residual))

    def positions(z):
        zero = jnp.zeros_like(state.zd)
        return tree_motion(mechanism, topology, z, zero, state.prescribed, jnp.zeros_like(pd), order=0).x

    z = state.z
    for _ in range(iterations):
        residual = constraint_jets(cut, positions(z), jnp.zeros(motion.v.shape, z.dtype), 0.0).value
        z = z + coordinate_rate(mechanism, topology, z, correction(residual))
    moved = tree_motion(mechanism, topology, z, state.zd, state.prescribed, pd, order=0)
    rate = constraint_jets(cut, moved.x, moved.v, 0.0).rate
    return state._replace(z=z, zd=state.zd + correction(rate))


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
