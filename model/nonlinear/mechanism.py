"""Lyapunov exponents and stroboscopic sections of a mechanism driven at constant speed.

The mechanism's own vector field (:meth:`AbstractMechanism.flat_vector_field`) and solver
settings drive :func:`model.nonlinear.lyapunov.lyapunov_exponents`; the section is taken
once per driver period ``T = 2 pi / |speed|`` of the first constant-speed driver, at the
driver phase ``phase`` (rad past the driver's initial angle), after ``transient_periods``
periods. The drivers' work is a quadrature (it does not act back on the motion) and is
left out of the tangent space; positions, velocities and the impact memories are in it.
A hyperplane section (:mod:`model.nonlinear.crossings`) of one of the section's
coordinates (:class:`SectionQuantity`) can be recorded in the same solve.
"""

from __future__ import annotations

import math

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Int

from ..integrate.settings import EXPLICIT_SOLVERS, SolverSettings
from ..integrate.solve import make_solver
from ..integrate.step_bound import open_joint_step_bound
from ..integrate.step_guard import AbstractWrappedController, RejectNonFinite
from ..integrate.trajectory import Trajectory, planar_centres, spatial_centres, trajectory_from_states
from ..mechanics.interface import AbstractMechanism, flat_vector_field
from ..mechanics.spatial import SpatialMechanism
from ..mechanics.tree import TreeMechanism
from .classify import classify_motion, section_period
from .crossings import Crossings, Hyperplane, crossing_period
from .lyapunov import LyapunovResult, lyapunov_exponents

QUANTITY_KINDS = ("position", "velocity", "eccentricity")


class SectionQuantity(eqx.Module):
    """One coordinate of a mechanism's section, as a function of its flat state: a body's
    centre-of-mass position (m) or velocity (m/s) along a ground axis, or a clearance
    joint's eccentricity component (m; the ``Trajectory`` fields ``body_positions``,
    ``body_velocities``, ``eccentricity`` at ``[index, component]``). A body's is read
    from the state of an absolute-coordinate mechanism; an eccentricity, and any quantity
    of the joint-coordinate tree, through
    :func:`~model.integrate.trajectory.trajectory_from_states` (the absolute description
    every engine reports)."""

    kind: str = eqx.field(static=True)  # one of QUANTITY_KINDS
    index: int = eqx.field(static=True)  # body or clearance joint
    component: int = eqx.field(static=True)  # axis

    def __check_init__(self):
        if self.kind not in QUANTITY_KINDS:
            raise ValueError(f"unknown section quantity {self.kind!r}; choose from {QUANTITY_KINDS}")

    def __call__(self, mechanism: AbstractMechanism, flat: Float[Array, " n"]) -> Float[Array, ""]:
        if self.kind != "eccentricity" and not isinstance(mechanism, TreeMechanism):
            state = mechanism.unflatten(flat)
            if isinstance(mechanism, SpatialMechanism):
                centres = (spatial_centres(positions=state.x) if self.kind == "position"
                           else spatial_centres(velocities=state.v))
            else:
                centres = planar_centres(state.q if self.kind == "position" else state.qd)
            return centres[self.index, self.component]
        trajectory = trajectory_from_states(mechanism, jnp.zeros(1, flat.dtype), mechanism.unflatten(flat[None]))
        field = {"position": lambda: trajectory.body_positions, "velocity": lambda: trajectory.body_velocities,
                 "eccentricity": lambda: trajectory.eccentricity}[self.kind]()
        return field[0, self.index, self.component]


def periodic_driver(mechanism: AbstractMechanism) -> int:
    """Index of the first constant-speed driver (whose period sets the section); a
    ``ValueError`` when the mechanism has none."""
    for index, driver in enumerate(getattr(mechanism, "drivers", ())):
        if driver.kind == "constant_speed":
            return index
    raise ValueError("a stroboscopic section needs a constant-speed driver (its period is the section's)")


