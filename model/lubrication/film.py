"""Film kinematics of one journal-bearing cross-section, in the line-of-centres frame.

Bearing centre ``O_b``, journal centre ``O_j``, eccentricity ``e = O_j - O_b`` (m), its
length ``|e|``, the line-of-centres unit vector ``n = e/|e|`` (towards the thinnest film)
and ``t = n`` turned by +90 deg. With ``psi`` measured from ``n`` the film thickness is
``h = c (1 - eps cos psi)``, ``eps = |e|/c`` (Pinkus & Sternlicht 1961; Frene et al. 1997).

The Reynolds equation's right-hand side depends on the motion only through

- the squeeze rate ``eps_dot = (de/dt . n)/c`` (1/s), and
- the wedge term ``eps (omega_j + omega_b - 2 gamma_dot)`` (1/s), where ``gamma_dot`` is
  the rotation rate of the line of centres: ``eps gamma_dot = (de/dt . t)/c``.

Carrying ``eps * omega_bar`` instead of ``omega_bar`` keeps everything finite at ``e = 0``
(``gamma_dot`` itself is undefined there). These are the only inputs every bearing model
needs, so a spatial joint can call the same models once per axial slice.
"""

from typing import NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..geometry import perp, safe_normal


class FilmMotion(NamedTuple):
    """Dimensionless state of the film in the line-of-centres frame."""

    eccentricity_ratio: Float[Array, ""]  # eps = |e|/c
    squeeze_rate: Float[Array, ""]  # eps_dot (1/s)
    wedge_rate: Float[Array, ""]  # eps (omega_j + omega_b - 2 gamma_dot) (1/s)
    normal: Float[Array, "2"]  # n, unit, from bearing centre to journal centre
    tangent: Float[Array, "2"]  # t = n turned +90 deg


def film_motion(
    eccentricity: Float[Array, "2"],
    eccentricity_velocity: Float[Array, "2"],
    journal_omega: Float[Array, ""],
    bearing_omega: Float[Array, ""],
    clearance: Float[Array, ""],
) -> FilmMotion:
    """:class:`FilmMotion` from the relative centre motion of one cross-section.

    **Arguments:** ``eccentricity = O_j - O_b`` (m), ``eccentricity_velocity`` its time
    derivative (m/s), the angular velocities of journal and bearing (rad/s) and the radial
    clearance ``c`` (m). Finite values and gradients at ``e = 0`` (``model.safe_normal``).
    """
    distance, normal = safe_normal(eccentricity)
    tangent = perp(normal)
    ratio = distance / clearance
    squeeze = jnp.dot(eccentricity_velocity, normal) / clearance
    line_rotation = jnp.dot(eccentricity_velocity, tangent) / clearance  # eps * gamma_dot
    wedge = ratio * (journal_omega + bearing_omega) - 2.0 * line_rotation
    return FilmMotion(ratio, squeeze, wedge, normal, tangent)


def to_plane(radial: Float[Array, ""], tangential: Float[Array, ""], motion: FilmMotion) -> Float[Array, "2"]:
    """Force on the journal (N) from its components along ``n`` and ``t``."""
    return radial * motion.normal + tangential * motion.tangent
