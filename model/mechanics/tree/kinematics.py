"""Forward kinematics of a planar tree: absolute body coordinates from joint coordinates.

Each joint places its child from its parent's pose (Featherstone 2008, ch. 4: the
kinematic tree; here in planar form). With ``P_i = r_i + R(theta_i) p_i`` the joint's
point on body ``i`` and likewise ``P_j``:

* revolute, angle ``phi``: ``theta_j = theta_i + phi``, ``P_j = P_i + offset``;
* prismatic, slide ``s``: ``theta_j = theta_i + angle``, ``P_j = P_i + s R(theta_i) a``;
* fixed: ``theta_j = theta_i + angle``, ``P_j = P_i``;
* free: ``(x, y, theta)`` of the body itself.

These are the absolute engine's joint constraints (:mod:`model.mechanics.constraints`)
solved for the child, so the absolute coordinates satisfy them exactly. Velocities and
accelerations follow by forward-mode differentiation of :func:`forward_kinematics`.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.planar import rotate
from ...geometry.vectors import dot
from ..constraints import point_position
from ..mechanism import GROUND, Mechanism
from .topology import Topology, TreeJoint


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
