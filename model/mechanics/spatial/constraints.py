"""Constraint equations of spatial joints and drivers, their Jacobian and Baumgarte ``gamma``.

``Phi(x, t) = 0`` with ``x`` the positions and quaternions. Every row is written on the
bodies' *frames*: positions ``r_b`` and rotation matrices ``R_b = R(p_b)``, evaluated once
per call. The Jacobian is taken with respect to the *velocity* coordinates
``v = [rdot, omega]``: ``Phi_v = d Phi(r + dr, R + [dtheta]x R) / d dv`` at ``dv = 0`` (first
order in the rotation vector ``dtheta``, ground frame), by forward-mode autodiff. ``gamma``
needs ``dPhi/dt`` and the second derivative of ``Phi`` along the motion at zero
acceleration: both are the Taylor coefficients of ``Phi`` on the path
``r + s rdot``, ``R + s W R + s^2/2 W^2 R``, ``t + s`` (``W = [omega]x``, constant ``v``),
by nested forward-mode autodiff in the scalar ``s`` (Nikravesh 1988 §6; Baumgarte 1972
stabilisation as in the planar engine). Differentiating the frames, not the quaternions,
keeps the normalisation and the quaternion products out of the derivatives.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.quaternion import quaternion_rate, rotation_matrix
from .mechanism import GROUND, POSITION_SIZE, VELOCITY_SIZE, SpatialJoint, SpatialMechanism
from ..constraints import speed_driver_rows

ROWS = {"revolute": 5, "spherical": 3, "cylindrical": 4, "prismatic": 5, "fixed": 6}
_IDENTITY = jnp.array([1.0, 0.0, 0.0, 0.0])


def body_pose(x, body: int) -> tuple[Float[Array, "3"], Float[Array, "4"]]:
    """Position and quaternion of ``body`` (the ground's: origin, identity)."""
    if body == GROUND:
        return jnp.zeros(3, x.dtype), _IDENTITY.astype(x.dtype)
    start = POSITION_SIZE * body
    return x[start : start + 3], x[start + 3 : start + 7]


def body_twist(v, body: int) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """Velocity of the centre of mass and angular velocity (ground frame) of ``body``."""
    if body == GROUND:
        return jnp.zeros(3, v.dtype), jnp.zeros(3, v.dtype)
    start = VELOCITY_SIZE * body
    return v[start : start + 3], v[start + 3 : start + 6]


def point_position(x, body: int, local_point) -> Float[Array, "3"]:
    position, quaternion = body_pose(x, body)
    return position + rotation_matrix(quaternion) @ local_point


def point_velocity(x, v, body: int, ground_point) -> Float[Array, "3"]:
    """Velocity of the body-fixed point at ``ground_point`` (ground frame)."""
    position, _ = body_pose(x, body)
    velocity, omega = body_twist(v, body)
    return velocity + jnp.cross(omega, ground_point - position)


def position_rate(mechanism: SpatialMechanism, x, v) -> Float[Array, " coords"]:
    """``dx/dt``: ``rdot`` and the quaternion rate with its norm-restoring term."""
    parts = []
    for body in range(mechanism.num_bodies):
        velocity, omega = body_twist(v, body)
        _, quaternion = body_pose(x, body)
        parts += [velocity, quaternion_rate(quaternion, omega, mechanism.quaternion_restoring_rate)]
    return jnp.concatenate(parts)


class Frames(NamedTuple):
    """Positions ``(bodies, 3)`` and rotation matrices ``(bodies, 3, 3)`` of every body."""

    positions: Float[Array, "bodies 3"]
    rotations: Float[Array, "bodies 3 3"]


def frames(mechanism: SpatialMechanism, x) -> Frames:
    blocks = x.reshape(mechanism.num_bodies, POSITION_SIZE)
    return Frames(blocks[:, :3], jax.vmap(rotation_matrix)(blocks[:, 3:]))


def _frame(f: Frames, body: int):
    if body == GROUND:
        return jnp.zeros(3, f.positions.dtype), jnp.eye(3, dtype=f.positions.dtype)
    return f.positions[body], f.rotations[body]


def _skew(vector):
    """``[vector]x``, the matrix of ``vector x (.)``, per leading index."""
    zero = jnp.zeros_like(vector[..., 0])
    x, y, z = vector[..., 0], vector[..., 1], vector[..., 2]
    return jnp.stack([jnp.stack([zero, -z, y], -1), jnp.stack([z, zero, -x], -1), jnp.stack([-y, x, zero], -1)], -2)


def _vee_antisymmetric(matrix):
    """``vee((M - M^T) / 2)``: ``sin(angle) axis`` for a rotation matrix ``M``."""
    return 0.5 * jnp.stack([matrix[2, 1] - matrix[1, 2], matrix[0, 2] - matrix[2, 0], matrix[1, 0] - matrix[0, 1]])


def _orientation_rows(f: Frames, joint: SpatialJoint) -> Float[Array, "3"]:
    """``vee`` of the antisymmetric part of ``Q0^T R_i^T R_j`` (``Q0 = R(relative)``, the
    relative orientation at t = 0): zero when it is kept, with a regular Jacobian there."""
    _, rotation_i = _frame(f, joint.body_i)
    _, rotation_j = _frame(f, joint.body_j)
    return _vee_antisymmetric(rotation_matrix(joint.relative).T @ rotation_i.T @ rotation_j)


def _point(f: Frames, body: int, local_point):
    position, rotation = _frame(f, body)
    return position + rotation @ local_point


def frame_joint_rows(f: Frames, joint: SpatialJoint) -> Float[Array, " rows"]:
    """The rows of one ideal joint (:data:`ROWS`)."""
    _, rotation_i = _frame(f, joint.body_i)
    _, rotation_j = _frame(f, joint.body_j)
    separation = _point(f, joint.body_j, joint.point_j) - _point(f, joint.body_i, joint.point_i) - rotation_i @ joint.offset
    axis_i, axis_j = rotation_i @ joint.axis_i, rotation_j @ joint.axis_j
    normal_u = rotation_i @ joint.reference_i
    normal_w = jnp.cross(axis_i, normal_u)
    parallel = jnp.stack([normal_u @ axis_j, normal_w @ axis_j])
    on_line = jnp.stack([normal_u @ separation, normal_w @ separation])
    if joint.kind == "spherical":
        return separation
    if joint.kind == "revolute":
        return jnp.concatenate([separation, parallel])
    if joint.kind == "cylindrical":
        return jnp.concatenate([on_line, parallel])
    if joint.kind == "prismatic":
        return jnp.concatenate([on_line, _orientation_rows(f, joint)])
    if joint.kind == "fixed":
        return jnp.concatenate([separation, _orientation_rows(f, joint)])
    raise ValueError(f"unknown spatial joint kind {joint.kind!r}")


def _angle_vectors(f: Frames, joint: SpatialJoint) -> tuple[Array, Array, Array]:
    """Body i's two normals to the joint axis and body j's reference, ground frame."""
    _, rotation_i = _frame(f, joint.body_i)
    _, rotation_j = _frame(f, joint.body_j)
    normal_u = rotation_i @ joint.reference_i
    normal_w = jnp.cross(rotation_i @ joint.axis_i, normal_u)
    return normal_u, normal_w, rotation_j @ joint.reference_j


def frame_angle_terms(f: Frames, joint: SpatialJoint) -> tuple[Array, Array]:
    """``(cos theta, sin theta)`` of the rotation of ``j`` relative to ``i`` about the axis,
    measured from the references."""
    normal_u, normal_w, reference_j = _angle_vectors(f, joint)
    return normal_u @ reference_j, normal_w @ reference_j


def frame_axial_row(f: Frames, joint) -> Float[Array, ""]:
    """``(P_J - P_B) . a_B = 0``: the ideal axial row of a cylindrical clearance joint with
    ``axial = "fixed"`` (the journal's centre stays in the bearing's mid-plane)."""
    _, rotation_b = _frame(f, joint.bearing_body)
    offset = _point(f, joint.journal_body, joint.journal_point) - _point(f, joint.bearing_body, joint.bearing_point)
    return offset @ (rotation_b @ joint.bearing_axis)


def frame_constraints(mechanism: SpatialMechanism, f: Frames, t) -> Float[Array, " m"]:
    """Joint rows, one row ``sin(theta - angle - speed t)`` per speed driver (no wrap), then
    the axial rows of the cylindrical clearance joints with ``axial = "fixed"``."""
    parts = [frame_joint_rows(f, joint) for joint in mechanism.joints]
    for driver in mechanism.drivers:
        if driver.kind == "constant_speed":
            cos_theta, sin_theta = frame_angle_terms(f, mechanism.joints[driver.joint])
            phase = driver.angle + driver.speed * t
            parts.append((sin_theta * jnp.cos(phase) - cos_theta * jnp.sin(phase))[None])
    parts += [frame_axial_row(f, joint)[None] for joint in mechanism.cylindrical_joints if joint.axial_fixed]
    rows = jnp.concatenate(parts) if parts else jnp.zeros((0,), f.positions.dtype)
    return rows if mechanism.kept_rows is None else rows[jnp.asarray(mechanism.kept_rows, dtype=int)]


def all_constraints(mechanism: SpatialMechanism, x, t) -> Float[Array, " m"]:
    """:func:`frame_constraints` at positions ``x``."""
    return frame_constraints(mechanism, frames(mechanism, x), t)


def _vee_rows(a, b) -> Float[Array, "3 3"]:
    """The matrix ``C`` with ``vee(asym(a [w]x b)) = C w``: the first-order change of the
    orientation rows when the relative rotation turns by ``w``."""
    return jnp.stack([_vee_antisymmetric(a @ _skew(axis) @ b) for axis in jnp.eye(3, dtype=a.dtype)], axis=1)


def _joint_blocks(f: Frames, joint: SpatialJoint) -> list[dict]:
    """``Phi_v`` of one ideal joint's rows, as blocks ``{(body, "v" | "w"): rows x 3}`` along
    each body's twist ``[rdot, omega]`` (derivation in the docstring of :func:`constraint_jacobian`)."""
    i, j = joint.body_i, joint.body_j
    position_i, rotation_i = _frame(f, i)
    position_j, rotation_j = _frame(f, j)
    arm_i = rotation_i @ (joint.point_i + joint.offset)
    arm_j = rotation_j @ joint.point_j
    separation = position_j + arm_j - position_i - arm_i
    axis_j = rotation_j @ joint.axis_j
    normal_u = rotation_i @ joint.reference_i
    normal_w = jnp.cross(rotation_i @ joint.axis_i, normal_u)
    normals = jnp.stack([normal_u, normal_w])
    identity = jnp.eye(3, dtype=separation.dtype)
    separation_rows = {(j, "v"): identity, (j, "w"): -_skew(arm_j), (i, "v"): -identity, (i, "w"): _skew(arm_i)}
    turn = jnp.cross(normals, axis_j)
    parallel_rows = {(i, "w"): turn, (j, "w"): -turn}
    on_line_rows = {(j, "v"): normals, (j, "w"): -jnp.cross(normals, arm_j), (i, "v"): -normals,
                    (i, "w"): jnp.cross(normals, separation + arm_i)}
    if joint.kind == "spherical":
        return [separation_rows]
    if joint.kind == "revolute":
        return [separation_rows, parallel_rows]
    if joint.kind == "cylindrical":
        return [on_line_rows, parallel_rows]
    orientation = _vee_rows(rotation_matrix(joint.relative).T @ rotation_i.T, rotation_j)
    orientation_rows = {(j, "w"): orientation, (i, "w"): -orientation}
    if joint.kind == "prismatic":
        return [on_line_rows, orientation_rows]
    if joint.kind == "fixed":
        return [separation_rows, orientation_rows]
    raise ValueError(f"unknown spatial joint kind {joint.kind!r}")


def _driver_blocks(f: Frames, joint: SpatialJoint, driver, t) -> dict:
    """The speed driver's row ``sin(theta) cos(phase) - cos(theta) sin(phase)``."""
    normal_u, normal_w, reference_j = _angle_vectors(f, joint)
    phase = driver.angle + driver.speed * t
    turn = jnp.cos(phase) * jnp.cross(normal_w, reference_j) - jnp.sin(phase) * jnp.cross(normal_u, reference_j)
    return {(joint.body_i, "w"): turn[None], (joint.body_j, "w"): -turn[None]}


def _axial_blocks(f: Frames, joint) -> dict:
    """The axial row ``(P_J - P_B) . a_B`` of a cylindrical clearance joint."""
    journal, bearing = joint.journal_body, joint.bearing_body
    position_b, rotation_b = _frame(f, bearing)
    position_j, rotation_j = _frame(f, journal)
    axis = rotation_b @ joint.bearing_axis
    arm_j = rotation_j @ joint.journal_point
    from_bearing = position_j + arm_j - position_b  # P_J - r_B
    return {(journal, "v"): axis[None], (journal, "w"): -jnp.cross(axis, arm_j)[None],
            (bearing, "v"): -axis[None], (bearing, "w"): jnp.cross(axis, from_bearing)[None]}


def constraint_jacobian(mechanism: SpatialMechanism, x, t) -> Float[Array, "m velocities"]:
    """``Phi_v`` (m x 6 bodies), written out per row type along each body's twist
    ``[rdot, omega]`` (ground frame), in which a point moves by ``rdot - [R p]x omega`` and a
    body-fixed vector ``a`` by ``omega x a``: for a separation ``P_j - P_i``, ``+-I`` and
    ``-+[arm]x``; for ``n . a_j`` (``n`` fixed in body i), ``+-(n x a_j)`` on the two
    angular velocities; for ``n . s``, ``+-n`` and ``-(n x arm_j)``, ``n x (s + arm_i)``; for
    the orientation rows ``vee(asym(Q0^T R_i^T R_j))``, whose change is
    ``vee(asym(Q0^T R_i^T [omega_j - omega_i]x R_j))``, the matrix of that map. Tested
    against automatic differentiation of :func:`frame_constraints` on every joint type."""
    x = jnp.asarray(x)
    f = frames(mechanism, x)
    groups = [block for joint in mechanism.joints for block in _joint_blocks(f, joint)]
    groups += [_driver_blocks(f, mechanism.joints[driver.joint], driver, jnp.asarray(t, x.dtype))
               for driver in mechanism.drivers if driver.kind == "constant_speed"]
    groups += [_axial_blocks(f, joint) for joint in mechanism.cylindrical_joints if joint.axial_fixed]
    matrices = []
    for blocks in groups:
        rows = next(iter(blocks.values())).shape[0]
        zero = jnp.zeros((rows, 3), x.dtype)
        matrices.append(jnp.concatenate(
            [blocks.get((body, part), zero) for body in range(mechanism.num_bodies) for part in ("v", "w")], axis=1))
    jacobian = jnp.concatenate(matrices) if matrices else jnp.zeros((0, VELOCITY_SIZE * mechanism.num_bodies), x.dtype)
    return jacobian if mechanism.kept_rows is None else jacobian[jnp.asarray(mechanism.kept_rows, dtype=int)]


def _along_motion(mechanism: SpatialMechanism, x, v, t):
    """``Phi`` on the path ``s -> (r + s rdot, R + s W R + s^2/2 W^2 R, t + s)``."""
    f = frames(mechanism, x)
    blocks = v.reshape(mechanism.num_bodies, 2, 3)
    spin = _skew(blocks[:, 1])
    turn, turn_twice = spin @ f.rotations, spin @ spin @ f.rotations

    def path(s):
        moved = Frames(f.positions + s * blocks[:, 0], f.rotations + s * turn + 0.5 * s**2 * turn_twice)
        return frame_constraints(mechanism, moved, t + s)

    return path


def constraint_rate(mechanism: SpatialMechanism, x, v, t) -> Float[Array, " m"]:
    """``dPhi/dt = Phi_v v + Phi_t``."""
    t = jnp.asarray(t, x.dtype)
    return jax.jvp(_along_motion(mechanism, x, v, t), (jnp.zeros_like(t),), (jnp.ones_like(t),))[1]


def velocity_rhs(mechanism: SpatialMechanism, x, t) -> Float[Array, " m"]:
    """``-Phi_t``."""
    return -constraint_rate(mechanism, x, jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, x.dtype), t)


def acceleration_rhs(mechanism: SpatialMechanism, x, v, t) -> Float[Array, " m"]:
    """``gamma = -c - 2 alpha dPhi/dt - beta^2 Phi`` with ``c`` the second derivative of
    ``Phi`` along the motion at zero acceleration (``v`` held)."""
    t = jnp.asarray(t, x.dtype)
    path = _along_motion(mechanism, x, v, t)
    zero, one = jnp.zeros_like(t), jnp.ones_like(t)

    def rate(s):
        return jax.jvp(path, (s,), (one,))

    (phi, rate_value), (_, convective) = jax.jvp(rate, (zero,), (one,))
    return -convective - 2.0 * mechanism.baumgarte_alpha * rate_value - mechanism.baumgarte_beta**2 * phi


def driver_rows(mechanism: SpatialMechanism) -> dict[int, int]:
    """Row of each speed driver in :func:`all_constraints` (before any row removal)."""
    return speed_driver_rows(mechanism.drivers, sum(ROWS[joint.kind] for joint in mechanism.joints))
