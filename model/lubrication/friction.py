"""Viscous friction torques of the film on the journal and the bearing of one cross-section.

The film's shear stress on the journal surface (``y = 0``) and on the bearing surface
(``y = h``) of the Couette-Poiseuille profile, integrated round the circumference, gives
(Hamrock, Schmid & Jacobson, *Fundamentals of Machine Elements*, 2004; Frêne et al.,
*Hydrodynamic Lubrication*, 1997; the friction variable of Raimondi & Boyd, ASLE Trans. 1,
1958)::

    T_j = -C (omega_j - omega_b) - (e x F) / 2,   T_b = +C (omega_j - omega_b) - (e x F) / 2
    C = 2 pi mu R^3 L / (c sqrt(1 - eps^2))

(N m, about the journal's and the bearing's axis), with ``e`` the eccentricity (journal
centre minus bearing centre) and ``F`` the film's pressure resultant on the journal, which
acts through the journal centre (the bearing receives ``-F`` through its own centre).
``C`` is Petroff's shear term with its eccentricity correction (``int dpsi / h`` over the
whole circumference: the shear of the Couette flow acts over the full film);
``(e x F) / 2 = (c eps / 2) F_t`` is the shear of the pressure flow, the term
``(c eps / 2) W sin(phi)`` of the steady-load formulas. The torques balance the couple of
the two pressure resultants, ``T_j + T_b + e x F = 0``: the massless film transmits no net
moment. In steady rotation the journal's torque is ``-W R f`` with Raimondi & Boyd's
``(R/c) f = 2 pi^2 S / sqrt(1 - eps^2) + (eps / 2) sin(phi)``.
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..geometry import cross2

Scalar = float | Float[Array, ""]


def couette_coefficient(viscosity: Scalar, radius: Scalar, clearance: Scalar, length: Scalar,
                        eccentricity_ratio: Scalar) -> Float[Array, ""]:
    """``C = 2 pi mu R^3 L / (c sqrt(1 - eps^2))`` (N m s): the shear torque per unit relative
    spin; ``mu`` in Pa s, ``R``, ``c``, ``L`` in m, ``eps < 1``."""
    return 2.0 * jnp.pi * viscosity * radius**3 * length / (clearance * jnp.sqrt(1.0 - eccentricity_ratio**2))


def film_torques(couette: Scalar, relative_spin: Scalar, eccentricity: Float[Array, "2"],
                 force: Float[Array, "2"]) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """``(T_j, T_b)`` (N m) above, from ``C`` (N m s), ``omega_j - omega_b`` (rad/s), the
    eccentricity ``e`` (m) and the pressure resultant ``F`` on the journal (N), in the
    cross-section's plane."""
    pressure_part = -0.5 * cross2(eccentricity, force)
    shear = couette * relative_spin
    return pressure_part - shear, pressure_part + shear
