"""Newton–Euler equations of a spatial mechanism with constraints, and its initial state.

Per body: ``m rddot = f`` and ``I omegadot = tau - omega x (I omega)`` with the world-frame
inertia ``I = R J R^T`` (Shabana 2010 §7; ``omega`` in the ground frame). With the
constraints ``Phi_v vdot = gamma`` (``model/mechanics/spatial/constraints.py``) the
multipliers solve ``(Phi_v M^-1 Phi_v^T) lambda = Phi_v M^-1 Q - gamma`` (the Schur
complement used by the planar engine; ``M`` is block diagonal, inverted per body).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.memory import impact_memory_rate
from ...geometry.quaternion import rotation_matrix
from ..dynamics import spd_solve
from .constraints import (acceleration_rhs, all_constraints, body_pose, body_twist, constraint_jacobian,
                          driver_rows, position_rate, velocity_rhs)
from .beams import beam_forces
from .forces import SpatialContactState, applied_forces, ball_kinematics, contact_forces, cylinder_kinematics
from .mechanism import GROUND, POSITION_SIZE, VELOCITY_SIZE, SpatialMechanism


class SpatialState(NamedTuple):
    """Positions and quaternions ``x``, velocities ``v = [rdot, omega]``, one impact memory
    per slice (m/s) and the drivers' work (J)."""

    x: Float[Array, " coords"]
    v: Float[Array, " velocities"]
    impact_memory: Float[Array, " memory"]
    driver_work: Float[Array, ""]


class SpatialEvaluation(NamedTuple):
    vdot: Float[Array, " velocities"]
    multipliers: Float[Array, " m"]
    contact: SpatialContactState
    driver_torques: Float[Array, " drivers"]
    constraint_violation: Float[Array, ""]


def world_inertias(mechanism: SpatialMechanism, x) -> Float[Array, "bodies 3 3"]:
    """``R J R^T`` per body."""
    rotations = jnp.stack([rotation_matrix(body_pose(x, b)[1]) for b in range(mechanism.num_bodies)])
    return rotations @ mechanism.inertias @ jnp.swapaxes(rotations, -1, -2)


def inverse_3x3(matrices: Float[Array, "... 3 3"]) -> Float[Array, "... 3 3"]:
    """Inverse of invertible 3 x 3 matrices by the adjugate (cofactors over the determinant):
    a few multiplications, where ``jnp.linalg.inv`` calls an LU factorisation per matrix."""
    rows = [matrices[..., i, :] for i in range(3)]
    adjugate_columns = [jnp.cross(rows[1], rows[2]), jnp.cross(rows[2], rows[0]), jnp.cross(rows[0], rows[1])]
    determinant = jnp.sum(rows[0] * adjugate_columns[0], axis=-1)
    return jnp.stack(adjugate_columns, axis=-1) / determinant[..., None, None]


def world_inverse_inertias(mechanism: SpatialMechanism, x) -> Float[Array, "bodies 3 3"]:
    """``R J^-1 R^T`` per body: the inverse of :func:`world_inertias` (R is orthogonal)."""
    rotations = jnp.stack([rotation_matrix(body_pose(x, b)[1]) for b in range(mechanism.num_bodies)])
    return rotations @ inverse_3x3(mechanism.inertias) @ jnp.swapaxes(rotations, -1, -2)


def _inverse_mass_apply(mechanism, inverse_inertias, vectors):
    """``M^-1`` applied to the last axis of ``vectors`` (... x 6 bodies)."""
    blocks = vectors.reshape(vectors.shape[:-1] + (mechanism.num_bodies, 2, 3))
    linear = blocks[..., 0, :] / mechanism.masses[:, None]
    angular = jnp.einsum("bij,...bj->...bi", inverse_inertias, blocks[..., 1, :])
    return jnp.stack([linear, angular], axis=-2).reshape(vectors.shape)


