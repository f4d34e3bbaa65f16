"""Multi-start fitting: optax Adam or L-BFGS, or Levenberg–Marquardt; gradients through the solver.

All starts advance together: every evaluation is one compiled call that ``jax.vmap``\\ s the
simulation (and its forward- or reverse-mode derivative) over the starts. The optimiser
state is batched the same way. A start stops moving once it has converged (or its solver
failed); the loop ends when every start has stopped or after ``steps`` iterations.

L-BFGS takes its direction from ``optax.scale_by_lbfgs`` (the preconditioner of
``optax.lbfgs``) and does the Armijo backtracking line search here, batched over the starts:
``optax.lbfgs``'s own line search would need the loss inside its compiled update, i.e. the
simulation compiled a second time (or a host callback into JAX, which can deadlock on CPU).
Levenberg–Marquardt uses the residual Jacobian of forward mode directly (one evaluation per
step); for a handful of parameters on a least-squares loss it is usually the fastest.

Convergence of a start (any of): the largest gradient component in the unconstrained space
``< gradient_tolerance``; the loss changed by less than ``tolerance`` (relative) over
``patience`` consecutive steps; the step in ``u`` is below ``step_tolerance``; for
Levenberg–Marquardt, the decrease its Gauss–Newton model predicts is below ``tolerance``.
The loss is only piecewise smooth (an adaptive solver changes its steps as the parameters
move), so near the optimum the tolerances should stay well above round-off.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .problem import CalibrationProblem, Evaluation, evaluate_forward, evaluate_reverse

OPTIMIZERS = ("adam", "lbfgs", "levenberg_marquardt")
ARMIJO = 1e-4  # sufficient-decrease constant of the L-BFGS line search
MAX_DAMPING = 1e8  # Levenberg–Marquardt gives up on a start when its damping passes this
GRADIENT_MODES = ("auto", "forward", "reverse")
# With "auto", forward mode up to this many parameters (its cost grows with their number).
FORWARD_MODE_MAX_PARAMETERS = 6


@dataclasses.dataclass(frozen=True)
class OptimizerOptions:
    """``[optimizer]`` of a calibration config."""

    name: str = "adam"
    steps: int = 200
    starts: int = 1
    learning_rate: float = 0.05  # Adam, in unconstrained units per step
    spread: float = 0.2  # of the extra starts around the initial values (see ParameterTransform.starts)
    seed: int = 0
    tolerance: float | None = None  # relative loss change; default 1e-4 (adam) / 1e-6 (lbfgs)
    patience: int | None = None  # steps the loss change must stay small; default 10 (adam) / 2 (lbfgs)
    gradient_tolerance: float = 1e-8
    step_tolerance: float = 1e-6  # largest |du| of a step
    damping: float = 1e-2  # Levenberg–Marquardt: initial damping (relative to diag(J^T J))
    memory_size: int = 10  # L-BFGS
    linesearch_steps: int = 12  # L-BFGS backtracking line search (trials per step)
    gradient: str = "auto"  # auto | forward | reverse

    def resolved_tolerance(self) -> float:
        return self.tolerance if self.tolerance is not None else {"adam": 1e-4, "lbfgs": 1e-6}.get(self.name, 1e-4)

    def resolved_patience(self) -> int:
        return self.patience if self.patience is not None else {"adam": 10}.get(self.name, 2)

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
    histories: list[list[float]]  # per start: loss at the start and after every step it took
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


def _optimizer(options: OptimizerOptions) -> optax.GradientTransformation:
    """Adam, or the L-BFGS direction of ``optax.lbfgs`` (its line search is done here, see
    :func:`fit`)."""
    if options.name == "adam":
        return optax.adam(options.learning_rate)
    if options.name == "lbfgs":
        return optax.scale_by_lbfgs(memory_size=options.memory_size)
    raise ValueError(f"unknown optimizer {options.name!r}; expected one of {OPTIMIZERS}")


def _select(mask, new, old):
    """Per start: ``new`` where ``mask`` else ``old`` (leaves have the starts first)."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b), new, old)


