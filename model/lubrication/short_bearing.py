"""Short (Ocvirk) journal bearing with the half-film (Gumbel) cavitation condition.

For ``L/D -> 0`` the circumferential pressure flow is negligible; the Reynolds equation
``d/dz (h^3 dp/dz) = 6 mu (omega_j + omega_b - 2 gamma_dot) e sin(psi) - 12 mu e_dot cos(psi)``
with ``p = 0`` at both ends ``z = +-L/2`` integrates to a parabola in ``z``. Integrating
the pressure over the half film ``pi < psi < 2 pi`` (the converging half of the wedge) and
the length gives the force on the journal in the line-of-centres frame (Pinkus &
Sternlicht 1961; Frene et al. 1997; the form used by Flores, Ambrosio, Claro & Lankarani,
Nonlinear Dyn. 56, 2009)::

    F_r = -(mu R L^3 / (2 c^2)) [ 2 eps^2 w / (1-eps^2)^2 + pi (1 + 2 eps^2) eps_dot / (1-eps^2)^(5/2) ]
    F_t =  (mu R L^3 / (2 c^2)) [ pi eps w / (2 (1-eps^2)^(3/2)) + 4 eps eps_dot / (1-eps^2)^2 ]

with ``w = omega_j + omega_b - 2 gamma_dot`` (rad/s). ``F_r`` is along ``n`` (negative:
it pushes the journal back towards the bearing centre), ``F_t`` along ``t``. The code
carries ``eps w`` (``FilmMotion.wedge_rate``) so that ``eps = 0`` is regular.
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from .film import FilmMotion

Scalar = float | Float[Array, ""]


def short_bearing_force(
    motion: FilmMotion, viscosity: Scalar, radius: Scalar, clearance: Scalar, length: Scalar
) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """``(F_r, F_t)`` (N) on the journal along ``n`` and ``t``.

    ``viscosity`` in Pa s, ``radius`` (journal ~ bearing radius ``R``), ``clearance`` ``c`` and
    ``length`` ``L`` in m. Valid for ``eps < 1``.
    """
    eps, eps_dot, wedge = motion.eccentricity_ratio, motion.squeeze_rate, motion.wedge_rate
    scale = viscosity * radius * length**3 / (2.0 * clearance**2)
    one_minus = 1.0 - eps**2
    radial = 2.0 * eps * wedge / one_minus**2 + jnp.pi * (1.0 + 2.0 * eps**2) * eps_dot / one_minus**2.5
    tangential = jnp.pi * wedge / (2.0 * one_minus**1.5) + 4.0 * eps * eps_dot / one_minus**2
    return -scale * radial, scale * tangential
