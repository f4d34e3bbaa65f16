"""Contact stiffness from geometry and materials, and conversion to ADAMS (mm) units.

All functions take and return SI values unless their name says otherwise.
"""

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike

# Palmgren's line-contact coefficient for steel cylinders (N, mm): F = K delta^(10/9) with
# K = coefficient * l^(8/9). The line-contact value used here is 7.86e4. Inverting Harris' approach
# delta = 3.84e-5 Q^0.9 / l^0.8 (mm, N) gives (3.84e-5)^(-10/9) = 8.06e4 instead.
PALMGREN_LINE_CONTACT_COEFFICIENT = 7.86e4
PALMGREN_COEFFICIENT_HARRIS = 8.06e4
PALMGREN_EXPONENT = 10.0 / 9.0

_MM_PER_M = 1000.0


def effective_modulus(E1: ArrayLike, nu1: ArrayLike, E2: ArrayLike, nu2: ArrayLike) -> Array:
    """Effective (contact) modulus ``E*`` (Pa): ``1/E* = (1-nu1^2)/E1 + (1-nu2^2)/E2``.

    Johnson, *Contact Mechanics* (1985), eq. 4.22; ``E1, E2`` in Pa, ``nu1, nu2`` dimensionless.
    Steel on steel (207 GPa, 0.3) gives 113.7 GPa.
    """
    return 1.0 / ((1.0 - jnp.asarray(nu1) ** 2) / E1 + (1.0 - jnp.asarray(nu2) ** 2) / E2)


def hertz_pin_stiffness(effective_modulus: ArrayLike, bearing_radius: ArrayLike, clearance: ArrayLike) -> Array:
    """Hertz stiffness ``K`` (N/m^1.5) of a journal in a bearing, for ``F = K delta^1.5``.

    ``K = 4/3 E* sqrt(R*)`` with the equivalent radius of the internal contact
    ``R* = R_b R_j / (R_b - R_j)``, ``R_j = R_b - c`` (Johnson 1985, the conformal pin-in-hole radius).
    ``effective_modulus`` in Pa, ``bearing_radius`` and ``clearance`` in m.
    """
    journal_radius = jnp.asarray(bearing_radius) - clearance
    equivalent_radius = bearing_radius * journal_radius / clearance
    return 4.0 / 3.0 * effective_modulus * jnp.sqrt(equivalent_radius)


def palmgren_stiffness(length: ArrayLike, coefficient: float = PALMGREN_LINE_CONTACT_COEFFICIENT) -> Array:
    """Palmgren line-contact stiffness ``K`` (N/m^(10/9)) of steel cylinders, ``F = K delta^(10/9)``.

    Palmgren's line contact: ``K_mm = 7.86e4 l_mm^(8/9)`` in N/mm^(10/9) with the contact length
    ``l_mm`` in mm (``coefficient`` default, :data:`PALMGREN_LINE_CONTACT_COEFFICIENT`). Harris'
    ``delta = 3.84e-5 Q^0.9 / l^0.8`` gives 8.06e4 (:data:`PALMGREN_COEFFICIENT_HARRIS`).
    In SI: ``K = coefficient * (1000 l)^(8/9) * 1000^(10/9) = coefficient * 1e6 * l^(8/9)``,
    ``length`` in m.
    """
    stiffness_mm = coefficient * (_MM_PER_M * jnp.asarray(length)) ** (8.0 / 9.0)
    return stiffness_from_adams(stiffness_mm, PALMGREN_EXPONENT)


def stiffness_to_adams(stiffness: ArrayLike, exponent: ArrayLike) -> Array:
    """``K`` in N/m^n -> N/mm^n (ADAMS MMKS units), for ``F = K delta^n``.

    ``F = K_si (delta_mm / 1000)^n``, so ``K_mm = K_si / 1000^n``, e.g.
    2.5e8 N/m^1.5 -> 7.9e3 N/mm^1.5).
    """
    return jnp.asarray(stiffness) / _MM_PER_M ** jnp.asarray(exponent)


def stiffness_from_adams(stiffness_mm: ArrayLike, exponent: ArrayLike) -> Array:
    """``K`` in N/mm^n -> N/m^n; inverse of :func:`stiffness_to_adams`."""
    return jnp.asarray(stiffness_mm) * _MM_PER_M ** jnp.asarray(exponent)


def damping_to_adams(damping: ArrayLike) -> Array:
    """Damping N s/m -> N s/mm (ADAMS MMKS units): divide by 1000."""
    return jnp.asarray(damping) / _MM_PER_M


def damping_from_adams(damping_mm: ArrayLike) -> Array:
    """Damping N s/mm -> N s/m; inverse of :func:`damping_to_adams`."""
    return jnp.asarray(damping_mm) * _MM_PER_M