def driver_period(mechanism: AbstractMechanism) -> Float[Array, ""]:
    """``2 pi / |speed|`` (s) of the first constant-speed driver."""
    return 2.0 * jnp.pi / jnp.abs(mechanism.drivers[periodic_driver(mechanism)].speed)


def tangent_mask(mechanism: AbstractMechanism, flat: Float[Array, " n"]) -> Float[Array, " n"]:
    """1 on the flat state's coordinates that act on the motion; 0 on the drivers' work (a
    quadrature) and on the joint-coordinate engine's prescribed coordinates (each a known
    function of time, ``p0 + speed t``: a perturbation of one is a shift of the driver's
    phase, not of the motion, and would add a neutral direction to the tangent space)."""
    ones = jax.tree.map(jnp.ones_like, mechanism.unflatten(flat))
    ones = ones._replace(driver_work=jnp.zeros_like(ones.driver_work))
    if hasattr(ones, "prescribed"):
        ones = ones._replace(prescribed=jnp.zeros_like(ones.prescribed))
    return mechanism.flatten(ones)


class _StateStepBound(AbstractWrappedController):
    """:func:`model.integrate.step_bound.open_joint_step_bound` applied to the state part
    of a ``(state, tangents)`` pair (the inner controller sees both)."""

    controller: diffrax.AbstractAdaptiveStepSizeController
    share: float = eqx.field(static=True)

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        next_t1, state = self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)
        return jnp.minimum(next_t1, t0 + open_joint_step_bound(args, y0[0], self.share)), state

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        keep_step, next_t0, next_t1, made_jump, state, result = self.controller.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state
        )
        next_start = jnp.where(keep_step, y1_candidate[0], y0[0])
        next_t1 = jnp.minimum(next_t1, next_t0 + open_joint_step_bound(args, next_start, self.share))
        return keep_step, next_t0, next_t1, made_jump, state, result


def _controller(mechanism: AbstractMechanism, settings: SolverSettings):
    controller = RejectNonFinite(diffrax.PIDController(
        rtol=settings.rtol, atol=settings.atol, dtmax=settings.dtmax, pcoeff=settings.pcoeff, icoeff=settings.icoeff))
    if settings.dtmax_contact_share is None or not mechanism.clearance_joints:
        return controller
    return _StateStepBound(controller, settings.dtmax_contact_share)


class MechanismSection(eqx.Module):
    """A mechanism's stroboscopic section, exponents and motion class.

    ``lyapunov``: the exponents (1/s) and the section states (flat); ``section``: the
    section states post-processed as a :class:`~model.Trajectory` (eccentricities, body
    positions and velocities at each section time); ``period``: the section's period in
    driver periods (0: none up to ``max_period``); ``motion``: the code of
    :data:`model.nonlinear.classify.MOTION_NAMES`. With a hyperplane: ``crossings`` (the
    buffer, ``lyapunov.crossings``), ``crossing_section`` (its stored states
    post-processed; the slots past ``crossings.stored`` repeat the first crossing) and
    ``distinct`` (the number of distinct crossing points of a periodic motion, 0 when the
    crossings do not repeat); ``period`` and ``motion`` are then the hyperplane section's.
    """

    lyapunov: LyapunovResult
    section: Trajectory
    period: Int[Array, ""]
    motion: Int[Array, ""]
    crossing_section: Trajectory | None = None
    distinct: Int[Array, ""] | None = None

    @property
    def crossings(self) -> Crossings | None:
        return self.lyapunov.crossings


def section_coordinates(mechanism: AbstractMechanism, section: Trajectory) -> Float[Array, "samples d"]:
    """Dimensionless section coordinates for the period test: each clearance joint's
    eccentricity divided by its clearance, or, without clearance joints, the bodies'
    centre positions and velocities each divided by their largest magnitude (angles, which
    grow by whole turns, are left out)."""
    samples = section.t.shape[0]
    if mechanism.clearance_joints:
        clearances = jnp.stack([joint.clearance for joint in mechanism.clearance_joints])
        return (section.eccentricity / clearances[:, None]).reshape(samples, -1)
    positions = section.body_positions.reshape(samples, -1)
    velocities = section.body_velocities.reshape(samples, -1)
    return jnp.concatenate([part / jnp.maximum(jnp.max(jnp.abs(part)), 1e-12) for part in (positions, velocities)], axis=1)


