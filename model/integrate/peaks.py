"""Contact peaks reduced over the accepted steps of a solve, independent of the output grid.

The summary metrics of a clearance joint (largest normal force and penetration, first
impact time and closing speed, number of impacts, share of time in contact) are reduced
here from the solver's own dense output on every accepted step, instead of from the
output samples, so they hold to the integrator's tolerance whatever ``output_interval``.

On a step ``[t0, t1]`` the step's interpolant ``y(t)`` (diffrax's ``interpolation_cls``,
4th order for Tsit5) is sampled at ``SUBDIVISIONS + 1`` equally spaced times (the first
sample is the previous step's last, carried in :class:`Peaks`), and per joint:

- a maximum (penetration ``delta``, normal force ``F_n``) is refined by the vertex of the
  parabola through the largest sample and its two neighbours, evaluated on the
  interpolant (successive parabolic interpolation, Brent 1973, ch. 5), on the steps where
  that parabola rises above the samples and the running maximum;
- the first impact is the first sub-interval where ``delta`` turns positive; its time is
  the secant estimate corrected by ``NEWTON_ITERATIONS`` Newton steps with the exact rate
  ``d delta / dt`` (the joint's normal rate), and its speed the normal rate there;
- an impact is an onset (``delta <= 0`` then ``> 0``) between consecutive samples;
- the time in contact adds each sub-interval's positive share of a linear ``delta``.

Per body and ground axis, the largest absolute centre-of-mass acceleration is reduced
over the same samples: at the step's ends from the state derivative the solver keeps
there (:func:`end_rate`), inside from the interpolant's derivative, the largest sample
refined by the vertex of the parabola through it and its neighbours.

**Window.** Only ``t >= start`` counts, ``start`` the mechanism's
:meth:`~model.mechanics.interface.AbstractMechanism.metrics_start` (0 unless a config's
``[metrics]`` sets it; :mod:`model.window`), carried in :class:`Peaks` as a value, so each
point of a batch has its own: the maxima (contact and accelerations) keep the samples and
vertices at ``t >= start``, an onset counts when its later sample is at ``t >= start`` (a
joint in contact at ``start`` counts one, as at ``t = 0``), and the time in contact adds
each sub-interval's share after ``start``. The first impact is the run's first, whatever
the window.

Pure JAX: ``jit``, ``vmap`` and forward- and reverse-mode derivatives go through it (divisions
are guarded by the double-``where``).
"""

from __future__ import annotations

import dataclasses

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..mechanics.interface import AbstractMechanism, flat_vector_field, traced_once
from ._diffrax import unvmap_any
from .solver_state import carried_rate
from .wrapped_solver import AbstractDelegatingSolver, state_solver

SUBDIVISIONS = 4
NEWTON_ITERATIONS = 2


class Peaks(eqx.Module):
    """Running per-joint reductions of a solve (SI units; clearance joints on the last axis).

    ``first_impact_time`` is ``inf`` (and ``first_impact_velocity`` ``nan``) until a joint
    first closes. The maxima are ``-inf`` while the step has not reached ``window_start``.
    """

    max_normal_force: Float[Array, " joints"]  # N
    max_penetration: Float[Array, " joints"]  # m
    first_impact_time: Float[Array, " joints"]  # s
    first_impact_velocity: Float[Array, " joints"]  # m/s, closing speed at the onset
    num_impacts: Float[Array, " joints"]
    contact_time: Float[Array, " joints"]  # s
    # contact values (:func:`contact_values`) at the end of the last accepted step: the
    # first sample of the next step, so each step evaluates the contact one time fewer
    end_values: Float[Array, "3 joints"]
    # m/s^2, largest absolute centre-of-mass acceleration along each ground axis, per body
    # and then per flexible body (:func:`reported_accelerations`)
    max_abs_acceleration: Float[Array, "bodies axes"]
    # the accelerations at the end of the last accepted step, the next step's first sample
    end_accelerations: Float[Array, "bodies axes"]
    # s, the start of the window the reductions count (AbstractMechanism.metrics_start)
    window_start: Float[Array, ""]


