"""Applied generalised forces: gravity, torque drivers and clearance-joint contact.

A force ``f`` (N) at ground-frame point ``P`` of a body whose centre of mass is at ``r``
contributes ``[f_x, f_y, (P - r) x f]`` to that body's generalised force (moments about
the centre of mass).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Float

from .constraints import body_pose, point_position
from ..contact.normal import normal_force
from ..contact.friction import friction_force
from ..geometry.planar import ContactKinematics, clearance_kinematics, cross2, perp, rotate, safe_normal
from .flexible import chain_generalised_forces, chain_strain_energy, load_generalised_force
from .joints import GROUND, ClearanceJoint

if TYPE_CHECKING:
    from .mechanism import Mechanism


class ContactState(NamedTuple):
    """Per clearance joint, stacked along the last axis."""

    eccentricity: Float[Array, "joints 2"]  # journal centre minus bearing centre, ground frame (m)
    penetration: Float[Array, " joints"]  # |e| - c (m), > 0 in contact
    normal_rate: Float[Array, " joints"]  # d penetration / dt (m/s)
    slip_velocity: Float[Array, " joints"]  # tangential relative velocity at the contact (m/s)
    normal_force: Float[Array, " joints"]  # the normal load: dry contact and, lubricated, the film (N)
    tangential_force: Float[Array, " joints"]  # friction and, lubricated, the film (N)

    # one contact slot per joint, each with its impact memory (as the spatial state's slices)
    slice_penetration = property(lambda self: self.penetration)
    slice_normal_rate = property(lambda self: self.normal_rate)


def point_velocity(q, qd, body: int, local_point) -> Float[Array, "2"]:
    """Ground-frame velocity (m/s) of a body-fixed point."""
    if body == GROUND:
        return jnp.zeros(2, q.dtype)
    _, angle = body_pose(q, body)
    omega = qd[3 * body + 2]
    return qd[3 * body : 3 * body + 2] + omega * perp(rotate(angle, local_point))


def point_acceleration(q, qd, qdd, body: int, local_point) -> Float[Array, "2"]:
    """Ground-frame acceleration (m/s^2) of a body-fixed point: ``r'' + alpha perp(R p) -
    omega^2 R p``."""
    if body == GROUND:
        return jnp.zeros(2, q.dtype)
    _, angle = body_pose(q, body)
    arm = rotate(angle, local_point)
    return qdd[3 * body : 3 * body + 2] + qdd[3 * body + 2] * perp(arm) - qd[3 * body + 2] ** 2 * arm


def normal_accelerations(mechanism: Mechanism, q, qd, qdd) -> Float[Array, " joints"]:
    """``d(delta_dot)/dt`` (m/s^2) of every clearance joint along the motion ``(qd, qdd)``:
    with ``e`` the eccentricity, ``n = e / |e|`` and ``delta_dot = e' . n``,
    ``d(delta_dot)/dt = e'' . n + (|e'|^2 - delta_dot^2) / |e|`` (the rate of ``n`` is
    ``(e' - (e' . n) n) / |e|``; zero at ``e = 0``, where :func:`safe_normal` holds ``n``)."""
    rows = []
    for joint in mechanism.clearance_joints:
        ends = ((joint.journal_body, joint.journal_point), (joint.bearing_body, joint.bearing_point))
        e = point_position(q, *ends[0]) - point_position(q, *ends[1])
        rate = point_velocity(q, qd, *ends[0]) - point_velocity(q, qd, *ends[1])
        acceleration = point_acceleration(q, qd, qdd, *ends[0]) - point_acceleration(q, qd, qdd, *ends[1])
        distance, normal = safe_normal(e)
        normal_rate = jnp.dot(rate, normal)
        centred = distance == 0.0
        turning = jnp.where(centred, 0.0, (jnp.dot(rate, rate) - normal_rate**2) / jnp.where(centred, 1.0, distance))
        rows.append(jnp.dot(acceleration, normal) + turning)
    return jnp.stack(rows) if rows else jnp.zeros((0,), q.dtype)


def contact_normal_rates(mechanism: Mechanism, q, qd) -> Float[Array, " joints"]:
    """Normal rate ``delta_dot`` (m/s) of every clearance joint."""
    rates = [joint_kinematics(joint, q, qd).normal_rate for joint in mechanism.clearance_joints]
    return jnp.stack(rates) if rates else jnp.zeros((0,), q.dtype)


def contact_kinematics(mechanism: Mechanism, q, qd) -> Float[Array, "2 joints"]:
    """``[penetration (m), normal rate (m/s)]`` per clearance joint, without the forces:
    what the free-flight step bound reads."""
    rows = [joint_kinematics(joint, q, qd) for joint in mechanism.clearance_joints]
    if not rows:
        return jnp.zeros((2, 0), q.dtype)
    return jnp.stack([jnp.stack([k.penetration for k in rows]), jnp.stack([k.normal_rate for k in rows])])


def contact_values(mechanism: Mechanism, q, qd, impact_memory) -> Float[Array, "3 joints"]:
    """``[penetration (m), normal rate (m/s), normal force (N)]`` per clearance joint
    (:func:`joint_forces`)."""
    rows = []
    for index, joint in enumerate(mechanism.clearance_joints):
        kinematics = joint_kinematics(joint, q, qd)
        force, _ = joint_forces(joint, q, qd, kinematics, impact_memory[index])
        rows.append(jnp.stack([kinematics.penetration, kinematics.normal_rate, force]))
    return jnp.stack(rows, axis=1) if rows else jnp.zeros((3, 0), q.dtype)


def body_omega(qd, body: int) -> Float[Array, ""]:
    return jnp.zeros((), qd.dtype) if body == GROUND else qd[3 * body + 2]


def centres_angle(joint: ClearanceJoint, q, kin: ContactKinematics) -> Float[Array, ""]:
    """Direction of the line of centres (rad) in the bearing body's frame (from its x axis)."""
    angle = jnp.arctan2(kin.normal[1], kin.normal[0])
    if joint.bearing_body == GROUND:
        return angle
    return angle - body_pose(q, joint.bearing_body)[1]


