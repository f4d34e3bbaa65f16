"""Newton–Euler equations of a spatial mechanism with constraints, projection onto the
joints, and the quasi-static seat of its clearance joints (what the two absolute engines
share around them: :mod:`model.mechanics.absolute`).

Per body: ``m rddot = f`` and ``I omegadot = tau - omega x (I omega)`` with the world-frame
inertia ``I = R J R^T`` (Shabana 2010 §7; ``omega`` in the ground frame). With the
constraints ``Phi_v vdot = gamma`` (``model/mechanics/spatial/constraints.py``) the
multipliers solve ``(Phi_v M^-1 Phi_v^T) lambda = Phi_v M^-1 Q - gamma`` (the Schur
complement used by the planar engine; ``M`` is block diagonal, inverted per body), formed
and factorised by blocks of rows that share bodies (:func:`constrained_accelerations`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, Bool, Float

from ...geometry.quaternion import axis_angle_quaternion, quaternion_product, rotate_by_vector, rotation_matrix
from ...geometry.vectors import dot, times_transpose
from ..absolute import Evaluation, driver_torques
from ..linalg import inverse_3x3, spd_solve
from .constraints import (acceleration_rhs, all_constraints, body_pose, body_twist, constraint_jacobian,
                          driver_rows, frames, jacobian_row_groups, point_position)
from ...contact.normal import normal_force
from ...geometry.cylindrical import slice_kinematics
from ..start import UNLOADED_REACTION, seated_eccentricity, solve_static
from .beams import beam_forces
from .forces import applied_forces, contact_forces
from .joints import GROUND, VELOCITY_SIZE, CylindricalClearanceJoint

if TYPE_CHECKING:
    from .mechanism import SpatialMechanism


class SpatialState(NamedTuple):
    """Positions and quaternions ``x``, velocities ``v = [rdot, omega]``, one impact memory
    per slice (m/s) and the drivers' work (J)."""

    x: Float[Array, " coords"]
    v: Float[Array, " velocities"]
    impact_memory: Float[Array, " memory"]
    driver_work: Float[Array, ""]


def world_inertias(mechanism: SpatialMechanism, x) -> Float[Array, "bodies 3 3"]:
    """``R J R^T`` per body."""
    rotations = frames(mechanism, x).rotations
    return times_transpose(times_transpose(rotations, mechanism.inertias), rotations)


def world_inverse_inertias(mechanism: SpatialMechanism, x) -> Float[Array, "bodies 3 3"]:
    """``R J^-1 R^T`` per body: the inverse of :func:`world_inertias` (R is orthogonal)."""
    rotations = frames(mechanism, x).rotations
    return times_transpose(times_transpose(rotations, inverse_3x3(mechanism.inertias)), rotations)


def _inverse_mass(masses, inverse_inertias, twists):
    """``M^-1`` of bodies with ``masses`` (kg) and world-frame ``inverse_inertias``
    (``... x 3 x 3``) applied to twist-ordered rows ``[linear, angular]`` (``... x 6``)."""
    return jnp.concatenate([twists[..., :3] / masses[..., None], dot(inverse_inertias, twists[..., None, 3:])],
                           axis=-1)


def _inverse_mass_apply(mechanism, inverse_inertias, vectors):
    """``M^-1`` applied to the last axis of ``vectors`` (... x 6 bodies)."""
    twists = vectors.reshape(vectors.shape[:-1] + (mechanism.num_bodies, 6))
    return _inverse_mass(mechanism.masses, inverse_inertias, twists).reshape(vectors.shape)


def gyroscopic_forces(mechanism: SpatialMechanism, x, v) -> Float[Array, " velocities"]:
    """``-omega x (I omega)`` on the angular rows, ``I omega = R (J (R^T omega))``."""
    omegas = v.reshape(mechanism.num_bodies, 2, 3)[:, 1, :]
    rotations = frames(mechanism, x).rotations
    body_omegas = jnp.sum(rotations * omegas[:, :, None], axis=1)  # R^T omega
    momenta = dot(rotations, dot(mechanism.inertias, body_omegas[:, None, :])[:, None, :])
    torques = -jnp.cross(omegas, momenta)
    return jnp.stack([jnp.zeros_like(torques), torques], axis=1).reshape(-1)


