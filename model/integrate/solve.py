"""Time integration with diffrax: solver and controller factories, ``solve`` and ``simulate``.

:func:`simulate` is a pure function of the :class:`~model.Mechanism` pytree, so
``jax.jit``, ``jax.vmap`` (parameter sweeps) and ``jax.grad``/``jax.jvp`` (calibration,
design) go straight through it. The solver settings are static.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from diffrax import CalculateJacobian
from jaxtyping import ArrayLike, PyTree

from ..mechanics.interface import AbstractMechanism, flat_vector_field
from ._diffrax import result_code
from .chord import root_finder
from .explicit import LEAN_STAGE_SOLVERS
from .peaks import PeakTracking
from .projection import ConstraintProjection
from .settings import (EXPLICIT_SOLVERS, JACOBIAN_MODES, ROSENBROCK_SOLVERS, ROSENBROCK_W_SOLVERS, SOLVERS,
                       SolverSettings)
from .step_bound import OpenJointStepBound
from .step_guard import NonFiniteStepsCarryNoGradient, RejectNonFinite
from .trajectory import SpatialTrajectory, Trajectory, trajectory_from_states
from .wear_tracking import WearAccumulation, WearTracking
from ..contact.wear import ArchardWear


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


def make_solver(settings: SolverSettings, rtol: ArrayLike | None = None, atol: ArrayLike | None = None,
                mechanism: AbstractMechanism | None = None, reverse_differentiable: bool | None = None):
    """The diffrax solver of ``settings`` (``rtol``/``atol`` override the settings' ones
    for the root finder; they may be traced arrays). ``mechanism``: the one to be solved,
    whose state layout (``second_order_size``) a Rosenbrock-W solver uses.

    An explicit solver is diffrax's own where a reverse pass may recompute its steps
    (``reverse_differentiable``, default: ``settings.adjoint == "checkpoint"``), and
    otherwise the same method with the faster stage loop of :mod:`model.integrate.explicit`
    (whose reverse-mode gradients on long stiff runs are noisier: that module's docstring).
    The solves wrap it in :func:`with_projection`."""
    if settings.solver not in SOLVERS:
        raise ValueError(f"unknown solver {settings.solver!r}; choose from {sorted(SOLVERS)} or resolve 'auto' "
                         "with model.resolve_solver before simulating")
    solver_class = SOLVERS[settings.solver]
    if settings.solver in ROSENBROCK_W_SOLVERS:
        layout = None if mechanism is None else mechanism.second_order_size
        return solver_class(jacobian_reuse=settings.jacobian_reuse, second_order_size=layout)
    if settings.solver in EXPLICIT_SOLVERS:
        if reverse_differentiable is None:
            reverse_differentiable = settings.adjoint == "checkpoint"
        return solver_class() if reverse_differentiable else LEAN_STAGE_SOLVERS[settings.solver]()
    if settings.solver in ROSENBROCK_SOLVERS:
        return solver_class()
    if settings.jacobian not in JACOBIAN_MODES:
        raise ValueError(f"unknown jacobian mode {settings.jacobian!r}; choose from {JACOBIAN_MODES}")
    if settings.jacobian == "stage":
        # a subclass is the only way to change diffrax's class-level Jacobian schedule
        solver_class = type(solver_class.__name__ + "EveryStage", (solver_class,),
                            {"calculate_jacobian": CalculateJacobian.every_stage})
    rtol = settings.rtol if rtol is None else rtol
    atol = settings.atol if atol is None else atol
    return solver_class(root_finder=root_finder(settings, rtol, atol), root_find_max_steps=settings.root_max_steps)


def with_projection(solver: diffrax.AbstractSolver, settings: SolverSettings, mechanism: AbstractMechanism
                    ) -> diffrax.AbstractSolver:
    """``solver`` wrapped in :class:`~model.integrate.projection.ConstraintProjection` when
    ``settings.projection_iterations`` > 0 (the default) and ``mechanism`` has constraint
    rows to drift from (``mechanism.constrained``; a tree in joint coordinates has none):
    each step's end is projected onto the ideal joints' constraints. What :func:`solve`
    and the refilling lanes step."""
    if settings.projection_iterations > 0 and mechanism.constrained:
        return ConstraintProjection(solver, settings.projection_iterations)
    return solver


def make_controller(mechanism: AbstractMechanism, settings: SolverSettings, rtol=None, atol=None
                    ) -> diffrax.AbstractAdaptiveStepSizeController:
    """The step-size controller of ``settings``: a ``diffrax.PIDController`` (``dtmax`` in
    seconds) that rejects a step whose candidate state or error estimate is not finite
    (:class:`model.integrate.step_guard.RejectNonFinite`), wrapped in
    :class:`model.integrate.step_bound.OpenJointStepBound` when ``dtmax_contact_share`` is set and
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
    mechanism: AbstractMechanism,
    settings: SolverSettings,
    y0: PyTree | None = None,
    rtol: ArrayLike | None = None,
    atol: ArrayLike | None = None,
    wear: ArchardWear | None = None,
) -> diffrax.Solution:
    """Integrate the equations of motion from ``t = 0`` to ``settings.t_end``.

    The integrator steps the flat state (:meth:`AbstractMechanism.flat_vector_field`);
    ``y0`` and the returned solution's ``ys`` are the mechanism's state pytree (a planar
    :class:`~model.State`, a spatial ``SpatialState``), and its ``solver_state`` holds
    the contact peaks of the accepted steps (:class:`model.integrate.peaks.PeakTracking`).
    ``rtol``/``atol``: optional (traced) tolerances replacing the settings' ones, so that a
    work-precision sweep compiles once per solver. ``wear``: also accumulate the Archard wear
    of a clearance joint's bushing over the accepted steps
    (:class:`model.integrate.wear_tracking.WearTracking`); the solver state is then
    ``(peak tracking's state, WearAccumulation)``.
    """
    y0 = mechanism.initial_state() if y0 is None else y0
    solver = with_projection(make_solver(settings, rtol, atol, mechanism), settings, mechanism)
    if settings.adjoint == "checkpoint":
        solver = NonFiniteStepsCarryNoGradient(solver)
    solver = PeakTracking(solver)
    if wear is not None:
        solver = WearTracking(solver, wear)
    solution = diffrax.diffeqsolve(
        _terms(settings.solver, flat_vector_field),
        solver,
        t0=0.0,
        t1=(settings.num_outputs - 1) * settings.output_interval,
        dt0=None,
        y0=mechanism.flatten(y0),
        args=mechanism,
        saveat=diffrax.SaveAt(ts=settings.output_times(), solver_state=True),
        stepsize_controller=make_controller(mechanism, settings, rtol, atol),
        max_steps=settings.max_steps,
        adjoint=_adjoint(settings.adjoint),
        throw=False,
        progress_meter=diffrax.TqdmProgressMeter(refresh_steps=PROGRESS_REFRESH_STEPS) if settings.progress
        else diffrax.NoProgressMeter(),
    )
    return eqx.tree_at(lambda s: s.ys, solution, mechanism.unflatten(solution.ys))


