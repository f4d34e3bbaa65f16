"""Pieces of a consistent start shared by the planar and spatial engines.

- :func:`project_velocities`: the velocities closest to requested ones that satisfy the
  velocity equations ``A v = b`` of the ideal joints and drivers, with the deformation rates
  of flexible bodies as extra rows set to zero (a flexible body starts with the rigid-body
  velocity field of its frame, ``v_k = v_ref + omega x r_k`` for every segment k).
- :func:`seated_eccentricity`: where a clearance joint's journal sits so that the elastic
  contact force balances the reaction the ideal joint would carry (the quasi-static start of
  a clearance joint).
- :func:`solve_static`: the Gauss–Newton (or Levenberg–Marquardt) solve of a static
  start's equations with the implicit-function derivative, shared by the static shape of
  flexible bodies (both engines) and the tilted seat of spatial cylindrical joints.
"""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, Bool, Float

from ..contact.normal import ContactLaw

# Below this reaction (N) a joint carries no load worth seating: its journal keeps the
# configured eccentricity (any position inside the clearance is an equilibrium then).
UNLOADED_REACTION = 1e-9

# Passes of the quasi-static seating: each re-solves the ideal start with the journals where
# the previous pass's reactions put them; the reactions change with the pose by about the
# ratio of the clearance to the links' lengths, so the seat converges at that rate per pass.
SEATING_PASSES = 3

# Gauss–Newton steps of a static shape at most (the elastic chain is linear up to its
# geometric terms: a few steps), and the weight (s^2) of its acceleration rows against the
# constraint rows (m, rad): an acceleration of 1 m/s^2 counts as 1 mm.
STATIC_SHAPE_STEPS = 16
STATIC_SHAPE_SCALE = 1e-3


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


def solve_static(residual: Callable[[Float[Array, " n"], Any], Float[Array, " m"]], guess: Float[Array, " n"],
                 args: Any, solver: optx.AbstractLeastSquaresSolver, max_steps: int
                 ) -> tuple[Float[Array, " n"], Bool[Array, ""]]:
    """The unknowns ``y`` with ``residual(y, args) = 0`` (least squares), found by ``solver``
    from ``guess``, and whether it converged within ``max_steps``.

    The returned value is one more Gauss–Newton step taken from the solution held constant:
    its value is the solution's and its derivative with respect to ``args`` the implicit
    one, ``dy = -lstsq(dr/dy, dr/dargs dargs)`` (the residual vanishes there), in forward
    and reverse mode alike (the implicit function theorem; minimum-norm where ``dr/dy`` is
    rank deficient)."""
    solution = optx.least_squares(residual, solver, guess, args=args, max_steps=max_steps, throw=False)
    frozen = jax.lax.stop_gradient(solution.value)
    jacobian = jax.jacfwd(residual)(frozen, args)
    value = frozen - jnp.linalg.lstsq(jacobian, residual(frozen, args))[0]
    return value, solution.result == optx.RESULTS.successful
