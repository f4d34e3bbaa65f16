"""Forward kinematics of a spatial tree: positions and unit quaternions from joint coordinates.

Every joint of the tree relates its bodies ``i`` and ``j`` by a relative rotation ``A`` and
a separation ``d`` in body ``i``'s frame,

    ``R_j = R_i R(A)``,   ``P_j = P_i + R_i d``,

with ``P_i = r_i + R_i p_i`` and ``P_j = r_j + R_j p_j`` the joint's points (Featherstone
2008, ch. 4: the kinematic tree; Nikravesh 1988, §6 for the joints). Per kind, with
``F = [a, u, a x u]`` the frame of a body's joint axis ``a`` and reference ``u``:

* revolute, angle ``theta``: ``A = q(a_i, theta) C``, ``C = F_i F_j^T`` (the axes aligned and
  the references equal at ``theta = 0``), ``d = 0`` (``p_i`` shifted by ``offset``);
* cylindrical, ``(theta, s)``: the same ``A``, ``d = s a_i``;
* prismatic, slide ``s``: ``A = relative`` (the kept relative orientation), ``d = s a_i``;
* fixed: ``A = relative``, ``d = 0``;
* spherical, relative unit quaternion ``q``: ``A = q``, ``d = 0``;
* axial (a cylindrical clearance joint held axially, ``i`` the bearing, ``j`` the journal),
  ``(e_u, e_w, q)``: ``A = q``, ``d = e_u u_B + e_w w_B`` in the bearing's cross-section;
* free: the body's own position and quaternion.

These are the absolute engine's joint rows (:mod:`model.mechanics.spatial.constraints`)
solved for the child, so the absolute coordinates satisfy them exactly (the revolute angle
is the speed driver's ``theta``: ``sin theta = (R_i (a_i x u_i)) . (R_j u_j)``).

A quaternion coordinate's rate is not a velocity: the tree's velocities ``u`` carry the
relative angular velocity ``w`` (body ``i``'s frame; ground frame for a free joint), and
``dq/dt = 1/2 [0, w] (x) q`` with the absolute engine's norm-restoring term
(:func:`~model.geometry.quaternion.quaternion_rate`). The forward kinematics uses
``q / |q|``, so the bodies' quaternions are unit whatever the drift of ``|q|``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.quaternion import (axis_angle_quaternion, conjugate, matrix_quaternion, quaternion_product,
                                    quaternion_rate, rotation_matrix)
from ...geometry.vectors import dot, matmul, times_transpose
from ..spatial.constraints import body_pose
from ..spatial.joints import GROUND
from .topology import SPATIAL_SIZES, Topology, TreeJoint

if TYPE_CHECKING:
    from ..spatial.mechanism import SpatialMechanism

_QUATERNION_AT = {"spherical": 0, "axial": 2, "free": 3}  # where a joint's quaternion begins


def _unit(q):
    return q / jnp.sqrt(jnp.sum(q * q))


def _frame(axis, reference):
    return jnp.stack([axis, reference, jnp.cross(axis, reference)], axis=1)


def _transposed_dot(matrix, vector):
    """``matrix^T vector`` for a 3 x 3 ``matrix`` (:mod:`model.geometry.vectors`: no ``dot``
    kernel under ``vmap``)."""
    return jnp.sum(matrix * vector[:, None], axis=0)


def _joint_data(mechanism: SpatialMechanism, joint: TreeJoint):
    """``(ideal joint or clearance joint, p_i, p_j)``: the joint and its points on ``i`` and ``j``."""
    if joint.kind == "axial":
        clearance = mechanism.cylindrical_joints[joint.index]
        return clearance, clearance.bearing_point, clearance.journal_point
    ideal = mechanism.joints[joint.index]
    return ideal, ideal.point_i + ideal.offset, ideal.point_j


def relative_motion(mechanism: SpatialMechanism, joint: TreeJoint, value):
    """``(A, d)``: body ``j``'s rotation relative to body ``i`` (unit quaternion) and the
    separation ``P_j - P_i`` in body ``i``'s frame (m) at the joint's coordinates ``value``."""
    data, _, _ = _joint_data(mechanism, joint)
    if joint.kind == "axial":
        return _unit(value[2:6]), value[0] * data.bearing_u + value[1] * data.bearing_w
    zero = jnp.zeros(3, data.point_i.dtype)
    if joint.kind in ("revolute", "cylindrical"):
        aligned = matrix_quaternion(times_transpose(_frame(data.axis_i, data.reference_i),
                                                    _frame(data.axis_j, data.reference_j)))
        angle = value if joint.kind == "revolute" else value[0]
        turn = quaternion_product(axis_angle_quaternion(data.axis_i, angle), aligned)
        return turn, zero if joint.kind == "revolute" else value[1] * data.axis_i
    if joint.kind == "prismatic":
        return data.relative, value * data.axis_i
    if joint.kind == "fixed":
        return data.relative, zero
    if joint.kind == "spherical":
        return _unit(value), zero
    raise ValueError(f"unknown spatial tree joint kind {joint.kind!r}")


def _value_rate(mechanism: SpatialMechanism, joint: TreeJoint, value, rate):
    """One joint's ``d value / dt`` of its velocities ``rate`` (``1/2 [0, w] (x) q`` with the
    norm-restoring term for a quaternion, Nikravesh 1988 §6; the rate itself otherwise)."""
    if joint.prescribed is None and joint.kind in _QUATERNION_AT:
        at = _QUATERNION_AT[joint.kind]
        return jnp.concatenate([rate[:at], quaternion_rate(value[at:], rate[at:], mechanism.quaternion_restoring_rate)])
    return rate


def coordinate_rate(mechanism: SpatialMechanism, topology: Topology, z: Float[Array, " n"],
                    zd: Float[Array, " m"]) -> Float[Array, " n"]:
    """``dz/dt`` of the velocities ``zd``: equal for angles and slides; ``1/2 [0, w] (x) q``
    with the norm-restoring term of the absolute engine for a quaternion."""
    parts = []
    for joint in topology.joints:
        if joint.coordinate is None:
            continue
        size, rates = SPATIAL_SIZES[joint.kind]
        parts.append(_value_rate(mechanism, joint, z[joint.coordinate : joint.coordinate + size],
                                 zd[joint.rate : joint.rate + rates]))
    return jnp.concatenate(parts) if parts else jnp.zeros((0,), z.dtype)


def _subspace(mechanism: SpatialMechanism, joint: TreeJoint, dtype):
    """``(S_w, S_d)``, 3 x (the joint's velocities): the relative angular velocity
    ``w = S_w u`` of body ``j`` and the rate ``d' = S_d u`` of the separation, both in body
    ``i``'s frame, in which the columns are constant (the joint's motion subspace;
    Featherstone 2008, §4.4). A free joint is body ``j`` on the ground, ``d = r``."""
    zero, identity = jnp.zeros((3, 3), dtype), jnp.eye(3, dtype=dtype)
    if joint.kind == "free":
        return jnp.concatenate([zero, identity], axis=1), jnp.concatenate([identity, zero], axis=1)
    data, _, _ = _joint_data(mechanism, joint)
    column = jnp.zeros((3, 1), dtype)
    if joint.kind == "axial":
        slides = jnp.stack([data.bearing_u, data.bearing_w], axis=1)
        return jnp.concatenate([jnp.zeros((3, 2), dtype), identity], axis=1), jnp.concatenate([slides, zero], axis=1)
    axis = data.axis_i[:, None]
    return {"revolute": (axis, column), "prismatic": (column, axis),
            "cylindrical": (jnp.concatenate([axis, column], axis=1), jnp.concatenate([column, axis], axis=1)),
            "spherical": (identity, zero)}[joint.kind]


def _subspace_times(mechanism: SpatialMechanism, joint: TreeJoint, rate, dtype):
    """``(S_w u, S_d u)`` of :func:`_subspace` at the joint's velocities ``u = rate``, each
    kind's columns written out (selections and an axis times a rate: no products with the
    subspace's zero and identity blocks)."""
    zero = jnp.zeros(3, dtype)
    if joint.kind == "free":
        return rate[3:], rate[:3]
    data, _, _ = _joint_data(mechanism, joint)
    if joint.kind == "axial":
        return rate[2:], rate[0] * data.bearing_u + rate[1] * data.bearing_w
    if joint.kind == "spherical":
        return rate, zero
    if joint.kind == "cylindrical":
        return rate[0] * data.axis_i, rate[1] * data.axis_i
    return (rate * data.axis_i, zero) if joint.kind == "revolute" else (zero, rate * data.axis_i)


