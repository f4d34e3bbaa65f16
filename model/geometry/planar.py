"""Planar geometry and kinematics of a revolute clearance joint.

Conventions (docs/reference.md): bearing centre ``O_b``, journal
centre ``O_j``, eccentricity vector ``e = r_j - r_b``, normal ``n = e/|e|``, tangent
``t = [-n_y, n_x]``, penetration ``delta = |e| - c`` (contact iff ``delta > 0``), contact
points ``P_b = r_b + R_b n`` and ``P_j = r_j + R_j n``. All quantities in SI units.
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero
from jaxtyping import Array, Float

# Below this eccentricity (m) the normal is undefined; the force is zero there anyway
# (penetration = -c < 0), so any unit vector will do as long as gradients stay finite.
_ECCENTRICITY_EPS = 1e-15


def cross2(a: Float[Array, "2"], b: Float[Array, "2"]) -> Float[Array, ""]:
    """z-component of the planar cross product ``a x b``."""
    return a[0] * b[1] - a[1] * b[0]


def perp(v: Float[Array, "2"]) -> Float[Array, "2"]:
    """``v`` turned by +90 degrees: ``omega x v`` for unit ``omega`` along z."""
    return jnp.stack([-v[1], v[0]])


def rotation(theta: Float[Array, ""]) -> Float[Array, "2 2"]:
    """Rotation matrix of angle ``theta`` (rad)."""
    c, s = jnp.cos(theta), jnp.sin(theta)
    # one stack: jnp.array of nested lists of tracers costs ~1 ms of tracing per call
    return jnp.stack([c, -s, s, c]).reshape(2, 2)


@jax.custom_jvp
def rotate(theta: Float[Array, ""], vector: Float[Array, "2"]) -> Float[Array, "2"]:
    """``rotation(theta) @ vector`` (``theta`` in rad, ``vector`` in any unit).

    Written for XLA's CPU code generator, which computes a batched planar field (the sweep's
    lanes) kernel by kernel: a ``@`` of two rows under ``vmap`` is a ``dot`` kernel of its
    own (:mod:`model.geometry.vectors`), and ``cos`` and ``sin`` used elementwise are
    recomputed inside every kernel that reads them (20 times per evaluation of the Flores
    slider-crank for its three angles). As the outer product of ``(cos, sin)`` with
    ``vector``, which reads each of them twice, they are computed once and stored; the
    derivatives (:func:`_rotate_jvp`) are built from the rotated vector and call neither
    again (what that saves per lane: ``benchmarks.overhead --case roofline``, docs/BENCHMARKS.md
    section 1d).
    """
    trig = jnp.stack([jnp.cos(theta), jnp.sin(theta)])
    products = trig[:, None] * vector[None, :]  # [[c v0, c v1], [s v0, s v1]]
    return jnp.stack([products[0, 0] - products[1, 1], products[1, 0] + products[0, 1]])


@functools.partial(rotate.defjvp, symbolic_zeros=True)
def _rotate_jvp(primals, tangents):
    # d(R v) = perp(R v) d theta + R dv, and again for the second derivatives (the
    # constraints' convective terms): -R v d theta^2 comes out as perp(perp(R v)).
    # Symbolic zeros skip the R dv term where ``vector`` is a constant (a body's point).
    theta, vector = primals
    theta_dot, vector_dot = tangents
    rotated = rotate(theta, vector)
    tangent = jnp.zeros_like(rotated) if type(theta_dot) is SymbolicZero else perp(rotated) * theta_dot
    if type(vector_dot) is not SymbolicZero:
        tangent = tangent + rotate(theta, vector_dot)
    return rotated, tangent


class ContactKinematics(NamedTuple):
    """Geometry and relative motion of a clearance joint (SI units)."""

    eccentricity: Float[Array, "2"]  # e = r_j - r_b (m)
    distance: Float[Array, ""]  # |e| (m)
    normal: Float[Array, "2"]  # unit, from bearing centre to journal centre
    tangent: Float[Array, "2"]  # normal turned +90 deg
    penetration: Float[Array, ""]  # |e| - c (m), > 0 in contact
    bearing_point: Float[Array, "2"]  # P_b (m)
    journal_point: Float[Array, "2"]  # P_j (m)
    normal_rate: Float[Array, ""]  # v_rel . n (m/s), > 0 closing
    slip_velocity: Float[Array, ""]  # v_rel . t (m/s)


def safe_normal(eccentricity: Float[Array, "2"]) -> tuple[Float[Array, ""], Float[Array, "2"]]:
    """``(|e|, e/|e|)`` with finite values and gradients at ``e = 0``.

    Uses the double-``where`` trick so that neither branch produces NaN under ``grad``;
    at ``e = 0`` the normal is taken along +x (the contact force is zero there).
    """
    squared = jnp.dot(eccentricity, eccentricity)
    is_centred = squared < _ECCENTRICITY_EPS**2
    safe_squared = jnp.where(is_centred, 1.0, squared)
    distance = jnp.where(is_centred, 0.0, jnp.sqrt(safe_squared))
    normal = jnp.where(is_centred, jnp.array([1.0, 0.0]), eccentricity / jnp.sqrt(safe_squared))
    return distance, normal


def clearance_kinematics(
    journal_centre: Float[Array, "2"],
    journal_velocity: Float[Array, "2"],
    journal_omega: Float[Array, ""],
    bearing_centre: Float[Array, "2"],
    bearing_velocity: Float[Array, "2"],
    bearing_omega: Float[Array, ""],
    bearing_radius: Float[Array, ""],
    clearance: Float[Array, ""],
) -> ContactKinematics:
    """Contact geometry and relative velocities of a journal inside a bearing.

    **Arguments:** centres (m) and their velocities (m/s) of the journal and bearing, the
    angular velocities (rad/s) of the bodies that carry them, the bearing radius ``R_b`` (m)
    and the radial clearance ``c = R_b - R_j`` (m).

    The velocity of each contact point includes its body's rotation,
    ``v(P) = v(O) + omega x (P - O)``.
    """
    journal_radius = bearing_radius - clearance
    eccentricity = journal_centre - bearing_centre
    distance, normal = safe_normal(eccentricity)
    tangent = perp(normal)
    bearing_point = bearing_centre + bearing_radius * normal
    journal_point = journal_centre + journal_radius * normal
    v_journal_point = journal_velocity + journal_omega * journal_radius * tangent
    v_bearing_point = bearing_velocity + bearing_omega * bearing_radius * tangent
    relative_velocity = v_journal_point - v_bearing_point
    return ContactKinematics(
        eccentricity=eccentricity,
        distance=distance,
        normal=normal,
        tangent=tangent,
        penetration=distance - clearance,
        bearing_point=bearing_point,
        journal_point=journal_point,
        normal_rate=jnp.dot(relative_velocity, normal),
        slip_velocity=jnp.dot(relative_velocity, tangent),
    )