@traced_once
def contact_values(mechanism: AbstractMechanism, flat_state: Float[Array, " n"]) -> Float[Array, "3 joints"]:
    """``[penetration (m), normal rate (m/s), normal force (N)]`` of every clearance joint
    (a sliced joint: the deepest slice's penetration and rate, the resultant force)."""
    return mechanism.contact_values(flat_state)


def with_flexible_bodies(mechanism: AbstractMechanism, accelerations: Float[Array, "bodies axes"]
                         ) -> Float[Array, "bodies axes"]:
    """Every body's centre-of-mass acceleration (m/s^2, ground frame), followed by every
    flexible body's: a beam chain's is the mass-weighted mean of its segments'."""
    chains = []
    for chain in mechanism.beam_chains:
        index = jnp.asarray(chain.segments)
        weights = mechanism.masses[index] / jnp.sum(mechanism.masses[index])
        chains.append(weights @ accelerations[index])
    return jnp.concatenate([accelerations, jnp.stack(chains)]) if chains else accelerations


@traced_once
def reported_accelerations(mechanism: AbstractMechanism, flat_state: Float[Array, " n"], flat_rate: Float[Array, " n"]
                           ) -> Float[Array, "bodies axes"]:
    """The centre-of-mass accelerations the summary metrics report (:func:`with_flexible_bodies`)
    at the flat state ``flat_state`` whose time derivative is ``flat_rate``."""
    return with_flexible_bodies(mechanism, mechanism.body_accelerations(flat_state, flat_rate))


def end_rate(solver: diffrax.AbstractSolver, solver_state, t1, y1: Float[Array, " n"],
             mechanism: AbstractMechanism) -> Float[Array, " n"]:
    """``dy/dt`` at the end ``(t1, y1)`` of a step, taken from the solver state the step
    returned where the solver keeps it for its next step (the first-same-as-last
    derivative of diffrax's explicit and ESDIRK Runge-Kutta solvers, the field of the
    Rosenbrock-W solver), so that it costs nothing; evaluated otherwise (Rodas*)."""
    rate = carried_rate(solver, solver_state)
    if rate is not None:
        return rate
    return flat_vector_field(t1, y1, mechanism)


def initial_peaks(mechanism: AbstractMechanism, flat_state: Float[Array, " n"], t0=0.0,
                  initial_rate: Float[Array, " n"] | None = None) -> Peaks:
    """The reductions at ``t0``; a joint that starts in contact counts one impact at ``t0``.
    ``initial_rate``: the state derivative at ``t0`` where the caller has it (evaluated
    otherwise), so that a compiled program carries no extra copy of the vector field."""
    if initial_rate is None:
        initial_rate = flat_vector_field(t0, flat_state, mechanism)
    initial_accelerations = reported_accelerations(mechanism, flat_state, initial_rate)
    t0 = jnp.asarray(t0, flat_state.dtype)
    window_start = jnp.asarray(mechanism.metrics_start(), flat_state.dtype)
    counted = t0 >= window_start
    penetration, rate, force = contact_values(mechanism, flat_state)
    touching = penetration > 0.0
    return Peaks(
        max_normal_force=jnp.where(counted, force, -jnp.inf),
        max_penetration=jnp.where(counted, penetration, -jnp.inf),
        first_impact_time=jnp.where(touching, t0, jnp.inf),
        first_impact_velocity=jnp.where(touching, rate, jnp.nan),
        num_impacts=(touching & counted).astype(flat_state.dtype),
        contact_time=jnp.zeros_like(penetration),
        end_values=jnp.stack([penetration, rate, force]),
        max_abs_acceleration=jnp.where(counted, jnp.abs(initial_accelerations), -jnp.inf),
        end_accelerations=initial_accelerations,
        window_start=window_start,
    )