def _local_motion(mechanism: SpatialMechanism, joint: TreeJoint, value, rate, joint_acceleration, dtype,
                  columns: bool = True):
    """The child's motion relative to its parent, in the parent's frame: its unit quaternion
    ``E`` (``R_c = R_p R(E)``), its centre ``s`` from the parent's (``r_c = r_p + R_p s``),
    the columns ``[w; s']`` on the joint's velocities (None without ``columns``), ``[w; s']``
    at ``rate`` and ``[w'; s'']`` at ``joint_acceleration``.

    With ``A``, ``d`` of :func:`relative_motion` and ``b = R(A) p_j``: body ``j`` the child,
    ``s = p_i + d - b``, ``w = S_w u``, ``s' = S_d u - w x b``,
    ``w' = S_w u'``, ``s'' = S_d u' - w' x b - w x (w x b)``; body ``i`` the child, with
    ``c = R(A)^T (p_i + d)`` and ``W = -R(A)^T w``: ``E = conj(A)``, ``s = p_j - c``,
    ``s' = c x W - R(A)^T S_d u``, ``W' = -R(A)^T S_w u'``,
    ``s'' = -(W' x c + W x (W x c) + 2 W x (R(A)^T S_d u) + R(A)^T S_d u')``
    (``S_w``, ``S_d``: :func:`_subspace`, constant in body ``i``'s frame)."""
    if joint.kind == "free":
        turn, separation, point_i, point_j = _unit(value[3:7]), value[:3], None, None
    else:
        turn, separation = relative_motion(mechanism, joint, value)
        _, point_i, point_j = _joint_data(mechanism, joint)
    if value is None:  # fixed: no velocities
        rotation = rotation_matrix(turn)
        if joint.child_is_j:
            return turn, point_i + separation - dot(rotation, point_j), None, jnp.zeros(6, dtype), jnp.zeros(6, dtype)
        return (conjugate(turn), point_j - _transposed_dot(rotation, point_i + separation), None,
                jnp.zeros(6, dtype), jnp.zeros(6, dtype))
    rate, joint_acceleration = jnp.atleast_1d(rate), jnp.atleast_1d(joint_acceleration)
    spin, slide = _subspace_times(mechanism, joint, rate, dtype)
    spin_rate, slide_rate = _subspace_times(mechanism, joint, joint_acceleration, dtype)
    spin_columns, slide_columns = _subspace(mechanism, joint, dtype) if columns else (None, None)
    if joint.kind == "free":
        own = jnp.concatenate([spin_columns, slide_columns]) if columns else None
        return turn, separation, own, jnp.concatenate([spin, slide]), jnp.concatenate([spin_rate, slide_rate])
    rotation = rotation_matrix(turn)
    if joint.child_is_j:
        arm = dot(rotation, point_j)
        own = (jnp.concatenate([spin_columns, slide_columns + jnp.cross(arm, spin_columns, axisb=0, axisc=0)])
               if columns else None)
        return (turn, point_i + separation - arm, own, jnp.concatenate([spin, slide - jnp.cross(spin, arm)]),
                jnp.concatenate([spin_rate, slide_rate - jnp.cross(spin_rate, arm)
                                 - jnp.cross(spin, jnp.cross(spin, arm))]))
    lever = _transposed_dot(rotation, point_i + separation)
    back_spin, back_slide = -_transposed_dot(rotation, spin), _transposed_dot(rotation, slide)
    back_spin_rate, back_slide_rate = -_transposed_dot(rotation, spin_rate), _transposed_dot(rotation, slide_rate)
    own = None
    if columns:
        spin_back_columns = -matmul(rotation.T, spin_columns)
        own = jnp.concatenate([spin_back_columns, jnp.cross(lever, spin_back_columns, axisb=0, axisc=0)
                               - matmul(rotation.T, slide_columns)])
    return (conjugate(turn), point_j - lever, own,
            jnp.concatenate([back_spin, jnp.cross(lever, back_spin) - back_slide]),
            jnp.concatenate([back_spin_rate, -(jnp.cross(back_spin_rate, lever)
                                               + jnp.cross(back_spin, jnp.cross(back_spin, lever))
                                               + 2.0 * jnp.cross(back_spin, back_slide) + back_slide_rate)]))