def _backtracking(evaluator, U, values, gradients, direction, active, options):
    """Armijo backtracking along ``direction`` for every active start at once: each trial
    evaluates all starts in one batched call; a start whose step gives sufficient decrease
    keeps it, the others halve theirs (at most ``linesearch_steps`` trials). A direction
    that is not a descent direction is replaced by the steepest descent."""
    slope = np.sum(gradients * direction, axis=1)
    bad = ~(slope < 0)
    direction = np.where(bad[:, None], -gradients, direction)
    slope = np.where(bad, -np.sum(gradients**2, axis=1), slope)
    rate = np.ones(U.shape[0])
    pending, accepted = active.copy(), np.zeros(U.shape[0], bool)
    new_U, new_values, new_gradients = U.copy(), values.copy(), gradients.copy()
    for _ in range(options.linesearch_steps):
        trial = np.where(pending[:, None], U + rate[:, None] * direction, new_U)
        evaluation = evaluator(trial)
        ok = pending & np.isfinite(evaluation.loss) & (evaluation.loss <= values + ARMIJO * rate * slope)
        new_U[ok], new_values[ok], new_gradients[ok] = trial[ok], evaluation.loss[ok], evaluation.gradient[ok]
        accepted |= ok
        pending &= ~ok
        rate = np.where(pending, 0.5 * rate, rate)
        if not pending.any():
            break
    return new_U, new_values, new_gradients, accepted


def _levenberg_marquardt_step(residual: np.ndarray, jacobian: np.ndarray, damping: float) -> np.ndarray:
    """``du`` solving ``(J^T J + damping diag(J^T J)) du = -J^T r`` (Marquardt's scaling)."""
    information = jacobian.T @ jacobian
    diagonal = np.maximum(np.diag(information), 1e-12 * max(float(np.max(np.diag(information))), 1e-300))
    return np.linalg.solve(information + damping * np.diag(diagonal), -jacobian.T @ residual)


