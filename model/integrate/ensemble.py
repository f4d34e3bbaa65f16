"""Many simulations in one compiled loop, without lockstep: lanes that refill.

``jax.vmap(simulate)`` advances all members of a batch together, one step of each per
iteration of a single ``while_loop``, so every member pays for the slowest: in a
clearance sweep the step count varies 3x across a grid (more impacts at high restitution
and large clearance) and the measured *lockstep efficiency* (mean over max steps) was
0.3-0.4. Here a fixed number of *lanes* step together, and a lane whose simulation ends
immediately loads the next point of the queue (its mechanism, initial state, first step
size), so the loop runs ~``sum(steps) / lanes`` iterations instead of
``max(steps) * points / lanes``: the efficiency is ~1 up to the tail of the queue.

Each lane runs the algorithm of ``diffrax.diffeqsolve`` for its point (same solver,
``PIDController``, initial step selection, clipping to ``t1`` and dense output at the save
times, following ``diffrax/_integrate.py``). Batched code rounds differently from unbatched
code and a step's accept/reject decision is sensitive to rounding, so step counts differ by
a few percent and the states agree with :func:`model.simulate` to the integrator's
tolerance (as a vmapped solve does); ``tests/model/test_ensemble.py`` checks it.

Reverse-mode differentiation through the refilling loop is not supported (it is a
``while_loop`` of unknown length); forward mode works but costs a tangent per point and
parameter, so sweeps that ask for derivatives use ``vmap(simulate)`` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, PyTree

from ..mechanics.interface import AbstractMechanism, flat_vector_field
from .peaks import Peaks, end_rate, initial_peaks, peaks_after_step
from ._diffrax import RESULT_MAX_STEPS_REACHED, RESULT_SUCCESSFUL, WrapTerm, result_code
from .solve import (SolverSettings, SpatialTrajectory, Trajectory, _terms, make_controller, make_solver,
                    with_projection)
from .trajectory import trajectory_from_states
from .wrapped_solver import state_solver

_SUCCESS = RESULT_SUCCESSFUL
_MAX_STEPS_REACHED = RESULT_MAX_STEPS_REACHED


class _Lane(eqx.Module):
    """The integration state of one lane (every field gains a leading lane axis). The
    saved states go straight to the ensemble's output array, so a lane stays small and
    refilling it copies nothing large."""

    point: Int[Array, ""]  # index of the simulated point; ``num_points`` when idle
    mechanism: AbstractMechanism
    tprev: Float[Array, ""]
    tnext: Float[Array, ""]
    y: Float[Array, " n"]  # flat state (AbstractMechanism.flatten)
    solver_state: PyTree
    controller_state: PyTree
    save_index: Int[Array, ""]  # first output time not saved yet
    steps: Int[Array, ""]
    rejected: Int[Array, ""]
    result: Int[Array, ""]
    peaks: Peaks  # contact peaks of the accepted steps (model/integrate/peaks.py)
    times: Float[Array, " times"] | None  # the point's own output times; None: the shared ones
    clip_floor: Float[Array, ""] | None  # the point's ``t1`` less 100 ULP; None: the shared one


class _Saves(NamedTuple):
    """What one step leaves to save: output times ``[first, stop)`` of its interval."""

    first: Int[Array, ""]
    stop: Int[Array, ""]
    t0: Float[Array, ""]
    t1: Float[Array, ""]
    dense_info: PyTree
    times: Float[Array, " times"] | None  # the lane's point's output times; None: the shared ones


class EnsembleSolution(eqx.Module):
    """States at the output times of every point, and per-point solver statistics.
    ``ts``: the output times, shared (``[times]``) or each point's (``[points, times]``)."""

    ts: Float[Array, " times"] | Float[Array, "points times"]
    ys: PyTree  # the mechanism's state pytree, [points, times, ...]
    steps: Int[Array, " points"]
    rejected_steps: Int[Array, " points"]
    result: Int[Array, " points"]  # diffrax.RESULTS index; 0 = successful
    peaks: Peaks  # [points, joints]
    iterations: Int[Array, ""]  # iterations of the shared loop
    lanes: int = eqx.field(static=True)  # lanes the loop ran (at most one per point)

    @property
    def step_slots(self) -> Int[Array, ""]:
        """Step attempts the loop offered: ``iterations * lanes``."""
        return self.iterations * self.lanes

    def lane_efficiency(self) -> Float[Array, ""]:
        """Steps taken over step slots offered: 1 is no waste."""
        return jnp.sum(self.steps) / self.step_slots

    def map_points(self, function: Callable[[AbstractMechanism, Trajectory | SpatialTrajectory], PyTree],
                   mechanisms: AbstractMechanism) -> PyTree:
        """``function(mechanism, trajectory)`` of every point (``mechanisms``: those that were
        solved), its outputs stacked on a leading points axis. The trajectory is
        post-processed like :func:`model.simulate`'s. Points go one at a time
        (``lax.map``), so each point's trajectory is made and reduced while it is in
        cache: for Flores summary metrics that took 0.50 s per 128 points against 0.75 s
        vmapped."""

        per_point = jnp.ndim(self.ts) == 2

        def one(point):
            mechanism, ys, steps, rejected, result, peaks, ts = point
            ts = ts if per_point else self.ts
            return function(mechanism, trajectory_from_states(mechanism, ts, ys, steps, rejected, result, peaks))

        return jax.lax.map(one, (mechanisms, self.ys, self.steps, self.rejected_steps, self.result, self.peaks,
                                 self.ts if per_point else None))

    def trajectories(self, mechanisms: AbstractMechanism) -> Trajectory | SpatialTrajectory:
        """Every point's trajectory, fields with a leading points axis."""
        return self.map_points(lambda mechanism, trajectory: trajectory, mechanisms)