class TreeMotion(NamedTuple):
    """The bodies' motion from the tree's state: positions ``x`` (7 per body), twists ``v``
    (6 per body, ``[rdot, omega]``, ground frame), their Jacobians on the free velocities
    (``J``) and on the prescribed rates (``J_p``), and the twists' rate at zero joint
    acceleration (``c``): ``v = J zd + J_p pd``, ``vdot = J zdd + c``."""

    x: Float[Array, " coords"]
    v: Float[Array, " velocities"]
    jacobian: Float[Array, "velocities m"]
    driver_jacobian: Float[Array, "velocities drivers"]
    convective: Float[Array, " velocities"]


class _Body(NamedTuple):
    """One body's state in the recursion (ground frame): centre, unit quaternion, rotation,
    velocity, angular velocity, their rates, and the Jacobian columns of its ancestors'
    joints as ``{first column: (J_v, J_omega)}`` (3 x the joint's velocities each; the
    prescribed rates' ``{driver: (J_v, J_omega)}`` apart): a body's rows of ``J`` are zero
    in every other column."""

    position: Float[Array, "3"]
    quaternion: Float[Array, "4"]
    rotation: Float[Array, "3 3"]
    velocity: Float[Array, "3"]
    omega: Float[Array, "3"]
    acceleration: Float[Array, "3"]
    alpha: Float[Array, "3"]
    columns: dict
    driver_columns: dict


