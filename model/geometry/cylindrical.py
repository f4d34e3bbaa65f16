"""Kinematics of a cylindrical clearance joint by slicing (Tian, Zhang, Wang, Ma & Flores
2009; Yao, Chen, Wang & Liu).

The contact length ``l`` is centred on the journal's centre ``P_J`` and cut into ``N`` slices
at ``z_k = -l/2 + (k + 1/2) l / N`` along the journal's axis ``a_J``. For slice ``k`` the
journal-axis point ``P_k = P_J + z_k a_J`` is compared with the bearing axis (centre ``P_B``,
axis ``a_B``): with ``d_k = P_k - P_B`` its eccentricity in the bearing's cross-section plane
is ``e_k = d_k - (d_k . a_B) a_B``, the penetration ``delta_k = |e_k| - c``, the normal
``n_k = e_k / |e_k|``, and the contact point lies on the line of centres at the bearing
surface, ``C_k = P_B + (d_k . a_B) a_B + R_B n_k``.

Rates: ``delta_dot_k = n_k . de_k/dt`` exactly, i.e. ``n_k . ddot_k - (d_k . a_B)(n_k .
(omega_B x a_B))``, with ``ddot_k`` the velocity of ``P_k`` (journal) minus that of ``P_B``
(bearing); the slip is the relative velocity of the two bodies' material points at ``C_k``
with its normal part removed (circumferential and axial), so both rotations enter.
"""

from typing import NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Float

from .vectors import dot

# |e| below which the normal is taken along the bearing's u axis (m): the force is zero there
# (delta = -c), so the choice only has to be finite and smooth for autodiff.
_TINY_SQUARED = 1e-36


def safe_length(vector: Float[Array, "... 3"]) -> Float[Array, "..."]:
    """``|vector|`` with a finite gradient at zero (double-``where``)."""
    squared = jnp.sum(vector**2, axis=-1)
    positive = squared > _TINY_SQUARED
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1.0)), 0.0)


def safe_direction(vector: Float[Array, "... 3"], fallback: Float[Array, "3"]) -> Float[Array, "... 3"]:
    """``vector / |vector|``, ``fallback`` at zero, with finite gradients everywhere."""
    length = safe_length(vector)
    positive = (length > 0.0)[..., None]
    return jnp.where(positive, vector / jnp.where(positive, length[..., None], 1.0), fallback)


class SliceKinematics(NamedTuple):
    """Per slice (last axis ``slices``; vectors ``slices x 3``, ground frame, SI)."""

    eccentricity: Float[Array, "slices 3"]
    penetration: Float[Array, " slices"]
    normal: Float[Array, "slices 3"]
    axial: Float[Array, " slices"]  # axial position of the slice along the bearing axis (m)
    contact_point: Float[Array, "slices 3"]
    normal_rate: Float[Array, " slices"]
    slip: Float[Array, "slices 3"]  # tangential relative velocity, journal minus bearing
    eccentricity_rate: Float[Array, "slices 3"]  # de_k/dt in the ground frame (m/s)
    axial_rate: Float[Array, " slices"]  # d(d_k . a_B)/dt (m/s)


def slice_kinematics(
    journal_centre, journal_axis, journal_position, journal_velocity, journal_omega,
    bearing_centre, bearing_axis, bearing_position, bearing_velocity, bearing_omega,
    bearing_u, bearing_radius, clearance, slice_positions,
) -> SliceKinematics:
    """Slice geometry and rates; positions (m), velocities (m/s) and angular velocities
    (rad/s) in the ground frame; ``*_position``/``*_velocity`` are the bodies' centres of
    mass, ``*_centre`` the joint's centre on each body, axes unit."""
    points = journal_centre + slice_positions[:, None] * journal_axis
    offset = points - bearing_centre
    axial = dot(offset, bearing_axis)
    eccentricity = offset - axial[:, None] * bearing_axis
    normal = safe_direction(eccentricity, bearing_u)
    penetration = safe_length(eccentricity) - clearance

    def velocity(points, position, velocity, omega):
        return velocity + jnp.cross(omega, points - position)

    offset_rate = (velocity(points, journal_position, journal_velocity, journal_omega)
                   - velocity(bearing_centre, bearing_position, bearing_velocity, bearing_omega))
    axis_rate = jnp.cross(bearing_omega, bearing_axis)
    normal_rate = jnp.sum(normal * offset_rate, axis=-1) - axial * dot(normal, axis_rate)
    contact_point = bearing_centre + axial[:, None] * bearing_axis + bearing_radius * normal
    relative = (velocity(contact_point, journal_position, journal_velocity, journal_omega)
                - velocity(contact_point, bearing_position, bearing_velocity, bearing_omega))
    slip = relative - jnp.sum(relative * normal, axis=-1)[:, None] * normal
    # d/dt [d - (d.a) a] = d_dot - (d_dot.a + d.a_dot) a - (d.a) a_dot
    axial_rate = dot(offset_rate, bearing_axis) + dot(offset, axis_rate)
    eccentricity_rate = offset_rate - axial_rate[:, None] * bearing_axis - axial[:, None] * axis_rate
    return SliceKinematics(eccentricity, penetration, normal, axial, contact_point, normal_rate, slip,
                           eccentricity_rate, axial_rate)


