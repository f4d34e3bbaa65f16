"""Rosenbrock-W solvers for diffrax: ROS34PW2, with the Jacobian kept over several steps.

A Rosenbrock method (:mod:`model.integrate.rosenbrock`) needs the exact Jacobian
``J = df/dy`` at every step's start; a *W-method* keeps its order with any matrix ``A`` in
its place (Steihaug & Wolfbrandt 1979; Hairer & Wanner, *Solving ODEs II*, 2nd ed., IV.7,
"W-methods"): the step solves, with ``W = I / (h gamma) - A``,

    W u_i = f(t0 + alpha_i h, y0 + sum_j a_ij u_j) + sum_j (c_ij / h) u_j + h gamma_i a_t,
    y1 = y0 + sum_i m_i u_i,        error = sum_i (m_i - m_hat_i) u_i,

``a_t`` standing in for ``df/dt``. The order conditions hold for every ``A``; ``A`` close
to ``J`` keeps the stability of the exact-Jacobian method for the stiff modes. So the
solver forms ``J`` (and ``df/dt``) by a batched JVP only every ``jacobian_reuse``
accepted steps and carries it in its solver state; each step refactors ``W`` for its own
``h`` (one LU, ``O(n^3 / 3)``, against the ``n + 1`` JVPs of a Jacobian) and runs ``s``
stages with one LU back-substitution each.

Under ``jax.vmap`` the rebuild is one real conditional for the whole batch (equinox's
``unvmap_any``): when any member's Jacobian is due, every member rebuilds (and restarts
its count), so a batch forms one Jacobian every ``jacobian_reuse`` steps, not one per
member and step.

Derivatives: ``A`` enters as a constant (``stop_gradient``). The derivative of the step
with ``A`` held is the same W-method applied to the variational equation (with
``blockdiag(A, A)`` as its matrix), hence of the same order, and it spares reverse and
forward mode the second derivatives of the field.

The field at the step's end, ``f(t1, y1)``, serves the cubic Hermite dense output and the
next step's first stage (first same as last): ``s`` field evaluations per step.

Method: ROS34PW2 (J. Rang & L. Angermann, "New Rosenbrock W-methods of order 3 for partial
differential algebraic equations of index 1", BIT 45 (2005) 761-787): 4 stages, order 3
as a W-method with an embedded order-2 solution, L-stable, stiffly accurate. The
coefficients are the published ``(alpha_ij, gamma_ij, b_i, b_hat_i)`` of formulation
(7.4) of Hairer & Wanner, converted here to the ``u`` formulation (7.25).
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
from diffrax import RESULTS
from jaxtyping import Array, Float, Int

from ._diffrax import unvmap_any
from .rosenbrock import AbstractRosenbrock, RosenbrockTableau, flat_field, linearisation, stage_increments, step_result

DEFAULT_JACOBIAN_REUSE = 10  # accepted steps per Jacobian


def tableau_from_gamma_form(alpha, gamma, b, b_hat, order: int) -> RosenbrockTableau:
    """The ``u``-formulation tableau of a Rosenbrock(-W) method published as
    ``(alpha_ij, gamma_ij, b_i, b_hat_i)`` (Hairer & Wanner 1996, IV.7, (7.4); a constant
    diagonal ``gamma_ii = gamma``): with ``Gamma^-1`` the inverse of the lower-triangular
    ``(gamma_ij)``, ``a = alpha Gamma^-1``, ``C = diag(1 / gamma) - Gamma^-1``,
    ``m = b Gamma^-1``, ``m_hat = b_hat Gamma^-1`` (their (7.25)); the stage times are the
    row sums of ``alpha`` and the time-derivative weights those of ``Gamma``."""
    alpha, gamma, b, b_hat = (np.asarray(x, dtype=float) for x in (alpha, gamma, b, b_hat))
    inverse = np.linalg.inv(gamma)
    a = alpha @ inverse
    c = np.diag(1.0 / np.diag(gamma)) - inverse
    stages = len(b)
    rows = lambda matrix: tuple(tuple(float(x) for x in matrix[i, :i]) for i in range(1, stages))  # noqa: E731
    return RosenbrockTableau(
        a=rows(a), c=rows(c), alpha=tuple(float(x) for x in alpha.sum(axis=1)),
        gamma=tuple(float(x) for x in gamma.sum(axis=1)), m=tuple(float(x) for x in b @ inverse),
        m_hat=tuple(float(x) for x in b_hat @ inverse), order=order,
    )


_ROS34PW2_GAMMA = 4.3586652150845900e-01
ROS34PW2 = tableau_from_gamma_form(
    alpha=[[0.0, 0.0, 0.0, 0.0],
           [8.7173304301691801e-01, 0.0, 0.0, 0.0],
           [8.4457060015369423e-01, -1.1299064236484185e-01, 0.0, 0.0],
           [0.0, 0.0, 1.0, 0.0]],
    gamma=[[_ROS34PW2_GAMMA, 0.0, 0.0, 0.0],
           [-8.7173304301691801e-01, _ROS34PW2_GAMMA, 0.0, 0.0],
           [-9.0338057013044082e-01, 5.4180672388095326e-02, _ROS34PW2_GAMMA, 0.0],
           [2.4212380706095346e-01, -1.2232505839045147e+00, 5.4526025533510214e-01, _ROS34PW2_GAMMA]],
    b=[2.4212380706095346e-01, -1.2232505839045147e+00, 1.5452602553351020e+00, _ROS34PW2_GAMMA],
    b_hat=[3.7810903145819369e-01, -9.6042292212423178e-02, 0.5, 2.1793326075422950e-01],
    order=3,
)


class WState(NamedTuple):
    """What a W-method carries from step to step (flat state of size ``n``)."""

    jacobian: Float[Array, "n n"]  # A: the Jacobian df/dy at the last rebuild
    time_derivative: Float[Array, " n"]  # df/dt at the last rebuild
    age: Int[Array, ""]  # accepted steps since the last rebuild
    field: Float[Array, " n"]  # f(t0, y0) of the next step (first same as last)


class AbstractRosenbrockW(AbstractRosenbrock):
    """A Rosenbrock-W solver for one ``diffrax.ODETerm``; subclasses set ``tableau``.

    ``jacobian_reuse``: accepted steps a Jacobian serves before it is formed again (1: every
    step, a Rosenbrock method with the W-method's coefficients). ``second_order_size``:
    ``n`` when the flat state is ``[q, dq/dt, ...]`` with ``n`` positions
    (``AbstractMechanism.second_order_size``), which halves the linear systems
    (:meth:`w_solver`); ``None``: a full LU. A rejected step leaves the
    solver state as it was (diffrax keeps a step's solver state only on acceptance), so
    the retry uses the same Jacobian at a smaller ``h``, where ``W`` tends to ``I / (h gamma)``.
    """

    jacobian_reuse: int = eqx.field(static=True, default=DEFAULT_JACOBIAN_REUSE)
    second_order_size: int | None = eqx.field(static=True, default=None)

    def init(self, terms, t0, t1, y0, args):
        super().init(terms, t0, t1, y0, args)
        flat_y0, unflatten = jax.flatten_util.ravel_pytree(y0)
        field = flat_field(terms, args, unflatten)
        jacobian, time_derivative = self.linearisation(field, t0, flat_y0)
        return WState(jacobian, time_derivative, jnp.zeros((), jnp.int32), field(t0, flat_y0))

    def linearisation(self, field, t0, flat_y0):
        """``(A, a_t)``: the Jacobian ``df/dy`` and ``df/dt`` at ``(t0, y0)`` by one batched
        JVP, held constant under differentiation. A subclass may return any other matrix
        (the W-method's order does not depend on it)."""
        _, jacobian, time_derivative = linearisation(field, *jax.lax.stop_gradient((t0, flat_y0)))
        return jax.lax.stop_gradient((jacobian, time_derivative))

    def w_solver(self, jacobian, shift):
        """``rhs -> W^-1 rhs`` for ``W = shift I - A`` (``shift = 1 / (h gamma)``, 1/s): one LU
        of ``W``, or with ``second_order_size = n`` (flat state ``[q, v, r]``,
        ``dq/dt = v``, so ``A``'s first ``n`` rows are ``[0, I, 0]``) one LU of the
        ``size - n`` system left once ``u_q = (b_q + u_v) / shift`` is eliminated:
        ``(shift I - A_22 - [A_21, 0] / shift) u_vr = b_vr + A_21 b_q / shift``, ``A_21`` and
        ``A_22`` the ``[v, r]`` rows of ``A`` against ``q`` and ``[v, r]``. That is ~8x
        fewer flops to factor: block Gaussian elimination, exact for this ``A`` (and for
        any ``A`` a W-method with ``A``'s first rows taken as ``[0, I, 0]``)."""
        size, n = jacobian.shape[0], self.second_order_size
        if n is None:
            factors = jax.scipy.linalg.lu_factor(shift * jnp.eye(size, dtype=jacobian.dtype) - jacobian)
            return lambda rhs: jax.scipy.linalg.lu_solve(factors, rhs)
        coupling = jacobian[n:, :n]  # d[v, r]/dq
        padded = jnp.concatenate([coupling, jnp.zeros((size - n, size - 2 * n), jacobian.dtype)], axis=1)
        reduced = shift * jnp.eye(size - n, dtype=jacobian.dtype) - jacobian[n:, n:] - padded / shift
        factors = jax.scipy.linalg.lu_factor(reduced)

        def solve(rhs):
            rhs_q = rhs[:n]
            u_vr = jax.scipy.linalg.lu_solve(factors, rhs[n:] + coupling @ rhs_q / shift)
            return jnp.concatenate([(rhs_q + u_vr[:n]) / shift, u_vr])

        return solve

    def kept_or_formed(self, field, t0, flat_y0, solver_state: WState, jumped):
        """``(rebuilt, A, a_t)``: the carried linearisation, or a new one at ``(t0, y0)`` once
        it has served ``jacobian_reuse`` accepted steps or the field jumped. One batch-wide
        decision under ``vmap``: every member rebuilds when any is due."""
        rebuild = unvmap_any((solver_state.age >= self.jacobian_reuse) | jumped)
        jacobian, time_derivative = jax.lax.cond(
            rebuild, lambda: self.linearisation(field, t0, flat_y0),
            lambda: (solver_state.jacobian, solver_state.time_derivative))
        return rebuild, jacobian, time_derivative

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        tableau = self.tableau
        flat_y0, unflatten = jax.flatten_util.ravel_pytree(y0)
        dtype = flat_y0.dtype
        h = jnp.asarray(t1 - t0, dtype)
        field = flat_field(terms, args, unflatten)
        # after a jump of the field (diffrax's ``made_jump``) the carried f(t0, y0) is stale
        jumped = jnp.asarray(made_jump)
        f0 = jax.lax.cond(unvmap_any(jumped), lambda: jnp.where(jumped, field(t0, flat_y0), solver_state.field),
                          lambda: solver_state.field)
        rebuild, jacobian, time_derivative = self.kept_or_formed(field, t0, flat_y0, solver_state, jumped)
        increments = stage_increments(tableau, field, t0, h, flat_y0, f0, time_derivative,
                                      self.w_solver(jacobian, 1.0 / (h * tableau.gamma[0])))
        y1, error, dense_info, f1 = step_result(tableau, field, t1, y0, flat_y0, unflatten, h, increments, f0)
        age = jnp.where(rebuild, 1, solver_state.age + 1).astype(solver_state.age.dtype)
        state = WState(jacobian, time_derivative, age, f1)
        return y1, error, dense_info, state, RESULTS.successful


class Ros34PW2(AbstractRosenbrockW):
    """ROS34PW2: 4 stages, order 3 as a W-method with an embedded order-2 estimate,
    L-stable, stiffly accurate (Rang & Angermann 2005, BIT 45:761)."""

    tableau: ClassVar[RosenbrockTableau] = ROS34PW2


__all__ = ["AbstractRosenbrockW", "DEFAULT_JACOBIAN_REUSE", "ROS34PW2", "Ros34PW2", "WState",
           "tableau_from_gamma_form"]