def _take(vector, indices) -> Float[Array, " k"]:
    """``vector[indices]`` for static indices, as slices of their contiguous runs (XLA's
    gather costs more on a CPU than the few values it moves)."""
    runs, first = [], 0
    for k in range(1, len(indices) + 1):
        if k == len(indices) or indices[k] != indices[k - 1] + 1:
            runs.append(vector[indices[first] : indices[k - 1] + 1])
            first = k
    return jnp.concatenate(runs) if len(runs) > 1 else runs[0]


def constrained_accelerations(mechanism: SpatialMechanism, groups, inverse_inertias, applied, gamma):
    """``vdot`` and the multipliers of ``M vdot = Q - Phi_v^T lambda``, ``Phi_v vdot = gamma``
    by the Schur complement ``(Phi_v M^-1 Phi_v^T) lambda = Phi_v M^-1 Q - gamma``, formed
    block by block on the :class:`~.constraints.RowGroup` s: a block of two groups is the sum
    over the bodies they share, and zero when they share none (for the spatial
    slider-crank a fifth of the products of the dense form). The Cholesky
    factorisation skips the zero blocks and their structural fill."""
    dtype = applied.dtype

    # J_b M_b^-1 = (M_b^-1 J_b^T)^T, M_b symmetric
    weighted_blocks = [{body: _inverse_mass(mechanism.masses[body], inverse_inertias[body], block)
                        for body, block in group.blocks.items()} for group in groups]
    body_forces = [applied[VELOCITY_SIZE * body : VELOCITY_SIZE * (body + 1)] for body in range(mechanism.num_bodies)]
    shared = [[[body for body in group.blocks if body in other.blocks] for other in groups] for group in groups]
    products = {}
    for g, group in enumerate(groups):
        for h, other in enumerate(groups):
            products[g, h] = products[h, g].T if h < g else sum(  # the complement is symmetric
                (times_transpose(weighted_blocks[g][body], other.blocks[body]) for body in shared[g][h]),
                start=jnp.zeros((len(group.rows), len(other.rows)), dtype))
    schur_rows = [jnp.concatenate([products[g, h] for h in range(len(groups))], axis=1) for g in range(len(groups))]
    rhs = jnp.concatenate([sum(dot(weighted_blocks[g][body], body_forces[body]) for body in group.blocks)
                           - _take(gamma, group.rows) for g, group in enumerate(groups)])
    solution = spd_solve(jnp.concatenate(schur_rows), rhs, _block_pattern(groups, shared))
    reactions = [jnp.zeros(VELOCITY_SIZE, dtype) for _ in range(mechanism.num_bodies)]
    first = 0
    for group in groups:
        group_multipliers = solution[first : first + len(group.rows)]
        first += len(group.rows)
        for body, block in group.blocks.items():
            reactions[body] = reactions[body] + jnp.sum(block * group_multipliers[:, None], axis=0)
    vdot = _inverse_mass_apply(mechanism, inverse_inertias,
                               applied - jnp.concatenate(reactions))
    return vdot, _take(solution, _inverse_permutation([row for group in groups for row in group.rows]))


def _inverse_permutation(order: list[int]) -> list[int]:
    inverse = [0] * len(order)
    for position, row in enumerate(order):
        inverse[row] = position
    return inverse


def _block_pattern(groups, shared) -> tuple[tuple[bool, ...], ...]:
    """The Schur complement's structural nonzeros, entry by entry: a block of two groups
    is nonzero when they share a body."""
    return tuple(tuple(bool(shared[g][h]) for h, other in enumerate(groups) for _ in other.rows)
                 for g, group in enumerate(groups) for _ in group.rows)


def body_forces(mechanism: SpatialMechanism, x, v, memory) -> tuple[Float[Array, " velocities"], object]:
    """``(Q, contact state)``: every force on the bodies but the ideal joints' reactions,
    ``[f, tau]`` per body in the ground frame (N, N m): gravity, loads and torque drivers,
    every clearance joint's contact, friction and film (its state returned with it), the
    gyroscopic term ``-omega x (I omega)`` of the Newton-Euler equations (Shabana 2010, §7)
    and the flexible bodies' beam elements (:func:`~.beams.beam_forces`). Both engines
    apply these: the absolute one on the twists, the joint one through ``J^T``."""
    contact_generalised, contact = contact_forces(mechanism, x, v, memory)
    applied = (applied_forces(mechanism, x) + contact_generalised + gyroscopic_forces(mechanism, x, v)
               + beam_forces(mechanism, x, v))
    return applied, contact