def end_forces(slice_forces: Float[Array, "slices 3"], slice_positions: Float[Array, " slices"], length
               ) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """Two forces at ``z = -l/2`` (a) and ``z = +l/2`` (b) on the bearing axis, normal to it,
    statically equivalent to the slice forces ``f_k`` (normal to the axis) acting on the line
    of centres at axial positions ``z_k``: ``F_a + F_b = S`` and ``(l/2)(F_b - F_a) = Z`` with
    ``S = sum f_k``, ``Z = sum z_k f_k`` (moments about the bearing's centre: a force normal
    to the axis at ``z a + R n`` with ``f || n`` has the moment ``z a x f``). The engine passes
    the slices' actual axial positions, which differ from the nominal ones by ``cos(tilt)``."""
    resultant = jnp.sum(slice_forces, axis=0)
    first_moment = slice_positions @ slice_forces
    return 0.5 * (resultant - 2.0 * first_moment / length), 0.5 * (resultant + 2.0 * first_moment / length)


def normal_acceleration(eccentricity, eccentricity_rate, normal, normal_rate, normal_second) -> Float[Array, "..."]:
    """``d(delta_dot)/dt`` (m/s^2) of ``delta_dot = n . e_dot`` with ``n = e / |e|``:
    ``n_dot . e_dot + n . e_ddot = (|e_dot|^2 - delta_dot^2) / |e| + n . e_ddot``, given
    ``normal_second = n . e_ddot``. The first term (the normal's turning) is dropped where
    ``|e|`` is below the tiny length at which the normal falls back to a fixed axis, as its
    automatic derivative is there."""
    length = safe_length(eccentricity)
    positive = length > 0.0
    turning = jnp.sum(eccentricity_rate**2, axis=-1) - normal_rate**2
    return jnp.where(positive, turning / jnp.where(positive, length, 1.0), 0.0) + normal_second


class BodyMotion(NamedTuple):
    """A rigid body's centre of mass ``position`` (m) and ``acceleration`` (m/s^2), its
    angular velocity ``omega`` (rad/s) and ``angular_acceleration`` (rad/s^2), ground frame."""

    position: Float[Array, "3"]
    omega: Float[Array, "3"]
    acceleration: Float[Array, "3"]
    angular_acceleration: Float[Array, "3"]

    def point_acceleration(self, point):
        """``a + alpha x r + omega x (omega x r)`` of the body-fixed ``point``."""
        arm = point - self.position
        return self.acceleration + jnp.cross(self.angular_acceleration, arm) + jnp.cross(self.omega, jnp.cross(self.omega, arm))


def slice_normal_acceleration(kin: SliceKinematics, journal: BodyMotion, journal_centre, journal_axis,
                              bearing: BodyMotion, bearing_centre, bearing_axis, slice_positions
                              ) -> Float[Array, " slices"]:
    """``d(delta_dot_k)/dt`` (m/s^2) of every slice for the bodies' accelerations, written
    out: with ``s = d . a_B``, ``n . e_ddot = n . d_ddot - 2 s_dot (n . a_B_dot) - s (n . a_B_ddot)``
    (``n`` is normal to ``a_B``), ``s_dot`` from :func:`slice_kinematics`,
    ``a_B_dot = omega_B x a_B`` and ``a_B_ddot = alpha_B x a_B + omega_B x (omega_B x a_B)``."""
    points = journal_centre + slice_positions[:, None] * journal_axis
    offset_second = journal.point_acceleration(points) - bearing.point_acceleration(bearing_centre)
    axis_rate = jnp.cross(bearing.omega, bearing_axis)
    axis_second = jnp.cross(bearing.angular_acceleration, bearing_axis) + jnp.cross(bearing.omega, axis_rate)
    normal_second = (jnp.sum(kin.normal * offset_second, axis=-1) - 2.0 * kin.axial_rate * dot(kin.normal, axis_rate)
                     - kin.axial * dot(kin.normal, axis_second))
    return normal_acceleration(kin.eccentricity, kin.eccentricity_rate, kin.normal, kin.normal_rate, normal_second)
