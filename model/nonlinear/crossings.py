"""Poincaré sections on crossing a hyperplane of the state, located inside the solve.

A hyperplane section is the set of states where a scalar quantity of the state ``g(y)``
(a body's coordinate or velocity, a clearance joint's eccentricity component) crosses a
level ``value`` in a given direction (``up``: ``g - value`` from negative to
non-negative, ``down``: from positive to non-positive, ``both``). The crossings are found
from the solver's accepted steps, not from an output grid: the solver wrapper
:class:`CrossingTracking` evaluates ``g - value`` at the end of every accepted step, and on
a step where it changes sign in the wanted direction locates the root on the step's dense
interpolant (diffrax's ``interpolation_cls``, 4th order for Tsit5) by the Illinois variant
of regula falsi, a bracketing secant method of order about 1.44 (Dowell & Jarratt 1971,
BIT 11), ``ROOT_ITERATIONS`` evaluations. This is how event location is done on a dense
output in general (Hairer, Norsett & Wanner 1993, *Solving ODEs I*, sec. II.6; diffrax's
``Event`` does the same with an optimistix root finder on the interpolant).

The crossings go into a fixed-capacity buffer with a count (:class:`Crossings`), so that
``jit`` and ``vmap`` go through; a crossing counts from the time ``start`` on (the transient
is discarded), and those beyond the capacity are counted but not stored. One step sees one
crossing: a quantity that crosses the level and comes back within one accepted step is
missed (the steps of a contact mechanism are far shorter than its motions' periods).
"""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Int, PyTree

from ..integrate._diffrax import unvmap_any
from ..integrate.wrapped_solver import AbstractDelegatingSolver

DIRECTIONS = {"up": 1, "down": -1, "both": 0}
ROOT_ITERATIONS = 24


class Hyperplane(eqx.Module):
    """The section ``quantity(args, y) = value`` crossed in ``direction`` (``DIRECTIONS``:
    +1 up, -1 down, 0 both); ``capacity``: the most crossings a run stores. ``quantity``
    is any pure function of the solve's ``args`` and state returning a scalar (in the
    units of ``value``)."""

    quantity: Callable[[PyTree, Float[Array, " n"]], Float[Array, ""]]
    value: Float[Array, ""]
    direction: int = eqx.field(static=True)
    capacity: int = eqx.field(static=True)

    def level(self, args: PyTree, y: Float[Array, " n"]) -> Float[Array, ""]:
        """``quantity - value`` at the state ``y``."""
        return self.quantity(args, y) - self.value


class Crossings(eqx.Module):
    """The crossings found so far: ``times`` (s), ``states`` and ``directions`` (+1 up,
    -1 down) of the first ``min(count, capacity)`` slots; ``count``: every crossing at
    ``t >= start``, stored or not; ``level``: ``quantity - value`` at the end of the last
    accepted step."""

    times: Float[Array, " capacity"]
    states: Float[Array, "capacity n"]
    directions: Float[Array, " capacity"]
    count: Int[Array, ""]
    start: Float[Array, ""]
    level: Float[Array, ""]

    @property
    def stored(self) -> Int[Array, ""]:
        """How many slots hold a crossing."""
        return jnp.minimum(self.count, self.times.shape[0])


def empty_crossings(hyperplane: Hyperplane, size: int, start: ArrayLike) -> Crossings:
    """An empty buffer for states of ``size`` coordinates, counting from ``start`` (s)."""
    capacity = hyperplane.capacity
    return Crossings(jnp.full(capacity, jnp.inf), jnp.zeros((capacity, size)), jnp.zeros(capacity),
                     jnp.zeros((), jnp.int64), jnp.asarray(start, jnp.float64), jnp.asarray(jnp.nan))


def _illinois(function: Callable, a, b, fa, fb, iterations: int):
    """The root of ``function`` bracketed by ``[a, b]`` (``fa``, ``fb`` of opposite signs)
    by the Illinois method (Dowell & Jarratt 1971): regula falsi whose retained end's value
    is halved whenever the same end is kept twice; ``iterations`` evaluations."""

    def guarded(numerator, denominator):
        nonzero = denominator != 0.0
        return jnp.where(nonzero, numerator / jnp.where(nonzero, denominator, 1.0), 0.0)

    def body(_, bracket):
        a, b, fa, fb = bracket
        c = b - guarded(fb * (b - a), fb - fa)
        fc = function(c)
        switched = fc * fb < 0.0
        a, fa = jnp.where(switched, b, a), jnp.where(switched, fb, 0.5 * fa)
        return a, c, fa, fc

    return jax.lax.fori_loop(0, iterations, body, (a, b, fa, fb))[1]


