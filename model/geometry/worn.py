"""A worn bore: the wear depth of a bushing as a periodic function of the angle.

The depth ``h`` (m) is given at ``N`` equally spaced angles ``phi_k = 2 pi k / N`` (rad)
of the bearing body's frame, measured from its x axis, and interpolated between them by
the periodic Catmull-Rom cubic (Catmull & Rom 1974; the cubic Hermite spline whose node
slopes are central differences), which is continuous with its first derivative, so that a
contact force built on it is smooth in the state and ``jit``, ``vmap`` and ``grad`` go through.

A worn bore widens the gap locally: at a contact in direction ``phi`` the radial clearance
is ``c + h(phi)``. The normal stays along the line of centres: the wear depths are
micrometres against a bore radius of millimetres, so the slope of the worn surface,
``h'(phi) / R_b``, tilts the normal by a negligible angle.
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

    def volume(self, bearing_radius: Float[Array, ""], length: Float[Array, ""]) -> Float[Array, ""]:
        """Worn volume (m^3) of a bushing of radius ``bearing_radius`` and axial ``length``
        (m): ``sum_k h_k R_b (2 pi / N) L``, the integral of the interpolant (a periodic
        Catmull-Rom cubic integrates to the nodes' sum times the spacing)."""
        return jnp.sum(self.depth, axis=-1) * bearing_radius * (2.0 * jnp.pi / self.resolution) * length
