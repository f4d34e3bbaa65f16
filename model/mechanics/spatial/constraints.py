"""Constraint equations of spatial joints and drivers, their Jacobian and Baumgarte ``gamma``.

``Phi(x, t) = 0`` with ``x`` the positions and quaternions. Every row is written on the
bodies' *frames*: positions ``r_b`` and rotation matrices ``R_b = R(p_b)``, evaluated once
per call. The Jacobian is taken with respect to the *velocity* coordinates
``v = [rdot, omega]`` (ground frame) and written out per row type
(:func:`constraint_jacobian`; :func:`jacobian_row_groups` gives it by blocks of rows that
share bodies). ``gamma`` needs ``dPhi/dt`` and the second derivative of ``Phi`` along the
motion at zero acceleration: both are written out too (:func:`constraint_jets`), from the
rates of body-fixed vectors, ``omega x A`` and ``omega x (omega x A)`` (Nikravesh 1988 §6;
Baumgarte 1972 stabilisation as in the planar engine). Tests check each against automatic
differentiation: the Jacobian along the bodies' twists, the rates along the exact rotation
of the quaternions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...geometry.quaternion import quaternion_rate, rotation_matrix
from ...geometry.vectors import dot, matmul
from .joints import GROUND, POSITION_SIZE, VELOCITY_SIZE, SpatialJoint
from ..constraints import speed_driver_rows

if TYPE_CHECKING:
    from .mechanism import SpatialMechanism

ROWS = {"revolute": 5, "spherical": 3, "cylindrical": 4, "prismatic": 5, "fixed": 6}
_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])  # NumPy: a JAX array here would start JAX's backend at import


def body_pose(x, body: int) -> tuple[Float[Array, "3"], Float[Array, "4"]]:
    """Position and quaternion of ``body`` (the ground's: origin, identity)."""
    if body == GROUND:
        return jnp.zeros(3, x.dtype), jnp.asarray(_IDENTITY, x.dtype)
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
    return position + dot(rotation_matrix(quaternion), local_point)


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


def _angle_vectors(f: Frames, joint: SpatialJoint) -> tuple[Array, Array, Array]:
    """Body i's two normals to the joint axis and body j's reference, ground frame."""
    _, rotation_i = _frame(f, joint.body_i)
    _, rotation_j = _frame(f, joint.body_j)
    normal_u = dot(rotation_i, joint.reference_i)
    normal_w = jnp.cross(dot(rotation_i, joint.axis_i), normal_u)
    return normal_u, normal_w, dot(rotation_j, joint.reference_j)


def frame_constraints(mechanism: SpatialMechanism, f: Frames, t) -> Float[Array, " m"]:
    """Joint rows (:data:`ROWS`), one row ``sin(theta - angle - speed t)`` per speed driver
    (no wrap), then the axial rows of the cylindrical clearance joints with
    ``axial = "fixed"``; the kept rows only. The values of :func:`frame_jets`."""
    return frame_jets(mechanism, f, jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, f.positions.dtype), t).value


def all_constraints(mechanism: SpatialMechanism, x, t) -> Float[Array, " m"]:
    """:func:`frame_constraints` at positions ``x``."""
    return frame_constraints(mechanism, frames(mechanism, x), t)


def _vee_rows(a, b) -> Float[Array, "3 3"]:
    """The matrix ``C`` with ``vee(asym(a [w]x b)) = C w``: the first-order change of the
    orientation rows when the relative rotation turns by ``w``."""
    return jnp.stack([_vee_antisymmetric(matmul(matmul(a, _skew(axis)), b)) for axis in jnp.eye(3, dtype=a.dtype)], axis=1)


def _joint_blocks(f: Frames, joint: SpatialJoint) -> list[dict]:
    """``Phi_v`` of one ideal joint's rows, as blocks ``{(body, "v" | "w"): rows x 3}`` along
    each body's twist ``[rdot, omega]`` (derivation in the docstring of :func:`constraint_jacobian`)."""
    i, j = joint.body_i, joint.body_j
    position_i, rotation_i = _frame(f, i)
    position_j, rotation_j = _frame(f, j)
    arm_i = dot(rotation_i, joint.point_i + joint.offset)
    arm_j = dot(rotation_j, joint.point_j)
    separation = position_j + arm_j - position_i - arm_i
    axis_j = dot(rotation_j, joint.axis_j)
    normal_u = dot(rotation_i, joint.reference_i)
    normal_w = jnp.cross(dot(rotation_i, joint.axis_i), normal_u)
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
    orientation = _vee_rows(matmul(rotation_matrix(joint.relative).T, rotation_i.T), rotation_j)
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
    axis = dot(rotation_b, joint.bearing_axis)
    arm_j = dot(rotation_j, joint.journal_point)
    from_bearing = position_j + arm_j - position_b  # P_J - r_B
    return {(journal, "v"): axis[None], (journal, "w"): -jnp.cross(axis, arm_j)[None],
            (bearing, "v"): -axis[None], (bearing, "w"): jnp.cross(axis, from_bearing)[None]}