def worn_contact(joint: ClearanceJoint, q, kin: ContactKinematics) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """``(penetration (m), contact angle (rad, bearing frame))`` of a joint: the nominal
    ``|e| - c`` along the line of centres, or with a worn bushing (``joint.wear``) the rigid
    journal's contact with the worn bore (:meth:`model.geometry.worn.WornBore.contact`)."""
    angle = centres_angle(joint, q, kin)
    if joint.wear is None:
        return kin.penetration, angle
    return joint.wear.contact(kin.distance, angle, joint.bearing_radius, joint.clearance)


def joint_kinematics(joint: ClearanceJoint, q, qd) -> ContactKinematics:
    """Contact geometry and relative velocities of one clearance joint. A worn bushing
    (``joint.wear``) widens the gap (:func:`worn_contact`); the bearing's contact point then
    moves out along the line of centres by the worn depth ``|e| - c - delta``."""
    kin = _nominal_kinematics(joint, q, qd)
    if joint.wear is None:
        return kin
    penetration, _ = worn_contact(joint, q, kin)
    depth = kin.penetration - penetration
    return kin._replace(penetration=penetration, bearing_point=kin.bearing_point + depth * kin.normal)


def _nominal_kinematics(joint: ClearanceJoint, q, qd) -> ContactKinematics:
    return clearance_kinematics(
        journal_centre=point_position(q, joint.journal_body, joint.journal_point),
        journal_velocity=point_velocity(q, qd, joint.journal_body, joint.journal_point),
        journal_omega=body_omega(qd, joint.journal_body),
        bearing_centre=point_position(q, joint.bearing_body, joint.bearing_point),
        bearing_velocity=point_velocity(q, qd, joint.bearing_body, joint.bearing_point),
        bearing_omega=body_omega(qd, joint.bearing_body),
        bearing_radius=joint.bearing_radius,
        clearance=joint.clearance,
    )


def film_action(joint: ClearanceJoint, q, qd, kin: ContactKinematics):
    """The oil film's :class:`model.lubrication.FilmAction` of a lubricated joint."""
    relative_velocity = point_velocity(q, qd, joint.journal_body, joint.journal_point) - point_velocity(
        q, qd, joint.bearing_body, joint.bearing_point
    )
    return joint.lubrication.action(
        kin.eccentricity, relative_velocity, body_omega(qd, joint.journal_body), body_omega(qd, joint.bearing_body),
        joint.bearing_radius, joint.clearance,
    )


def dry_forces(joint: ClearanceJoint, kin: ContactKinematics, impact_memory) -> tuple:
    """Dry contact ``F_n`` and friction ``F_t`` (N) of one clearance joint."""
    f_normal = normal_force(joint.contact_law(), kin.penetration, kin.normal_rate, impact_memory)
    return f_normal, friction_force(joint.friction, f_normal, kin.slip_velocity)


