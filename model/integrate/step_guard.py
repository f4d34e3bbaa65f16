"""Step-size controller wrappers: a shared delegating base, and the rejection of a step
that left the vector field's domain.

A step can leave the vector field's domain (a first step from diffrax's initial-step
heuristic straight through several impacts, at a tight tolerance and with no ``dtmax``,
turns the state into NaN). diffrax's ``PIDController`` shrinks the step by ``factormin``
when the error is ``inf`` (its signal for a failed implicit step) but turns a NaN error,
or an ``inf`` in the candidate state, into a NaN step size, after which every attempt is
a rejected NaN step until ``max_steps``: measured on the four-bar at rtol 1e-10 over its
10 ms window, 2,000,000 rejected steps and 5 minutes for nothing. :class:`RejectNonFinite`
turns such a step into a plain rejection, retried at a fifth of its size.
"""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp


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


__all__ = ["AbstractWrappedController", "RejectNonFinite"]
