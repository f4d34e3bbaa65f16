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

import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.quaternion import (axis_angle_quaternion, conjugate, matrix_quaternion, quaternion_product,
                                    quaternion_rate, rotation_matrix)
from ..spatial.constraints import body_pose
from ..spatial.joints import GROUND
from .topology import SPATIAL_SIZES, Topology, TreeJoint

if TYPE_CHECKING:
    from ..spatial.mechanism import SpatialMechanism

_QUATERNION_AT = {"spherical": 0, "axial": 2, "free": 3}  # where a joint's quaternion begins


def _unit(q):
    return q / jnp.sqrt(q @ q)


def _frame(axis, reference):
    return jnp.stack([axis, reference, jnp.cross(axis, reference)], axis=1)


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
        aligned = matrix_quaternion(_frame(data.axis_i, data.reference_i) @ _frame(data.axis_j, data.reference_j).T)
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


def _local_motion(mechanism: SpatialMechanism, joint: TreeJoint, value, rate, joint_acceleration, dtype):
    """The child's motion relative to its parent, in the parent's frame: its unit quaternion
    ``E`` (``R_c = R_p R(E)``), its centre ``s`` from the parent's (``r_c = r_p + R_p s``),
    the columns ``[w; s']`` on the joint's velocities, ``[w; s']`` at ``rate`` and
    ``[w'; s'']`` at ``joint_acceleration``.

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
            return turn, point_i + separation - rotation @ point_j, None, jnp.zeros(6, dtype), jnp.zeros(6, dtype)
        return conjugate(turn), point_j - rotation.T @ (point_i + separation), None, jnp.zeros(6, dtype), jnp.zeros(
            6, dtype)
    spin_columns, slide_columns = _subspace(mechanism, joint, dtype)
    rate, joint_acceleration = jnp.atleast_1d(rate), jnp.atleast_1d(joint_acceleration)
    spin, slide = spin_columns @ rate, slide_columns @ rate
    spin_rate, slide_rate = spin_columns @ joint_acceleration, slide_columns @ joint_acceleration
    if joint.kind == "free":
        columns = jnp.concatenate([spin_columns, slide_columns])
        return turn, separation, columns, jnp.concatenate([spin, slide]), jnp.concatenate([spin_rate, slide_rate])
    rotation = rotation_matrix(turn)
    if joint.child_is_j:
        arm = rotation @ point_j
        columns = jnp.concatenate([spin_columns, slide_columns + jnp.cross(arm, spin_columns, axisb=0, axisc=0)])
        return (turn, point_i + separation - arm, columns, jnp.concatenate([spin, slide - jnp.cross(spin, arm)]),
                jnp.concatenate([spin_rate, slide_rate - jnp.cross(spin_rate, arm)
                                 - jnp.cross(spin, jnp.cross(spin, arm))]))
    lever = rotation.T @ (point_i + separation)
    back_spin, back_slide = -rotation.T @ spin, rotation.T @ slide
    back_spin_rate, back_slide_rate = -rotation.T @ spin_rate, rotation.T @ slide_rate
    spin_back_columns = -rotation.T @ spin_columns
    columns = jnp.concatenate([spin_back_columns, jnp.cross(lever, spin_back_columns, axisb=0, axisc=0)
                               - rotation.T @ slide_columns])
    return (conjugate(turn), point_j - lever, columns,
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


def tree_motion(mechanism: SpatialMechanism, topology: Topology, z, zd, p, pd, zdd=None, order: int = 2,
                carried: tuple[int, ...] | None = None) -> TreeMotion:
    """:class:`TreeMotion` by the recursion over the tree (Featherstone 2008, §4.4, §7.1):
    with the child's pose ``R_c = R_p E``, ``r_c = r_p + R_p s`` and, in the parent's frame,
    its relative angular velocity ``w`` and ``sdot`` (:func:`_local_twist`, linear in the
    joint's velocities) and their rates ``kw``, ``ks`` at zero joint acceleration,

    ``omega_c = omega_p + R_p w``,  ``v_c = v_p + omega_p x (R_p s) + R_p sdot``,
    ``alpha_c = alpha_p + omega_p x (R_p w) + R_p kw``,
    ``a_c = a_p + alpha_p x (R_p s) + omega_p x (omega_p x R_p s) + 2 omega_p x (R_p sdot) + R_p ks``;

    the Jacobian columns of the ancestors carry over the same way (``J_omega`` unchanged,
    ``J_v + J_omega x (R_p s)``), the joint's own are ``R_p`` times its local columns. Only
    the joint's own few coordinates are differentiated (forward mode), never the chain.

    ``zdd`` (None: zero) makes ``convective`` the twists' whole rate ``J zdd + c``;
    ``order`` 0 gives the positions and twists only (the rest zero), 1 adds the rates, 2
    the Jacobians. ``carried`` (static, None: all) are the velocities whose columns ``J``
    holds, in order; every joint's velocities are all in it or all out of it (a joint out of
    it adds no column: :func:`~.topology.coupled_rates` leaves out the childless free
    joints, whose columns are constant identity blocks)."""
    dtype = jnp.result_type(z, zd, p, mechanism.masses)
    size = zd.shape[0] if carried is None else len(carried)
    drivers = p.shape[0]
    zero3 = jnp.zeros(3, dtype)
    ground = (jnp.zeros(3, dtype), jnp.asarray([1.0, 0.0, 0.0, 0.0], dtype), jnp.eye(3, dtype=dtype), zero3, zero3,
              zero3, zero3, jnp.zeros((3, size), dtype), jnp.zeros((3, size), dtype), jnp.zeros((3, drivers), dtype),
              jnp.zeros((3, drivers), dtype))
    bodies = {GROUND: ground}
    for joint in topology.joints:
        position, quaternion, rotation, velocity, omega, acceleration, alpha, jv, jw, pv, pw = bodies[joint.parent]
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
        turn, separation, columns, local, local_rate = _local_motion(mechanism, joint, value, rate,
                                                                     joint_acceleration, dtype)
        arm = rotation @ separation
        spin, slide = rotation @ local[:3], rotation @ local[3:]
        child_quaternion = quaternion_product(quaternion, turn)
        child_rotation = rotation_matrix(child_quaternion)
        child = [position + arm, child_quaternion, child_rotation,
                 velocity + jnp.cross(omega, arm) + slide, omega + spin,
                 acceleration + jnp.cross(alpha, arm) + jnp.cross(omega, jnp.cross(omega, arm))
                 + 2.0 * jnp.cross(omega, slide) + rotation @ local_rate[3:],
                 alpha + jnp.cross(omega, spin) + rotation @ local_rate[:3],
                 jv - jnp.cross(arm, jw, axisa=0, axisb=0, axisc=0), jw,
                 pv - jnp.cross(arm, pw, axisa=0, axisb=0, axisc=0), pw]
        if value is not None and order == 2:
            own_w, own_v = rotation @ columns[:3], rotation @ columns[3:]
            if joint.prescribed is not None:
                k = joint.prescribed
                child[9], child[10] = child[9].at[:, k].add(own_v[:, 0]), child[10].at[:, k].add(own_w[:, 0])
            elif carried is None or joint.rate in carried:
                start = joint.rate if carried is None else carried.index(joint.rate)
                k = slice(start, start + own_w.shape[1])
                child[7], child[8] = child[7].at[:, k].add(own_v), child[8].at[:, k].add(own_w)
        bodies[joint.body] = tuple(child)
    ordered = [bodies[b] for b in range(mechanism.num_bodies)]
    x = jnp.concatenate([jnp.concatenate([b[0], b[1]]) for b in ordered])
    v = jnp.concatenate([jnp.concatenate([b[3], b[4]]) for b in ordered])
    convective = jnp.concatenate([jnp.concatenate([b[5], b[6]]) for b in ordered])
    jacobian = jnp.concatenate([jnp.concatenate([b[7], b[8]]) for b in ordered])
    driver_jacobian = jnp.concatenate([jnp.concatenate([b[9], b[10]]) for b in ordered])
    return TreeMotion(x, v, jacobian, driver_jacobian, convective)


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