def _clip_to_end(tprev, tnext, t1, t1_clip_floor, keep_step):
    # as diffrax: within ~100 ULP of t1 the step goes to t1 exactly (or halves on rejection)
    tclip = jnp.where(keep_step, t1, tprev + 0.5 * (t1 - tprev))
    return jnp.where(tnext > t1_clip_floor, tclip, tnext)


def _wrapped_terms(settings: SolverSettings):
    # as diffeqsolve does (forward in time), so that solver privileges for WrapTerm apply
    return jax.tree_util.tree_map(
        lambda term: WrapTerm(term, jnp.asarray(1)), _terms(settings.solver, flat_vector_field),
        is_leaf=lambda x: isinstance(x, diffrax.AbstractTerm) and not isinstance(x, diffrax.MultiTerm),
    )


def _select(predicate, new, old):
    return jax.tree_util.tree_map(lambda a, b: jnp.where(predicate, a, b), new, old)


def _end_floor(t1: Float[Array, ""]) -> Float[Array, ""]:
    """``t1`` less 100 ULP: a step that ends past it goes to ``t1`` exactly (as diffrax)."""
    return jax.lax.fori_loop(0, 100, lambda _, t: jnp.nextafter(t, -jnp.inf), t1)


class _Integrator(eqx.Module):
    """The diffrax pieces shared by every lane. ``output_times`` and ``t1_clip_floor``:
    the times every lane saves at and its end's clipping floor, or ``None`` where each lane
    carries its point's own (``_Lane.times``, ``_Lane.clip_floor``)."""

    settings: SolverSettings = eqx.field(static=True)
    terms: PyTree
    solver: diffrax.AbstractSolver
    output_times: Float[Array, " times"] | None
    t1_clip_floor: Float[Array, ""] | None

    def times(self, lane: _Lane | _Saves) -> Float[Array, " times"]:
        return self.output_times if lane.times is None else lane.times

    def t1(self, lane: _Lane) -> Float[Array, ""]:
        """The lane's end: its point's last output time (of every lane, on the batched state)."""
        return self.times(lane)[..., -1]

    def start(self, point, mechanism: AbstractMechanism, y0: Float[Array, " n"],
              times: Float[Array, " times"] | None = None) -> _Lane:
        """A lane at ``t = 0`` on ``point``: initial step as diffeqsolve chooses it.
        ``times``: the point's own output times (``None``: the shared ones)."""
        controller = make_controller(mechanism, self.settings)
        t0 = jnp.zeros((), y0.dtype)
        t1 = self.output_times[-1] if times is None else times[-1]
        tnext, controller_state = controller.init(
            self.terms, t0, t1, y0, None, mechanism, self.solver.func, self.solver.error_order(self.terms)
        )
        tnext = jnp.minimum(tnext, t1)
        zero = jnp.zeros((), jnp.int64)
        solver_state = self._initial_solver_state(t0, tnext, y0, mechanism)
        # the derivative the solver state already holds (an FSAL stage, the W-method's field)
        peaks = initial_peaks(mechanism, y0, initial_rate=end_rate(self.solver, solver_state, t0, y0, mechanism))
        return _Lane(point, mechanism, t0, tnext, y0, solver_state, controller_state, zero, zero, zero, zero, peaks,
                     times, None if times is None else _end_floor(t1))

    def _initial_solver_state(self, t0, t1, y0, mechanism: AbstractMechanism) -> PyTree:
        """The solver state of a fresh lane, with an FSAL solver's first derivative
        already evaluated.

        diffrax's FSAL Runge-Kutta solvers (Tsit5, Dopri*, Kvaerno*) start with
        ``(first_step=True, f0=0)`` and evaluate ``f0`` in an extra first stage, decided
        with ``unvmap_any(first_step)``: for *every* lane in the batch as soon as one lane
        is fresh. In the lanes' loop a refilled lane is fresh while the others are mid-solve:
        they all took the extra stage, and for Kvaerno* with ``StageChord`` it broke their
        steps (a Flores point's positions off by 1.3e-4 m instead of 5e-8 m; found by
        ``tests/model/test_ensemble.py::test_stiff_solvers_in_lanes``). Starting with
        ``(False, f(t0, y0))`` is the value that stage computes, and no lane is ever fresh.
        The ``isinstance`` test sees through the constraint projection of a constrained
        mechanism (a ``diffrax.AbstractWrappedSolver`` whose state is its wrapped solver's,
        ``keeps_solver_state``; ``tests/model/integrate/test_ensemble_solver_state.py``).
        """
        state = self.solver.init(self.terms, t0, t1, y0, mechanism)
        if isinstance(self.solver, diffrax.AbstractRungeKutta) and state is not None:
            _, f0 = state
            f0 = jax.tree_util.tree_map(lambda zero, value: value.astype(zero.dtype), f0,
                                        self.solver.func(self.terms, t0, y0, mechanism))
            state = (jnp.array(False), f0)
        return state

    def advance(self, lane: _Lane) -> tuple[_Lane, _Saves]:
        """One attempted step of one lane (as ``diffrax/_integrate.py``'s loop body)."""
        mechanism = lane.mechanism
        t1, times = self.t1(lane), self.times(lane)
        floor = self.t1_clip_floor if lane.clip_floor is None else lane.clip_floor
        y, y_error, dense_info, solver_state, solver_result = self.solver.step(
            self.terms, lane.tprev, lane.tnext, lane.y, mechanism, lane.solver_state, False
        )
        keep_step, tprev, tnext, _, controller_state, controller_result = make_controller(
            mechanism, self.settings
        ).adapt_step_size(lane.tprev, lane.tnext, lane.y, y, mechanism, y_error,
                          self.solver.error_order(self.terms), lane.controller_state)
        tprev = jnp.minimum(tprev, t1)
        tnext = _clip_to_end(tprev, tnext, t1, floor, keep_step)

        save_stop = jnp.where(keep_step, jnp.searchsorted(times, lane.tnext, side="right"), lane.save_index)
        saves = _Saves(lane.save_index, save_stop, lane.tprev, lane.tnext, dense_info, lane.times)

        result = jnp.where(keep_step, result_code(solver_result), _SUCCESS)
        result = jnp.where(result == _SUCCESS, result_code(controller_result), result)
        steps = lane.steps + 1
        unfinished = (tprev < t1) & (result == _SUCCESS)
        result = jnp.where(unfinished & (steps >= self.settings.max_steps), _MAX_STEPS_REACHED, result)
        lane = _Lane(
            lane.point, mechanism, tprev, tnext,
            _select(keep_step, y, lane.y), _select(keep_step, solver_state, lane.solver_state),
            controller_state, save_stop.astype(lane.save_index.dtype), steps,
            lane.rejected + jnp.where(keep_step, 0, 1).astype(lane.rejected.dtype), result.astype(lane.result.dtype),
            _select(keep_step, peaks_after_step(lane.peaks, mechanism, state_solver(self.solver), lane.tprev, lane.tnext, y,
                                                dense_info, solver_state), lane.peaks),
            lane.times, lane.clip_floor,
        )
        return lane, saves

    def interpolate(self, saves: _Saves, index) -> Float[Array, " n"]:
        interpolator = self.solver.interpolation_cls(t0=saves.t0, t1=saves.t1, **saves.dense_info)
        times = self.times(saves)
        return interpolator.evaluate(times[jnp.minimum(index, times.size - 1)])

    def running(self, lane: _Lane, num_points: int):
        return (lane.point < num_points) & (lane.tprev < self.t1(lane)) & (lane.result == _SUCCESS)


