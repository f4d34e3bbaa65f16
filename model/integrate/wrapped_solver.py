"""A base for solvers that wrap a diffrax solver and change only some of its methods."""

from __future__ import annotations

import diffrax


class AbstractDelegatingSolver(diffrax.AbstractWrappedSolver):
    """Forwards every property and method of ``solver`` (``isinstance`` checks too, through
    ``diffrax.AbstractWrappedSolver``); a subclass overrides what it changes, usually
    ``init`` and ``step``, and declares the ``solver`` field."""

    solver: diffrax.AbstractSolver

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


__all__ = ["AbstractDelegatingSolver"]
