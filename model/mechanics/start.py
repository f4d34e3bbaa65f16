"""Pieces of a consistent start shared by the planar and spatial engines.

- :func:`project_velocities`: the velocities closest to requested ones that satisfy the
  velocity equations ``A v = b`` of the ideal joints and drivers, with the deformation rates
  of flexible bodies as extra rows set to zero (a flexible body starts with the rigid-body
  velocity field of its frame, ``v_k = v_ref + omega x r_k`` for every segment k).
- :func:`seated_eccentricity`: where a clearance joint's journal sits so that the elastic
  contact force balances the reaction the ideal joint would carry (the quasi-static start of
  a clearance joint).
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..contact.normal import ContactLaw

# Below this reaction (N) a joint carries no load worth seating: its journal keeps the
# configured eccentricity (any position inside the clearance is an equilibrium then).
UNLOADED_REACTION = 1e-9

# Passes of the quasi-static seating: each re-solves the ideal start with the journals where
# the previous pass's reactions put them; the reactions change with the pose by about the
# ratio of the clearance to the links' lengths, so the seat converges at that rate per pass.
SEATING_PASSES = 3


def project_velocities(jacobian: Float[Array, "m n"], rhs: Float[Array, " m"], target: Float[Array, " n"]
                       ) -> Float[Array, " n"]:
    """``v = target + lstsq(A, b - A target)``: of the solutions of ``A v = b`` (least squares
    where the rows are inconsistent) the one with the smallest change ``|v - target|``, in the
    coordinates' own units (m/s and rad/s); with ``target = 0`` the minimum-norm solution."""
    if not jacobian.shape[0]:
        return target
    return target + jnp.linalg.lstsq(jacobian, rhs - jacobian @ target)[0]


def seated_eccentricity(law: ContactLaw, clearance: Float[Array, ""], load: Float[Array, " d"],
                        configured: Float[Array, " d"]) -> Float[Array, " d"]:
    """Eccentricity ``e`` (m, in the frame of ``load``) at which the elastic contact force
    carries ``load``, the force (N) with which the journal presses on the bearing when the
    joint is ideal (minus the ideal joint's constraint force on the journal).

    The contact force on the journal is ``-F_n n`` with ``n = e/|e|`` (the convention of the
    clearance kinematics), so ``n`` points along ``load`` and ``|e| = c + delta`` with
    ``K delta^n = |load|``: every law of the catalogue reduces to this elastic term at zero
    penetration rate (Lankarani & Nikravesh 1990). An unloaded joint keeps ``configured``.
    """
    squared = jnp.sum(load**2)
    loaded = squared > UNLOADED_REACTION**2
    safe = jnp.sqrt(jnp.where(loaded, squared, 1.0))  # no NaN in the derivative of an unloaded joint
    penetration = (safe / law.stiffness) ** (1.0 / law.exponent)
    seated = (clearance + penetration) * load / safe
    return jnp.where(loaded, seated, configured)