def section_times(mechanism: AbstractMechanism, *, transient_periods: int, periods: int,
                  phase: ArrayLike = 0.0) -> Float[Array, " periods"]:
    """The stroboscopic section's times (s) of a solve from ``t = 0``:
    ``(phase / 2 pi + transient_periods + k + 1) T`` for ``k < periods``, ``T`` the driver
    period (:func:`driver_period`); those of :func:`mechanism_section` without ``start``."""
    period_s = driver_period(mechanism)
    start = phase / (2.0 * math.pi) * period_s
    return start + (transient_periods + 1 + jnp.arange(periods)) * period_s


def _stroboscopic(mechanism, times, sections, max_period, period_tolerance):
    section = trajectory_from_states(mechanism, times, mechanism.unflatten(sections))
    return section, section_period(section_coordinates(mechanism, section), max_period, period_tolerance)


def sampled_section(
    mechanism: AbstractMechanism,
    times: Float[Array, " periods"],
    sections: Float[Array, "periods n"],
    success: Bool[Array, ""],
    *,
    max_period: int = 8,
    period_tolerance: ArrayLike = 1e-3,
) -> MechanismSection:
    """The :class:`MechanismSection` without exponents of section states (flat) already
    sampled at ``times`` (s; :func:`section_times`), e.g. by the refilling lanes of
    :func:`model.integrate.ensemble.solve_ensemble`: the same period test and motion class
    as :func:`mechanism_section` with ``num_exponents = 0``. ``success``: the solve that
    sampled them ended without a failure (the states are also checked finite)."""
    section, period = _stroboscopic(mechanism, times, sections, max_period, period_tolerance)
    success = success & jnp.all(jnp.isfinite(sections[-1]))
    empty = jnp.zeros((0,), sections.dtype)
    result = LyapunovResult(empty, jnp.zeros((sections.shape[0], 0), sections.dtype), empty, sections, times, success)
    motion = classify_motion(period, None, None, 0.0, success)
    return MechanismSection(result, section, period, motion)


class ContinuedStart(eqx.Module):
    """A start taken over from a neighbouring run (numerical continuation along a
    parameter): ``state``, a flat state that run reached at its section phase after
    ``elapsed_periods`` whole driver periods (its last section), and ``active``, whether
    to use it (else the mechanism's own initial state). Both are traced, so one compiled
    section serves the first value of a continuation and the continued ones."""

    state: Float[Array, " n"]
    elapsed_periods: Float[Array, ""]
    active: Bool[Array, ""]


