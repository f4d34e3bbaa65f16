"""Multi-start fitting on one window: optimistix Levenberg–Marquardt (default), BFGS or
L-BFGS, or optax Adam; every start advances in the same compiled, ``jax.vmap``-ped call.

- ``levenberg_marquardt``: ``optx.LevenbergMarquardt`` through ``optx.least_squares``
  (trust-region damping, QR solve of the damped normal equations; Moré 1978).
- ``bfgs`` / ``lbfgs``: ``optx.BFGS`` / ``optx.LBFGS`` on ``0.5 sum r^2`` through
  ``optx.least_squares`` (which minimises that), with their backtracking Armijo line search.
- ``adam``: ``optax.adam``, one batched evaluation per step, stopped per start when the
  relative loss change stays below ``tolerance`` for ``patience`` steps.

The optimistix solvers see the residuals through :func:`forward_residuals`: its primal
pass computes the residuals *and* their Jacobian in one forward-mode solve (``jax.jacfwd``
with diffrax's forward-mode adjoint), and its JVP rule is the product with that Jacobian.
So ``jax.linearize`` inside the solver costs one simulation with ``p`` tangents per step,
and the reverse-mode gradient the quasi-Newton solvers take is a transpose of that product,
never a reverse pass through the ODE solver.

Loss reported everywhere: ``mean(r^2)`` over the residuals that count.
"""

from __future__ import annotations

import dataclasses
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import optimistix as optx

from .problem import CalibrationProblem, Evaluation, evaluate_forward, evaluate_reverse

OPTIMIZERS = ("levenberg_marquardt", "bfgs", "lbfgs", "adam")
STRATEGIES = ("auto", "continuation", "direct")
GRADIENT_MODES = ("auto", "forward", "reverse")
# With "auto", forward mode up to this many parameters (its cost grows with their number).
FORWARD_MODE_MAX_PARAMETERS = 6


@dataclasses.dataclass(frozen=True)
class OptimizerOptions:
    """``[optimizer]`` of a calibration config."""

    name: str = "levenberg_marquardt"
    steps: int = 200  # per window (continuation: per stage; adam: its polish)
    starts: int = 4
    strategy: str = "auto"  # auto | continuation | direct (see continuation.py)
    learning_rate: float = 0.02  # Adam, in unconstrained units per step
    spread: float = 0.2  # of the extra starts around the initial values (see ParameterTransform.starts)
    seed: int = 0
    tolerance: float | None = None  # relative change of u and of 0.5 sum r^2 (optimistix rtol = atol); default 1e-3
    patience: int | None = None  # adam: steps the loss change must stay small (default 10)
    gradient: str = "auto"  # auto | forward | reverse

    def resolved_tolerance(self) -> float:
        # The loss carries the adaptive solver's noise: tighter than 1e-3 the solvers keep
        # stepping to their step limits (1e-4 reached the same optimum in 40 steps).
        return self.tolerance if self.tolerance is not None else 1e-3

    def resolved_patience(self) -> int:
        return self.patience if self.patience is not None else 10

    def gradient_mode(self, num_parameters: int) -> str:
        if self.gradient != "auto":
            return self.gradient
        return "forward" if num_parameters <= FORWARD_MODE_MAX_PARAMETERS else "reverse"


@dataclasses.dataclass
class FitResult:
    """What :func:`fit` found, per start (index 0 starts at the configured initial values)."""

    start_points: np.ndarray  # [starts, p], unconstrained
    final_points: np.ndarray  # [starts, p], unconstrained
    losses: np.ndarray  # [starts] at final_points
    histories: list[list[float]]  # per start: loss at the start, (adam: after every step), at the end
    converged: np.ndarray  # [starts] bool
    reasons: list[str]  # per start: why it stopped
    steps_taken: np.ndarray  # [starts]
    evaluations: int  # batched evaluations (each simulates every start)
    first: Evaluation  # at the start points
    last: Evaluation  # at the final points
    first_call_seconds: float  # compile + one evaluation
    fit_seconds: float

    @property
    def best(self) -> int:
        losses = np.where(np.isfinite(self.losses), self.losses, np.inf)
        return int(np.argmin(losses))


@eqx.filter_custom_jvp
def forward_residuals(u, problem: CalibrationProblem):
    """The problem's residuals at unconstrained ``u`` (see the module docstring)."""
    return problem.residuals(u)[0]


@forward_residuals.def_jvp
def _forward_residuals_jvp(primals, tangents):
    u, problem = primals
    du = tangents[0]
    jacobian, residual = jax.jacfwd(lambda v: (lambda r: (r, r))(problem.residuals(v)[0]), has_aux=True)(u)
    return residual, jacobian @ (jnp.zeros_like(u) if du is None else du)


def _solver(options: OptimizerOptions):
    tolerance = options.resolved_tolerance()
    if options.name == "levenberg_marquardt":
        return optx.LevenbergMarquardt(rtol=tolerance, atol=tolerance)
    if options.name == "bfgs":
        return optx.BFGS(rtol=tolerance, atol=tolerance)
    if options.name == "lbfgs":
        return optx.LBFGS(rtol=tolerance, atol=tolerance)
    raise ValueError(f"no optimistix solver for {options.name!r}")