def tree_motion(mechanism: SpatialMechanism, topology: Topology, z, zd, p, pd, zdd=None, order: int = 2,
                carried: tuple[int, ...] | None = None) -> TreeMotion:
    """:class:`TreeMotion` by the recursion over the tree (Featherstone 2008, §4.4, §7.1):
    with the child's pose ``R_c = R_p E``, ``r_c = r_p + R_p s`` and, in the parent's frame,
    its relative angular velocity ``w`` and ``sdot`` (:func:`_local_motion`, linear in the
    joint's velocities) and their rates ``kw``, ``ks`` at zero joint acceleration,

    ``omega_c = omega_p + R_p w``,  ``v_c = v_p + omega_p x (R_p s) + R_p sdot``,
    ``alpha_c = alpha_p + omega_p x (R_p w) + R_p kw``,
    ``a_c = a_p + alpha_p x (R_p s) + omega_p x (omega_p x R_p s) + 2 omega_p x (R_p sdot) + R_p ks``;

    the Jacobian columns of the ancestors carry over the same way (``J_omega`` unchanged,
    ``J_v + J_omega x (R_p s)``), the joint's own are ``R_p`` times its local columns; a
    body carries its ancestors' columns only (the rest of its rows of ``J`` is zero). Only
    the joint's own few coordinates are differentiated (forward mode), never the chain.

    A joint on the ground places its child by the local motion alone (the ground's pose is
    the identity). The result passes an optimisation barrier (``jax.lax.optimization_barrier``):
    XLA computes the motion once and its consumers (forces, contact, inertia) read it, where it
    would otherwise fuse the recursion into several of them and compute it again in each
    (docs/engine.md, "Spatial configs under ``auto``").

    ``zdd`` (None: zero) makes ``convective`` the twists' whole rate ``J zdd + c``;
    ``order`` 0 gives the positions and twists only (the rest zero), 1 adds the rates, 2
    the Jacobians. ``carried`` (static, None: all) are the velocities whose columns ``J``
    holds, in order; every joint's velocities are all in it or all out of it (a joint out of
    it adds no column: :func:`~.topology.coupled_rates` leaves out the childless free
    joints, whose columns are constant identity blocks)."""
    dtype = jnp.result_type(z, zd, p, mechanism.masses)
    carried = tuple(range(zd.shape[0])) if carried is None else carried
    drivers = p.shape[0]
    bodies = {}
    widths = {}  # the carried joints' first columns and widths
    for joint in topology.joints:
        if joint.prescribed is not None:
            value, rate = p[joint.prescribed], pd[joint.prescribed]
        elif joint.coordinate is not None:
            count, rates = SPATIAL_SIZES[joint.kind]
            value = z[joint.coordinate] if count == 1 else z[joint.coordinate : joint.coordinate + count]
            rate = zd[joint.rate] if rates == 1 else zd[joint.rate : joint.rate + rates]
        else:
            value, rate = None, None
        # the joint's acceleration: zdd's entries, or none for a prescribed angle
        if value is None or zdd is None or joint.prescribed is not None:
            joint_acceleration = jnp.zeros_like(rate) if value is not None else None
        else:
            joint_acceleration = zdd[joint.rate] if jnp.ndim(rate) == 0 else zdd[joint.rate : joint.rate + rate.shape[0]]
        own = value is not None and order == 2 and (joint.prescribed is not None or joint.rate in carried)
        turn, separation, columns, local, local_rate = _local_motion(mechanism, joint, value, rate,
                                                                     joint_acceleration, dtype, columns=own)
        if joint.parent == GROUND:  # the local motion is the motion: nothing to compose
            own_v, own_w = (columns[3:], columns[:3]) if own else (None, None)
            child = _Body(separation, turn, rotation_matrix(turn), local[3:], local[:3], local_rate[3:], local_rate[:3],
                          {}, {})
        else:
            parent = bodies[joint.parent]
            rotation, omega, alpha = parent.rotation, parent.omega, parent.alpha
            arm = dot(rotation, separation)
            spin, slide = dot(rotation, local[:3]), dot(rotation, local[3:])
            child_quaternion = quaternion_product(parent.quaternion, turn)
            carry = lambda jv, jw: (jv - jnp.cross(arm, jw, axisa=0, axisb=0, axisc=0), jw)  # noqa: E731
            child = _Body(
                parent.position + arm, child_quaternion, rotation_matrix(child_quaternion),
                parent.velocity + jnp.cross(omega, arm) + slide, omega + spin,
                parent.acceleration + jnp.cross(alpha, arm) + jnp.cross(omega, jnp.cross(omega, arm))
                + 2.0 * jnp.cross(omega, slide) + dot(rotation, local_rate[3:]),
                alpha + jnp.cross(omega, spin) + dot(rotation, local_rate[:3]),
                {k: carry(*pair) for k, pair in parent.columns.items()} if order == 2 else {},
                {k: carry(*pair) for k, pair in parent.driver_columns.items()} if order == 2 else {})
            own_v, own_w = (matmul(rotation, columns[3:]), matmul(rotation, columns[:3])) if own else (None, None)
        if own:
            if joint.prescribed is not None:
                child.driver_columns[joint.prescribed] = (own_v[:, 0], own_w[:, 0])
            else:
                child.columns[joint.rate] = (own_v, own_w)
                widths[joint.rate] = own_w.shape[1]
        bodies[joint.body] = child
    ordered = [bodies[b] for b in range(mechanism.num_bodies)]
    x = jnp.concatenate([jnp.concatenate([b.position, b.quaternion]) for b in ordered])
    v = jnp.concatenate([jnp.concatenate([b.velocity, b.omega]) for b in ordered])
    convective = jnp.concatenate([jnp.concatenate([b.acceleration, b.alpha]) for b in ordered])
    joints = [(k, widths[k]) for k in carried if k in widths]  # J's column blocks, in order

    def rows(columns, blocks):
        # a body's six rows: its ancestors' columns, zero elsewhere
        pairs = [columns.get(k, (jnp.zeros((3, width), dtype),) * 2) for k, width in blocks]
        if not pairs:
            return jnp.zeros((6, 0), dtype)
        return jnp.concatenate([jnp.concatenate([jv for jv, _ in pairs], axis=1),
                                jnp.concatenate([jw for _, jw in pairs], axis=1)])

    if order < 2:
        jacobian = jnp.zeros((6 * mechanism.num_bodies, len(carried)), dtype)
        driver_jacobian = jnp.zeros((6 * mechanism.num_bodies, drivers), dtype)
    else:
        jacobian = jnp.concatenate([rows(b.columns, joints) for b in ordered])
        driver_columns = [{k: (jv[:, None], jw[:, None]) for k, (jv, jw) in b.driver_columns.items()} for b in ordered]
        driver_jacobian = jnp.concatenate([rows(columns, [(k, 1) for k in range(drivers)]) for columns in driver_columns])
    return jax.lax.optimization_barrier(TreeMotion(x, v, jacobian, driver_jacobian, convective))


