"""Equations of motion in absolute coordinates and projection onto the joints (what the
two absolute engines share around them: :mod:`model.mechanics.absolute`).

``[M Phi_q^T; Phi_q 0] [qdd; lambda] = [Q; gamma]`` (Nikravesh 1988), solved
at every evaluation; clearance joints enter ``Q`` as contact forces only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, Bool, Float

from .constraints import acceleration_rhs, constraint_jacobian, constraints, driver_rows
from .forces import contact_forces, gravity_and_torques, structural_and_load_forces
from ..geometry.vectors import times_transpose
from .absolute import Evaluation, driver_torques
from .linalg import spd_solve

if TYPE_CHECKING:
    from .mechanism import Mechanism


class State(NamedTuple):
    """ODE state: coordinates (m, rad), velocities, one impact memory per clearance joint
    (m/s, see ``model/contact/memory.py``) and the work done by the drivers (J)."""

    q: Float[Array, " coords"]
    qd: Float[Array, " coords"]
    impact_memory: Float[Array, " joints"]
    driver_work: Float[Array, ""]


def mass_diagonal(mechanism: Mechanism) -> Float[Array, " coords"]:
    """Diagonal of the mass matrix ``[m, m, J]`` per body."""
    return jnp.stack([mechanism.masses, mechanism.masses, mechanism.inertias], axis=1).reshape(-1)


def evaluate(mechanism: Mechanism, t, state: State) -> Evaluation:
    """Accelerations, multipliers, contact state and driver torques at ``(t, state)``."""
    q, qd = state.q, state.qd
    generalised_contact, contact = contact_forces(mechanism, q, qd, state.impact_memory)
    applied = gravity_and_torques(mechanism, q) + generalised_contact + structural_and_load_forces(mechanism, q, qd)
    inverse_mass = 1.0 / mass_diagonal(mechanism)
    jacobian = constraint_jacobian(mechanism, q, t)
    if jacobian.shape[0]:
        # Schur complement of the augmented system: M is diagonal, so
        # (J M^-1 J^T) lambda = J M^-1 Q - gamma, then M qdd = Q - J^T lambda. The small SPD
        # system is solved by an unrolled Cholesky: batched LAPACK calls dominate the cost
        # of a vmapped sweep on CPU otherwise (docs/BENCHMARKS.md).
        # The two matrix-vector products stay `@`. Written as sums (as the Schur product is)
        # they made the reverse-mode gradients of a 10 ms run of the low-speed slider-crank
        # 13 % off (friction) and of the wrong sign (clearance) against forward mode and
        # finite differences (tests/model/integrate/test_gradients.py); most likely the
        # backward pass, which recomputes the steps, rounded them differently and flipped
        # accept/reject decisions.
        weighted = jacobian * inverse_mass
        schur = times_transpose(weighted, jacobian)
        multipliers = spd_solve(schur, weighted @ applied - acceleration_rhs(mechanism, q, qd, t))
        qdd = inverse_mass * (applied - jacobian.T @ multipliers)
        violation = jnp.max(jnp.abs(constraints(mechanism, q, t)))
    else:
        qdd, multipliers, violation = applied * inverse_mass, jnp.zeros((0,), q.dtype), jnp.zeros((), q.dtype)
    torques = driver_torques(mechanism.drivers, driver_rows(mechanism), multipliers)
    return Evaluation(qdd, multipliers, contact, torques, violation)


def constraint_correction(mechanism: Mechanism, q, t):
    """``r -> -M^-1 Phi_q^T (Phi_q M^-1 Phi_q^T)^-1 r``: the step of least kinetic-energy
    norm that removes a constraint residual ``r`` to first order (Bayo & Ledesma 1996;
    Blajer 2002), with the Jacobian taken at ``q``; ``None`` without constraint rows."""
    if not constraints(mechanism, q, t).size:
        return None
    inverse_mass = 1.0 / mass_diagonal(mechanism)
    jacobian = constraint_jacobian(mechanism, q, t)
    weighted = jacobian * inverse_mass
    schur = times_transpose(weighted, jacobian)
    return lambda residual: -(weighted.T @ spd_solve(schur, residual))


class Projection(NamedTuple):
    """Positions projected onto the constraints, and whether the projection converged."""

    positions: Float[Array, " coords"]
    converged: Bool[Array, ""]


def project_onto_constraints(mechanism: Mechanism, q, t=0.0, max_steps: int = 32) -> Projection:
    """Gauss–Newton projection of ``q`` onto ``Phi(q, t) = 0`` (``optimistix.GaussNewton``).

    Each step is the minimum-norm least-squares correction (QR of the constraint Jacobian),
    so a redundant or under-determined set moves the coordinates as little as it can. The
    iteration stops once a step changes ``q`` by less than ``1e-12`` (relative, absolute in
    m or rad); ``converged`` is False when it did not within ``max_steps`` steps.
    """
    t = jnp.asarray(t, q.dtype)
    if not constraints(mechanism, q, t).size:
        return Projection(q, jnp.asarray(True))
    solution = optx.least_squares(
        lambda q_, _: constraints(mechanism, q_, t), optx.GaussNewton(rtol=1e-12, atol=1e-12), q,
        max_steps=max_steps, throw=False,
    )
    residual = jnp.max(jnp.abs(constraints(mechanism, solution.value, t)))
    converged = (solution.result == optx.RESULTS.successful) & (residual < 1e-9)
    return Projection(solution.value, converged)


def project_positions(mechanism: Mechanism, q, t=0.0, iterations: int = 8) -> Float[Array, " coords"]:
    """Minimum-norm Gauss–Newton projection of ``q`` onto ``Phi(q, t) = 0``, as a fixed
    number of steps: the form :func:`initial_state` differentiates (forward and reverse
    mode alike). :func:`project_onto_constraints` runs the same iteration to convergence and
    says whether it got there; the pipelines check configured positions with it first.
    """
    t = jnp.asarray(t, q.dtype)

    def newton_step(q, _):
        residual = constraints(mechanism, q, t)
        correction = jnp.linalg.lstsq(constraint_jacobian(mechanism, q, t), -residual)[0]
        return q + correction, None

    return jax.lax.scan(newton_step, q, None, length=iterations)[0] if constraints(mechanism, q, t).size else q


def kinetic_energy(mechanism: Mechanism, qd) -> Float[Array, ""]:
    """``1/2 qd^T M qd`` (J)."""
    return 0.5 * jnp.sum(mass_diagonal(mechanism) * qd**2)

