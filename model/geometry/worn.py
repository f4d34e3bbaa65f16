"""A worn bore: the wear depth of a bushing as a periodic function of the angle.

The depth ``h`` (m) is given at ``N`` equally spaced angles ``phi_k = 2 pi k / N`` (rad)
of the bearing body's frame, measured from its x axis, and interpolated between them by
the periodic Catmull-Rom cubic (Catmull & Rom 1974; the cubic Hermite spline whose node
slopes are central differences), which is continuous with its first derivative, so that a
contact force built on it is smooth in the state and ``jit``, ``vmap`` and ``grad`` go through.

A worn bore widens the gap locally: along the line of centres (direction ``phi``) the
radial clearance is ``c + h(phi)``. The journal is a rigid circle of radius
``R_j = R_b - c``, though, and cannot sink into a groove narrower than its own curvature
allows: its surface at the bore angle ``psi = phi + Delta`` lies at the distance
``rho(Delta) = e cos(Delta) + sqrt(R_j^2 - e^2 sin^2(Delta))`` from the bore's centre (``e``
the eccentricity), so it reaches beyond the worn bore by
``g(psi) = rho(Delta) - R_b - h(psi)``. The penetration is the larger of the line-of-centres
value ``e - c - h(phi)`` and the largest ``g`` at the profile's nodes within an eighth of a
turn of the line of centres (at ``Delta = 0`` both are ``e - c - h``; elsewhere the node
values take over where a groove's edges hold the journal off its bottom), and the contact
sits at the angle that gives it. A profile of zeros gives exactly ``e - c`` (the nodes'
``g`` never exceed it). The force stays along the line of centres: the wear depths are
micrometres against a bore radius of millimetres.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float


def bin_angles(resolution: int) -> Float[Array, " bins"]:
    """The nodes ``phi_k = 2 pi k / N`` (rad) of a profile of ``N = resolution`` angles."""
    return jnp.arange(resolution) * (2.0 * jnp.pi / resolution)


class WornBore(eqx.Module):
    """Wear depth ``h(phi)`` (m) of a bushing on a uniform periodic grid of angles.

    ``depth[k]`` is the depth at ``phi_k = 2 pi k / N`` in the bearing body's frame
    (:func:`bin_angles`); a profile of zeros is a new bushing and leaves the joint exactly
    as without one.
    """

    depth: Float[Array, " bins"]

    @property
    def window(self) -> int:
        """Nodes on each side of the line of centres searched for the rigid journal's contact:
        an eighth of a turn (45 deg), where the journal's surface has receded from the bore by
        ``e (1 - cos 45 deg)``, 29 % of the clearance in contact: profiles whose depth varies
        by less than that beyond it are followed exactly."""
        return max(1, self.resolution // 8)

    @property
    def resolution(self) -> int:
        """The number ``N`` of angles of the profile."""
        return self.depth.shape[-1]

    def at(self, angle: Float[Array, ""]) -> Float[Array, ""]:
        """``h(angle)`` (m) by the periodic Catmull-Rom cubic through the nodes (``angle`` in
        rad, any value: the profile is ``2 pi``-periodic)."""
        count = self.resolution
        position = jnp.mod(angle, 2.0 * jnp.pi) * (count / (2.0 * jnp.pi))
        base = jnp.floor(position)
        s = position - base
        index = base.astype(jnp.int32)
        p0, p1, p2, p3 = (self.depth[jnp.mod(index + k, count)] for k in (-1, 0, 1, 2))
        # Hermite basis with slopes m1 = (p2 - p0)/2 and m2 = (p3 - p1)/2 (per node spacing)
        s2, s3 = s * s, s * s * s
        return (p1 * (2.0 * s3 - 3.0 * s2 + 1.0) + p2 * (3.0 * s2 - 2.0 * s3)
                + 0.5 * (p2 - p0) * (s3 - 2.0 * s2 + s) + 0.5 * (p3 - p1) * (s3 - s2))

    def contact(self, distance: Float[Array, ""], angle: Float[Array, ""], bearing_radius: Float[Array, ""],
                clearance: Float[Array, ""]) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """``(penetration (m), contact angle (rad))`` of a rigid journal of radius
        ``bearing_radius - clearance`` whose centre is ``distance`` (m) from the bore's,
        along the bearing-frame ``angle`` (rad): see the module docstring."""
        count = self.resolution
        spacing = 2.0 * jnp.pi / count
        along = distance - clearance - self.at(angle)
        nearest = jnp.round(angle / spacing).astype(jnp.int32)
        offsets = jnp.arange(-self.window, self.window + 1)
        nodes = nearest + offsets
        delta = nodes * spacing - angle
        journal_radius = bearing_radius - clearance
        sine = distance * jnp.sin(delta)
        # rho - R_b = (e - c) - 2 e sin^2(Delta/2) - s^2 / (sqrt(R_j^2 - s^2) + R_j), s = e sin(Delta):
        # both corrections are <= 0 in floating point, so a new bore's nodes never exceed e - c
        recess = 2.0 * distance * jnp.sin(0.5 * delta) ** 2 + sine * sine / (
            jnp.sqrt(journal_radius**2 - sine * sine) + journal_radius)
        interference = (distance - clearance) - recess - self.depth[jnp.mod(nodes, count)]
        best = jnp.argmax(interference)
        at_node = interference[best] > along
        return jnp.where(at_node, interference[best], along), jnp.where(at_node, nodes[best] * spacing, angle)

    def volume(self, bearing_radius: Float[Array, ""], length: Float[Array, ""]) -> Float[Array, ""]:
        """Worn volume (m^3) of a bushing of radius ``bearing_radius`` and axial ``length``
        (m): ``sum_k h_k R_b (2 pi / N) L``, the integral of the interpolant (a periodic
        Catmull-Rom cubic integrates to the nodes' sum times the spacing)."""
        return jnp.sum(self.depth, axis=-1) * bearing_radius * (2.0 * jnp.pi / self.resolution) * length
