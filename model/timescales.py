"""Time scales of contact: the basis of step bounds, solver choice and regime labels."""

import jax.numpy as jnp
from jaxtyping import Array, Float

from .mechanism import GROUND, Mechanism

# Penetration at which the Hertz law is linearised, as a share of the clearance. Peak
# penetrations in the benchmark cases are 1-15 % of c; 1 % gives a conservative
# (short) period.
REFERENCE_PENETRATION_SHARE = 0.01


def contact_periods(mechanism: Mechanism) -> Float[Array, " joints"]:
    """Contact period estimate ``T = 2 pi sqrt(m_eff / K_lin)`` (s) per clearance joint.

    Seed 000 §4.3: ``K_lin = n K delta_ref^(n-1)`` is the tangent stiffness of
    ``K delta^n`` at ``delta_ref = 0.01 c``, and ``m_eff = m_i m_j / (m_i + m_j)`` is the
    reduced mass of the journal and bearing bodies (the ground counts as infinite).
    """
    periods = []
    for joint in mechanism.clearance_joints:
        masses = [mechanism.masses[b] for b in (joint.journal_body, joint.bearing_body) if b != GROUND]
        reduced_mass = masses[0] if len(masses) == 1 else masses[0] * masses[1] / (masses[0] + masses[1])
        exponent = joint.contact.exponent
        reference_penetration = REFERENCE_PENETRATION_SHARE * joint.clearance
        tangent_stiffness = exponent * joint.stiffness() * reference_penetration ** (exponent - 1.0)
        periods.append(2.0 * jnp.pi * jnp.sqrt(reduced_mass / tangent_stiffness))
    return jnp.stack(periods) if periods else jnp.zeros((0,))
