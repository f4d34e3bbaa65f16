"""Forward kinematics of a planar tree: absolute body coordinates from joint coordinates.

Each joint places its child from its parent's pose (Featherstone 2008, ch. 4: the
kinematic tree; here in planar form). With ``P_i = r_i + R(theta_i) p_i`` the joint's
point on body ``i`` and likewise ``P_j``:

* revolute, angle ``phi``: ``theta_j = theta_i + phi``, ``P_j = P_i + offset``;
* prismatic, slide ``s``: ``theta_j = theta_i + angle``, ``P_j = P_i + s R(theta_i) a``;
* fixed: ``theta_j = theta_i + angle``, ``P_j = P_i``;
* free: ``(x, y, theta)`` of the body itself.

These are the absolute engine's joint constraints (:mod:`model.mechanics.constraints`)
solved for the child, so the absolute coordinates satisfy them exactly. Velocities,
Jacobians and accelerations follow by one recursion over the tree (:func:`tree_motion`),
each joint's relative motion written out as in the spatial tree, without automatic
differentiation.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...geometry.planar import perp, rotate
from ...geometry.vectors import dot
from ..constraints import point_position
from ..mechanism import GROUND, Mechanism
from .spatial_kinematics import TreeMotion
from .topology import Topology, TreeJoint, decoupled_joints


def _joint_value(joint: TreeJoint, z, p):
    if joint.prescribed is not None:
        return p[joint.prescribed]
    if joint.coordinate is None:
        return None
    if joint.kind == "free":
        return z[joint.coordinate : joint.coordinate + 3]
    return z[joint.coordinate]


def _place(mechanism: Mechanism, joint: TreeJoint, parent_pose, value):
    """The child's ``(position (m), angle (rad))`` from its parent's pose."""
    if joint.kind == "free":
        return value[:2], value[2]
    ideal = {"revolute": mechanism.revolute_joints, "prismatic": mechanism.prismatic_joints,
             "fixed": mechanism.fixed_joints}[joint.kind][joint.index]
    position, angle = parent_pose
    # relative angle theta_j - theta_i and the vector P_j - P_i (in body i's frame, or as
    # a ground-frame offset for the revolute joint's eccentricity)
    if joint.kind == "revolute":
        relative, slide, offset = value, jnp.zeros(2, position.dtype), ideal.offset
    elif joint.kind == "prismatic":
        relative, slide, offset = ideal.angle, value * ideal.axis, jnp.zeros(2, position.dtype)
    else:
        relative, slide, offset = ideal.angle, jnp.zeros(2, position.dtype), jnp.zeros(2, position.dtype)
    if joint.child_is_j:
        child_angle = angle + relative
        # P_j = P_i + R(theta_i) slide + offset, then r_j = P_j - R(theta_j) p_j
        point = position + rotate(angle, ideal.point_i + slide) + offset
        return point - rotate(child_angle, ideal.point_j), child_angle
    child_angle = angle - relative
    # P_i = P_j - R(theta_i) slide - offset, then r_i = P_i - R(theta_i) p_i
    point = position + rotate(angle, ideal.point_j) - offset
    return point - rotate(child_angle, ideal.point_i + slide), child_angle


def forward_kinematics(mechanism: Mechanism, topology: Topology, z: Float[Array, " n"],
                       p: Float[Array, " drivers"]) -> Float[Array, " coords"]:
    """Absolute coordinates ``q = [x_0, y_0, theta_0, ...]`` (m, rad) of every body from
    the free joint coordinates ``z`` and the prescribed ones ``p`` (rad, m)."""
    dtype = jnp.result_type(z, p, mechanism.masses)
    poses = {GROUND: (jnp.zeros(2, dtype), jnp.zeros((), dtype))}
    for joint in topology.joints:
        poses[joint.body] = _place(mechanism, joint, poses[joint.parent], _joint_value(joint, z, p))
    return jnp.concatenate([jnp.concatenate([poses[b][0], poses[b][1][None]]) for b in range(mechanism.num_bodies)])


def _joint_rates(joint: TreeJoint, zd, pd, zdd, size: int):
    """``(rate, acceleration, column)`` of a one-coordinate joint: its velocity, its
    acceleration (zero for a prescribed angle, whose speed is constant, and where ``zdd``
    is None) and its column in the velocities ``[zd, pd]``."""
    if joint.prescribed is not None:
        return pd[joint.prescribed], jnp.zeros((), pd.dtype), size + joint.prescribed
    acceleration = jnp.zeros((), zd.dtype) if zdd is None else zdd[joint.coordinate]
    return zd[joint.coordinate], acceleration, joint.coordinate


def _arm(angle, omega, alpha, jacobian_angle, local, slide):
    """A vector ``X = R(theta) u`` fixed in a body but for a slide along ``a``, with its rates
    (Featherstone 2008, §2.9, planar):

    ``Xdot = omega perp(X) + sdot R a``,
    ``Xddot = alpha perp(X) - omega^2 X + 2 omega sdot perp(R a) + sddot R a``,

    and the Jacobian of ``Xdot`` on the velocities, ``perp(X) J_theta + R a e_s``.
    ``slide``: None or ``(sdot, sddot, e_s, a)`` (``e_s``: the slide's unit row on the
    velocities)."""
    arm = rotate(angle, local)
    turned = perp(arm)
    rate, acceleration = omega * turned, alpha * turned - omega**2 * arm
    jacobian = None if jacobian_angle is None else turned[:, None] * jacobian_angle[None, :]
    if slide is not None:
        speed, slide_acceleration, unit, axis = slide
        along = rotate(angle, axis)
        rate = rate + speed * along
        acceleration = acceleration + 2.0 * omega * speed * perp(along) + slide_acceleration * along
        if jacobian is not None:
            jacobian = jacobian + along[:, None] * unit[None, :]
    return arm, rate, acceleration, jacobian


def tree_motion(mechanism: Mechanism, topology: Topology, z: Float[Array, " n"], zd: Float[Array, " n"],
                p: Float[Array, " drivers"], pd: Float[Array, " drivers"], zdd: Float[Array, " n"] | None = None,
                order: int = 2, carried: tuple[int, ...] | None = None) -> TreeMotion:
    """The bodies' absolute coordinates ``q`` (m, rad), velocities ``qd``, the Jacobians
    ``J = dq/dz`` and ``J_p = dq/dp`` and the accelerations at zero joint acceleration
    ``c`` (``qdd = J zdd + c``), by one recursion over the tree (Featherstone 2008, §4.4,
    §7.1, in the plane): with ``A = R(theta_p) u_p`` the parent's arm to the joint's point
    and ``B = R(theta_c) u_c`` the child's (``u``: the joint's points ``p_i``, ``p_j``, the
    slide ``s a`` added on body ``i``'s side), ``r_c = r_p + A +- offset - B``,
    ``theta_c = theta_p +- phi``, and the rates of :func:`_arm` for both arms. No automatic
    differentiation: the joint's motion is written out, as in the spatial tree
    (:func:`~.spatial_kinematics.tree_motion`), and the positions are those of
    :func:`forward_kinematics`.

    ``zdd`` (None: zero) makes ``convective`` the whole acceleration ``J zdd + c``;
    ``order`` 0 or 1 leaves the Jacobians zero. ``carried`` (static, None: all) are the
    coordinates whose columns ``J`` has, in that order (:func:`~.columns.tree_columns`
    leaves out the childless free joints', whose rows of ``J`` are then zero). Returned as
    :class:`~.spatial_kinematics.TreeMotion` with ``x = q``, ``v = qd``."""
    dtype = jnp.result_type(z, zd, p, mechanism.masses)
    size, width = z.shape[0], z.shape[0] + p.shape[0]
    # childless free joints (a flexible body's segments) move their body's coordinates and
    # nothing else: their rows are slices of z, zd, zdd, placed by _assemble, not recursed
    decoupled = {joint.body: joint.coordinate for joint in decoupled_joints(topology)}
    zero2, zero = jnp.zeros(2, dtype), jnp.zeros((), dtype)
    jacobians = order == 2
    carried = tuple(range(size)) if carried is None else carried
    # the velocities' unit rows on the carried columns and p's: constants, no scatter in the program
    units = np.eye(width)[:, list(carried) + list(range(size, width))]
    none_or = lambda shape: jnp.zeros(shape, dtype) if jacobians else None  # noqa: E731
    # (r, theta, v, omega, a, alpha, J_r (2 x columns), J_theta (columns))
    bodies = {GROUND: (zero2, zero, zero2, zero, zero2, zero, none_or((2, units.shape[1])), none_or((units.shape[1],)))}
    for joint in topology.joints:
        if joint.body in decoupled:
            continue
        if joint.kind == "free":
            c = joint.coordinate
            acceleration = jnp.zeros(3, dtype) if zdd is None else zdd[c : c + 3]
            columns = jnp.asarray(units[c : c + 3], dtype) if jacobians else None
            bodies[joint.body] = (z[c : c + 2], z[c + 2], zd[c : c + 2], zd[c + 2], acceleration[:2], acceleration[2],
                                  None if columns is None else columns[:2], None if columns is None else columns[2])
            continue
        position, angle, velocity, omega, linear, alpha, jacobian_r, jacobian_theta = bodies[joint.parent]
        ideal = {"revolute": mechanism.revolute_joints, "prismatic": mechanism.prismatic_joints,
                 "fixed": mechanism.fixed_joints}[joint.kind][joint.index]
        sign = 1.0 if joint.child_is_j else -1.0
        slide, offset = None, zero2
        if joint.kind == "revolute":
            value = _joint_value(joint, z, p)
            rate, acceleration, column = _joint_rates(joint, zd, pd, zdd, size)
            child_angle, child_omega = angle + sign * value, omega + sign * rate
            child_alpha = alpha + sign * acceleration
            child_jacobian_theta = None if not jacobians else jacobian_theta + sign * units[column]
            offset = sign * ideal.offset
            point_i = ideal.point_i
        else:
            child_angle, child_omega, child_alpha = angle + sign * ideal.angle, omega, alpha
            child_jacobian_theta = jacobian_theta
            point_i = ideal.point_i
            if joint.kind == "prismatic":
                value = _joint_value(joint, z, p)
                rate, acceleration, column = _joint_rates(joint, zd, pd, zdd, size)
                slide = (rate, acceleration, units[column], ideal.axis)
                point_i = point_i + value * ideal.axis
        # the parent's arm to the joint's point and the child's arm to it
        if joint.child_is_j:
            parent_arm = _arm(angle, omega, alpha, jacobian_theta, point_i, slide)
            child_arm = _arm(child_angle, child_omega, child_alpha, child_jacobian_theta, ideal.point_j, None)
        else:
            parent_arm = _arm(angle, omega, alpha, jacobian_theta, ideal.point_j, None)
            child_arm = _arm(child_angle, child_omega, child_alpha, child_jacobian_theta, point_i, slide)
        bodies[joint.body] = (position + parent_arm[0] + offset - child_arm[0], child_angle,
                              velocity + parent_arm[1] - child_arm[1], child_omega,
                              linear + parent_arm[2] - child_arm[2], child_alpha,
                              None if not jacobians else jacobian_r + parent_arm[3] - child_arm[3],
                              child_jacobian_theta)
    def stack(at, scalar, free):
        return _assemble(mechanism.num_bodies, decoupled, lambda b: jnp.concatenate([bodies[b][at], bodies[b][scalar][None]]),
                         free)

    q, qd = stack(0, 1, lambda c, n: z[c : c + n]), stack(2, 3, lambda c, n: zd[c : c + n])
    convective = stack(4, 5, lambda c, n: jnp.zeros(n, dtype) if zdd is None else zdd[c : c + n])
    if jacobians:
        full = _assemble(mechanism.num_bodies, decoupled, lambda b: jnp.concatenate([bodies[b][6], bodies[b][7][None]]),
                         lambda c, n: jnp.asarray(units[c : c + n], dtype))
        jacobian, driver_jacobian = full[:, : len(carried)], full[:, len(carried) :]
    else:
        jacobian = jnp.zeros((q.shape[0], len(carried)), dtype)
        driver_jacobian = jnp.zeros((q.shape[0], width - size), dtype)
    return TreeMotion(q, qd, jacobian, driver_jacobian, convective)


def _assemble(num_bodies: int, decoupled: dict[int, int], body_rows, free_rows):
    """The per-body rows ``[x, y, theta]`` of every body, in body order, concatenated:
    ``body_rows(b)`` for a body placed by the recursion, and for each run of consecutive
    bodies on childless free joints with consecutive coordinates one
    ``free_rows(first coordinate, 3 x bodies)``, so that the traced program does not grow
    with the number of such bodies."""
    pieces, body = [], 0
    while body < num_bodies:
        if body not in decoupled:
            pieces.append(body_rows(body))
            body += 1
            continue
        first, count = decoupled[body], 1
        while decoupled.get(body + count) == first + 3 * count:
            count += 1
        pieces.append(free_rows(first, 3 * count))
        body += count
    return jnp.concatenate(pieces)


def joint_coordinates(mechanism: Mechanism, topology: Topology, q: Float[Array, " coords"]
                      ) -> tuple[Float[Array, " n"], Float[Array, " drivers"]]:
    """``(z, p)`` of absolute coordinates ``q`` that satisfy the tree's joints: the inverse
    of :func:`forward_kinematics` (a revolute joint's ``theta_j - theta_i``, a prismatic
    joint's ``R(theta_i) a . (P_j - P_i)``, a free body's own coordinates)."""
    z = [None] * topology.size
    p = [None] * len(topology.speed_drivers)

    def angle(body):
        return jnp.zeros((), q.dtype) if body == GROUND else q[3 * body + 2]

    for joint in topology.joints:
        if joint.kind == "free":
            for k in range(3):
                z[joint.coordinate + k] = q[3 * joint.body + k]
            continue
        if joint.kind == "fixed":
            continue
        ideal = (mechanism.revolute_joints if joint.kind == "revolute" else mechanism.prismatic_joints)[joint.index]
        if joint.kind == "revolute":
            value = angle(ideal.body_j) - angle(ideal.body_i)
        else:
            gap = point_position(q, ideal.body_j, ideal.point_j) - point_position(q, ideal.body_i, ideal.point_i)
            value = dot(rotate(angle(ideal.body_i), ideal.axis), gap)
        if joint.prescribed is not None:
            p[joint.prescribed] = value
        else:
            z[joint.coordinate] = value
    stack = lambda values: jnp.stack(values) if values else jnp.zeros((0,), q.dtype)  # noqa: E731
    return stack(z), stack(p)