def fit(problem: CalibrationProblem, start_points: np.ndarray, options: OptimizerOptions, progress: bool = True) -> FitResult:
    """Minimise the problem's loss from every row of ``start_points`` (unconstrained)."""
    from tqdm.auto import tqdm

    mode = options.gradient_mode(start_points.shape[1])
    if options.name == "levenberg_marquardt" and mode != "forward":
        raise ValueError("levenberg_marquardt needs the residual Jacobian: use gradient = \"forward\"")
    evaluator = _Evaluator(problem, mode)
    U = np.array(start_points, np.float64)
    starts = U.shape[0]

    began = time.perf_counter()
    first = evaluator(U)
    first_call_seconds = time.perf_counter() - began
    current = first
    values, gradients = np.array(first.loss), np.array(first.gradient)
    histories = [[float(v)] for v in values]
    active = np.isfinite(values)
    reasons = ["" if ok else "solver failed at the start point" for ok in active]
    converged = np.zeros(starts, bool)
    steps_taken = np.zeros(starts, int)
    quiet_steps = np.zeros(starts, int)
    tolerance, patience = options.resolved_tolerance(), options.resolved_patience()

    if options.name == "levenberg_marquardt":
        damping = np.full(starts, options.damping)
        residuals, jacobians = np.array(first.residuals), np.array(first.jacobian)
    else:
        optimizer = _optimizer(options)
        state = jax.vmap(optimizer.init)(jnp.asarray(U))
        update = jax.jit(jax.vmap(optimizer.update))

    bar = tqdm(range(options.steps), desc=f"calibrate ({options.name}, {starts} start{'s' * (starts > 1)})", disable=not progress, leave=False)
    for _ in bar:
        if not active.any():
            break
        accepted = active.copy()
        if options.name == "levenberg_marquardt":
            steps = np.zeros_like(U)
            for s in np.flatnonzero(active):
                steps[s] = _levenberg_marquardt_step(residuals[s], jacobians[s], damping[s])
                # the Gauss–Newton model's own estimate of what is left to gain
                predicted = 1.0 - np.sum((residuals[s] + jacobians[s] @ steps[s]) ** 2) / max(np.sum(residuals[s] ** 2), 1e-300)
                if predicted < tolerance and damping[s] < 1.0:
                    active[s], converged[s], reasons[s] = False, True, f"predicted decrease below {tolerance:g}"
                    steps[s] = 0.0
            if not active.any():
                break
            evaluation = evaluator(U + steps)
            new_U = U + steps
            new_values, new_gradients = evaluation.loss, evaluation.gradient
            for s in np.flatnonzero(active):
                if np.isfinite(new_values[s]) and new_values[s] < values[s]:
                    damping[s] = max(damping[s] / 3.0, 1e-9)
                    residuals[s], jacobians[s] = evaluation.residuals[s], evaluation.jacobian[s]
                else:  # rejected: stay, and trust the linearisation less
                    accepted[s] = False
                    damping[s] *= 4.0
                    new_U[s], new_values[s], new_gradients[s] = U[s], values[s], gradients[s]
        else:
            mask = jnp.asarray(active)
            updates, new_state = update(jnp.asarray(gradients), state, jnp.asarray(U))
            state = _select(mask, new_state, state)
            if options.name == "lbfgs":
                new_U, new_values, new_gradients, accepted = _backtracking(evaluator, U, values, gradients, -np.asarray(updates), active, options)
            else:
                new_U = np.where(active[:, None], U + np.asarray(updates), U)
                evaluation = evaluator(new_U)
                new_values, new_gradients = np.array(evaluation.loss), np.array(evaluation.gradient)
        for s in np.flatnonzero(active):
            steps_taken[s] += 1
            if not np.isfinite(new_values[s]):
                active[s], reasons[s] = False, "solver failed; kept the last good point"
                continue
            change = abs(values[s] - new_values[s]) / max(abs(new_values[s]), 1e-300)
            step = np.max(np.abs(new_U[s] - U[s]))
            U[s], values[s], gradients[s] = new_U[s], new_values[s], new_gradients[s]
            histories[s].append(float(values[s]))
            if options.name == "levenberg_marquardt" and not accepted[s]:
                if damping[s] > MAX_DAMPING:
                    active[s], converged[s], reasons[s] = False, True, "no step decreases the loss further"
                continue
            if options.name == "lbfgs" and not accepted[s]:
                active[s], converged[s], reasons[s] = False, True, "line search found no decrease (at a minimum to working precision)"
                continue
            quiet_steps[s] = quiet_steps[s] + 1 if change < tolerance else 0
            if np.max(np.abs(gradients[s])) < options.gradient_tolerance:
                reasons[s] = "gradient below tolerance"
            elif quiet_steps[s] >= patience:
                reasons[s] = f"loss change below {tolerance:g} for {patience} steps"
            elif step < options.step_tolerance:
                reasons[s] = "step below tolerance"
            else:
                continue
            active[s], converged[s] = False, True
        best = np.min(np.where(np.isfinite(values), values, np.inf))
        bar.set_postfix(loss=f"{best:.4g}", running=int(active.sum()))
    bar.close()
    for s in range(starts):
        if not reasons[s]:
            reasons[s] = f"step limit ({options.steps}) reached"
    last = evaluator(U)
    return FitResult(
        start_points=np.asarray(start_points, np.float64), final_points=U, losses=np.asarray(last.loss),
        histories=histories, converged=converged, reasons=reasons, steps_taken=steps_taken,
        evaluations=evaluator.count, first=first, last=last, first_call_seconds=first_call_seconds,
        fit_seconds=time.perf_counter() - began,
    )
