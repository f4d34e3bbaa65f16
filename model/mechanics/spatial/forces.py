"""Applied forces of a spatial mechanism: gravity, loads, torque drivers, clearance contact.

Generalised forces are per body ``[f, tau]`` (N, N m; ground frame, moments about the centre
of mass): a force ``f`` at ground point ``P`` of a body at ``r`` adds ``(f, (P - r) x f)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...contact.friction import friction_force
from ...contact.normal import normal_force
from ...geometry.cylindrical import (BodyMotion, SliceKinematics, end_forces, normal_acceleration, safe_direction,
                                     safe_length, slice_kinematics, slice_normal_acceleration)
from ...geometry.quaternion import rotation_matrix
from ...geometry.vectors import dot
from ...geometry.worn import WornBore
from .constraints import body_pose, body_twist, point_position, point_velocity
from .lubrication import slice_film_forces
from .joints import GROUND, VELOCITY_SIZE, CylindricalClearanceJoint, SphericalClearanceJoint

if TYPE_CHECKING:
    from .mechanism import SpatialMechanism


class SpatialContactState(NamedTuple):
    """Per clearance joint (cylindrical first, then spherical), SI units.

    ``eccentricity``: journal (ball) centre minus bearing (socket) centre in the bearing's
    ``(u, w, axis)`` frame; ``penetration``: the largest slice penetration; ``normal_force``:
    magnitude of the resultant of the slice normal forces (dry contact minus the film's
    radial part on a lubricated joint, as in the planar engine); ``normal_force_a``/``_b``: the
    statically equivalent end forces; ``slip_velocity``, ``normal_rate``: slip speed and
    normal rate at the deepest slice.
    ``slice_penetration``/``slice_normal_rate``: per memory slot (all joints' slices).
    """

    eccentricity: Float[Array, "joints 3"]
    tilt: Float[Array, " joints"]
    penetration: Float[Array, " joints"]
    normal_force: Float[Array, " joints"]
    normal_force_a: Float[Array, " joints"]
    normal_force_b: Float[Array, " joints"]
    tangential_force: Float[Array, " joints"]
    slip_velocity: Float[Array, " joints"]
    normal_rate: Float[Array, " joints"]  # the deepest slice's (m/s)
    slice_penetration: Float[Array, " memory"]
    slice_normal_rate: Float[Array, " memory"]
    slice_normal_force: Float[Array, " memory"]


def add_point_forces(generalised, x, body: int, points, forces):
    """Add forces ``forces`` (k x 3) acting at ground points ``points`` (k x 3) of ``body``."""
    if body == GROUND:
        return generalised
    position, _ = body_pose(x, body)
    moment = jnp.sum(jnp.cross(points - position, forces), axis=0)
    start = VELOCITY_SIZE * body
    return generalised.at[start : start + 6].add(jnp.concatenate([jnp.sum(forces, axis=0), moment]))


def add_torque(generalised, body: int, torque):
    if body == GROUND:
        return generalised
    start = VELOCITY_SIZE * body + 3
    return generalised.at[start : start + 3].add(torque)


def _axis(x, body, local):
    return dot(rotation_matrix(body_pose(x, body)[1]), local)


class CylinderEnd(NamedTuple):
    """A journal or a bearing at one state, ground frame: its centre (m) on the joint's
    axis, that axis (unit) and the body's angular velocity (rad/s)."""

    centre: Float[Array, "3"]
    axis: Float[Array, "3"]
    omega: Float[Array, "3"]


class CylinderFrame(NamedTuple):
    """A cylindrical clearance joint at one state: its journal and bearing, and the
    bearing's cross-section axes ``u``, ``w`` (ground frame)."""

    journal: CylinderEnd
    bearing: CylinderEnd
    u: Float[Array, "3"]
    w: Float[Array, "3"]


def cylinder_kinematics(joint: CylindricalClearanceJoint, x, v) -> tuple[SliceKinematics, CylinderFrame]:
    """Slice kinematics of one cylindrical clearance joint and the frame they were taken in."""
    journal_position, _ = body_pose(x, joint.journal_body)
    bearing_position, _ = body_pose(x, joint.bearing_body)
    journal_velocity, journal_omega = body_twist(v, joint.journal_body)
    bearing_velocity, bearing_omega = body_twist(v, joint.bearing_body)
    bearing_rotation = rotation_matrix(body_pose(x, joint.bearing_body)[1])
    bearing_axis, bearing_u, bearing_w = (dot(bearing_rotation, joint.bearing_axis), dot(bearing_rotation, joint.bearing_u),
                                          dot(bearing_rotation, joint.bearing_w))
    journal_axis = _axis(x, joint.journal_body, joint.journal_axis)
    journal_centre = point_position(x, joint.journal_body, joint.journal_point)
    bearing_centre = point_position(x, joint.bearing_body, joint.bearing_point)
    kin = slice_kinematics(journal_centre, journal_axis, journal_position, journal_velocity, journal_omega,
                           bearing_centre, bearing_axis, bearing_position, bearing_velocity, bearing_omega,
                           bearing_u, joint.bearing_radius, joint.clearance, joint.slice_positions())
    frame = CylinderFrame(CylinderEnd(journal_centre, journal_axis, journal_omega),
                          CylinderEnd(bearing_centre, bearing_axis, bearing_omega), bearing_u, bearing_w)
    if joint.wear is None:
        return kin, frame
    penetration, _ = worn_slices(joint, kin, frame)
    depth = kin.penetration - penetration
    return kin._replace(penetration=penetration, contact_point=kin.contact_point + depth[:, None] * kin.normal), frame


def worn_slices(joint: CylindricalClearanceJoint, kin: SliceKinematics, frame: CylinderFrame
                ) -> tuple[Float[Array, " slices"], Float[Array, " slices"]]:
    """``(penetration (m), contact angle (rad))`` per slice: the angle of the slice's line of
    centres from the bearing's ``u`` axis towards ``w``, and with a worn bushing
    (``joint.wear``, one profile row per slice) the rigid journal's contact with that slice's
    worn bore (:meth:`model.geometry.worn.WornBore.contact`, the planar joint's function);
    without one the nominal ``|e_k| - c``. Reads the eccentricities and normals of ``kin``
    (a worn bushing leaves both unchanged)."""
    angle = jnp.arctan2(kin.normal @ frame.w, kin.normal @ frame.u)
    if joint.wear is None:
        return kin.penetration, angle
    distance = safe_length(kin.eccentricity)
    return jax.vmap(lambda row, d, a: WornBore(row).contact(d, a, joint.bearing_radius, joint.clearance))(
        joint.wear.depth, distance, angle)


def cylindrical_contact(joint: CylindricalClearanceJoint, x, v, memory, generalised):
    """Slice forces of one cylindrical clearance joint added to ``generalised``."""
    kin, frame = cylinder_kinematics(joint, x, v)
    journal, bearing, bearing_u, bearing_w = frame
    (journal_centre, journal_axis, journal_omega), (bearing_centre, bearing_axis, bearing_omega) = journal, bearing
    f_normal = normal_force(joint.slice_law(), kin.penetration, kin.normal_rate, memory)
    slip_speed = safe_length(kin.slip)
    slip_direction = safe_direction(kin.slip, bearing_w)
    f_tangential = friction_force(joint.friction, f_normal, slip_speed)
    tangential_vectors = f_tangential[:, None] * slip_direction
    on_journal = -f_normal[:, None] * kin.normal - tangential_vectors
    generalised = add_point_forces(generalised, x, joint.journal_body, kin.contact_point, on_journal)
    generalised = add_point_forces(generalised, x, joint.bearing_body, kin.contact_point, -on_journal)
    if joint.lubrication is not None:
        film = slice_film_forces(joint.lubrication, kin, bearing_u, bearing_w, bearing_axis, journal_omega,
                                 bearing_omega, joint.bearing_radius, joint.clearance)
        bearing_points = bearing_centre + kin.axial[:, None] * bearing_axis
        generalised = add_point_forces(generalised, x, joint.journal_body, bearing_points + kin.eccentricity,
                                       film.force)
        generalised = add_point_forces(generalised, x, joint.bearing_body, bearing_points, -film.force)
        generalised = add_torque(generalised, joint.journal_body, jnp.sum(film.journal_torque, axis=0))
        generalised = add_torque(generalised, joint.bearing_body, jnp.sum(film.bearing_torque, axis=0))
        film_radial = jnp.sum(film.force * kin.normal, axis=-1)
        # the joint's summary load, as in the planar joint: F_n = dry - film radial, and the
        # film's circumferential part
        f_normal = f_normal - film_radial
        tangential_vectors = tangential_vectors - (film.force - film_radial[:, None] * kin.normal)
    normal_vectors = f_normal[:, None] * kin.normal
    end_a, end_b = end_forces(normal_vectors, kin.axial, joint.length)
    centre_offset = journal_centre - bearing_centre
    eccentricity = jnp.stack([dot(centre_offset, bearing_u), dot(centre_offset, bearing_w), dot(centre_offset, bearing_axis)])
    tilt = jnp.arctan2(safe_length(jnp.cross(journal_axis, bearing_axis)), dot(journal_axis, bearing_axis))
    deepest = jnp.argmax(kin.penetration)
    summary = (eccentricity, tilt, jnp.max(kin.penetration), safe_length(jnp.sum(normal_vectors, axis=0)),
               safe_length(end_a), safe_length(end_b),
               safe_length(jnp.sum(tangential_vectors, axis=0)), slip_speed[deepest], kin.normal_rate[deepest])
    return generalised, summary, (kin.penetration, kin.normal_rate, f_normal)


class BallKinematics(NamedTuple):
    """Ground-frame contact kinematics of a spherical clearance joint."""

    eccentricity: Float[Array, "3"]
    normal: Float[Array, "3"]
    penetration: Float[Array, ""]
    normal_rate: Float[Array, ""]
    contact_point: Float[Array, "3"]
    slip: Float[Array, "3"]


_FALLBACK = np.array([1.0, 0.0, 0.0])  # NumPy: a JAX array here would start JAX's backend at import


def ball_kinematics(joint: SphericalClearanceJoint, x, v) -> BallKinematics:
    """Penetration, normal rate and slip of a ball in its socket."""
    ball_position, _ = body_pose(x, joint.ball_body)
    socket_position, _ = body_pose(x, joint.socket_body)
    ball_velocity, ball_omega = body_twist(v, joint.ball_body)
    socket_velocity, socket_omega = body_twist(v, joint.socket_body)
    ball_centre = point_position(x, joint.ball_body, joint.ball_point)
    socket_centre = point_position(x, joint.socket_body, joint.socket_point)
    eccentricity = ball_centre - socket_centre
    normal = safe_direction(eccentricity, _FALLBACK)
    penetration = safe_length(eccentricity) - joint.clearance
    contact_point = socket_centre + joint.socket_radius * normal

    def velocity(point, position, velocity, omega):
        return velocity + jnp.cross(omega, point - position)

    rate = (velocity(ball_centre, ball_position, ball_velocity, ball_omega)
            - velocity(socket_centre, socket_position, socket_velocity, socket_omega)) @ normal
    relative = (velocity(contact_point, ball_position, ball_velocity, ball_omega)
                - velocity(contact_point, socket_position, socket_velocity, socket_omega))
    slip = relative - dot(relative, normal) * normal
    return BallKinematics(eccentricity, normal, penetration, rate, contact_point, slip)


def spherical_contact(joint: SphericalClearanceJoint, x, v, memory, generalised):
    """Point contact of a ball in a spherical socket (Flores, Ambrósio, Claro & Lankarani 2006)."""
    eccentricity, normal, penetration, rate, contact_point, slip = ball_kinematics(joint, x, v)
    fallback = _FALLBACK
    f_normal = normal_force(joint.contact_law(), penetration, rate, memory[0])
    slip_speed = safe_length(slip)
    f_tangential = friction_force(joint.friction, f_normal, slip_speed)
    on_ball = -f_normal * normal - f_tangential * safe_direction(slip, jnp.cross(normal, fallback))
    generalised = add_point_forces(generalised, x, joint.ball_body, contact_point[None], on_ball[None])
    generalised = add_point_forces(generalised, x, joint.socket_body, contact_point[None], -on_ball[None])
    socket_frame = rotation_matrix(body_pose(x, joint.socket_body)[1])
    summary = (socket_frame.T @ eccentricity, jnp.zeros((), x.dtype), penetration, f_normal, f_normal,
               jnp.zeros((), x.dtype), f_tangential, slip_speed, rate)
    return generalised, summary, (penetration[None], rate[None], f_normal[None])


def contact_forces(mechanism: SpatialMechanism, x, v, memory) -> tuple[Float[Array, " velocities"], SpatialContactState]:
    """Generalised forces of every clearance joint and their contact state."""
    generalised = jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, x.dtype)
    summaries, slots, start = [], [], 0
    for joint in mechanism.cylindrical_joints:
        generalised, summary, slot = cylindrical_contact(joint, x, v, memory[start : start + joint.slices], generalised)
        summaries.append(summary), slots.append(slot)
        start += joint.slices
    for joint in mechanism.spherical_joints:
        generalised, summary, slot = spherical_contact(joint, x, v, memory[start : start + 1], generalised)
        summaries.append(summary), slots.append(slot)
        start += 1
    if not summaries:
        empty = jnp.zeros((0,), x.dtype)
        return generalised, SpatialContactState(jnp.zeros((0, 3), x.dtype), *([empty] * 11))
    columns = [jnp.stack(column) for column in zip(*summaries)]
    slot_columns = [jnp.concatenate(column) for column in zip(*slots)]
    return generalised, SpatialContactState(*columns, *slot_columns)