def gyroscopic_forces(mechanism: SpatialMechanism, x, v, inertias) -> Float[Array, " velocities"]:
    """``-omega x (I omega)`` on the angular rows."""
    omegas = v.reshape(mechanism.num_bodies, 2, 3)[:, 1, :]
    torques = -jnp.cross(omegas, jnp.einsum("bij,bj->bi", inertias, omegas))
    return jnp.stack([jnp.zeros_like(torques), torques], axis=1).reshape(-1)


def _relative_axis_rate(mechanism, x, v, joint):
    axis = rotation_matrix(body_pose(x, joint.body_i)[1]) @ joint.axis_i
    return (body_twist(v, joint.body_j)[1] - body_twist(v, joint.body_i)[1]) @ axis


def evaluate(mechanism: SpatialMechanism, t, state: SpatialState) -> SpatialEvaluation:
    x, v = state.x, state.v
    contact_generalised, contact = contact_forces(mechanism, x, v, state.impact_memory)
    inertias = world_inertias(mechanism, x)
    inverse_inertias = world_inverse_inertias(mechanism, x)
    applied = (applied_forces(mechanism, x) + contact_generalised + gyroscopic_forces(mechanism, x, v, inertias)
               + beam_forces(mechanism, x, v))
    jacobian = constraint_jacobian(mechanism, x, t)
    if jacobian.shape[0]:
        weighted = _inverse_mass_apply(mechanism, inverse_inertias, jacobian)
        schur = weighted @ jacobian.T
        multipliers = spd_solve(schur, weighted @ applied - acceleration_rhs(mechanism, x, v, t))
        vdot = _inverse_mass_apply(mechanism, inverse_inertias, applied - jacobian.T @ multipliers)
        violation = jnp.max(jnp.abs(all_constraints(mechanism, x, t)))
    else:
        vdot = _inverse_mass_apply(mechanism, inverse_inertias, applied)
        multipliers, violation = jnp.zeros((0,), x.dtype), jnp.zeros((), x.dtype)
    rows = driver_rows(mechanism)
    torques = []
    for index, driver in enumerate(mechanism.drivers):
        if driver.kind == "constant_speed":
            row = rows[index] if mechanism.kept_rows is None else mechanism.kept_rows.index(rows[index])
            torques.append(-multipliers[row])
        else:
            torques.append(driver.torque)
    driver_torques = jnp.stack(torques) if torques else jnp.zeros((0,), x.dtype)
    return SpatialEvaluation(vdot, multipliers, contact, driver_torques, violation)


def _slice_rates(mechanism: SpatialMechanism, x, v) -> Float[Array, " memory"]:
    """Normal rate (m/s) of every contact slot, from the kinematics alone."""
    rates = [cylinder_kinematics(joint, x, v)[0].normal_rate for joint in mechanism.cylindrical_joints]
    rates += [ball_kinematics(joint, x, v).normal_rate[None] for joint in mechanism.spherical_joints]
    return jnp.concatenate(rates) if rates else jnp.zeros((0,), x.dtype)


def vector_field(t, state: SpatialState, mechanism: SpatialMechanism) -> SpatialState:
    out = evaluate(mechanism, t, state)
    x_rate = position_rate(mechanism, state.x, state.v)
    _, normal_acceleration = jax.jvp(lambda x, v: _slice_rates(mechanism, x, v), (state.x, state.v), (x_rate, out.vdot))
    memory_rate = impact_memory_rate(out.contact.slice_penetration, out.contact.slice_normal_rate,
                                     normal_acceleration, state.impact_memory)
    power = sum((out.driver_torques[i] * _relative_axis_rate(mechanism, state.x, state.v, mechanism.joints[d.joint])
                 for i, d in enumerate(mechanism.drivers)), start=jnp.zeros((), state.x.dtype))
    return SpatialState(x_rate, out.vdot, memory_rate, power)


def flatten_state(state: SpatialState) -> Float[Array, "... n"]:
    return jnp.concatenate([state.x, state.v, state.impact_memory, state.driver_work[..., None]], axis=-1)


