"""A base for solvers that wrap a diffrax solver and change only some of its methods."""

from __future__ import annotations

from typing import ClassVar

import diffrax


class AbstractDelegatingSolver(diffrax.AbstractWrappedSolver):
    """Forwards every property and method of ``solver`` (``isinstance`` checks too, through
    ``diffrax.AbstractWrappedSolver``); a subclass overrides what it changes, usually
    ``init`` and ``step``, and declares the ``solver`` field.

    ``keeps_solver_state``: True where the wrapper's solver state is the wrapped solver's,
    of the same layout (a wrapper that only changes how a step is taken or what it ends
    at), so that what the state carries can be read through the wrapped solver
    (:func:`state_solver`); False where the wrapper adds to the state."""

    solver: diffrax.AbstractSolver
    keeps_solver_state: ClassVar[bool] = False

    @property
    def term_structure(self):
        return self.solver.term_structure

    @property
    def interpolation_cls(self):  # pyright: ignore
        return self.solver.interpolation_cls

    @property
    def term_compatible_contr_kwargs(self):
        return self.solver.term_compatible_contr_kwargs

    @property
    def scan_kind(self):
        # diffrax's adjoints set the Runge-Kutta stage loop's kind for forward-mode autodiff
        # through ``eqx.tree_at(lambda s: s.scan_kind, ...)``: this reaches the inner solver
        return self.solver.scan_kind

    @property
    def root_finder(self):
        # diffeqsolve reads the implicit solvers' root finder for its tolerances
        return self.solver.root_finder

    def order(self, terms):
        return self.solver.order(terms)

    def strong_order(self, terms):
        return self.solver.strong_order(terms)

    def error_order(self, terms):
        return self.solver.error_order(terms)

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        return self.solver.step(terms, t0, t1, y0, args, solver_state, made_jump)

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


def state_solver(solver: diffrax.AbstractSolver) -> diffrax.AbstractSolver:
    """The solver whose layout ``solver``'s state has: ``solver`` unwrapped through the
    :class:`AbstractDelegatingSolver` wrappers that keep their wrapped solver's state
    (``keeps_solver_state``), e.g. the Tsit5 inside a constraint projection, whose carried
    first-same-as-last derivative :mod:`model.integrate.solver_state` can then read."""
    while isinstance(solver, AbstractDelegatingSolver) and solver.keeps_solver_state:
        solver = solver.solver
    return solver


__all__ = ["AbstractDelegatingSolver", "state_solver"]
