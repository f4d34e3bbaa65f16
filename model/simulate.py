"""Time integration with diffrax, and the trajectory a simulation returns.

:func:`simulate` is a pure function of the :class:`~model.mechanism.Mechanism` pytree, so
``jax.jit``, ``jax.vmap`` (parameter sweeps) and ``jax.grad``/``jax.jvp`` (calibration,
design) go straight through it. The solver settings are static.
"""

from __future__ import annotations

import math

from collections.abc import Callable
from typing import Any

import diffrax
import equinox as eqx
import jax
import jax.flatten_util
import jax.numpy as jnp
import jax.tree_util as jtu
import optimistix as optx
from diffrax._solver.runge_kutta import CalculateJacobian
from jaxtyping import Array, ArrayLike, Float, Int, Scalar

from .dynamics import State, evaluate, flat_vector_field, flatten_state, initial_state, unflatten_state
from .mechanism import Mechanism
from .rosenbrock import Rodas4, Rodas5P
from .step_bound import OpenJointStepBound
from .step_guard import RejectNonFinite

EXPLICIT_SOLVERS = {
    "tsit5": diffrax.Tsit5,
    "dopri5": diffrax.Dopri5,
    "dopri8": diffrax.Dopri8,
    "bosh3": diffrax.Bosh3,
}
IMPLICIT_SOLVERS = {
    "kvaerno3": diffrax.Kvaerno3,
    "kvaerno4": diffrax.Kvaerno4,
    "kvaerno5": diffrax.Kvaerno5,
    "kencarp3": diffrax.KenCarp3,
    "kencarp4": diffrax.KenCarp4,
    "kencarp5": diffrax.KenCarp5,
}
# linearly implicit: one exact Jacobian and one inverse per step, no Newton iteration
ROSENBROCK_SOLVERS = {
    "rodas4": Rodas4,
    "rodas5p": Rodas5P,
}
STIFF_SOLVERS = {**IMPLICIT_SOLVERS, **ROSENBROCK_SOLVERS}
SOLVERS = {**EXPLICIT_SOLVERS, **STIFF_SOLVERS}
JACOBIAN_MODES = ("chord", "step", "stage", "newton")


class SolverSettings(eqx.Module):
    """Static integration settings (SI units).

    Step-size control (``diffrax.PIDController``): ``rtol``/``atol`` on every state
    component; ``pcoeff``/``icoeff`` are the PI coefficients (defaults: the study in
    ``docs/integration.md``); ``dtmax`` bounds the step (s), and ``dtmax_contact_share``
    bounds a step that starts with a clearance joint open by that share of the shortest
    open joint's contact period ``model.contact_periods`` (the tighter of the two wins;
    :class:`model.step_bound.OpenJointStepBound`).

    The Rosenbrock solvers (``rodas4``, ``rodas5p``, :mod:`model.rosenbrock`) solve one
    linear system per stage with the exact Jacobian and have no root finder: the
    ``jacobian`` and ``root_*`` settings do not apply to them.

    Implicit solvers only (Kvaerno*, KenCarp*): the Newton-type root finder of every stage
    stops when the scaled update falls below ``root_kappa`` with the scale
    ``root_atol + root_rtol |y|``; ``None`` takes ``atol``/``rtol`` times
    ``root_tolerance_factor``. ``jacobian`` chooses how often the Jacobian is rebuilt:
    ``"step"`` once per step (diffrax's ``VeryChord``), ``"stage"`` once per stage,
    ``"newton"`` at every iteration (``optimistix.Newton``); ``root_max_steps`` caps the
    iterations per stage. A stage that does not converge rejects the step.
    ``"chord"`` (default) also builds the Jacobian once per step but, unlike the other
    three, tests convergence on the *state* increment each iteration makes (scaled like
    the step-size controller's error, RMS norm): :class:`StageChord`, see
    ``docs/integration.md``.
    """

    t_end: float = eqx.field(static=True)  # s
    output_interval: float = eqx.field(static=True)  # s
    solver: str = eqx.field(static=True, default="tsit5")
    rtol: float = eqx.field(static=True, default=1e-6)
    atol: float = eqx.field(static=True, default=1e-9)
    dtmax: float | None = eqx.field(static=True, default=None)  # s; None: unbounded
    max_steps: int = eqx.field(static=True, default=200_000)
    pcoeff: float = eqx.field(static=True, default=0.3)
    icoeff: float = eqx.field(static=True, default=0.4)
    adjoint: str = eqx.field(static=True, default="checkpoint")  # checkpoint (reverse) | forward
    dtmax_contact_share: float | None = eqx.field(static=True, default=0.2)
    jacobian: str = eqx.field(static=True, default="chord")  # chord | step | stage | newton
    root_rtol: float | None = eqx.field(static=True, default=None)
    root_atol: float | None = eqx.field(static=True, default=None)
    root_tolerance_factor: float = eqx.field(static=True, default=1.0)
    root_kappa: float = eqx.field(static=True, default=1e-2)
    root_max_steps: int = eqx.field(static=True, default=10)

    @property
    def num_outputs(self) -> int:
        return int(math.floor(self.t_end / self.output_interval + 1e-9)) + 1

    def output_times(self) -> Float[Array, " times"]:
        return jnp.linspace(0.0, (self.num_outputs - 1) * self.output_interval, self.num_outputs)


