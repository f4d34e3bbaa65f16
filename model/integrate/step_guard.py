"""Steps that leave the vector field's domain: the controller rejects them, and reverse mode
gives them no gradient.

A step can leave the vector field's domain (a first step from diffrax's initial-step
heuristic straight through several impacts, at a tight tolerance and with no ``dtmax``,
turns the state into NaN). diffrax's ``PIDController`` shrinks the step by ``factormin``
when the error is ``inf`` (its signal for a failed implicit step) but turns a NaN error,
or an ``inf`` in the candidate state, into a NaN step size, after which every attempt is
a rejected NaN step until ``max_steps``: measured on the four-bar at rtol 1e-10 over its
10 ms window, 2,000,000 rejected steps and 5 minutes for nothing. :class:`RejectNonFinite`
turns such a step into a plain rejection, retried at a fifth of its size.

A rejected step does not change the solution, but reverse mode still differentiates it:
its cotangents are zero, and zero times the ``inf`` partial derivatives of an overflowed
stage is NaN, which then reaches every gradient (measured: the spatial slider-crank over
12 ms, where forward mode was finite). :class:`NonFiniteStepsCarryNoGradient` gives such a
step zero cotangents; forward mode needs nothing, because its tangent of the rejection's
``where`` never reads the rejected branch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp

from .wrapped_solver import AbstractDelegatingSolver


class AbstractWrappedController(diffrax.AbstractAdaptiveStepSizeController):
    """An adaptive controller that post-processes an inner one's decisions (modelled on
    ``diffrax.ClipStepSizeController``); tolerances, norm and time direction are the
    inner controller's. Subclasses declare the ``controller`` field."""

    controller: eqx.AbstractVar[diffrax.AbstractAdaptiveStepSizeController]

    @property
    def rtol(self):
        return self.controller.rtol

    @property
    def atol(self):
        return self.controller.atol

    @property
    def norm(self) -> Callable:  # pyright: ignore[reportIncompatibleMethodOverride]
        return self.controller.norm

    def wrap(self, direction):
        return eqx.tree_at(lambda s: s.controller, self, self.controller.wrap(direction))

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        return self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        return self.controller.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state
        )


class RejectNonFinite(AbstractWrappedController):
    """Rejects a step whose candidate state or error estimate is not finite, with the
    inner controller's response to a failed step: the next attempt is ``factormin`` times
    shorter.

    In every component where the candidate or the error is not finite, the inner
    controller sees an ``inf`` error and, for its error scale, the step's start instead of
    the candidate: diffrax scales the error by ``atol + rtol max(|y0|, |y1|)``, which an
    ``inf`` in the candidate turns into ``inf / inf = NaN``. One ``inf`` component makes
    the error norm ``inf``, so the step is rejected as a whole.
    """

    controller: diffrax.AbstractAdaptiveStepSizeController

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        # elementwise, no reduction: one inf component makes the error norm inf, and the
        # selects fuse into one kernel on the hot path of every step
        bad = jax.tree_util.tree_map(lambda y1, error: ~(jnp.isfinite(y1) & jnp.isfinite(error)),
                                     y1_candidate, y_error)
        y_error = jax.tree_util.tree_map(lambda wrong, error: jnp.where(wrong, jnp.inf, error), bad, y_error)
        y1_candidate = jax.tree_util.tree_map(lambda wrong, y1, start: jnp.where(wrong, start, y1),
                                              bad, y1_candidate, y0)
        return super().adapt_step_size(t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state)


def _is_finite(tree) -> jax.Array:
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree_util.tree_leaves(tree)]))


@eqx.filter_custom_vjp
def _step(differentiable, made_jump, solver):
    terms, t0, t1, y0, args, solver_state = differentiable
    return solver.step(terms, t0, t1, y0, args, solver_state, made_jump)


@_step.def_fwd
def _step_fwd(perturbed, differentiable, made_jump, solver):
    outputs = _step.fn(differentiable, made_jump, solver)
    y1, y_error = outputs[:2]
    # the criterion of RejectNonFinite, so that exactly the steps it rejects lose their gradient
    return outputs, _is_finite((y1, y_error))


@_step.def_bwd
def _step_bwd(finite, cotangents, perturbed, differentiable, made_jump, solver):
    # the step is recomputed here: a pullback kept from the forward pass is not a residual
    # that equinox's checkpointed while loop can carry
    varying, fixed = eqx.partition(differentiable, perturbed)

    def step(varying):
        return eqx.filter(_step.fn(eqx.combine(varying, fixed), made_jump, solver), eqx.is_inexact_array)

    outputs, pullback = jax.vjp(step, varying)
    not_array = lambda leaf: leaf is None  # noqa: E731
    output_leaves, structure = jax.tree_util.tree_flatten(outputs, is_leaf=not_array)
    cotangent_leaves = jax.tree_util.tree_leaves(eqx.filter(cotangents, eqx.is_inexact_array), is_leaf=not_array)
    cotangents = jax.tree_util.tree_unflatten(structure, [
        None if output is None else jnp.zeros_like(output) if cotangent is None else cotangent
        for output, cotangent in zip(output_leaves, cotangent_leaves)])
    (gradients,) = pullback(cotangents)
    return jax.tree_util.tree_map(lambda gradient: jnp.where(finite, gradient, 0.0), gradients)


class NonFiniteStepsCarryNoGradient(AbstractDelegatingSolver):
    """Wraps a diffrax solver for reverse mode: a step whose candidate state or error
    estimate is not finite (which :class:`RejectNonFinite` rejects) passes zero cotangents
    back to its inputs, instead of the NaN that zero times its ``inf`` partial derivatives
    makes. The forward pass is the inner solver's. Not for forward mode (a ``custom_vjp``
    has no tangents), which does not need it."""

    solver: diffrax.AbstractSolver
    keeps_solver_state: ClassVar[bool] = True

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        return _step((terms, t0, t1, y0, args, solver_state), made_jump, self.solver)


__all__ = ["AbstractWrappedController", "NonFiniteStepsCarryNoGradient", "RejectNonFinite"]
