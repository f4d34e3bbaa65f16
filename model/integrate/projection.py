"""Projection onto the ideal joints' constraints after every step.

Baumgarte stabilisation (``gamma = -c - 2 alpha dPhi/dt - beta^2 Phi``, Baumgarte 1972)
keeps the constraint violation bounded but not small: the integrator's local errors feed
it at every step and the feedback at ``alpha = beta = 5 1/s`` removes them only over some
0.2 s, so that a fast mechanism drifts off its joints by micrometres. After each step
:class:`ConstraintProjection` moves the step's end back onto the constraints (positions by
Gauss-Newton, then velocities by a linear projection, both of least kinetic-energy norm:
Bayo & Ledesma 1996, Blajer 2002; :meth:`AbstractMechanism.project`), so the violation
stays at the size of one step's error instead of accumulating over the run.

The projected end is what the controller judges and what the next step starts from, and
the derivative a solver carries into its next step (the first-same-as-last stage of
diffrax's explicit and ESDIRK Runge-Kutta solvers, the end field of the Rosenbrock-W
solver) is evaluated afresh there (:func:`~model.integrate.solver_state.with_carried_rate`; one more evaluation of the
vector field per step). Kept from the unprojected end, it would be the next step's first
stage at a state the step does not start from: in contact it is off by the contact
stiffness times the correction, an error both solutions of the embedded pair share, so
the error estimate does not see it: the impact memory drifted after its capture, and
solves of one point in refilling lanes and alone parted by more than the solver's
tolerance (docs/integration.md). The step's
error estimate and its dense output are those of the unprojected end (they differ by the
correction, of the order of one step's local error). Pure JAX: it works under ``vmap``,
in the refilling lanes and under forward and reverse mode alike.
"""

from __future__ import annotations

from typing import ClassVar

import diffrax
import equinox as eqx

from .solver_state import with_carried_rate
from .wrapped_solver import AbstractDelegatingSolver


class ConstraintProjection(AbstractDelegatingSolver):
    """Wraps a diffrax solver: each step's end state is projected onto the constraints of
    the mechanism (``args`` of the solve, :class:`~model.mechanics.interface.AbstractMechanism`,
    whose flat state the solve steps) at the step's end time, with ``iterations``
    Gauss-Newton steps on the positions (:meth:`AbstractMechanism.project`), and the
    derivative the solver carries into the next step is the field at the projected end
    (:func:`~model.integrate.solver_state.with_carried_rate`)."""

    solver: diffrax.AbstractSolver
    iterations: int = eqx.field(static=True, default=1)
    keeps_solver_state: ClassVar[bool] = True

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, solver_state, result = self.solver.step(
            terms, t0, t1, y0, args, solver_state, made_jump)
        y1 = args.project(t1, y1, self.iterations)
        if solver_state is not None:
            solver_state = with_carried_rate(self.solver, solver_state, self.solver.func(terms, t1, y1, args))
        return y1, y_error, dense_info, solver_state, result


__all__ = ["ConstraintProjection"]