def applied_forces(mechanism: SpatialMechanism, x) -> Float[Array, " velocities"]:
    """Gravity, the enabled loads and the torques of constant-torque drivers."""
    generalised = jnp.zeros(VELOCITY_SIZE * mechanism.num_bodies, x.dtype)
    for body in range(mechanism.num_bodies):
        weight = mechanism.masses[body] * mechanism.gravity
        generalised = generalised.at[VELOCITY_SIZE * body : VELOCITY_SIZE * body + 3].add(weight)
    for load in mechanism.loads:
        if load.kind == "torque":
            generalised = add_torque(generalised, load.body, load.enabled * load.value)
        else:
            point = point_position(x, load.body, load.point)
            generalised = add_point_forces(generalised, x, load.body, point[None], (load.enabled * load.value)[None])
    for driver in mechanism.drivers:
        if driver.kind == "constant_torque":
            joint = mechanism.joints[driver.joint]
            for body, sign in ((joint.body_j, 1.0), (joint.body_i, -1.0)):
                generalised = add_torque(generalised, body, sign * driver.torque * _axis(x, joint.body_i, joint.axis_i))
    return generalised


def clearance_kinematics(mechanism: SpatialMechanism, x, v) -> Float[Array, "2 joints"]:
    """``[penetration, normal rate]`` per clearance joint (cylindrical: the deepest slice's),
    without the forces: what the free-flight step bound needs."""
    rows = []
    for joint in mechanism.cylindrical_joints:
        kin, _ = cylinder_kinematics(joint, x, v)
        deepest = jnp.argmax(kin.penetration)
        rows.append(jnp.stack([kin.penetration[deepest], kin.normal_rate[deepest]]))
    for joint in mechanism.spherical_joints:
        kin = ball_kinematics(joint, x, v)
        rows.append(jnp.stack([kin.penetration, kin.normal_rate]))
    return jnp.stack(rows, axis=1) if rows else jnp.zeros((2, 0), x.dtype)


