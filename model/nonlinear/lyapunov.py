"""Lyapunov exponents of any vector field ``f(t, y, args)``, with its stroboscopic section.

The state ``y`` and ``k`` tangent vectors ``V`` (the columns of an ``n x k`` matrix) are
integrated together, the tangents by the variational equation ``dV/dt = (df/dy) V``
evaluated with ``jax.linearize`` (one linearisation per field evaluation, no Jacobian
matrix formed). Every ``interval`` the tangents are re-orthonormalised by a QR
decomposition ``V = Q R``; the logarithms of ``|R_ii|`` summed over the intervals and
divided by the elapsed time converge to the ``k`` largest exponents (Benettin, Galgani,
Giorgilli & Strelcyn 1980, Meccanica 15; Wolf, Swift, Swinney & Vastano 1985, Physica D
16). The interval boundaries are the samples of a stroboscopic Poincaré section when the
interval is the forcing period.

Everything is a ``lax.scan`` over intervals of ``diffrax.diffeqsolve`` calls, so ``jit``,
``vmap`` (a batch of parameters) and ``grad`` (reverse mode through the solves) go
through. Exponents are in 1/(unit of ``t``).
"""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, PyTree

from ..integrate.step_guard import AbstractWrappedController
from .crossings import CrossingTracking, Crossings, Hyperplane, empty_crossings


class LyapunovResult(eqx.Module):
    """The outcome of :func:`lyapunov_exponents` (exponents in 1/(unit of ``t``)).

    ``exponents``: the ``k`` largest, descending (up to finite-time ordering);
    ``history``: the running estimates after each interval; ``change``: the largest
    absolute change of the running estimate over the last quarter of the intervals, the
    convergence indicator; ``sections``: the state at the end of each interval (the
    stroboscopic section when ``interval`` is the forcing period); ``section_times``;
    ``success``: every solve ended without a solver failure and the exponents are finite;
    ``crossings``: the hyperplane section's crossings (:mod:`model.nonlinear.crossings`),
    ``None`` without a hyperplane.
    """

    exponents: Float[Array, " k"]
    history: Float[Array, "intervals k"]
    change: Float[Array, " k"]
    sections: Float[Array, "intervals n"]
    section_times: Float[Array, " intervals"]
    success: Bool[Array, ""]
    crossings: Crossings | None = None


def tangent_field(field: Callable) -> Callable:
    """The vector field of the pair ``(y, V)``: ``(f(t, y), (df/dy)(t, y) V)``, the second
    by ``jax.linearize`` mapped over the columns of ``V`` (the variational equation).

    The state may also be a triple ``(y, V, active)`` with a scalar ``active``: the tangents
    then move only while ``active > 0`` (and ``active`` stays constant)."""

    def augmented(t, state, args):
        y, tangents = state[0], state[1]
        if tangents.shape[1] == 0:
            rates = (field(t, y, args), tangents)
        else:
            rate, linear = jax.linearize(lambda z: field(t, z, args), y)
            tangent_rates = jax.vmap(linear, in_axes=1, out_axes=1)(tangents)
            if len(state) == 3:
                tangent_rates = jnp.where(state[2] > 0.0, tangent_rates, 0.0)
            rates = (rate, tangent_rates)
        return rates + (jnp.zeros_like(state[2]),) if len(state) == 3 else rates

    return augmented


class TangentRelativeError(AbstractWrappedController):
    """Step-size control of a ``(state, tangents)`` pair that measures each tangent's local
    error relative to that tangent's own size.

    A tangent vector is a direction whose scale is arbitrary, and its components pass
    through zero as it turns; the inner controller's componentwise scale ``atol + rtol
    max(|V0_i|, |V1_i|)`` then asks for an absolute accuracy of ``atol`` on a unit vector,
    far beyond what the exponent needs, and forces steps far shorter than the state's. Each
    tangent component's error is rescaled here so that the inner controller sees it divided
    by ``atol + rtol max(|V0|, |V1|)`` of its column (the error relative to the tangent's
    norm, as the state's is relative to its components); the state's error is unchanged."""

    controller: diffrax.AbstractAdaptiveStepSizeController

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        start, candidate = y0[1], y1_candidate[1]
        component = self.atol + self.rtol * jnp.maximum(jnp.abs(start), jnp.abs(candidate))
        column = self.atol + self.rtol * jnp.maximum(jnp.linalg.norm(start, axis=0),
                                                     jnp.linalg.norm(candidate, axis=0))
        y_error = (y_error[0], y_error[1] * component / column[None, :]) + tuple(y_error[2:])
        return self.controller.adapt_step_size(t0, t1, y0, y1_candidate, args, y_error, error_order,
                                               controller_state)


