"""Time scales of contact: the basis of step bounds, solver choice and regime labels."""

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..contact.normal import LAWS_WITHOUT_RESTITUTION
from ..mechanics.interface import AbstractMechanism
from ..mechanics.mechanism import GROUND

# Penetration at which the Hertz law is linearised, as a share of the clearance. Peak
# penetrations in the benchmark cases are 1-15 % of c; 1 % gives a conservative
# (short) period.
REFERENCE_PENETRATION_SHARE = 0.01


def contact_periods(mechanism: AbstractMechanism) -> Float[Array, " joints"]:
    """Contact period estimate ``T = 2 pi sqrt(m_eff / K_lin)`` (s) per clearance joint.

    ``K_lin = n K delta_ref^(n-1)`` is the tangent stiffness of
    ``K delta^n`` at ``delta_ref = 0.01 c``, and ``m_eff = m_i m_j / (m_i + m_j)`` is the
    reduced mass of the journal and bearing bodies (the ground counts as infinite). For a
    sliced cylindrical joint ``K`` is the whole joint's stiffness (all slices in contact).
    """
    periods = []
    for joint in mechanism.clearance_joints:
        masses = [mechanism.masses[b] for b in joint.bodies if b != GROUND]
        reduced_mass = masses[0] if len(masses) == 1 else masses[0] * masses[1] / (masses[0] + masses[1])
        exponent = joint.contact.exponent
        reference_penetration = REFERENCE_PENETRATION_SHARE * joint.clearance
        tangent_stiffness = exponent * joint.stiffness() * reference_penetration ** (exponent - 1.0)
        periods.append(2.0 * jnp.pi * jnp.sqrt(reduced_mass / tangent_stiffness))
    return jnp.stack(periods) if periods else jnp.zeros((0,))


# Restitution above which every law is counted as (nearly) lossless in the cost estimate.
LOSSLESS_RESTITUTION = 0.99


def relative_solve_cost(mechanism: AbstractMechanism) -> Float[Array, ""]:
    """Relative cost (1/s) of an adaptive solve of ``mechanism``, for ordering the points of a
    sweep, not for predicting seconds: ``sum_j 1 / (T_j (1 - e_j))`` over its clearance joints.

    An impact costs a roughly fixed number of steps per contact period ``T_j``
    (:func:`contact_periods`), and rebounds against a steady load repeat with approach speeds
    falling as ``e^k``, so the impacts above a given speed number about
    ``ln(v_0 / v_min) / ln(1 / e) ~ 1 / (1 - e)``. Laws that ignore the restitution
    (:data:`model.contact.normal.LAWS_WITHOUT_RESTITUTION`) and ``e > LOSSLESS_RESTITUTION`` count
    as ``e = LOSSLESS_RESTITUTION``. On the 16 x 16 Flores clearance x restitution grid its
    rank correlation with the measured step counts is 0.71 (docs/BENCHMARKS.md §1).
    """
    costs = jnp.zeros(())
    for joint, period in zip(mechanism.clearance_joints, contact_periods(mechanism)):
        if joint.contact.model in LAWS_WITHOUT_RESTITUTION:
            restitution = LOSSLESS_RESTITUTION
        else:
            restitution = jnp.minimum(joint.contact.restitution, LOSSLESS_RESTITUTION)
        costs = costs + 1.0 / (period * (1.0 - restitution))
    return costs
