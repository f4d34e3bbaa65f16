"""Constraint equations of spatial joints and drivers, their Jacobian and Baumgarte ``gamma``.

``Phi(x, t) = 0`` with ``x`` the positions and quaternions. The Jacobian is taken with
respect to the *velocity* coordinates ``v = [rdot, omega]``: ``Phi_v = d Phi(x (+) dv) / d dv``
at ``dv = 0``, with the perturbation ``r + dr``, ``p + 1/2 [0, dtheta] (x) p`` (first order
in the rotation vector ``dtheta``, ground frame), by forward-mode autodiff. ``gamma`` is the
second derivative of ``Phi`` along the motion at zero acceleration, also by autodiff
(Nikravesh 1988 §6; Baumgarte 1972 stabilisation as in the planar engine).
"""

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.quaternion import quaternion_product, quaternion_rate, rotation_matrix
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


def _perturbed(x, dv, num_bodies: int):
    parts = []
    for body in range(num_bodies):
        position, quaternion = body_pose(x, body)
        translation, rotation = body_twist(dv, body)
        pure = jnp.concatenate([jnp.zeros((1,), x.dtype), rotation])
        parts += [position + translation, quaternion + 0.5 * quaternion_product(pure, quaternion)]
    return jnp.concatenate(parts)


def _relative_orientation(x, joint: SpatialJoint) -> Float[Array, "3"]:
    """Vector part of ``conj(relative) (x) conj(p_i) (x) p_j``: zero when the relative
    orientation is the initial one; its Jacobian is regular there."""
    _, p_i = body_pose(x, joint.body_i)
    _, p_j = body_pose(x, joint.body_j)
    conj = jnp.array([1.0, -1.0, -1.0, -1.0])
    error = quaternion_product(joint.relative * conj, quaternion_product(p_i * conj, p_j))
    return error[1:] / jnp.sqrt(p_i @ p_i) / jnp.sqrt(p_j @ p_j)


def joint_constraints(x, joint: SpatialJoint) -> Float[Array, " rows"]:
    """The rows of one ideal joint (:data:`ROWS`)."""
    _, p_i = body_pose(x, joint.body_i)
    _, p_j = body_pose(x, joint.body_j)
    rotation_i, rotation_j = rotation_matrix(p_i), rotation_matrix(p_j)
    separation = (point_position(x, joint.body_j, joint.point_j) - point_position(x, joint.body_i, joint.point_i)
                  - rotation_i @ joint.offset)
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
        return jnp.concatenate([on_line, _relative_orientation(x, joint)])
    if joint.kind == "fixed":
        return jnp.concatenate([separation, _relative_orientation(x, joint)])
    raise ValueError(f"unknown spatial joint kind {joint.kind!r}")


def relative_angle_terms(x, joint: SpatialJoint) -> tuple[Array, Array]:
    """``(cos theta, sin theta)`` of the rotation of ``j`` relative to ``i`` about the axis,
    measured from the references."""
    _, p_i = body_pose(x, joint.body_i)
    _, p_j = body_pose(x, joint.body_j)
    rotation_i = rotation_matrix(p_i)
    normal_u = rotation_i @ joint.reference_i
    normal_w = jnp.cross(rotation_i @ joint.axis_i, normal_u)
    reference_j = rotation_matrix(p_j) @ joint.reference_j
    return normal_u @ reference_j, normal_w @ reference_j


def axial_constraint(x, joint) -> Float[Array, ""]:
    """``(P_J - P_B) . a_B = 0``: the ideal axial row of a cylindrical clearance joint with
    ``axial = "fixed"`` (the journal's centre stays in the bearing's mid-plane)."""
    _, p_b = body_pose(x, joint.bearing_body)
    axis = rotation_matrix(p_b) @ joint.bearing_axis
    offset = point_position(x, joint.journal_body, joint.journal_point) - point_position(x, joint.bearing_body, joint.bearing_point)
    return offset @ axis


def all_constraints(mechanism: SpatialMechanism, x, t) -> Float[Array, " m"]:
    """Joint rows, one row ``sin(theta - angle - speed t)`` per speed driver (no wrap), then
    the axial rows of the cylindrical clearance joints with ``axial = "fixed"``."""
    parts = [joint_constraints(x, joint) for joint in mechanism.joints]
    for driver in mechanism.drivers:
        if driver.kind == "constant_speed":
            cos_theta, sin_theta = relative_angle_terms(x, mechanism.joints[driver.joint])
            phase = driver.angle + driver.speed * t
            parts.append((sin_theta * jnp.cos(phase) - cos_theta * jnp.sin(phase))[None])
    parts += [axial_constraint(x, joint)[None] for joint in mechanism.cylindrical_joints if joint.axial_fixed]
    rows = jnp.concatenate(parts) if parts else jnp.zeros((0,), x.dtype)
    return rows if mechanism.kept_rows is None else rows[jnp.asarray(mechanism.kept_rows, dtype=int)]


def constraint_jacobian(mechanism: SpatialMechanism, x, t) -> Float[Array, "m velocities"]:
    """``Phi_v`` (m x 6 bodies)."""
    zero = jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, x.dtype)
    return jax.jacfwd(lambda dv: all_constraints(mechanism, _perturbed(x, dv, mechanism.num_bodies), t))(zero)


def constraint_rate(mechanism: SpatialMechanism, x, v, t) -> Float[Array, " m"]:
    """``dPhi/dt`` along ``(dx/dt(v), 1)``."""
    return jax.jvp(lambda x_, t_: all_constraints(mechanism, x_, t_), (x, t),
                   (position_rate(mechanism, x, v), jnp.ones_like(t)))[1]


def velocity_rhs(mechanism: SpatialMechanism, x, t) -> Float[Array, " m"]:
    """``-Phi_t``."""
    return -jax.jvp(lambda t_: all_constraints(mechanism, x, t_), (t,), (jnp.ones_like(t),))[1]


def acceleration_rhs(mechanism: SpatialMechanism, x, v, t) -> Float[Array, " m"]:
    """``gamma = -c - 2 alpha dPhi/dt - beta^2 Phi`` with ``c`` the second derivative of
    ``Phi`` along the motion at zero acceleration (``v`` held)."""
    phi = all_constraints(mechanism, x, t)
    rate, convective = jax.jvp(lambda x_, t_: constraint_rate(mechanism, x_, v, t_), (x, t),
                               (position_rate(mechanism, x, v), jnp.ones_like(t)))
    return -convective - 2.0 * mechanism.baumgarte_alpha * rate - mechanism.baumgarte_beta**2 * phi


def driver_rows(mechanism: SpatialMechanism) -> dict[int, int]:
    """Row of each speed driver in :func:`all_constraints` (before any row removal)."""
    return speed_driver_rows(mechanism.drivers, sum(ROWS[joint.kind] for joint in mechanism.joints))