def _jacobian_groups(mechanism: SpatialMechanism, x, t) -> list[dict]:
    """``Phi_v`` of every row group (one row type of a joint, a driver, an axial row) in the
    order of :func:`frame_jets`, as blocks ``{(body, "v" | "w"): rows x 3}``."""
    f = frames(mechanism, x)
    groups = [block for joint in mechanism.joints for block in _joint_blocks(f, joint)]
    groups += [_driver_blocks(f, mechanism.joints[driver.joint], driver, jnp.asarray(t, x.dtype))
               for driver in mechanism.drivers if driver.kind == "constant_speed"]
    groups += [_axial_blocks(f, joint) for joint in mechanism.cylindrical_joints if joint.axial_fixed]
    return groups


def _group_rows(blocks: dict) -> int:
    return next(iter(blocks.values())).shape[0]


def _twist_block(blocks: dict, body: int, dtype) -> Float[Array, "rows 6"]:
    zero = jnp.zeros((_group_rows(blocks), 3), dtype)
    return jnp.concatenate([blocks.get((body, "v"), zero), blocks.get((body, "w"), zero)], axis=1)


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
    groups = _jacobian_groups(mechanism, x, t)
    if not groups:
        return jnp.zeros((0, VELOCITY_SIZE * mechanism.num_bodies), x.dtype)
    jacobian = jnp.concatenate([
        jnp.concatenate([_twist_block(blocks, body, x.dtype) for body in range(mechanism.num_bodies)], axis=1)
        for blocks in groups])
    return jacobian if mechanism.kept_rows is None else jacobian[jnp.asarray(mechanism.kept_rows, dtype=int)]


class RowGroup(NamedTuple):
    """Constraint rows that involve the same bodies, with ``Phi_v`` on those bodies only.

    ``rows``: positions in the (kept) constraint vector, ascending; ``blocks``: per body
    (the ground excluded) the ``rows x 6`` block along its twist ``[rdot, omega]``."""

    rows: tuple[int, ...]
    blocks: dict[int, Float[Array, "rows 6"]]


def jacobian_row_groups(mechanism: SpatialMechanism, x, t) -> list[RowGroup]:
    """``Phi_v`` as :class:`RowGroup` s, one per set of bodies, ordered by their bodies
    (lowest index first): the sparsity a Schur complement can use, since rows that share no
    body are not coupled by the (block-diagonal) mass matrix. Same values as
    :func:`constraint_jacobian`; the grouping is static (read at trace time)."""
    x = jnp.asarray(x)
    groups = _jacobian_groups(mechanism, x, t)
    position = {row: k for k, row in enumerate(
        range(sum(map(_group_rows, groups))) if mechanism.kept_rows is None else mechanism.kept_rows)}
    merged: dict[tuple[int, ...], list] = {}
    first = 0
    for blocks in groups:
        bodies = tuple(sorted({body for body, _ in blocks if body != GROUND}))
        rows = range(first, first + _group_rows(blocks))
        first = rows.stop
        kept = [k for k, row in enumerate(rows) if row in position]
        if not kept:
            continue
        twist_blocks = {body: _twist_block(blocks, body, x.dtype) for body in bodies}
        if len(kept) < len(rows):
            twist_blocks = {body: block[jnp.asarray(kept)] for body, block in twist_blocks.items()}
        merged.setdefault(bodies, []).append(([position[rows[k]] for k in kept], twist_blocks))
    result = []
    for bodies in sorted(merged, key=lambda bodies: (bodies[0], bodies[-1])):
        parts = merged[bodies]
        result.append(RowGroup(tuple(row for rows, _ in parts for row in rows),
                               {body: jnp.concatenate([blocks[body] for _, blocks in parts]) for body in bodies}))
    return result


