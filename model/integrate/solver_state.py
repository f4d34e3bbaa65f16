"""The derivative a diffrax solver carries from one step into the next.

Explicit and ESDIRK Runge-Kutta solvers keep ``(first_step, f1)``, the first-same-as-last
derivative at the step's end (a tuple of parts for an IMEX solver, one per term); the
Rosenbrock-W solver of :mod:`model.integrate.rosenbrock_w` keeps its end field as
``state.field``; the Rodas* solvers keep nothing. These two functions are the only code that
knows those layouts: the peak tracking reads the carried derivative
(:func:`model.integrate.peaks.end_rate`) and the constraint projection replaces it by the
field at the projected end (:class:`model.integrate.projection.ConstraintProjection`).
"""

from __future__ import annotations

import diffrax
import equinox as eqx
from jaxtyping import PyTree


def _keeps_fsal(solver: diffrax.AbstractSolver, solver_state: PyTree) -> bool:
    return isinstance(solver, diffrax.AbstractRungeKutta) and isinstance(solver_state, tuple) and len(solver_state) == 2


def carried_rate(solver: diffrax.AbstractSolver, solver_state: PyTree) -> PyTree | None:
    """The state derivative at the end of the last step that ``solver_state`` carries
    (summed over an IMEX solver's parts), or ``None`` where the solver keeps none."""
    if _keeps_fsal(solver, solver_state):
        rate = solver_state[1]
        return sum(rate[1:], start=rate[0]) if isinstance(rate, tuple) else rate
    if hasattr(solver_state, "field"):
        return solver_state.field
    return None


def with_carried_rate(solver: diffrax.AbstractSolver, solver_state: PyTree, rate: PyTree) -> PyTree:
    """``solver_state`` carrying ``rate`` (``solver.func`` at the next step's start, in the
    solver's own form: a tuple of parts for an IMEX solver) instead of the derivative it
    holds; a state that carries none is returned as it is."""
    if _keeps_fsal(solver, solver_state):
        first_step, _ = solver_state
        return first_step, rate
    if hasattr(solver_state, "field"):
        return eqx.tree_at(lambda state: state.field, solver_state, rate)
    return solver_state


__all__ = ["carried_rate", "with_carried_rate"]
