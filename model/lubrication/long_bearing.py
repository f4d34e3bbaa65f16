"""Long (Sommerfeld) journal bearing with the half-film (Gumbel) cavitation condition.

For ``L/D -> infinity`` the axial flow is negligible:
``d/dpsi (h^3 dp/dpsi) = (6 mu R^2) (e w sin(psi) - 2 e_dot cos(psi))``, ``w`` as in
:mod:`.short_bearing`. Solved on the half film ``pi < psi < 2 pi`` with ``p = 0`` at both
ends and integrated with the Sommerfeld integrals, the force on the journal per the
line-of-centres frame is (derivation in ``docs/lubrication.md``; same form as Pinkus &
Sternlicht 1961 and Flores et al., Nonlinear Dyn. 56, 2009)::

    F_r = -(6 mu R^3 L / c^2) [ 2 eps^2 w / ((2+eps^2)(1-eps^2))
                                 + eps_dot (pi - 16/(pi (2+eps^2))) / (1-eps^2)^(3/2) ]
    F_t =  (6 mu R^3 L / c^2) [ pi eps w / ((2+eps^2)(1-eps^2)^(1/2))
                                 + 4 eps eps_dot / ((2+eps^2)(1-eps^2)) ]

For pure rotation this is the half-Sommerfeld (Gumbel) solution exactly.
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from .film import FilmMotion

Scalar = float | Float[Array, ""]


def long_bearing_force(
    motion: FilmMotion, viscosity: Scalar, radius: Scalar, clearance: Scalar, length: Scalar
) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """``(F_r, F_t)`` (N) on the journal along ``n`` and ``t``; SI arguments as in
    :func:`.short_bearing.short_bearing_force`. Valid for ``eps < 1``."""
    eps, eps_dot, wedge = motion.eccentricity_ratio, motion.squeeze_rate, motion.wedge_rate
    scale = 6.0 * viscosity * radius**3 * length / clearance**2
    one_minus, two_plus = 1.0 - eps**2, 2.0 + eps**2
    radial = 2.0 * eps * wedge / (two_plus * one_minus) + eps_dot * (
        jnp.pi - 16.0 / (jnp.pi * two_plus)
    ) / one_minus**1.5
    tangential = jnp.pi * wedge / (two_plus * jnp.sqrt(one_minus)) + 4.0 * eps * eps_dot / (two_plus * one_minus)
    return -scale * radial, scale * tangential