# accepted steps between two updates of the progress bar (``SolverSettings.progress``)
PROGRESS_REFRESH_STEPS = 200


def simulate(mechanism: AbstractMechanism, settings: SolverSettings, rtol: ArrayLike | None = None,
             atol: ArrayLike | None = None) -> Trajectory | SpatialTrajectory:
    """Solve and post-process: accelerations, contact forces and driver torques at every
    output time, from the saved states (no extra integration), and the contact peaks of
    the accepted steps (:mod:`model.integrate.peaks`).

    A failed solve (``max_steps`` reached, step size collapse, Newton failure) returns a
    non-zero ``result`` and the states diffrax leaves after the failure (``inf``); it
    never raises under ``jit``. ``rtol``/``atol``: see :func:`solve`.
    """
    solution = solve(mechanism, settings, rtol=rtol, atol=atol)
    return _trajectory(mechanism, solution, solution.solver_state)


def _trajectory(mechanism: AbstractMechanism, solution: diffrax.Solution, peak_state) -> Trajectory | SpatialTrajectory:
    return trajectory_from_states(
        mechanism, solution.ts, solution.ys, solution.stats["num_steps"], solution.stats["num_rejected_steps"],
        result_code(solution.result), PeakTracking.peaks(peak_state),
    )


def simulate_with_wear(mechanism: AbstractMechanism, settings: SolverSettings, wear: ArchardWear,
                       y0: PyTree | None = None) -> tuple[Trajectory, WearAccumulation]:
    """:func:`simulate` of a planar or spatial mechanism (absolute coordinates), and the
    Archard wear its joint ``wear.joint`` accumulated over the accepted steps from
    ``wear.start_time`` on (depth per angle bin of the bushing, m, and per slice for a
    cylindrical clearance joint; :mod:`model.integrate.wear_tracking`). The joint's current
    worn profile (its ``wear``) shapes the dynamics; the new wear does not (add it between
    runs). ``y0``: the initial state (default: the mechanism's consistent one)."""
    solution = solve(mechanism, settings, y0=y0, wear=wear)
    peak_state, accumulated = WearTracking.split(solution.solver_state)
    return _trajectory(mechanism, solution, peak_state), accumulated