def _safe_divide(numerator, denominator):
    nonzero = denominator != 0.0
    return jnp.where(nonzero, numerator / jnp.where(nonzero, denominator, 1.0), 0.0)


def _parabola_vertex(samples: Float[Array, " s"]) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """Fractional sample index of the maximum of the parabola through the largest sample
    and its neighbours (centre kept off the ends), clipped to those three samples, and the
    parabola's value there."""
    centre = jnp.clip(jnp.argmax(samples), 1, samples.size - 2)
    left, middle, right = samples[centre - 1], samples[centre], samples[centre + 1]
    curvature = left - 2.0 * middle + right
    offset = jnp.clip(_safe_divide(0.5 * (left - right), jnp.where(curvature < 0.0, curvature, 0.0)), -1.0, 1.0)
    return centre + offset, middle + 0.5 * offset * (right - left) + 0.5 * offset**2 * curvature


def _in_window(values: Float[Array, "s ..."], counted: Float[Array, " s"]) -> Float[Array, "s ..."]:
    """``values`` (samples on the first axis) with those outside the window at ``-inf``."""
    return jnp.where(counted.reshape((-1,) + (1,) * (values.ndim - 1)), values, -jnp.inf)


def _vertex_in_window(fraction, top, t0, h, window_start):
    """A parabola's vertex value ``top`` where its time (``fraction`` of the samples of a
    step ``[t0, t0 + h]``) is in the window, else ``-inf``."""
    return jnp.where(t0 + fraction / SUBDIVISIONS * h >= window_start, top, -jnp.inf)


def _acceleration_peaks(peaks: Peaks, mechanism: AbstractMechanism, interpolation, times, rate_at_end) -> dict:
    """The acceleration fields of :class:`Peaks` after a step sampled at ``times``: the
    ends' accelerations are exact (the field there), the inner samples' the interpolant's
    derivative; the largest sample of each component is refined by the parabola through it
    and its neighbours. Samples and vertices before the window's start do not count."""
    # the samples after the step's start in one batched evaluation (one copy in the program)
    rates = jnp.concatenate([jax.vmap(interpolation.derivative)(times[1:-1]), rate_at_end[None]])
    later = jax.vmap(lambda t, rate: reported_accelerations(mechanism, interpolation.evaluate(t), rate))(times[1:], rates)
    at_end = later[-1]
    samples = jnp.abs(jnp.concatenate([peaks.end_accelerations[None], later]))
    flat = samples.reshape(samples.shape[0], -1)
    fractions, tops = jax.vmap(_parabola_vertex, in_axes=1)(flat)
    counted = times >= peaks.window_start
    tops = _vertex_in_window(fractions, tops, times[0], times[-1] - times[0], peaks.window_start)
    step_peak = jnp.maximum(jnp.max(_in_window(flat, counted), axis=0), tops).reshape(at_end.shape)
    return dict(max_abs_acceleration=jnp.maximum(peaks.max_abs_acceleration, step_peak), end_accelerations=at_end)