class Trajectory(eqx.Module):
    """A solved trajectory sampled at the output times (SI units).

    Per-joint arrays have the clearance joints on their last axis (``eccentricity``: the
    last two axes are joint, component).
    """

    t: Float[Array, " times"]
    q: Float[Array, "times coords"]
    qd: Float[Array, "times coords"]
    qdd: Float[Array, "times coords"]
    impact_memory: Float[Array, "times joints"]
    driver_work: Float[Array, " times"]
    eccentricity: Float[Array, "times joints 2"]
    penetration: Float[Array, "times joints"]
    normal_rate: Float[Array, "times joints"]
    slip_velocity: Float[Array, "times joints"]
    normal_force: Float[Array, "times joints"]
    tangential_force: Float[Array, "times joints"]
    driver_torques: Float[Array, "times drivers"]
    constraint_violation: Float[Array, " times"]
    steps: Int[Array, ""]
    rejected_steps: Int[Array, ""]
    result: Int[Array, ""]  # diffrax.RESULTS index; 0 = successful


def _terms(solver_name: str, field):
    if solver_name.startswith("kencarp"):
        # IMEX solvers take (explicit, implicit) parts; treating the whole field
        # implicitly keeps the contact stiffness in the Newton iteration.
        zero = diffrax.ODETerm(lambda t, y, args: jax.tree_util.tree_map(jnp.zeros_like, y))
        return diffrax.MultiTerm(zero, diffrax.ODETerm(field))
    return diffrax.ODETerm(field)


def _adjoint(name: str):
    if name == "forward":
        return diffrax.ForwardMode()
    if name == "checkpoint":
        return diffrax.RecursiveCheckpointAdjoint()
    raise ValueError(f"unknown adjoint {name!r} (checkpoint | forward)")


class _ChordState(eqx.Module):
    lu: tuple[Array, Array]  # LU factors and pivots of the flattened stage Jacobian
    diffsize: Scalar
    diffsize_prev: Scalar
    step: Int[Array, ""]