@eqx.filter_jit
def _solve_batch(problem: CalibrationProblem, U, solver, max_steps: int):
    """``optx.least_squares`` from every row of ``U`` at once."""

    def one(u0):
        solution = optx.least_squares(lambda u, p: forward_residuals(u, p), solver, u0, args=problem,
                                      max_steps=max_steps, throw=False)
        return solution.value, solution.result == optx.RESULTS.successful, solution.stats["num_steps"]

    return jax.vmap(one)(U)


def _to_numpy(evaluation: Evaluation) -> Evaluation:
    return jax.tree_util.tree_map(np.array, evaluation)  # writable copies


class _Evaluator:
    """The compiled batched evaluation, with a count of the calls."""

    def __init__(self, problem: CalibrationProblem, mode: str):
        self.problem, self.count = problem, 0
        self.function = evaluate_forward if mode == "forward" else evaluate_reverse

    def __call__(self, U) -> Evaluation:
        self.count += 1
        return _to_numpy(self.function(self.problem, jnp.asarray(U, jnp.float64)))


def _adam(evaluator: _Evaluator, first: Evaluation, U: np.ndarray, options: OptimizerOptions):
    """Batched Adam; a start stops when its loss change stays below tolerance or its solver fails."""
    optimizer = optax.adam(options.learning_rate)
    state = jax.vmap(optimizer.init)(jnp.asarray(U))
    update = jax.jit(jax.vmap(optimizer.update))
    values, gradients = np.array(first.loss), np.array(first.gradient)
    best_U, best_values = U.copy(), values.copy()
    histories = [[float(v)] for v in values]
    active = np.isfinite(values)
    reasons = ["" if ok else "solver failed at the start point" for ok in active]
    converged, steps, quiet = np.zeros(U.shape[0], bool), np.zeros(U.shape[0], int), np.zeros(U.shape[0], int)
    tolerance, patience = options.resolved_tolerance(), options.resolved_patience()
    for _ in range(options.steps):
        if not active.any():
            break
        updates, new_state = update(jnp.asarray(gradients), state, jnp.asarray(U))
        mask = jnp.asarray(active)
        state = jax.tree_util.tree_map(lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b), new_state, state)
        U = np.where(active[:, None], U + np.asarray(updates), U)
        evaluation = evaluator(U)
        for s in np.flatnonzero(active):
            steps[s] += 1
            if not np.isfinite(evaluation.loss[s]):
                active[s], reasons[s] = False, "solver failed; kept the best point"
                continue
            change = abs(values[s] - evaluation.loss[s]) / max(abs(evaluation.loss[s]), 1e-300)
            values[s], gradients[s] = evaluation.loss[s], evaluation.gradient[s]
            histories[s].append(float(values[s]))
            if values[s] < best_values[s]:
                best_U[s], best_values[s] = U[s], values[s]
            quiet[s] = quiet[s] + 1 if change < tolerance else 0
            if quiet[s] >= patience:
                active[s], converged[s], reasons[s] = False, True, f"loss change below {tolerance:g} for {patience} steps"
    reasons = [reason or f"step limit ({options.steps}) reached" for reason in reasons]
    return best_U, histories, converged, reasons, steps


def fit(problem: CalibrationProblem, start_points: np.ndarray, options: OptimizerOptions, progress: bool = True) -> FitResult:
    """Minimise the problem's loss (on its current window) from every row of ``start_points``."""
    mode = options.gradient_mode(start_points.shape[1])
    if options.name != "adam" and mode != "forward":
        raise ValueError(f"{options.name} takes the residual Jacobian by forward mode: use gradient = \"forward\"")
    evaluator = _Evaluator(problem, mode)
    U = np.array(start_points, np.float64)
    began = time.perf_counter()
    first = evaluator(U)
    first_call_seconds = time.perf_counter() - began
    if options.name == "adam":
        final, histories, converged, reasons, steps = _adam(evaluator, first, U, options)
    else:
        final, converged, steps = (np.array(a) for a in _solve_batch(problem, jnp.asarray(U), _solver(options), options.steps))
        evaluator.count += int(np.max(steps, initial=0))
        reasons = ["converged (optimistix tolerances)" if ok else f"stopped after {n} steps without meeting the tolerances"
                   for ok, n in zip(converged, steps)]
        histories = None
    last = evaluator(final)
    if histories is None:
        histories = [[float(a), float(b)] for a, b in zip(first.loss, last.loss)]
    failed = ~np.isfinite(last.loss)
    for s in np.flatnonzero(failed):
        reasons[s], converged[s] = "the solver failed at the fitted point", False
    return FitResult(
        start_points=np.asarray(start_points, np.float64), final_points=final, losses=np.asarray(last.loss),
        histories=histories, converged=np.asarray(converged, bool), reasons=reasons, steps_taken=np.asarray(steps),
        evaluations=evaluator.count, first=first, last=last, first_call_seconds=first_call_seconds,
        fit_seconds=time.perf_counter() - began,
    )