class Jet(NamedTuple):
    """A quantity along the motion at constant velocities: its value, its rate and its
    second derivative (the convective part, zero acceleration)."""

    value: Array
    rate: Array
    second: Array


def _vector_jet(f: Frames, v, body: int, local) -> Jet:
    """A body-fixed vector ``A = R a``: ``(A, omega x A, omega x (omega x A))``."""
    _, rotation = _frame(f, body)
    vector = dot(rotation, local)
    if body == GROUND:
        return Jet(vector, jnp.zeros_like(vector), jnp.zeros_like(vector))
    omega = body_twist(v, body)[1]
    turn = jnp.cross(omega, vector)
    return Jet(vector, turn, jnp.cross(omega, turn))


def _point_jet(f: Frames, v, body: int, local) -> Jet:
    """A body point ``P = r + R p``: ``(P, rdot + omega x a, omega x (omega x a))``."""
    position, _ = _frame(f, body)
    arm = _vector_jet(f, v, body, local)
    velocity = jnp.zeros_like(position) if body == GROUND else body_twist(v, body)[0]
    return Jet(position + arm.value, velocity + arm.rate, arm.second)


def _difference(a: Jet, b: Jet) -> Jet:
    return Jet(a.value - b.value, a.rate - b.rate, a.second - b.second)


def _dot(a: Jet, b: Jet) -> Jet:
    """The product rule, twice: ``(a . b)'' = a'' . b + 2 a' . b' + a . b''``."""
    return Jet(dot(a.value, b.value), dot(a.rate, b.value) + dot(a.value, b.rate),
               dot(a.second, b.value) + dot(2.0 * a.rate, b.rate) + dot(a.value, b.second))


def _stack(jets) -> Jet:
    return Jet(*(jnp.stack([getattr(jet, name) for jet in jets]) for name in Jet._fields))


def _concatenate(jets) -> Jet:
    return Jet(*(jnp.concatenate([jnp.atleast_1d(getattr(jet, name)) for jet in jets]) for name in Jet._fields))


def _orientation_jet(f: Frames, v, joint: SpatialJoint) -> Jet:
    """The orientation rows ``vee(asym(M))``, ``M = Q0^T R_i^T R_j`` (``Q0 = R(relative)``,
    the relative orientation at t = 0): zero when it is kept, with a regular Jacobian there.
    ``M' = Q0^T R_i^T D R_j`` and ``M'' = Q0^T R_i^T (D W_j - W_i D) R_j`` with
    ``W = [omega]x``, ``D = W_j - W_i``."""
    _, rotation_i = _frame(f, joint.body_i)
    _, rotation_j = _frame(f, joint.body_j)
    spins = [jnp.zeros((3, 3), rotation_i.dtype) if body == GROUND else _skew(body_twist(v, body)[1])
             for body in (joint.body_i, joint.body_j)]
    relative = spins[1] - spins[0]
    left = matmul(rotation_matrix(joint.relative).T, rotation_i.T)
    return Jet(*(_vee_antisymmetric(matmul(matmul(left, middle), rotation_j))
                 for middle in (jnp.eye(3, dtype=left.dtype), relative,
                                matmul(relative, spins[1]) - matmul(spins[0], relative))))


def _joint_jet(f: Frames, v, joint: SpatialJoint) -> Jet:
    """The rows of one ideal joint (:data:`ROWS`): the separation of its points, the
    parallel axes (normals of body i dotted with body j's axis), the separation along the
    normals (on the axis) and the kept relative orientation, as the joint kind needs."""
    separation = _difference(_point_jet(f, v, joint.body_j, joint.point_j),
                             _point_jet(f, v, joint.body_i, joint.point_i + joint.offset))
    normals = (_vector_jet(f, v, joint.body_i, joint.reference_i),
               _vector_jet(f, v, joint.body_i, jnp.cross(joint.axis_i, joint.reference_i)))
    axis_j = _vector_jet(f, v, joint.body_j, joint.axis_j)
    parallel = _stack([_dot(normal, axis_j) for normal in normals])
    on_line = _stack([_dot(normal, separation) for normal in normals])
    if joint.kind == "spherical":
        return separation
    if joint.kind == "revolute":
        return _concatenate([separation, parallel])
    if joint.kind == "cylindrical":
        return _concatenate([on_line, parallel])
    if joint.kind == "prismatic":
        return _concatenate([on_line, _orientation_jet(f, v, joint)])
    if joint.kind == "fixed":
        return _concatenate([separation, _orientation_jet(f, v, joint)])
    raise ValueError(f"unknown spatial joint kind {joint.kind!r}")