def _state_increment(diff, args, value):
    """State-space increment and stage state of an f- or k-space stage iterate.

    diffrax solves a stage in f-space (``f_i = vf(t_i, y_partial + a_ii prod(f_i, dt))``,
    FSAL ESDIRKs: Kvaerno*) with the arguments ``(stage_index, a_ii, vf, prod, t_i,
    y_partial, args, control)``, or in k-space (``k_i = vf_prod(..., y_partial + a_ii
    k_i)``: KenCarp*) with ``(stage_index, a_ii, vf_prod, t_i, y_partial, args,
    control)`` (``diffrax/_solver/runge_kutta.py``, ``_implicit_relation_f``/``_k``).
    """
    if len(args) == 8:
        _, diagonal, _, prod, _, y_partial, _, control = args
        increment, state_part = prod(diff, control), prod(value, control)
    elif len(args) == 7:
        _, diagonal, _, _, y_partial, _, _ = args
        increment, state_part = diff, value
    else:  # pragma: no cover - a diffrax change would land here
        raise TypeError(f"unexpected implicit-stage arguments ({len(args)} items); diffrax layout changed?")
    increment = jtu.tree_map(lambda d: diagonal * d, increment)
    stage_state = jtu.tree_map(lambda a, b: a + diagonal * b, y_partial, state_part)
    return increment, stage_state


class StageChord(optx.AbstractRootFinder):
    """Chord iteration for the stages of diffrax's implicit Runge-Kutta solvers, with the
    convergence test on the state increment (Hairer & Wanner, *Solving ODEs II*, IV.8).

    diffrax builds the Jacobian through :meth:`init` once per step (second stage,
    ``CalculateJacobian.second_stage``) and hands it to every later stage. Each iteration
    costs one vector-field evaluation and one LU back-substitution. The iteration stops
    when the estimated remaining error ``rate / (1 - rate) ||dy||`` (or, after the first
    iteration, ``||dy||`` itself) is below ``kappa``, ``dy`` being the change of the stage
    *state* scaled by ``atol + rtol |y|`` in the RMS norm, the scale the step-size
    controller uses. diffrax's ``VeryChord`` and optimistix's ``Newton`` measure the
    change of the stage *derivative* ``f`` against ``atol + rtol |f|`` instead: ``atol``
    in state units applied to accelerations (and, for ``Newton``, a residual below
    ``atol`` in absolute terms) cannot be met at contact onsets, which made the chord
    iteration "diverge" and full Newton rebuild the Jacobian 3-4 times per stage.
    A diverging (rate > 2) or non-converging stage fails, and diffrax rejects the step.
    """

    rtol: Any
    atol: Any
    kappa: float = 1e-2
    norm: Callable = optx.rms_norm

    def _factorise(self, fn, y, args):
        flat, unravel = jax.flatten_util.ravel_pytree(y)

        def jacobian():
            return jax.jacfwd(lambda v: jax.flatten_util.ravel_pytree(fn(unravel(v), args)[0])[0])(flat)

        # diffrax opens every step with a placeholder Jacobian at a zero diagonal (the
        # relation is then ``vf(y0) - f``, Jacobian ``-I``) that ESDIRKs overwrite before
        # their first implicit stage: skip its ``jacfwd`` (one Jacobian of two per step)
        identity = -jnp.eye(flat.size, dtype=flat.dtype)
        matrix = jax.lax.cond(args[1] == 0, lambda: identity, jacobian)
        return jax.lax.stop_gradient(jax.scipy.linalg.lu_factor(matrix))

    def init(self, fn, y, args, options, f_struct, aux_struct, tags):
        del f_struct, aux_struct, tags
        if "init_state" in options:  # the Jacobian diffrax built for this step
            return options["init_state"]
        dtype = jnp.result_type(*jtu.tree_leaves(y))
        return _ChordState(self._factorise(fn, y, args), jnp.array(jnp.inf, dtype), jnp.array(1.0, dtype), jnp.array(0))

    def step(self, fn, y, args, options, state, tags):
        del options, tags
        residual, aux = fn(y, args)
        flat_residual, unravel = jax.flatten_util.ravel_pytree(residual)
        diff = unravel(jax.scipy.linalg.lu_solve(state.lu, flat_residual))
        new_y = jtu.tree_map(lambda a, b: a - b, y, diff)
        increment, stage_state = _state_increment(diff, args, new_y)
        scaled = jtu.tree_map(lambda d, v: d / (self.atol + self.rtol * jnp.abs(v)), increment, stage_state)
        diffsize = jnp.asarray(self.norm(scaled), state.diffsize.dtype)
        return new_y, _ChordState(state.lu, diffsize, state.diffsize, state.step + 1), aux

    def terminate(self, fn, y, args, options, state, tags):
        del fn, y, args, options, tags
        rate = state.diffsize / state.diffsize_prev
        later = state.step >= 2
        small = state.diffsize < 1e-12
        converged_first = (state.step == 1) & (state.diffsize < self.kappa)
        converged = later & (rate < 1) & (state.diffsize * rate / (1 - rate) < self.kappa)
        diverged = later & (~jnp.isfinite(rate) | (rate > 2))
        done = (state.step >= 1) & (small | converged_first | converged | diverged)
        failed = diverged & ~small & ~converged
        return done, optx.RESULTS.where(failed, optx.RESULTS.nonlinear_divergence, optx.RESULTS.successful)

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        return y, aux, {}