def update_peaks(peaks: Peaks, mechanism: AbstractMechanism, interpolation, t0, t1,
                 rate_at_end: Float[Array, " n"]) -> Peaks:
    """``peaks`` after the step ``[t0, t1]`` whose dense output is ``interpolation``
    (anything with ``evaluate(t) -> flat state`` and its ``derivative(t)``, as diffrax's
    interpolations) and whose end has the state derivative
    ``rate_at_end`` (:func:`end_rate`)."""
    h = t1 - t0
    fractions = jnp.linspace(0.0, 1.0, SUBDIVISIONS + 1, dtype=h.dtype)
    times = t0 + fractions * h
    accelerations = _acceleration_peaks(peaks, mechanism, interpolation, times, rate_at_end)
    if not mechanism.clearance_joints:
        return dataclasses.replace(peaks, **accelerations)
    at = lambda t: contact_values(mechanism, interpolation.evaluate(t))  # noqa: E731
    values = jnp.concatenate([peaks.end_values[None], jax.vmap(at)(times[1:])])  # [s, 3, joints]
    penetration, force = values[:, 0, :], values[:, 2, :]
    counted = times >= peaks.window_start

    # A vertex can raise a maximum only where the parabola through the samples peaks inside
    # the step above both its samples and the running maximum; on the other steps (nearly
    # all: free flight, monotonic stretches, contact below an earlier peak) its evaluation
    # is skipped.
    count = force.shape[1]
    samples = jnp.concatenate([force, penetration], axis=1)
    vertices, parabola_tops = jax.vmap(_parabola_vertex, in_axes=1)(samples)
    windowed = _in_window(samples, counted)
    running = jnp.maximum(jnp.concatenate([peaks.max_normal_force, peaks.max_penetration]), jnp.max(windowed, axis=0))
    in_window = t0 + vertices / SUBDIVISIONS * h >= peaks.window_start

    # an onset counts when its later sample is in the window; a sample before the window
    # reads as open, so a joint in contact at the window's start counts one impact there
    counted_penetration = jnp.where(counted[:, None], penetration, -jnp.inf)
    window_onsets = (counted_penetration[:-1] <= 0.0) & (counted_penetration[1:] > 0.0)
    onsets = (penetration[:-1] <= 0.0) & (penetration[1:] > 0.0)  # [subdivisions, joints]
    first_onset = jnp.argmax(onsets, axis=0)
    joints = jnp.arange(penetration.shape[1])
    before, after = penetration[first_onset, joints], penetration[first_onset + 1, joints]
    low = times[first_onset]
    share = jnp.clip(_safe_divide(-before, after - before), 0.0, 1.0)

    # A joint's first impact happens on one step of thousands: its Newton refinement runs
    # only on a step where some joint has it. Both refinements are decided for all lanes
    # of a batch at once (``unvmap_any`` keeps each branch a real conditional under ``vmap``).
    new_impact = jnp.any(onsets, axis=0) & ~jnp.isfinite(peaks.first_impact_time)
    refine_due = unvmap_any(jnp.any((parabola_tops > running) & in_window))
    impact_due = unvmap_any(jnp.any(new_impact))
    secant_time = low + share * h / SUBDIVISIONS

    def refinements(vertices, onset_time):
        # pass 0: both maxima's vertices (when due); passes 1 to NEWTON_ITERATIONS: the
        # first impact's Newton updates, and the last pass its rate there (when due; each
        # joint's time twice, to keep the batch's shape). One loop, so the program holds
        # one copy of the contact rows for all of them.
        def one_pass(index, carry):
            vertex_values, onset_time, _ = carry
            newton = index > 0
            times = jnp.where(newton, jnp.concatenate([onset_time, onset_time]), t0 + vertices / SUBDIVISIONS * h)
            values = jax.lax.cond(jnp.where(newton, impact_due, refine_due), jax.vmap(at),
                                  lambda t: jnp.full(t.shape + (3, count), jnp.nan, t.dtype), times)
            delta, rate = jnp.diagonal(values[:count, 0, :]), jnp.diagonal(values[:count, 1, :])
            updated = jnp.clip(onset_time - _safe_divide(delta, rate), low, low + h / SUBDIVISIONS)
            onset_time = jnp.where(newton & (index <= NEWTON_ITERATIONS) & impact_due, updated, onset_time)
            at_vertices = jnp.concatenate([jnp.diagonal(values[:count, 2, :]), jnp.diagonal(values[count:, 0, :])])
            return jnp.where(newton, vertex_values, at_vertices), onset_time, rate

        start = (jnp.full(2 * count, jnp.nan, h.dtype), onset_time, jnp.full(count, jnp.nan, h.dtype))
        vertex_values, onset_time, rate = jax.lax.fori_loop(0, NEWTON_ITERATIONS + 2, one_pass, start)
        return jnp.where(refine_due & in_window, vertex_values, -jnp.inf), onset_time, jnp.where(impact_due, rate, jnp.nan)

    vertex_values, onset_time, onset_rate = jax.lax.cond(
        refine_due | impact_due, refinements,
        lambda vertices, time: (jnp.full(2 * count, -jnp.inf, h.dtype), time, jnp.full_like(time, jnp.nan)),
        vertices, secant_time)
    refined_force = jnp.maximum(jnp.max(windowed[:, :count], axis=0), vertex_values[:count])
    refined_penetration = jnp.maximum(jnp.max(windowed[:, count:], axis=0), vertex_values[count:])

    positive = jnp.maximum(penetration, 0.0)
    span = jnp.abs(penetration[1:] - penetration[:-1])
    contact_share = jnp.where((penetration[:-1] > 0.0) & (penetration[1:] > 0.0), 1.0,
                              _safe_divide(positive[:-1] + positive[1:], span))
    # each sub-interval's share after the window's start
    window_share = jnp.clip(_safe_divide(times[1:] - peaks.window_start, h / SUBDIVISIONS), 0.0, 1.0)
    return Peaks(
        max_normal_force=jnp.maximum(peaks.max_normal_force, refined_force),
        max_penetration=jnp.maximum(peaks.max_penetration, refined_penetration),
        first_impact_time=jnp.where(new_impact, onset_time, peaks.first_impact_time),
        first_impact_velocity=jnp.where(new_impact, onset_rate, peaks.first_impact_velocity),
        num_impacts=peaks.num_impacts + jnp.sum(window_onsets, axis=0),
        contact_time=peaks.contact_time + jnp.sum(window_share[:, None] * contact_share, axis=0) * h / SUBDIVISIONS,
        end_values=values[-1],
        window_start=peaks.window_start,
        **accelerations,
    )


