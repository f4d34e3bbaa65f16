"""Archard wear of a revolute clearance joint's bushing, resolved over the angle.

Archard's law (Archard 1953) in its local form: a surface point under the contact pressure
``p`` (Pa) that slides a distance ``ds`` (m) loses the depth ``dh = k_w p ds``, with the
wear coefficient ``k_w = k / H`` (1/Pa) from the dimensionless coefficient ``k`` and the
hardness ``H`` (Pa) of the softer surface. Integrated over the contact it gives the volume
``dV = k_w F ds`` (Archard's ``V = k F s / H``). This is the procedure of Flores (2009,
Mech. Mach. Theory 44) and Mukras et al. (2010, Wear 268) for the bushing of a revolute
joint.

The pressure over the contact arc is the Hertz pressure of a cylinder in a conforming bore
(Johnson 1985, *Contact Mechanics*, sec. 4.3, two-dimensional contact of cylinders): for the
normal force ``F`` (N) over the axial length ``L`` (m), the contact half-width is
``b = sqrt(4 F R* / (pi L E*))`` with the internal contact's equivalent radius
``R* = R_b R_j / c`` and the effective modulus ``E*``, and the pressure
``p(x) = p_0 sqrt(1 - x^2 / b^2)``, ``p_0 = 2 F / (pi b L)``, at the arc length ``x`` from
the contact's centre. The bushing's angle bins (:mod:`model.geometry.worn`) receive the
pressure averaged over each bin, in closed form, so that the bins together carry exactly
``F`` at any resolution and the worn volume equals Archard's ``k_w F s`` to round-off.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..geometry.worn import bin_angles

# The half-width never falls below this share of a bin's arc: a vanishing force then puts
# its (vanishing) pressure on one or two bins instead of dividing by a zero width.
_MIN_HALF_WIDTH_PER_BIN = 1e-3


def hertz_half_width_squared(force, length, effective_modulus, bearing_radius, clearance) -> Float[Array, ""]:
    """``b^2 = 4 F R* / (pi L E*)`` (m^2), ``b`` the half-width of the Hertz line contact of
    a journal of radius ``R_j = R_b - c`` in a bore of radius ``R_b`` (Johnson 1985, eq. 4.43),
    ``R* = R_b R_j / c``. ``force`` in N, ``length``, ``bearing_radius`` and ``clearance`` in
    m, ``effective_modulus`` in Pa. Squared, so that its derivative stays finite at ``F = 0``."""
    equivalent_radius = bearing_radius * (bearing_radius - clearance) / clearance
    return 4.0 * force * equivalent_radius / (jnp.pi * length * effective_modulus)


def _elliptic_primitive(x: Float[Array, "..."]) -> Float[Array, "..."]:
    """``G(x) = int_0^x sqrt(1 - u^2) du = (x sqrt(1 - x^2) + arcsin x) / 2``, with ``x``
    clipped to ``[-1, 1]`` (where ``G = +-pi/4``) and finite derivatives everywhere."""
    inside = jnp.abs(x) < 1.0
    safe = jnp.where(inside, x, 0.0)
    value = 0.5 * (safe * jnp.sqrt(1.0 - safe * safe) + jnp.arcsin(safe))
    return jnp.where(inside, value, jnp.sign(x) * (jnp.pi / 4.0))


def bin_pressures(force, contact_angle, half_width_squared, bearing_radius, length, resolution: int
                  ) -> Float[Array, " bins"]:
    """Hertz pressure (Pa) averaged over each angle bin ``[phi_k - pi/N, phi_k + pi/N]`` of
    a bushing of radius ``bearing_radius`` and axial ``length`` (m), for the normal force
    ``force`` (N) centred at ``contact_angle`` (rad, the bearing body's frame) with the
    squared half-width ``half_width_squared`` (m^2). ``sum_k p_k R_b (2 pi / N) L = force`` exactly."""
    spacing = 2.0 * jnp.pi / resolution
    floor = _MIN_HALF_WIDTH_PER_BIN * bearing_radius * spacing
    width = jnp.sqrt(half_width_squared + floor * floor)
    half_angle = width / bearing_radius
    # the bins' edges relative to the contact, from the edge below bin 0 round to the one above bin N - 1
    edges = jnp.mod(bin_angles(resolution) - 0.5 * spacing - contact_angle + jnp.pi, 2.0 * jnp.pi) - jnp.pi
    primitive = _elliptic_primitive(edges / half_angle)
    # the bin opposite the contact straddles the cut at +-pi: it is outside any contact (b < pi R_b)
    opposite = jnp.roll(edges, -1) < edges
    share = jnp.where(opposite, 0.0, jnp.roll(primitive, -1) - primitive) * (2.0 / jnp.pi)
    # share_k: the fraction of the force on bin k; the bin's area is R_b * spacing * L
    return force * share / (bearing_radius * spacing * length)


class ArchardWear(eqx.Module):
    """Archard wear of the bushing of clearance joint ``joint`` (index into the mechanism's
    clearance joints), on ``resolution`` angle bins of its bearing body.

    ``coefficient``: ``k_w = k / H`` (1/Pa); ``length``: the bushing's axial length (m) over
    which the normal force spreads; ``start_time`` (s): wear accumulates from this time on
    (the run before it lets the start-up transient die out).
    """

    coefficient: Float[Array, ""]  # k_w (1/Pa)
    length: Float[Array, ""]  # L (m)
    start_time: Float[Array, ""]  # s
    joint: int = eqx.field(static=True)
    resolution: int = eqx.field(static=True)

    def depth_rate(self, force, slip_velocity, contact_angle, effective_modulus, bearing_radius, clearance
                   ) -> Float[Array, " bins"]:
        """``dh_k / dt = k_w p_k |v_t|`` (m/s) per angle bin: the bin pressures of
        :func:`bin_pressures` under the solid contact force ``force`` (N) at
        ``contact_angle`` (rad, bearing frame), sliding at ``slip_velocity`` (m/s)."""
        half_width_squared = hertz_half_width_squared(jnp.maximum(force, 0.0), self.length, effective_modulus,
                                                      bearing_radius, clearance)
        pressures = bin_pressures(force, contact_angle, half_width_squared, bearing_radius, self.length,
                                  self.resolution)
        return self.coefficient * pressures * jnp.abs(slip_velocity)
