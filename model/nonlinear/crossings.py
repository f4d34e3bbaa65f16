"""Poincaré sections on crossing a hyperplane of the state, located inside the solve.

A hyperplane section is the set of states where a scalar quantity of the state ``g(y)``
(a body's coordinate or velocity, a clearance joint's eccentricity component) crosses a
level ``value`` in a given direction (``up``: ``g - value`` from negative to
non-negative, ``down``: from positive to non-positive, ``both``). The crossings are found
from the solver's accepted steps, not from an output grid: the solver wrapper
:class:`CrossingTracking` evaluates ``g - value`` and its rate ``d(g - value)/dt`` at the end
of every accepted step (the rate along the step's dense interpolant, diffrax's
``interpolation_cls``, 4th order for Tsit5, by one ``jax.jvp`` of the quantity). On a
step where ``g - value`` changes sign in the wanted direction the root is located on the
interpolant by the Illinois variant of regula falsi, a bracketing secant method of order
about 1.44 (Dowell & Jarratt 1971, BIT 11), ``ROOT_ITERATIONS`` evaluations. On a step
whose two ends lie on the same side but whose rate turns towards the plane and back (its
sign changes between the ends; the start's rate is the previous step's end rate, so a
run's first step looks for a sign change only), the turning point is located by the same
iteration on the rate; where ``g - value`` has crossed the level there, the quantity went
out and back within the step, and both crossings are located, one on each side of the
turning point. This is how event location is done on a dense output in general (Hairer,
Norsett & Wanner 1993, *Solving ODEs I*, sec. II.6; diffrax's ``Event`` root-finds on the
interpolant too, from the end-point signs only).

The crossings go into a fixed-capacity buffer with a count (:class:`Crossings`), so that
``jit`` and ``vmap`` go through; a crossing counts from the time ``start`` on (the transient
is discarded), and those beyond the capacity are counted but not stored. One step sees at
most two crossings: an end-point sign change, or one excursion out and back around one
turning point of the quantity; a step over which the quantity turns more than once (two
excursions, or a crossing plus an excursion) keeps only what its end points and its
end-point rates reveal.
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
    accepted step; ``rate``: its time derivative there, on that step's dense output (NaN
    before the first step)."""

    times: Float[Array, " capacity"]
    states: Float[Array, "capacity n"]
    directions: Float[Array, " capacity"]
    count: Int[Array, ""]
    start: Float[Array, ""]
    level: Float[Array, ""]
    rate: Float[Array, ""]

    @property
    def stored(self) -> Int[Array, ""]:
        """How many slots hold a crossing."""
        return jnp.minimum(self.count, self.times.shape[0])


def empty_crossings(hyperplane: Hyperplane, size: int, start: ArrayLike) -> Crossings:
    """An empty buffer for states of ``size`` coordinates, counting from ``start`` (s)."""
    capacity = hyperplane.capacity
    return Crossings(jnp.full(capacity, jnp.inf), jnp.zeros((capacity, size)), jnp.zeros(capacity),
                     jnp.zeros((), jnp.int64), jnp.asarray(start, jnp.float64), jnp.asarray(jnp.nan),
                     jnp.asarray(jnp.nan))


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


def _root(function: Callable, a, b, fa, fb):
    """The root of ``function`` bracketed by ``[a, b]`` by :func:`_illinois`, finished by
    one Newton step whose slope is held constant: the root's value is the iteration's
    (moved by the rounding of ``function`` there), its derivatives those of the implicit
    function theorem, ``d t = -(d function) / function'`` (the iteration's own derivative
    is not differentiated: once converged its stale, halved end values divide by
    near-zero differences)."""
    stop = jax.lax.stop_gradient
    root = _illinois(lambda t: stop(function(t)), stop(a), stop(b), stop(fa), stop(fb), ROOT_ITERATIONS)
    value, slope = jax.jvp(function, (root,), (jnp.ones_like(root),))
    slope = stop(slope)
    return root - jnp.where(slope != 0.0, value / jnp.where(slope != 0.0, slope, 1.0), 0.0)