def _solve(term, solver, controller, t0, t1, state, args, max_steps, adjoint, hyperplane=None, crossings=None):
    """The state at ``t1``, whether the solve succeeded and, with a ``hyperplane``, the
    ``crossings`` buffer after this solve's accepted steps (the state's first part)."""
    if hyperplane is not None:
        solver = CrossingTracking(solver, hyperplane, crossings, part=0)
    solution = diffrax.diffeqsolve(
        term, solver, t0=t0, t1=t1, dt0=None, y0=state, args=args,
        saveat=diffrax.SaveAt(t1=True, solver_state=hyperplane is not None), stepsize_controller=controller,
        max_steps=max_steps, throw=False, adjoint=adjoint,
    )
    final = jax.tree.map(lambda leaf: leaf[-1], solution.ys)
    if hyperplane is not None:
        crossings = CrossingTracking.crossings_of(solution.solver_state)
    return final, solution.result == diffrax.RESULTS.successful, crossings


def _orthonormalise(tangents: Float[Array, "n k"]) -> tuple[Float[Array, "n k"], Float[Array, " k"]]:
    """``Q`` with positive ``R`` diagonal and ``log |R_ii|`` (Gram-Schmidt by QR)."""
    q, r = jnp.linalg.qr(tangents)
    diagonal = jnp.diagonal(r)
    sign = jnp.where(diagonal < 0.0, -1.0, 1.0)
    return q * sign, jnp.log(jnp.abs(diagonal))


def initial_tangents(n: int, k: int, mask: Float[Array, " n"] | None = None) -> Float[Array, "n k"]:
    """``k`` orthonormal tangent vectors in ``n`` dimensions, none aligned with a
    coordinate axis (a fixed, dense orthonormal set: QR of a Vandermonde-like matrix), so
    that each has a component along every direction; ``mask`` zeroes the coordinates the
    exponents leave out."""
    nodes = 1.0 + jnp.arange(n, dtype=jnp.float64) / n
    dense = nodes[:, None] ** jnp.arange(k)[None, :] + jnp.sin(1.0 + jnp.arange(n * k).reshape(n, k))
    if mask is not None:
        dense = dense * mask[:, None]
    return _orthonormalise(dense)[0]