def evaluate(mechanism: SpatialMechanism, t, state: SpatialState) -> Evaluation:
    x, v = state.x, state.v
    applied, contact = body_forces(mechanism, x, v, state.impact_memory)
    inverse_inertias = world_inverse_inertias(mechanism, x)
    groups = jacobian_row_groups(mechanism, x, t)
    if groups:
        vdot, multipliers = constrained_accelerations(mechanism, groups, inverse_inertias, applied,
                                                      acceleration_rhs(mechanism, x, v, t))
        violation = jnp.max(jnp.abs(all_constraints(mechanism, x, t)))
    else:
        vdot = _inverse_mass_apply(mechanism, inverse_inertias, applied)
        multipliers, violation = jnp.zeros((0,), x.dtype), jnp.zeros((), x.dtype)
    torques = driver_torques(mechanism.drivers, driver_rows(mechanism), multipliers, mechanism.kept_rows)
    return Evaluation(vdot, multipliers, contact, torques, violation)


def retract_small(x, correction, num_bodies: int, exact: bool = False):
    """``x`` moved by a small velocity-space correction ``[dr, dtheta]`` per body: ``r + dr``
    and the quaternion turned by ``dtheta``, renormalised. To first order,
    ``p + (0, dtheta) p / 2`` (second-order terms in ``|dtheta|`` dropped: the corrections of
    :meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.project_state` are of the
    order of the constraint violation); with ``exact`` by the rotation through ``|dtheta|``
    about its direction."""
    parts = []
    for body in range(num_bodies):
        position, quaternion = body_pose(x, body)
        translation, rotation = body_twist(correction, body)
        if exact:
            angle = jnp.sqrt(rotation @ rotation + 1e-300)
            turned = quaternion_product(axis_angle_quaternion(rotation / angle, angle), quaternion)
        else:
            turned = quaternion + 0.5 * quaternion_product(jnp.concatenate([jnp.zeros(1, x.dtype), rotation]),
                                                           quaternion)
        parts += [position + translation, turned / jnp.sqrt(turned @ turned)]
    return jnp.concatenate(parts)


def constraint_correction(mechanism: SpatialMechanism, x, t):
    """``r -> -M^-1 Phi_v^T (Phi_v M^-1 Phi_v^T)^-1 r``: the twist-space step of least
    kinetic-energy norm that removes a constraint residual ``r`` to first order (Bayo &
    Ledesma 1996, Blajer 2002), formed by :func:`constrained_accelerations` with no applied
    force and ``gamma = -r``, the Jacobian and inertias taken at ``x``; ``None`` without
    constraint rows. A position step is applied by :func:`retract_small`."""
    groups = jacobian_row_groups(mechanism, x, t)
    if not groups:
        return None
    inverse_inertias = world_inverse_inertias(mechanism, x)
    zero = jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, x.dtype)
    return lambda residual: constrained_accelerations(mechanism, groups, inverse_inertias, zero, -residual)[0]


def project_positions(mechanism: SpatialMechanism, x, t=0.0, iterations: int = 10):
    """Minimum-norm Gauss–Newton projection of ``x`` onto ``Phi(x, t) = 0``."""
    t = jnp.asarray(t, x.dtype)
    if not all_constraints(mechanism, x, t).size:
        return x

    def newton_step(x, _):
        residual = all_constraints(mechanism, x, t)
        # the minimum-norm step by the pseudo-inverse, whose derivative (Golub & Pereyra 1973)
        # is finite where lstsq's, through the SVD, is not (repeated singular values)
        correction = -jnp.linalg.pinv(constraint_jacobian(mechanism, x, t)) @ residual
        return retract_small(x, correction, mechanism.num_bodies, exact=True), None

    return jax.lax.scan(newton_step, x, None, length=iterations)[0]