def record_crossing(crossings: Crossings, hyperplane: Hyperplane, args: PyTree, interpolation, t0, t1,
                    y1: PyTree, part: Callable = lambda y: y) -> Crossings:
    """``crossings`` after the accepted step ``[t0, t1]`` whose dense output is
    ``interpolation`` (``evaluate(t)``) and whose end state is ``y1``; ``part`` picks the
    state the quantity reads from the solve's state.
    A sign change between the ends is one crossing; ends on the same side with a turning
    point between them at which the level is crossed are two (out and back)."""
    t0 = jnp.asarray(t0, crossings.times.dtype)
    t1 = jnp.asarray(t1, crossings.times.dtype)
    before = crossings.level
    level = lambda t: hyperplane.level(args, part(interpolation.evaluate(t)))  # noqa: E731
    rate = lambda t: jax.jvp(level, (t,), (jnp.ones_like(t),))[1]  # noqa: E731
    # the level at the end state and its rate along the dense output's direction there, in
    # one pass of the quantity (the interpolant's own derivative is a polynomial's)
    velocity = jax.jvp(lambda t: part(interpolation.evaluate(t)), (t1,), (jnp.ones_like(t1),))[1]
    level_at_end, rate_at_end = jax.jvp(lambda y: hyperplane.level(args, y), (part(y1),), (velocity,))
    # the rate at the step's start is the previous step's end rate (its own dense output);
    # NaN on a run's first step, which is searched for an end-point sign change only
    rate_at_start = crossings.rate

    up = (before < 0.0) & (level_at_end >= 0.0)
    down = (before > 0.0) & (level_at_end <= 0.0)
    through = {1: up, -1: down, 0: up | down}[hyperplane.direction]
    # ends on one side, the rate towards the plane at the start and away at the end
    excursion = (before * level_at_end > 0.0) & (rate_at_start * before < 0.0) & (rate_at_end * before > 0.0)

    def turning_point(_):
        # the turning point only splits the step into two brackets: no derivative needed
        stop = jax.lax.stop_gradient
        turn = _illinois(lambda t: stop(rate(t)), stop(t0), stop(t1), stop(rate_at_start), stop(rate_at_end),
                         ROOT_ITERATIONS)
        return turn, level(turn)

    # a crossing happens on few steps of many: the searches run only on a step where some
    # lane has one (``unvmap_any`` keeps the branch a real conditional under ``vmap``)
    turn, level_at_turn = jax.lax.cond(unvmap_any(excursion), turning_point,
                                       lambda _: (t1, jnp.full_like(level_at_end, jnp.nan)), None)
    excursion = excursion & (level_at_turn * before < 0.0)
    # the step's crossings in time order, each bracketed: an end-point sign change (one), or
    # out and back either side of the turning point (two); one search for both brackets
    starts = jnp.stack([t0, jnp.where(excursion, turn, t0)])
    ends = jnp.stack([jnp.where(excursion, turn, t1), t1])
    at_starts = jnp.stack([before, jnp.where(excursion, level_at_turn, before)])
    at_ends = jnp.stack([jnp.where(excursion, level_at_turn, level_at_end), level_at_end])

    def locate(_):
        times = jax.vmap(lambda a, b, fa, fb: _root(level, a, b, fa, fb))(starts, ends, at_starts, at_ends)
        return times, jax.vmap(lambda time: part(interpolation.evaluate(time)))(times)

    times, states = jax.lax.cond(unvmap_any(through | excursion), locate,
                                 lambda _: (jnp.stack([t1, t1]), jnp.zeros((2,) + crossings.states.shape[1:],
                                                                           crossings.states.dtype)), None)
    sign = jnp.where(before < 0.0, 1.0, -1.0)  # the direction of a step's first crossing
    both = hyperplane.direction == 0
    wanted_first = through | (excursion & (both | (sign == hyperplane.direction)))
    wanted_back = excursion & (both | (-sign == hyperplane.direction))
    first, back = (times[0], states[0]), (times[1], states[1])
    for (time, state), wanted, direction in ((first, wanted_first, sign), (back, wanted_back, -sign)):
        kept = wanted & (time >= crossings.start)
        slot = jnp.where(kept, crossings.count, hyperplane.capacity)  # out of range: dropped
        crossings = Crossings(
            crossings.times.at[slot].set(time, mode="drop"),
            crossings.states.at[slot].set(state, mode="drop"),
            crossings.directions.at[slot].set(direction, mode="drop"),
            crossings.count + kept.astype(crossings.count.dtype),
            crossings.start, crossings.level, crossings.rate,
        )
    return Crossings(crossings.times, crossings.states, crossings.directions, crossings.count, crossings.start,
                     level_at_end, rate_at_end)


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
        crossings = record_crossing(crossings, self.hyperplane, args, interpolation, t0, t1, y1, self._part)
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