def _root_finder(settings: SolverSettings, rtol, atol) -> optx.AbstractRootFinder:
    root_rtol = settings.root_tolerance_factor * rtol if settings.root_rtol is None else settings.root_rtol
    root_atol = settings.root_tolerance_factor * atol if settings.root_atol is None else settings.root_atol
    if settings.jacobian == "chord":
        return StageChord(rtol=root_rtol, atol=root_atol, kappa=settings.root_kappa)
    if settings.jacobian == "newton":
        return optx.Newton(rtol=root_rtol, atol=root_atol, kappa=settings.root_kappa)
    return diffrax.VeryChord(rtol=root_rtol, atol=root_atol, kappa=settings.root_kappa)


def make_solver(settings: SolverSettings, rtol: ArrayLike | None = None, atol: ArrayLike | None = None):
    """The diffrax solver of ``settings`` (``rtol``/``atol`` override the settings' ones
    for the root finder; they may be traced arrays)."""
    if settings.solver not in SOLVERS:
        raise ValueError(f"unknown solver {settings.solver!r}; choose from {sorted(SOLVERS)} or resolve 'auto' "
                         "with model.resolve_solver before simulating")
    solver_class = SOLVERS[settings.solver]
    if settings.solver in EXPLICIT_SOLVERS or settings.solver in ROSENBROCK_SOLVERS:
        return solver_class()
    if settings.jacobian not in JACOBIAN_MODES:
        raise ValueError(f"unknown jacobian mode {settings.jacobian!r}; choose from {JACOBIAN_MODES}")
    if settings.jacobian == "stage":
        # a subclass is the only way to change diffrax's class-level Jacobian schedule
        solver_class = type(solver_class.__name__ + "EveryStage", (solver_class,),
                            {"calculate_jacobian": CalculateJacobian.every_stage})
    rtol = settings.rtol if rtol is None else rtol
    atol = settings.atol if atol is None else atol
    return solver_class(root_finder=_root_finder(settings, rtol, atol), root_find_max_steps=settings.root_max_steps)


def make_controller(mechanism: Mechanism, settings: SolverSettings, rtol=None, atol=None
                    ) -> diffrax.AbstractAdaptiveStepSizeController:
    """The step-size controller of ``settings``: a ``diffrax.PIDController`` (``dtmax`` in
    seconds) that rejects a step whose candidate state or error estimate is not finite
    (:class:`model.step_guard.RejectNonFinite`), wrapped in
    :class:`model.step_bound.OpenJointStepBound` when ``dtmax_contact_share`` is set and
    the mechanism has clearance joints."""
    controller = RejectNonFinite(diffrax.PIDController(
        rtol=settings.rtol if rtol is None else rtol,
        atol=settings.atol if atol is None else atol,
        dtmax=settings.dtmax,
        pcoeff=settings.pcoeff,
        icoeff=settings.icoeff,
    ))
    if settings.dtmax_contact_share is None or not mechanism.clearance_joints:
        return controller
    return OpenJointStepBound(controller, settings.dtmax_contact_share)