def record_crossing(crossings: Crossings, hyperplane: Hyperplane, args: PyTree, interpolation, t0, t1,
                    level_at_end: Float[Array, ""], part: Callable = lambda y: y) -> Crossings:
    """``crossings`` after the accepted step ``[t0, t1]`` whose dense output is
    ``interpolation`` (``evaluate(t)``) and at whose end ``quantity - value`` is
    ``level_at_end``; ``part`` picks the state the quantity reads from the solve's state."""
    before = crossings.level
    up = (before < 0.0) & (level_at_end >= 0.0)
    down = (before > 0.0) & (level_at_end <= 0.0)
    wanted = {1: up, -1: down, 0: up | down}[hyperplane.direction]
    level = lambda t: hyperplane.level(args, part(interpolation.evaluate(t)))  # noqa: E731

    def locate(_):
        time = _illinois(level, t0, t1, before, level_at_end, ROOT_ITERATIONS)
        return time, part(interpolation.evaluate(time))

    # a crossing happens on few steps of many: the root search runs only on a step where
    # some lane has one (``unvmap_any`` keeps the branch a real conditional under ``vmap``)
    time, state = jax.lax.cond(unvmap_any(wanted), locate,
                               lambda _: (jnp.asarray(t1, crossings.times.dtype), jnp.zeros_like(crossings.states[0])),
                               None)
    kept = wanted & (time >= crossings.start)
    slot = jnp.where(kept, crossings.count, hyperplane.capacity)  # out of range: dropped
    return Crossings(
        crossings.times.at[slot].set(time, mode="drop"),
        crossings.states.at[slot].set(state, mode="drop"),
        crossings.directions.at[slot].set(jnp.where(up, 1.0, -1.0), mode="drop"),
        crossings.count + kept.astype(crossings.count.dtype),
        crossings.start,
        level_at_end,
    )


class CrossingTracking(AbstractDelegatingSolver):
    """Wraps a diffrax solver and carries :class:`Crossings` in its solver state: diffrax
    keeps a step's solver state only when the step is accepted, so the crossings are those
    of the accepted steps. ``crossings``: the buffer the solve starts from (a previous
    solve's, to continue one section over several solves); ``part``: the index of the
    tuple state the quantity reads (``None``: the state itself). Read the result with
    ``SaveAt(solver_state=True)`` and :meth:`crossings_of`."""

    solver: diffrax.AbstractSolver
    hyperplane: Hyperplane
    crossings: Crossings
    part: int | None = eqx.field(static=True, default=None)

    def _part(self, y):
        return y if self.part is None else y[self.part]

    def init(self, terms, t0, t1, y0, args):
        start = self.hyperplane.level(args, self._part(y0))
        return self.solver.init(terms, t0, t1, y0, args), eqx.tree_at(lambda c: c.level, self.crossings, start)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        inner_state, crossings = solver_state
        y1, y_error, dense_info, inner_state, result = self.solver.step(
            terms, t0, t1, y0, args, inner_state, made_jump)
        interpolation = self.solver.interpolation_cls(t0=t0, t1=t1, **dense_info)
        crossings = record_crossing(crossings, self.hyperplane, args, interpolation, t0, t1,
                                    self.hyperplane.level(args, self._part(y1)), self._part)
        return y1, y_error, dense_info, (inner_state, crossings), result

    @staticmethod
    def crossings_of(solver_state) -> Crossings:
        """The :class:`Crossings` in a final solver state of this solver."""
        return solver_state[1]


def crossing_period(points: Float[Array, "capacity d"], times: Float[Array, " capacity"], count: Int[Array, ""],
                    forcing_period: ArrayLike, max_period: int, tolerance: ArrayLike
                    ) -> tuple[Int[Array, ""], Int[Array, ""]]:
    """``(period, distinct)`` of a sequence of crossings: ``distinct`` is the smallest lag
    ``q`` with every stored crossing within ``tolerance`` (max norm) of the one ``q``
    crossings later, over at least ``q`` pairs (so the sequence repeats at least twice),
    i.e. the number of distinct crossing points; ``period`` is the time of those ``q``
    crossings in forcing periods, ``(t_q - t_0) / T`` rounded, when it is between 1 and
    ``max_period``. Both 0 when none is found. A periodic orbit of period ``p`` repeats its
    crossings after exactly ``p T``, at the same forcing phase: the points compared are
    the caller's dimensionless coordinates and the phase ``(cos, sin)(2 pi t / T)``."""
    capacity = points.shape[0]
    phase = 2.0 * jnp.pi * times / forcing_period
    points = jnp.concatenate([points, jnp.cos(phase)[:, None], jnp.sin(phase)[:, None]], axis=1)
    stored = jnp.minimum(count, capacity)
    lags = jnp.arange(1, capacity // 2 + 1)

    def repeats(lag):
        later = jnp.roll(points, -lag, axis=0)
        index = jnp.arange(capacity)
        distance = jnp.max(jnp.abs(later - points), axis=-1)
        return jnp.all((distance <= tolerance) | (index + lag >= stored)) & (2 * lag <= stored)

    found = jax.vmap(repeats)(lags)
    distinct = jnp.where(jnp.any(found), lags[jnp.argmax(found)], 0)
    elapsed = times[jnp.clip(distinct, 0, capacity - 1)] - times[0]
    period = jnp.round(elapsed / forcing_period).astype(jnp.int64)
    periodic = (distinct > 0) & (period >= 1) & (period <= max_period)
    return jnp.where(periodic, period, 0), distinct


__all__ = ["DIRECTIONS", "CrossingTracking", "Crossings", "Hyperplane", "crossing_period", "empty_crossings",
           "record_crossing"]