class CylinderSeat(NamedTuple):
    """The quasi-static seat of one cylindrical clearance joint, in the bearing's ``(u, w)``
    cross-section axes: the journal centre's ``eccentricity`` (m) and ``tilt`` (rad, the
    rotation vector's components), and how well it holds: ``residual``, the largest
    mismatch of the contact's force and moment (over the length, N) with the ideal joint's,
    relative to the largest of them; ``depth``, the deepest slice's penetration over the
    clearance."""

    eccentricity: Float[Array, "2"]
    tilt: Float[Array, "2"]
    residual: Float[Array, ""]
    depth: Float[Array, ""]

    @property
    def exists(self) -> Bool[Array, ""]:
        """Whether the seat balances the load (``residual`` below :data:`SEAT_TOLERANCE`)
        with every slice's penetration within the clearance (``depth <= 1``): beyond, the
        journal would overlap the bearing by more than the gap, outside any elastic contact."""
        return (self.residual < SEAT_TOLERANCE) & (self.depth <= 1.0)


# The largest mismatch, relative to the load, of a seat that balances it (the solve reaches
# rounding error where a seat exists).
SEAT_TOLERANCE = 1e-6


class _SeatFrame(NamedTuple):
    """The bearing at t = 0 (ground frame): centre (m), axis, cross-section axes, the
    journal centre's axial position (m) and the ideal joint's wrench on the journal
    (force N, moment N m about the journal centre)."""

    centre: Float[Array, "3"]
    axis: Float[Array, "3"]
    u: Float[Array, "3"]
    w: Float[Array, "3"]
    axial: Float[Array, ""]
    wrench: Float[Array, "6"]


def _seat_contact(joint: CylindricalClearanceJoint, frame: _SeatFrame, unknowns):
    """The slices' elastic contact force and moment on the journal (about its centre) in the
    cross-section axes, ``[F_u, F_w, M_u / l, M_w / l]`` (N), with the journal centred at
    ``frame.centre + e_u u + e_w w`` (and its axial position) and its axis turned by
    ``theta_u u + theta_w w``, ``unknowns = (e_u, e_w, theta_u, theta_w)``; and the slices'
    penetrations (m). The joint's own slice kinematics (:func:`~model.geometry.cylindrical.slice_kinematics`)
    and slice law at zero penetration rate: ``K/N delta_k^n`` per slice."""
    journal_axis = rotate_by_vector(frame.axis, unknowns[2] * frame.u + unknowns[3] * frame.w)
    centre = frame.centre + unknowns[0] * frame.u + unknowns[1] * frame.w + frame.axial * journal_axis
    still = jnp.zeros(3, centre.dtype)
    kin = slice_kinematics(centre, journal_axis, centre, still, still, frame.centre, frame.axis, frame.centre, still,
                           still, frame.u, joint.bearing_radius, joint.clearance, joint.slice_positions())
    zero = jnp.zeros_like(kin.penetration)
    on_journal = -normal_force(joint.slice_law(), kin.penetration, zero, zero)[:, None] * kin.normal
    force = jnp.sum(on_journal, axis=0)
    moment = jnp.sum(jnp.cross(kin.contact_point - centre, on_journal), axis=0) / joint.length
    return jnp.stack([force @ frame.u, force @ frame.w, moment @ frame.u, moment @ frame.w]), kin.penetration


def _seat_target(joint: CylindricalClearanceJoint, frame: _SeatFrame) -> Float[Array, "4"]:
    """The ideal joint's force and moment on the journal as ``[F_u, F_w, M_u / l, M_w / l]`` (N)."""
    force, moment = frame.wrench[:3], frame.wrench[3:] / joint.length
    return jnp.stack([force @ frame.u, force @ frame.w, moment @ frame.u, moment @ frame.w])


def _seat_residual(unknowns, args):
    joint, frame = args
    return _seat_contact(joint, frame, unknowns)[0] - _seat_target(joint, frame)