@traced_once
def peaks_after_step(peaks: Peaks, mechanism: AbstractMechanism, solver: diffrax.AbstractSolver, t0, t1,
                     y1: Float[Array, " n"], dense_info, solver_state) -> Peaks:
    """``peaks`` after an accepted step of ``solver`` over ``[t0, t1]``, from what the step
    returned: its ``dense_info`` (the interpolant), its end ``y1`` and its solver state
    (the derivative there, :func:`end_rate`). What :class:`PeakTracking` and the refilling
    lanes (``model/integrate/ensemble.py``) do after each step."""
    interpolation = solver.interpolation_cls(t0=t0, t1=t1, **dense_info)
    return update_peaks(peaks, mechanism, interpolation, t0, t1, end_rate(solver, solver_state, t1, y1, mechanism))


class PeakTracking(AbstractDelegatingSolver):
    """Wraps a diffrax solver and carries :class:`Peaks` in its solver state: diffrax keeps
    a step's solver state only when the step is accepted, so the peaks reduce exactly the
    accepted steps. ``args`` of the solve must be the mechanism
    (:class:`~model.mechanics.interface.AbstractMechanism`) and the state its flat vector;
    read the result with ``SaveAt(solver_state=True)`` and :meth:`peaks`."""

    solver: diffrax.AbstractSolver

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args), initial_peaks(args, y0, t0)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        inner_state, peaks = solver_state
        y1, y_error, dense_info, inner_state, result = self.solver.step(
            terms, t0, t1, y0, args, inner_state, made_jump)
        # the solver whose state layout ``inner_state`` has (a Tsit5 inside the constraint
        # projection and the reverse-mode step guard), so that ``end_rate`` reads the
        # derivative the step carries instead of evaluating the vector field once more
        peaks = peaks_after_step(peaks, args, state_solver(self.solver), t0, t1, y1, dense_info, inner_state)
        return y1, y_error, dense_info, (inner_state, peaks), result

    @staticmethod
    def peaks(solver_state) -> Peaks:
        """The :class:`Peaks` in a final solver state of this solver."""
        return solver_state[1]