def mechanism_section(
    mechanism: AbstractMechanism,
    settings: SolverSettings,
    *,
    transient_periods: int,
    periods: int,
    phase: ArrayLike = 0.0,
    num_exponents: int = 1,
    max_period: int = 8,
    period_tolerance: ArrayLike = 1e-3,
    chaos_threshold: ArrayLike = 0.01,
    reverse_differentiable: bool = True,
    start: ContinuedStart | None = None,
    hyperplane: Hyperplane | None = None,
    crossing_transient: ArrayLike | None = None,
) -> MechanismSection:
    """Section, exponents and motion class of ``mechanism`` (planar or spatial, with a
    constant-speed driver) integrated with ``settings``' explicit solver and step-size control.

    ``phase`` (rad): driver angle of the section past its initial angle; ``periods``
    section samples after ``transient_periods`` discarded periods; ``num_exponents = 0``
    skips the exponents. ``period_tolerance``: in section coordinates
    (:func:`section_coordinates`); ``chaos_threshold``: the largest exponent times the
    driver period above which a non-periodic motion is chaotic. ``reverse_differentiable``:
    diffrax's checkpointed loop and solver, which ``jax.grad`` goes through; ``False``
    solves in forward mode with the lean explicit steps of :mod:`model.integrate.explicit`
    (``jax.jvp`` goes through; faster to trace and to run).

    ``start`` (active): the solve begins from ``start.state`` at the time ``t0 = (phase / 2
    pi + elapsed_periods) T`` of this mechanism's driver period ``T``, where the driver's
    prescribed angle equals the one the state reached (its phase plus whole turns), after
    projecting the state onto this mechanism's ideal joints at ``t0`` (a changed driver
    speed changes the velocities the joints allow; trees need no projection); the section
    samples then follow at ``t0 + (transient_periods + k + 1) T``.

    ``hyperplane`` (its quantity e.g. a :class:`SectionQuantity`): also the crossings of
    that hyperplane over the same solve, located on the accepted steps' dense output
    (:mod:`model.nonlinear.crossings`), counted from ``crossing_transient`` seconds after
    the start (default: the end of the transient periods, where the stroboscopic samples
    begin); the period test then runs on the crossings (:func:`crossing_period`).
    """
    if settings.solver not in EXPLICIT_SOLVERS:
        raise ValueError(f"the exponents integrate the tangents with an explicit solver; got {settings.solver!r} "
                         f"(choose one of {sorted(EXPLICIT_SOLVERS)})")
    period_s = driver_period(mechanism)
    y0 = mechanism.flatten(mechanism.initial_state())
    t0, offset = jnp.asarray(0.0), phase / (2.0 * math.pi) * period_s
    if start is not None:
        t_continued = (phase / (2.0 * math.pi) + start.elapsed_periods) * period_s
        y0 = jnp.where(start.active, mechanism.project(t_continued, start.state), y0)
        t0 = jnp.where(start.active, t_continued, t0)
        offset = jnp.where(start.active, 0.0, offset)
    result = lyapunov_exponents(
        flat_vector_field, y0, mechanism, t0=t0, interval=period_s, num_intervals=periods,
        num_exponents=num_exponents, transient_intervals=transient_periods,
        offset=offset,
        solver=make_solver(settings, mechanism=mechanism, reverse_differentiable=reverse_differentiable),
        stepsize_controller=_controller(mechanism, settings), max_steps=settings.max_steps,
        mask=tangent_mask(mechanism, y0),
        adjoint=diffrax.RecursiveCheckpointAdjoint() if reverse_differentiable else diffrax.ForwardMode(),
        hyperplane=hyperplane, crossings_start=None if crossing_transient is None else t0 + crossing_transient,
    )
    crossing_section = distinct = None
    if hyperplane is None:
        section, period = _stroboscopic(mechanism, result.section_times, result.sections, max_period,
                                        period_tolerance)
    else:
        crossings = result.crossings
        stored = jnp.arange(hyperplane.capacity) < crossings.stored
        states = jnp.where(stored[:, None], crossings.states, crossings.states[0])
        times = jnp.where(stored, crossings.times, crossings.times[0])
        # the section and the crossings post-processed together: one trace of the evaluation
        both = trajectory_from_states(mechanism, jnp.concatenate([result.section_times, times]),
                                      mechanism.unflatten(jnp.concatenate([result.sections, states])))
        section = jax.tree.map(lambda leaf: leaf[:periods] if jnp.ndim(leaf) else leaf, both)
        crossing_section = jax.tree.map(lambda leaf: leaf[periods:] if jnp.ndim(leaf) else leaf, both)
        period, distinct = crossing_period(section_coordinates(mechanism, crossing_section), times, crossings.count,
                                           period_s, max_period, period_tolerance)
    largest = result.exponents[0] if num_exponents else None
    change = result.change[0] if num_exponents else None
    motion = classify_motion(period, largest, change, chaos_threshold / period_s, result.success)
    return MechanismSection(result, section, period, motion, crossing_section, distinct)


__all__ = ["QUANTITY_KINDS", "ContinuedStart", "MechanismSection", "SectionQuantity", "driver_period",
           "mechanism_section", "periodic_driver", "sampled_section", "section_coordinates", "section_times",
           "tangent_mask"]