def joint_forces(joint: ClearanceJoint, q, qd, kin: ContactKinematics, impact_memory) -> tuple:
    """Normal and tangential force (N) of one clearance joint: dry contact and friction,
    plus the oil film's pressure resultant when the joint is lubricated."""
    f_normal, f_tangential = dry_forces(joint, kin, impact_memory)
    if joint.lubrication is not None:
        film = film_action(joint, q, qd, kin)
        f_normal, f_tangential = joint.lubrication.joint_forces((film.radial, film.tangential), f_normal, f_tangential)
    return f_normal, f_tangential


def _point_force(q, body: int, point, force, torque=0.0) -> Float[Array, " coords"]:
    """Generalised force of ``force`` applied at ground-frame ``point`` of ``body``, plus a
    pure ``torque`` (N m)."""
    generalised = jnp.zeros_like(q)
    if body == GROUND:
        return generalised
    position, _ = body_pose(q, body)
    moment = cross2(point - position, force) + torque
    return generalised.at[3 * body : 3 * body + 3].set(jnp.stack([force[0], force[1], moment]))


def contact_forces(
    mechanism: Mechanism, q, qd, impact_memory: Float[Array, " joints"]
) -> tuple[Float[Array, " coords"], ContactState]:
    """Generalised contact forces of all clearance joints, and their contact state.

    Dry contact: the journal receives ``-F_n n - F_t t`` at ``P_j`` (friction opposes slip),
    the bearing the opposite at ``P_b``. Oil film (:class:`model.lubrication.FilmAction`):
    its pressure resultant acts through the journal centre on the journal and through the
    bearing centre on the bearing, with the film's viscous torques. The state's forces are
    the totals of :func:`joint_forces`.
    """
    generalised = jnp.zeros_like(q)
    states = []
    for index, joint in enumerate(mechanism.clearance_joints):
        kin = joint_kinematics(joint, q, qd)
        f_normal, f_tangential = dry_forces(joint, kin, impact_memory[index])
        on_journal = -f_normal * kin.normal - f_tangential * kin.tangent
        generalised = generalised + _point_force(q, joint.journal_body, kin.journal_point, on_journal)
        generalised = generalised + _point_force(q, joint.bearing_body, kin.bearing_point, -on_journal)
        if joint.lubrication is not None:
            film = film_action(joint, q, qd, kin)
            journal_centre = point_position(q, joint.journal_body, joint.journal_point)
            bearing_centre = point_position(q, joint.bearing_body, joint.bearing_point)
            generalised = generalised + _point_force(q, joint.journal_body, journal_centre, film.force,
                                                     film.journal_torque)
            generalised = generalised + _point_force(q, joint.bearing_body, bearing_centre, -film.force,
                                                     film.bearing_torque)
            f_normal, f_tangential = joint.lubrication.joint_forces((film.radial, film.tangential), f_normal,
                                                                    f_tangential)
        states.append((kin.eccentricity, kin.penetration, kin.normal_rate, kin.slip_velocity, f_normal, f_tangential))
    if not states:
        empty = jnp.zeros((0,), q.dtype)
        return generalised, ContactState(jnp.zeros((0, 2), q.dtype), empty, empty, empty, empty, empty)
    stacked = [jnp.stack(column) for column in zip(*states)]
    return generalised, ContactState(*stacked)


def gravity_and_torques(mechanism: Mechanism, q) -> Float[Array, " coords"]:
    """Gravity on every body and the torques of constant-torque drivers."""
    num_bodies = mechanism.num_bodies
    weights = mechanism.masses[:, None] * mechanism.gravity[None, :]
    generalised = jnp.concatenate([weights, jnp.zeros((num_bodies, 1), q.dtype)], axis=1).reshape(-1)
    for driver in mechanism.drivers:
        if driver.kind == "constant_torque":
            joint = mechanism.revolute_joints[driver.joint]
            for body, sign in ((joint.body_j, 1.0), (joint.body_i, -1.0)):
                if body != GROUND:
                    generalised = generalised.at[3 * body + 2].add(sign * driver.torque)
    return generalised


def structural_and_load_forces(mechanism: Mechanism, q, qd) -> Float[Array, " coords"]:
    """Elastic and damping forces of the flexible bodies' beam elements, and point loads."""
    generalised = jnp.zeros_like(q)
    for chain in mechanism.beam_chains:
        generalised = generalised + chain_generalised_forces(chain, q, qd)
    for load in mechanism.loads:
        generalised = generalised + load_generalised_force(load, q)
    return generalised


def strain_energy(mechanism: Mechanism, q) -> Float[Array, ""]:
    """Elastic energy stored in the beam elements (J)."""
    return sum((chain_strain_energy(chain, q) for chain in mechanism.beam_chains), start=jnp.zeros((), q.dtype))