def solve_ensemble(mechanisms: AbstractMechanism, settings: SolverSettings, lanes: int = 16,
                   y0s: PyTree | None = None,
                   output_times: Float[Array, " times"] | Float[Array, "points times"] | None = None
                   ) -> EnsembleSolution:
    """Integrate every point of a batched mechanism (leading axis = points) with
    ``lanes`` simulations in flight at once; a lane that finishes takes the next point.

    ``mechanisms``: e.g. ``jax.vmap(parameter_map.apply, (None, 0))(base, values)``.
    ``y0s``: initial states per point (default: each mechanism's ``initial_state()``).
    ``output_times`` (s, increasing; the last is the end time): where each point's state
    is saved, from its dense output; shape ``[times]``, shared by every point (default:
    ``settings.output_times()``), or ``[points, times]``, each point's own, loaded into a
    lane with its point (its mechanism and initial state), so each point ends at its own
    last output time (e.g. a stroboscopic section at each point's driver period).
    Planar and spatial mechanisms alike (:class:`~model.mechanics.interface.AbstractMechanism`).
    Points are taken in order: put those expected to take longest first to shorten the
    tail. Pure JAX; jit it (``settings`` and ``lanes`` static).
    """
    num_points = jax.tree_util.tree_leaves(mechanisms)[0].shape[0]
    lanes = max(1, min(lanes, num_points))
    y0s = jax.vmap(lambda m: m.initial_state())(mechanisms) if y0s is None else y0s
    y0s = mechanisms.flatten(y0s)  # [points, n]
    output_times = settings.output_times() if output_times is None else jnp.asarray(output_times, jnp.float64)
    per_point = output_times.ndim == 2
    if per_point and output_times.shape[0] != num_points:
        raise ValueError(f"output_times of shape {output_times.shape}: expected [times] or [points = {num_points}, "
                         f"times]")
    shared = None if per_point else output_times
    # the lanes' while loop has no reverse mode, so the lean explicit stage loop serves
    integrator = _Integrator(settings, _wrapped_terms(settings),
                             with_projection(make_solver(settings, mechanism=mechanisms, reverse_differentiable=False),
                                             settings, mechanisms),
                             shared, None if per_point else _end_floor(output_times[-1]))

    def point_inputs(indices):
        clamped = jnp.minimum(indices, num_points - 1)
        return (jax.tree_util.tree_map(lambda leaf: leaf[clamped], mechanisms),
                jax.tree_util.tree_map(lambda leaf: leaf[clamped], y0s),
                output_times[clamped] if per_point else None)

    def save(lane_state: _Lane, saves: _Saves, ys: Float[Array, "points times n"]) -> Float[Array, "points times n"]:
        """Write the output times each lane's last step passed into ``ys[point, index]``."""

        def pending(carry):
            offset, _ = carry
            return jnp.any(saves.first + offset < saves.stop)

        def write(carry):
            offset, ys = carry
            index = saves.first + offset
            states = jax.vmap(integrator.interpolate)(saves, index)
            rows = jnp.where(index < saves.stop, lane_state.point, num_points)  # out of range: dropped
            ys = jax.tree_util.tree_map(lambda out, value: out.at[rows, index].set(value, mode="drop"), ys, states)
            return offset + 1, ys

        return jax.lax.while_loop(pending, write, (jnp.zeros((), jnp.int64), ys))[1]

    def retire_and_refill(carry):
        lane_state, stats, queued = carry
        finished = (lane_state.point < num_points) & ~integrator.running(lane_state, num_points)
        rows = jnp.where(finished, lane_state.point, num_points)  # out of range: dropped
        counters, peaks = stats
        counters = tuple(column.at[rows].set(value, mode="drop") for column, value in
                         zip(counters, (lane_state.steps, lane_state.rejected, lane_state.result)))
        peaks = jax.tree_util.tree_map(lambda column, value: column.at[rows].set(value, mode="drop"),
                                       peaks, lane_state.peaks)
        stats = (counters, peaks)
        next_points = queued + jnp.cumsum(finished) - 1
        next_points = jnp.where(finished & (next_points < num_points), next_points, num_points)
        fresh = jax.vmap(integrator.start)(next_points, *point_inputs(next_points))
        lane_state = jax.vmap(_select)(finished, fresh, lane_state)
        return lane_state, stats, jnp.minimum(queued + jnp.sum(finished), num_points)

    def body(carry):
        lane_state, ys, stats, queued, iterations = carry
        lane_state, saves = jax.vmap(integrator.advance)(lane_state)
        ys = save(lane_state, saves, ys)
        any_finished = jnp.any((lane_state.point < num_points) & ~integrator.running(lane_state, num_points))
        lane_state, stats, queued = jax.lax.cond(any_finished, retire_and_refill, lambda c: c,
                                                 (lane_state, stats, queued))
        return lane_state, ys, stats, queued, iterations + 1

    def cond(carry):
        return jnp.any(carry[0].point < num_points)

    first = jnp.arange(lanes)
    lane_state = jax.vmap(integrator.start)(first, *point_inputs(first))
    ys = jax.tree_util.tree_map(
        lambda leaf: jnp.full((num_points, output_times.shape[-1]) + leaf.shape[1:], jnp.inf, leaf.dtype), y0s)
    peaks = jax.tree_util.tree_map(lambda leaf: jnp.zeros((num_points,) + leaf.shape[1:], leaf.dtype),
                                   lane_state.peaks)
    stats = (tuple(jnp.zeros(num_points, jnp.int64) for _ in range(3)), peaks)
    carry = (lane_state, ys, stats, jnp.asarray(lanes, jnp.int64), jnp.zeros((), jnp.int64))
    _, ys, ((steps, rejected, result), peaks), _, iterations = jax.lax.while_loop(cond, body, carry)
    ys = mechanisms.unflatten(ys)
    return EnsembleSolution(output_times, ys, steps, rejected, result, peaks, iterations, lanes)


def simulate_ensemble(mechanisms: AbstractMechanism, settings: SolverSettings, lanes: int = 16
                      ) -> Trajectory | SpatialTrajectory:
    """:func:`solve_ensemble` post-processed like :func:`model.simulate`: a trajectory
    whose fields gain a leading points axis."""
    return solve_ensemble(mechanisms, settings, lanes).trajectories(mechanisms)
