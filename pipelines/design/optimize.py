"""Bound-constrained optimisation with inequality constraints: an augmented Lagrangian
(method of multipliers) with an optax inner optimiser and projection onto the bounds.

Problem, in normalised design coordinates ``z`` in the box ``[0, 1]^d``::

    minimise f(z)   subject to   g_i(z) <= 0,  i = 1..m

The Powell–Hestenes–Rockafellar augmented Lagrangian for inequalities (Nocedal & Wright,
*Numerical Optimization*, 2nd ed., §17.4, eq. 17.65; Bertsekas 1982)::

    L(z; lambda, rho) = f(z) + 1/(2 rho) sum_i [max(0, lambda_i + rho g_i(z))^2 - lambda_i^2]

is minimised approximately in ``z`` by ``inner_steps`` projected Adam steps
(``optax.adam``, then clipping to the box), after which the multipliers are updated
``lambda_i <- max(0, lambda_i + rho g_i)`` and the penalty ``rho`` grows when the
violation did not shrink enough. The multipliers converge to the KKT multipliers, so the
penalty need not go to infinity (unlike a pure penalty method).

The constraints arrive with their Jacobian (``constraints(z) -> (g, dg/dz, aux)``): for
the mechanism they come from forward-mode differentiation of a batched simulation, the
expensive part, evaluated once per iteration. The objective is cheap and differentiated
here with ``jax.grad``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax


@dataclass(frozen=True)
class AugmentedLagrangianSettings:
    """Settings of :func:`augmented_lagrangian` (all dimensionless, in ``z`` units)."""

    iterations: int = 12  # evaluations of the constraints (each one projected Adam step)
    learning_rate: float = 0.08  # Adam step size at the start (box [0, 1])
    final_learning_rate_share: float = 0.2  # cosine decay down to this share of it
    momentum: float = 0.5  # Adam's b1; below optax's 0.9 so that it overshoots less
    inner_steps: int = 2  # Adam steps between multiplier updates
    penalty: float = 10.0  # initial rho
    penalty_growth: float = 2.0
    penalty_max: float = 1e3
    feasibility_tolerance: float = 0.0  # g_i <= this counts as satisfied


@dataclass
class Iterate:
    """One evaluated point of the optimisation history."""

    iteration: int
    z: np.ndarray
    objective: float
    constraints: np.ndarray
    multipliers: np.ndarray
    penalty: float
    aux: Any = None
    jacobian: np.ndarray | None = None  # dg/dz [m, d] at z (None where it was not finite)

    @property
    def max_violation(self) -> float:
        return float(np.max(self.constraints, initial=-np.inf))

    def feasible(self, tolerance: float = 0.0) -> bool:
        return bool(np.all(self.constraints <= tolerance))


@dataclass
class AugmentedLagrangianResult:
    """History of evaluated points; ``best`` is the feasible one of lowest objective, or the
    least infeasible one if none is feasible."""

    history: list[Iterate] = field(default_factory=list)
    best: Iterate | None = None
    feasible: bool = False


def augmented_lagrangian_value(objective_value, constraint_values, multipliers, penalty):
    """``L`` for given ``f``, ``g``, ``lambda``, ``rho`` (PHR form for inequalities)."""
    shifted = jnp.maximum(0.0, multipliers + penalty * constraint_values)
    return objective_value + jnp.sum(shifted**2 - multipliers**2) / (2.0 * penalty)


def _pick_best(history: list[Iterate], tolerance: float) -> tuple[Iterate, bool]:
    feasible = [it for it in history if it.feasible(tolerance) and np.isfinite(it.objective)]
    if feasible:
        return min(feasible, key=lambda it: it.objective), True
    finite = [it for it in history if np.all(np.isfinite(it.constraints))] or history
    return min(finite, key=lambda it: it.max_violation), False


def augmented_lagrangian(
    objective: Callable[[jax.Array], jax.Array],
    constraints: Callable[[jax.Array], tuple[Any, Any, Any]],
    z0,
    settings: AugmentedLagrangianSettings = AugmentedLagrangianSettings(),
    on_iterate: Callable[[Iterate], None] | None = None,
) -> AugmentedLagrangianResult:
    """Minimise ``objective(z)`` subject to ``constraints(z)[0] <= 0`` over ``z`` in [0, 1]^d.

    ``objective``: JAX-differentiable scalar function. ``constraints``: returns ``(g [m],
    jacobian [m, d], aux)``; ``aux`` is stored in the history (e.g. the raw metrics). A
    point whose constraints are not finite (a failed simulation) is treated as infeasible:
    its gradient step is skipped and ``z`` moves halfway back to the last good point (or,
    before any, to the centre of the box).
    """
    objective_and_grad = jax.jit(jax.value_and_grad(objective))
    schedule = optax.cosine_decay_schedule(
        settings.learning_rate, max(settings.iterations, 1), alpha=settings.final_learning_rate_share
    )
    optimiser = optax.adam(schedule, b1=settings.momentum)
    z = jnp.clip(jnp.asarray(z0, dtype=jnp.float64), 0.0, 1.0)
    state = optimiser.init(z)
    multipliers, penalty = None, float(settings.penalty)
    last_good, last_violation = None, np.inf
    result = AugmentedLagrangianResult()

    for iteration in range(settings.iterations):
        g, jacobian, aux = constraints(z)
        g, jacobian = np.asarray(g, dtype=float), np.asarray(jacobian, dtype=float).reshape(len(np.atleast_1d(g)), -1)
        if multipliers is None:
            multipliers = np.zeros_like(g)
        f, df = objective_and_grad(z)
        record = Iterate(iteration, np.asarray(z), float(f), g, multipliers.copy(), penalty, aux,
                         jacobian if np.all(np.isfinite(jacobian)) else None)
        result.history.append(record)
        if on_iterate is not None:
            on_iterate(record)

        if not (np.all(np.isfinite(g)) and np.all(np.isfinite(jacobian))):
            # failed evaluation: step back halfway towards the last good point (or, before
            # any, towards the centre of the box)
            record.constraints = np.full_like(g, np.inf)
            anchor = np.full(np.shape(z), 0.5) if last_good is None else last_good
            z = jnp.asarray(0.5 * (np.asarray(z) + anchor))
            continue
        last_good = np.asarray(z)

        active = np.maximum(0.0, multipliers + penalty * g)
        gradient = np.asarray(df) + jacobian.T @ active
        updates, state = optimiser.update(jnp.asarray(gradient), state, z)
        z = jnp.clip(optax.apply_updates(z, updates), 0.0, 1.0)

        if (iteration + 1) % settings.inner_steps == 0:
            multipliers = np.maximum(0.0, multipliers + penalty * g)
            violation = float(np.max(np.maximum(g, 0.0), initial=0.0))
            if violation > 0.5 * last_violation:
                penalty = min(penalty * settings.penalty_growth, settings.penalty_max)
            last_violation = violation

    result.best, result.feasible = _pick_best(result.history, settings.feasibility_tolerance)
    return result