def cylinder_seat(joint: CylindricalClearanceJoint, frame: _SeatFrame) -> CylinderSeat:
    """Eccentricity and tilt of a cylindrical joint's journal at which its slices' elastic
    contact forces carry the force and the moment (about the cross-section axes) that the
    ideal joint exerts on the journal at t = 0 (Tian et al. 2009 slicing; every law of the
    catalogue reduces to ``K/N delta^n`` per slice at zero penetration rate, Lankarani &
    Nikravesh 1990): four equations in four unknowns, solved by Levenberg–Marquardt
    (``optimistix``, the slices that lose contact make the equations only piecewise smooth)
    from the journal parallel to the bearing at the whole joint's uniform penetration
    (:func:`~model.mechanics.start.seated_eccentricity`) and the configured tilt; derivatives
    by the implicit function theorem (:func:`~model.mechanics.start.solve_static`). An
    unloaded joint keeps its configured eccentricity and tilt."""
    target = _seat_target(joint, frame)
    law = eqx.tree_at(lambda law_: law_.stiffness, joint.contact, joint.stiffness())
    parallel = seated_eccentricity(law, joint.clearance, -target[:2], joint.initial_eccentricity)
    guess = jnp.concatenate([parallel, joint.initial_tilt])
    load = jnp.sqrt(jnp.sum(target**2))
    loaded = load > UNLOADED_REACTION
    solution, _ = solve_static(_seat_residual, guess, (joint, frame),
                               optx.LevenbergMarquardt(rtol=1e-12, atol=1e-15), SEAT_STEPS)
    solution = jnp.where(loaded, solution, guess)
    _, penetration = _seat_contact(joint, frame, solution)
    residual = jnp.max(jnp.abs(_seat_residual(solution, (joint, frame)))) / jnp.where(loaded, load, 1.0)
    return CylinderSeat(solution[:2], solution[2:], jnp.where(loaded, residual, 0.0),
                        jnp.max(penetration) / joint.clearance)


# Levenberg–Marquardt steps of a cylindrical joint's seat at most.
SEAT_STEPS = 64


def _seat_frame(joint: CylindricalClearanceJoint, x, reaction) -> _SeatFrame:
    """The :class:`_SeatFrame` of ``joint`` at positions ``x`` under the ideal joint's
    ``reaction`` on the journal
    (:meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.joint_reactions`)."""
    rotation = rotation_matrix(body_pose(x, joint.bearing_body)[1])
    axis, u, w = rotation @ joint.bearing_axis, rotation @ joint.bearing_u, rotation @ joint.bearing_w
    centre = point_position(x, joint.bearing_body, joint.bearing_point)
    axial = (point_position(x, joint.journal_body, joint.journal_point) - centre) @ axis
    return _SeatFrame(centre, axis, u, w, axial, reaction)


def seat_joints(mechanism: SpatialMechanism, x, reactions) -> tuple[SpatialMechanism, tuple[CylinderSeat, ...]]:
    """The mechanism at positions ``x`` with every clearance joint seated under the ideal
    joint's wrench on its journal (``reactions``, one row per clearance joint), and each
    cylindrical joint's :class:`CylinderSeat`. A spherical joint's ball moves along the
    force (:func:`~model.mechanics.start.seated_eccentricity`); a cylindrical joint's journal
    takes the eccentricity and tilt at which its slices carry both the force and the moment
    about the cross-section axes (:func:`cylinder_seat`). A row the ideal joint lost as
    redundant counts as carrying nothing."""
    seats = tuple(cylinder_seat(joint, _seat_frame(joint, x, reaction))
                  for joint, reaction in zip(mechanism.cylindrical_joints, reactions))
    cylinders = tuple(dataclasses.replace(joint, initial_eccentricity=seat.eccentricity, initial_tilt=seat.tilt)
                      for joint, seat in zip(mechanism.cylindrical_joints, seats))
    rotations = frames(mechanism, x).rotations
    spheres = []
    for joint, reaction in zip(mechanism.spherical_joints, reactions[len(cylinders):]):
        rotation = jnp.eye(3, dtype=x.dtype) if joint.socket_body == GROUND else rotations[joint.socket_body]
        ground = seated_eccentricity(joint.contact_law(), joint.clearance, -reaction[:3],
                                     rotation @ joint.initial_eccentricity)
        spheres.append(dataclasses.replace(joint, initial_eccentricity=rotation.T @ ground))
    return dataclasses.replace(mechanism, cylindrical_joints=cylinders, spherical_joints=tuple(spheres),
                               initial_positions=x), seats


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