def unflatten_state(flat, num_bodies: int, memory_size: int) -> SpatialState:
    coords, velocities = POSITION_SIZE * num_bodies, VELOCITY_SIZE * num_bodies
    return SpatialState(flat[..., :coords], flat[..., coords : coords + velocities],
                        flat[..., coords + velocities : coords + velocities + memory_size], flat[..., -1])


def flat_vector_field(t, flat, mechanism: SpatialMechanism):
    state = unflatten_state(flat, mechanism.num_bodies, mechanism.memory_size)
    return flatten_state(vector_field(t, state, mechanism))


def _retract(x, correction, num_bodies):
    """Apply a velocity-space correction ``[dr, dtheta]`` to ``x`` exactly (rotation by
    ``dtheta``, renormalised)."""
    from ...geometry.quaternion import axis_angle_quaternion, quaternion_product
    parts = []
    for body in range(num_bodies):
        position, quaternion = body_pose(x, body)
        translation, rotation = body_twist(correction, body)
        angle = jnp.sqrt(rotation @ rotation + 1e-300)
        turn = axis_angle_quaternion(rotation / angle, angle)
        updated = quaternion_product(turn, quaternion)
        parts += [position + translation, updated / jnp.sqrt(updated @ updated)]
    return jnp.concatenate(parts)


def project_positions(mechanism: SpatialMechanism, x, t=0.0, iterations: int = 10):
    """Minimum-norm Gauss–Newton projection of ``x`` onto ``Phi(x, t) = 0``."""
    t = jnp.asarray(t, x.dtype)
    if not all_constraints(mechanism, x, t).size:
        return x

    def newton_step(x, _):
        residual = all_constraints(mechanism, x, t)
        correction = jnp.linalg.lstsq(constraint_jacobian(mechanism, x, t), -residual)[0]
        return _retract(x, correction, mechanism.num_bodies), None

    return jax.lax.scan(newton_step, x, None, length=iterations)[0]


def initial_state(mechanism: SpatialMechanism) -> SpatialState:
    """Positions projected onto the constraints with the clearance joints held ideal at their
    initial eccentricity; velocities the minimum-norm solution of ``Phi_v v = -Phi_t`` for
    that set (``from_drivers``) or zero; the memory at the current normal rates."""
    pinned = mechanism.idealised(with_offsets=True)
    x0 = project_positions(pinned, mechanism.initial_positions)
    t0 = jnp.zeros((), x0.dtype)
    if mechanism.initial_velocities == "from_drivers" and all_constraints(pinned, x0, t0).size:
        v0 = jnp.linalg.lstsq(constraint_jacobian(pinned, x0, t0), velocity_rhs(pinned, x0, t0))[0]
    else:
        v0 = jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, x0.dtype)
    return SpatialState(x0, v0, _slice_rates(mechanism, x0, v0), jnp.zeros((), x0.dtype))


def kinetic_energy(mechanism: SpatialMechanism, x, v) -> Float[Array, ""]:
    """``1/2 sum (m |rdot|^2 + omega . I omega)`` (J)."""
    blocks = v.reshape(mechanism.num_bodies, 2, 3)
    inertias = world_inertias(mechanism, x)
    rotational = jnp.einsum("bi,bij,bj->", blocks[:, 1], inertias, blocks[:, 1])
    return 0.5 * (jnp.sum(mechanism.masses * jnp.sum(blocks[:, 0] ** 2, axis=-1)) + rotational)


def angular_momentum(mechanism: SpatialMechanism, x, v) -> Float[Array, "3"]:
    """Total angular momentum about the origin (kg m^2/s)."""
    blocks = v.reshape(mechanism.num_bodies, 2, 3)
    positions = jnp.stack([body_pose(x, b)[0] for b in range(mechanism.num_bodies)])
    spin = jnp.einsum("bij,bj->bi", world_inertias(mechanism, x), blocks[:, 1])
    return jnp.sum(spin + mechanism.masses[:, None] * jnp.cross(positions, blocks[:, 0]), axis=0)