def _driver_jet(f: Frames, v, joint: SpatialJoint, driver, t) -> Jet:
    """``sin(theta - phase) = S cos(phase) - C sin(phase)``, ``phase = angle + speed t``."""
    reference_j = _vector_jet(f, v, joint.body_j, joint.reference_j)
    cosine = _dot(_vector_jet(f, v, joint.body_i, joint.reference_i), reference_j)
    sine = _dot(_vector_jet(f, v, joint.body_i, jnp.cross(joint.axis_i, joint.reference_i)), reference_j)
    phase = driver.angle + driver.speed * t
    cos_phase, sin_phase, speed = jnp.cos(phase), jnp.sin(phase), driver.speed
    return Jet(sine.value * cos_phase - cosine.value * sin_phase,
               sine.rate * cos_phase - cosine.rate * sin_phase - speed * (sine.value * sin_phase + cosine.value * cos_phase),
               sine.second * cos_phase - cosine.second * sin_phase
               - 2.0 * speed * (sine.rate * sin_phase + cosine.rate * cos_phase)
               - speed**2 * (sine.value * cos_phase - cosine.value * sin_phase))


def _axial_jet(f: Frames, v, joint) -> Jet:
    offset = _difference(_point_jet(f, v, joint.journal_body, joint.journal_point),
                         _point_jet(f, v, joint.bearing_body, joint.bearing_point))
    return _dot(_vector_jet(f, v, joint.bearing_body, joint.bearing_axis), offset)


def frame_jets(mechanism: SpatialMechanism, f: Frames, v, t) -> Jet:
    """``Phi``, ``dPhi/dt = Phi_v v + Phi_t`` and the convective term ``c`` (the second
    derivative of ``Phi`` along the motion at zero acceleration) of every kept row, written
    out with the rates of body-fixed vectors ``omega x A`` and ``omega x (omega x A)``
    (Nikravesh 1988 §6). Tested against nested automatic differentiation along the exact
    rotation of the quaternions."""
    t = jnp.asarray(t, f.positions.dtype)
    jets = [_joint_jet(f, v, joint) for joint in mechanism.joints]
    jets += [_driver_jet(f, v, mechanism.joints[driver.joint], driver, t)
             for driver in mechanism.drivers if driver.kind == "constant_speed"]
    jets += [_axial_jet(f, v, joint) for joint in mechanism.cylindrical_joints if joint.axial_fixed]
    if not jets:
        return Jet(*([jnp.zeros((0,), f.positions.dtype)] * 3))
    rows = _concatenate(jets)
    if mechanism.kept_rows is None:
        return rows
    kept = jnp.asarray(mechanism.kept_rows, dtype=int)
    return Jet(rows.value[kept], rows.rate[kept], rows.second[kept])


def constraint_jets(mechanism: SpatialMechanism, x, v, t) -> Jet:
    """:func:`frame_jets` at positions ``x`` and velocities ``v``."""
    x = jnp.asarray(x)
    return frame_jets(mechanism, frames(mechanism, x), v, t)


def constraint_rate(mechanism: SpatialMechanism, x, v, t) -> Float[Array, " m"]:
    """``dPhi/dt = Phi_v v + Phi_t``."""
    return constraint_jets(mechanism, x, v, t).rate


def velocity_rhs(mechanism: SpatialMechanism, x, t) -> Float[Array, " m"]:
    """``-Phi_t``."""
    return -constraint_rate(mechanism, x, jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, x.dtype), t)


def acceleration_rhs(mechanism: SpatialMechanism, x, v, t) -> Float[Array, " m"]:
    """``gamma = -c - 2 alpha dPhi/dt - beta^2 Phi`` (Baumgarte 1972)."""
    jets = constraint_jets(mechanism, x, v, t)
    return -jets.second - 2.0 * mechanism.baumgarte_alpha * jets.rate - mechanism.baumgarte_beta**2 * jets.value


def driver_rows(mechanism: SpatialMechanism) -> dict[int, int]:
    """Row of each speed driver in :func:`all_constraints` (before any row removal)."""
    return speed_driver_rows(mechanism.drivers, sum(ROWS[joint.kind] for joint in mechanism.joints))