def body_velocities(mechanism: SpatialMechanism, topology: Topology, z, zd, p, pd):
    """``(x, v)``: the positions and the bodies' twists ``v = J zd + J_p pd``
    (:func:`tree_motion`)."""
    motion = tree_motion(mechanism, topology, z, zd, p, pd, order=0)
    return motion.x, motion.v


def joint_coordinates(mechanism: SpatialMechanism, topology: Topology, x: Float[Array, " coords"]
                      ) -> tuple[Float[Array, " n"], Float[Array, " drivers"]]:
    """``(z, p)`` of positions ``x`` that satisfy the tree's joints: the inverse of
    the positions of :func:`tree_motion` (a revolute joint's angle ``atan2`` of the driver's sine and
    cosine, a slide along ``R_i a_i``, a relative quaternion ``conj(p_i) (x) p_j``, a free
    body's own position and quaternion)."""
    z = [None] * topology.size
    p = [None] * len(topology.speed_drivers)
    for joint in topology.joints:
        if joint.kind == "free":
            values = x[7 * joint.body : 7 * joint.body + 7]
        elif joint.kind == "fixed":
            continue
        else:
            data, point_i, point_j = _joint_data(mechanism, joint)
            body_i, body_j = (data.bearing_body, data.journal_body) if joint.kind == "axial" else (data.body_i,
                                                                                                   data.body_j)
            position_i, quaternion_i = body_pose(x, body_i)
            position_j, quaternion_j = body_pose(x, body_j)
            rotation_i, rotation_j = rotation_matrix(quaternion_i), rotation_matrix(quaternion_j)
            gap = rotation_i.T @ (position_j + rotation_j @ point_j - position_i) - point_i  # d, body i's frame
            relative = quaternion_product(conjugate(quaternion_i), quaternion_j)
            if joint.kind == "axial":
                values = jnp.concatenate([jnp.stack([gap @ data.bearing_u, gap @ data.bearing_w]), relative])
            elif joint.kind == "spherical":
                values = relative
            elif joint.kind == "prismatic":
                values = gap @ data.axis_i
            else:
                reference = rotation_i.T @ rotation_j @ data.reference_j  # body j's reference in i's frame
                angle = jnp.arctan2(jnp.cross(data.axis_i, data.reference_i) @ reference, data.reference_i @ reference)
                values = angle if joint.kind == "revolute" else jnp.stack([angle, gap @ data.axis_i])
        if joint.prescribed is not None:
            p[joint.prescribed] = values
        else:
            values = jnp.atleast_1d(values)
            for k in range(values.shape[0]):
                z[joint.coordinate + k] = values[k]
    stack = lambda values: jnp.stack(values) if values else jnp.zeros((0,), x.dtype)  # noqa: E731
    return stack(z), stack(p)


def joint_velocities(mechanism: SpatialMechanism, topology: Topology, z, p, v: Float[Array, " velocities"],
                     pd: Float[Array, " drivers"]) -> Float[Array, " m"]:
    """The velocities ``zd`` whose twists (:func:`body_velocities`) are ``v``: the
    least-squares solution of ``J zd = v - J_p pd`` (exact for twists the tree allows)."""
    if not topology.rate_size:
        return jnp.zeros((0,), v.dtype)
    motion = tree_motion(mechanism, topology, z, jnp.zeros(topology.rate_size, v.dtype), p, pd)
    jacobian = motion.jacobian
    return jnp.linalg.solve(jacobian.T @ jacobian, jacobian.T @ (v - motion.v))
