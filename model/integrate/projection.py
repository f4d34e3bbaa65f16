"""Projection onto the ideal joints' constraints after every step.

Baumgarte stabilisation (``gamma = -c - 2 alpha dPhi/dt - beta^2 Phi``, Baumgarte 1972)
keeps the constraint violation bounded but not small: the integrator's local errors feed
it at every step and the feedback at ``alpha = beta = 5 1/s`` removes them only over some
0.2 s, so that a fast mechanism drifts off its joints by micrometres. After each step
:class:`ConstraintProjection` moves the step's end back onto the constraints (positions by
Gauss-Newton, then velocities by a linear projection, both of least kinetic-energy norm:
Bayo & Ledesma 1996, Blajer 2002; :meth:`AbstractMechanism.project`), so the violation
stays at the size of one step's error instead of accumulating over the run.

The projected end is what the controller judges and what the next step starts from; the
step's error estimate, its dense output and the first-same-as-last derivative in the
solver state are those of the unprojected end (they differ by the correction, of the
order of one step's local error). Pure JAX: it works under ``vmap``, in the refilling
lanes and under forward and reverse mode alike.
"""

from __future__ import annotations

import diffrax
import equinox as eqx

from .wrapped_solver import AbstractDelegatingSolver


class ConstraintProjection(AbstractDelegatingSolver):
    """Wraps a diffrax solver: each step's end state is projected onto the constraints of
    the mechanism (``args`` of the solve, :class:`~model.mechanics.interface.AbstractMechanism`,
    whose flat state the solve steps) at the step's end time, with ``iterations``
    Gauss-Newton steps on the positions (:meth:`AbstractMechanism.project`)."""

    solver: diffrax.AbstractSolver
    iterations: int = eqx.field(static=True, default=1)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, solver_state, result = self.solver.step(
            terms, t0, t1, y0, args, solver_state, made_jump)
        return args.project(t1, y1, self.iterations), y_error, dense_info, solver_state, result


__all__ = ["ConstraintProjection"]