def _body_motion(x, v, vdot, body: int) -> BodyMotion:
    position, _ = body_pose(x, body)
    acceleration, angular_acceleration = body_twist(vdot, body)
    return BodyMotion(position, body_twist(v, body)[1], acceleration, angular_acceleration)


def contact_normal_rates(mechanism: SpatialMechanism, x, v) -> Float[Array, " memory"]:
    """Normal rate ``delta_dot`` (m/s) of every contact slot (each slice, each ball)."""
    rates = [cylinder_kinematics(joint, x, v)[0].normal_rate for joint in mechanism.cylindrical_joints]
    rates += [ball_kinematics(joint, x, v).normal_rate[None] for joint in mechanism.spherical_joints]
    return jnp.concatenate(rates) if rates else jnp.zeros((0,), x.dtype)


def contact_normal_accelerations(mechanism: SpatialMechanism, x, v, vdot) -> Float[Array, " memory"]:
    """``d(delta_dot)/dt`` (m/s^2) of every contact slot (each slice, each ball) for the
    accelerations ``vdot``: what the impact memory tracks (``model/contact/memory.py``),
    written out (``model/geometry/cylindrical.py``) instead of differentiating the slice
    kinematics along the motion, which cost a fifth of a spatial vector-field evaluation."""
    parts = []
    for joint in mechanism.cylindrical_joints:
        kin, frame = cylinder_kinematics(joint, x, v)
        parts.append(slice_normal_acceleration(
            kin, _body_motion(x, v, vdot, joint.journal_body), frame.journal.centre, frame.journal.axis,
            _body_motion(x, v, vdot, joint.bearing_body), frame.bearing.centre, frame.bearing.axis,
            joint.slice_positions()))
    for joint in mechanism.spherical_joints:
        kin = ball_kinematics(joint, x, v)
        ball, socket = _body_motion(x, v, vdot, joint.ball_body), _body_motion(x, v, vdot, joint.socket_body)
        ball_centre = point_position(x, joint.ball_body, joint.ball_point)
        socket_centre = point_position(x, joint.socket_body, joint.socket_point)
        rate = point_velocity(x, v, joint.ball_body, ball_centre) - point_velocity(x, v, joint.socket_body, socket_centre)
        second = ball.point_acceleration(ball_centre) - socket.point_acceleration(socket_centre)
        parts.append(normal_acceleration(kin.eccentricity, rate, kin.normal, kin.normal_rate, dot(kin.normal, second))[None])
    return jnp.concatenate(parts) if parts else jnp.zeros((0,), x.dtype)
