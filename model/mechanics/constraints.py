"""Kinematic constraints ``Phi(q, t) = 0`` of the ideal joints and speed drivers.

Only the constraint *values* are written by hand; the Jacobian ``Phi_q``, the velocity
right-hand side and the acceleration right-hand side ``gamma`` come from JAX autodiff
(forward mode), so adding a joint type means adding one function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..geometry.planar import perp, rotate
from ..geometry.vectors import dot
from .joints import GROUND, FixedJoint, PrismaticJoint, RevoluteJoint

if TYPE_CHECKING:
    from .mechanism import Mechanism


def body_pose(q: Float[Array, " coords"], body: int) -> tuple[Float[Array, "2"], Float[Array, ""]]:
    """Position (m) and angle (rad) of ``body``; the ground is at rest at the origin."""
    if body == GROUND:
        return jnp.zeros(2, q.dtype), jnp.zeros((), q.dtype)
    return q[3 * body : 3 * body + 2], q[3 * body + 2]


def point_position(q: Float[Array, " coords"], body: int, local_point: Float[Array, "2"]) -> Float[Array, "2"]:
    """Ground-frame position (m) of a point given in ``body``'s frame."""
    position, angle = body_pose(q, body)
    return position + rotate(angle, local_point)


def _revolute(q, joint: RevoluteJoint) -> Float[Array, "2"]:
    p_i = point_position(q, joint.body_i, joint.point_i)
    p_j = point_position(q, joint.body_j, joint.point_j)
    return p_j - p_i - joint.offset


def _prismatic(q, joint: PrismaticJoint) -> Float[Array, "2"]:
    _, angle_i = body_pose(q, joint.body_i)
    _, angle_j = body_pose(q, joint.body_j)
    p_i = point_position(q, joint.body_i, joint.point_i)
    p_j = point_position(q, joint.body_j, joint.point_j)
    line_normal = rotate(angle_i, perp(joint.axis))
    return jnp.stack([dot(line_normal, p_j - p_i), angle_j - angle_i - joint.angle])


def _fixed(q, joint: FixedJoint) -> Float[Array, "3"]:
    _, angle_i = body_pose(q, joint.body_i)
    _, angle_j = body_pose(q, joint.body_j)
    p_i = point_position(q, joint.body_i, joint.point_i)
    p_j = point_position(q, joint.body_j, joint.point_j)
    return jnp.concatenate([p_j - p_i, (angle_j - angle_i - joint.angle)[None]])


_JOINT_ROWS = {"revolute": _revolute, "prismatic": _prismatic, "fixed": _fixed}


def joint_constraints(mechanism: Mechanism, q: Float[Array, " coords"], joints: tuple[tuple[str, int], ...]
                      ) -> Float[Array, " m"]:
    """The rows of :func:`constraints` of the listed ideal joints only, ``(kind, index)``
    each (``kind``: ``"revolute"``, ``"prismatic"`` or ``"fixed"``, ``index`` into the
    mechanism's joints of that kind), in that order: the cut joints of a kinematic tree
    (:mod:`model.mechanics.tree`)."""
    kinds = {"revolute": mechanism.revolute_joints, "prismatic": mechanism.prismatic_joints,
             "fixed": mechanism.fixed_joints}
    parts = [_JOINT_ROWS[kind](q, kinds[kind][index]) for kind, index in joints]
    return jnp.concatenate(parts) if parts else jnp.zeros((0,), q.dtype)


def constraints(mechanism: Mechanism, q: Float[Array, " coords"], t: Float[Array, ""]) -> Float[Array, " m"]:
    """All holonomic constraints: ideal joints, then speed drivers."""
    parts = [_revolute(q, joint) for joint in mechanism.revolute_joints]
    parts += [_prismatic(q, joint) for joint in mechanism.prismatic_joints]
    parts += [_fixed(q, joint) for joint in mechanism.fixed_joints]
    for driver in mechanism.drivers:
        if driver.kind == "constant_speed":
            joint = mechanism.revolute_joints[driver.joint]
            _, angle_i = body_pose(q, joint.body_i)
            _, angle_j = body_pose(q, joint.body_j)
            parts.append((angle_j - angle_i - driver.angle - driver.speed * t)[None])
    if not parts:
        return jnp.zeros((0,), q.dtype)
    return jnp.concatenate(parts)


def speed_driver_rows(drivers, first_row: int) -> dict[int, int]:
    """Row of each speed driver (driver index -> row) when the driver rows follow the
    joint rows, which end at ``first_row``; torque drivers have no row."""
    speed_drivers = [index for index, driver in enumerate(drivers) if driver.kind == "constant_speed"]
    return {index: first_row + offset for offset, index in enumerate(speed_drivers)}


def driver_rows(mechanism: Mechanism) -> dict[int, int]:
    """Index of each speed driver's row in :func:`constraints` (driver index -> row)."""
    joint_rows = 2 * len(mechanism.revolute_joints) + 2 * len(mechanism.prismatic_joints) + 3 * len(mechanism.fixed_joints)
    return speed_driver_rows(mechanism.drivers, joint_rows)


def constraint_jacobian(mechanism: Mechanism, q, t) -> Float[Array, "m coords"]:
    """``Phi_q`` by forward-mode autodiff."""
    return jax.jacfwd(constraints, argnums=1)(mechanism, q, t)


def constraint_rate(mechanism: Mechanism, q, qd, t) -> Float[Array, " m"]:
    """``dPhi/dt = Phi_q qd + Phi_t``."""
    return jax.jvp(lambda q_, t_: constraints(mechanism, q_, t_), (q, t), (qd, jnp.ones_like(t)))[1]


def velocity_rhs(mechanism: Mechanism, q, t) -> Float[Array, " m"]:
    """``nu = -Phi_t`` so that ``Phi_q qd = nu``."""
    return -jax.jvp(lambda t_: constraints(mechanism, q, t_), (t,), (jnp.ones_like(t),))[1]


def acceleration_rhs(mechanism: Mechanism, q, qd, t) -> Float[Array, " m"]:
    """Baumgarte-stabilised ``gamma`` with ``Phi_q qdd = gamma``.

    ``d^2 Phi/dt^2 = Phi_q qdd + c(q, qd, t)``; the convective part ``c`` is the second
    derivative along ``(qd, 1)`` at zero acceleration. Baumgarte (1972):
    ``gamma = -c - 2 alpha dPhi/dt - beta^2 Phi`` (Flores uses alpha = beta = 5 1/s).
    """
    phi = constraints(mechanism, q, t)
    rate, convective = jax.jvp(
        lambda q_, t_: constraint_rate(mechanism, q_, qd, t_), (q, t), (qd, jnp.ones_like(t))
    )
    alpha, beta = mechanism.baumgarte_alpha, mechanism.baumgarte_beta
    return -convective - 2.0 * alpha * rate - beta**2 * phi