def lyapunov_exponents(
    field: Callable,
    y0: Float[Array, " n"],
    args: PyTree,
    *,
    t0: ArrayLike,
    interval: ArrayLike,
    num_intervals: int,
    num_exponents: int = 1,
    transient_intervals: int = 0,
    offset: ArrayLike = 0.0,
    solver: diffrax.AbstractSolver | None = None,
    stepsize_controller: diffrax.AbstractStepSizeController | None = None,
    max_steps: int = 100_000,
    mask: Float[Array, " n"] | None = None,
    adjoint: diffrax.AbstractAdjoint | None = None,
    hyperplane: Hyperplane | None = None,
    crossings_start: ArrayLike | None = None,
) -> LyapunovResult:
    """The ``num_exponents`` largest Lyapunov exponents of ``dy/dt = field(t, y, args)``.

    The solve runs from ``t0`` for ``offset`` (time units, e.g. the phase of a section),
    then ``transient_intervals`` intervals whose growth is not counted (the tangents align
    with the growing directions there), then ``num_intervals`` counted intervals of length
    ``interval``; the tangents are re-orthonormalised after each (Benettin et al. 1980).
    The tangents start moving after the first interval that has a length (the offset, or
    else the first transient interval; at once when there is neither): the start of a
    mechanism may sit on a singularity of the linearisation. ``num_exponents = 0``
    integrates the state only (the section without exponents). ``mask`` (1 or 0 per coordinate) restricts the
    tangents to the coordinates with 1; it is exact for coordinates that do not feed back
    into the others (quadratures such as a work integral), whose exponent is 0 and whose
    growth would otherwise mix into the norm. ``max_steps``: per interval (and for the offset).

    Solver defaults: ``diffrax.Tsit5`` with a ``PIDController(rtol=1e-8, atol=1e-10)``; the
    step-size control sees the tangents as well as the state, each tangent's error
    relative to its own norm (:class:`TangentRelativeError`). ``adjoint``: diffrax's
    (default ``RecursiveCheckpointAdjoint``, for ``jax.grad``; ``diffrax.ForwardMode()``
    for ``jax.jvp``/``jax.jacfwd``).

    ``hyperplane``: also record the crossings of that hyperplane of the state by the
    accepted steps of every solve (:class:`model.nonlinear.crossings.CrossingTracking`),
    from the time ``crossings_start`` on (default: the start of the counted intervals).
    """
    adjoint = diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint
    solver = diffrax.Tsit5() if solver is None else solver
    if stepsize_controller is None:
        stepsize_controller = diffrax.PIDController(rtol=1e-8, atol=1e-10)
    if num_exponents and isinstance(stepsize_controller, diffrax.AbstractAdaptiveStepSizeController):
        stepsize_controller = TangentRelativeError(stepsize_controller)
    y0 = jnp.asarray(y0, dtype=jnp.float64)
    n = y0.shape[0]
    term = diffrax.ODETerm(tangent_field(field))
    t0 = jnp.asarray(t0, dtype=jnp.float64)
    interval = jnp.asarray(interval, dtype=jnp.float64)
    start = t0 + jnp.asarray(offset, dtype=jnp.float64)
    skipped = 1 + transient_intervals  # the offset and the transient intervals: not counted
    # the last interval without tangents: the offset, or the first transient interval after
    # a zero offset
    waiting = jnp.where((jnp.asarray(offset) > 0.0) | (transient_intervals == 0), 0, 1)

    if crossings_start is None:
        crossings_start = start + transient_intervals * interval
    crossings = None if hyperplane is None else empty_crossings(hyperplane, n, crossings_start)

    # one scan over offset, transient and counted intervals, so that one traced solve serves
    # every step and no solve is longer than the offset or one interval
    def step(carry, index):
        (y, tangents, logs, ok), crossings = carry
        t_begin = jnp.where(index == 0, t0, start + (index - 1) * interval)
        t_end = start + index * interval
        # the tangents wait for the end of the first interval that has a length (the
        # offset, else the first transient or counted one): a mechanism's start may sit on a
        # singularity of the linearisation, e.g. a journal exactly centred in its bearing
        # (its contact normal undefined, the normal's derivative unbounded nearby)
        active = jnp.where(index > waiting, 1.0, 0.0)
        (y, tangents, _), solved, crossings = _solve(term, solver, stepsize_controller, t_begin, t_end,
                                                     (y, tangents, active), args, max_steps, adjoint, hyperplane,
                                                     crossings)
        if num_exponents:
            if mask is not None:
                tangents = tangents * mask[:, None]
            tangents, growth = _orthonormalise(tangents)
            logs = logs + jnp.where(index < skipped, 0.0, growth)
        elapsed = jnp.maximum(index - transient_intervals, 1) * interval
        return ((y, tangents, logs, ok & solved), crossings), (y, logs / elapsed, t_end)

    init = (y0, initial_tangents(n, num_exponents, mask), jnp.zeros(num_exponents), jnp.asarray(True))
    steps = jnp.arange(skipped + num_intervals)
    ((_, _, _, ok), crossings), (sections, history, times) = jax.lax.scan(step, (init, crossings), steps)
    sections, history, times = sections[skipped:], history[skipped:], times[skipped:]
    exponents = history[-1]
    quarter = history[num_intervals - max(num_intervals // 4, 1) - 1:]
    change = jnp.max(jnp.abs(quarter - exponents), axis=0)
    success = ok & jnp.all(jnp.isfinite(exponents)) & jnp.all(jnp.isfinite(sections[-1]))
    return LyapunovResult(exponents, history, change, sections, times, success, crossings)


__all__ = ["LyapunovResult", "TangentRelativeError", "initial_tangents", "lyapunov_exponents", "tangent_field"]