def solve(
    mechanism: Mechanism,
    settings: SolverSettings,
    y0: State | None = None,
    rtol: ArrayLike | None = None,
    atol: ArrayLike | None = None,
) -> diffrax.Solution:
    """Integrate the equations of motion from ``t = 0`` to ``settings.t_end``.

    The integrator steps the flattened state (:func:`model.dynamics.flat_vector_field`);
    the returned solution's ``ys`` is a :class:`State` again.
    ``rtol``/``atol``: optional (traced) tolerances replacing the settings' ones, so that a
    work-precision sweep compiles once per solver.
    """
    y0 = initial_state(mechanism) if y0 is None else y0
    solution = diffrax.diffeqsolve(
        _terms(settings.solver, flat_vector_field),
        make_solver(settings, rtol, atol),
        t0=0.0,
        t1=(settings.num_outputs - 1) * settings.output_interval,
        dt0=None,
        y0=flatten_state(y0),
        args=mechanism,
        saveat=diffrax.SaveAt(ts=settings.output_times()),
        stepsize_controller=make_controller(mechanism, settings, rtol, atol),
        max_steps=settings.max_steps,
        adjoint=_adjoint(settings.adjoint),
        throw=False,
    )
    return eqx.tree_at(lambda s: s.ys, solution, unflatten_state(solution.ys, len(mechanism.clearance_joints)))


def simulate(mechanism: Mechanism, settings: SolverSettings, rtol: ArrayLike | None = None,
             atol: ArrayLike | None = None) -> Trajectory:
    """Solve and post-process: accelerations, contact forces and driver torques at every
    output time, from the saved states (no extra integration).

    A failed solve (``max_steps`` reached, step size collapse, Newton failure) returns a
    non-zero ``result`` and the states diffrax leaves after the failure (``inf``); it
    never raises under ``jit``. ``rtol``/``atol``: see :func:`solve`.
    """
    solution = solve(mechanism, settings, rtol=rtol, atol=atol)
    return trajectory_from_states(
        mechanism, solution.ts, solution.ys, solution.stats["num_steps"], solution.stats["num_rejected_steps"],
        solution.result._value,
    )


def trajectory_from_states(mechanism: Mechanism, t, states: State, steps=0, rejected_steps=0, result=0) -> Trajectory:
    """Accelerations, contact forces and driver torques at the saved ``states``: the
    post-processing of :func:`simulate`, also used for states from other integrators."""
    outputs = jax.vmap(lambda t_, y_: evaluate(mechanism, t_, y_))(t, states)
    return Trajectory(
        t=t,
        q=states.q,
        qd=states.qd,
        qdd=outputs.qdd,
        impact_memory=states.impact_memory,
        driver_work=states.driver_work,
        eccentricity=outputs.contact.eccentricity,
        penetration=outputs.contact.penetration,
        normal_rate=outputs.contact.normal_rate,
        slip_velocity=outputs.contact.slip_velocity,
        normal_force=outputs.contact.normal_force,
        tangential_force=outputs.contact.tangential_force,
        driver_torques=outputs.driver_torques,
        constraint_violation=outputs.constraint_violation,
        steps=jnp.asarray(steps),
        rejected_steps=jnp.asarray(rejected_steps),
        result=jnp.asarray(result),
    )


def result_message(code: int) -> str:
    """Human-readable diffrax outcome for :attr:`Trajectory.result`."""
    if int(code) == 0:
        return "ok"
    return diffrax.RESULTS._index_to_message[int(code)].strip() or f"solver failure {int(code)}"
