"""Multi-start fitting with optax: Adam or L-BFGS, gradients through the solver.

All starts advance together: every evaluation is one compiled call that ``jax.vmap``\\ s the
simulation (and its forward- or reverse-mode derivative) over the starts. The optimiser
state is batched the same way. A start stops moving once it has converged (or its solver
failed); the loop ends when every start has stopped or after ``steps`` iterations.

L-BFGS is ``optax.lbfgs`` with its zoom line search. The line search needs the loss at
trial points inside its own compiled update; rather than compiling the simulation a second
time inside it, the loss it sees is a ``jax.pure_callback`` to the already-compiled batched
evaluation, with a ``jax.custom_vjp`` that hands back the gradient computed alongside
(forward or reverse mode). The physics stays one compiled function.

Convergence of a start (any of): the largest gradient component in the unconstrained space
``< gradient_tolerance``; the loss changed by less than ``tolerance`` (relative) over
``patience`` consecutive steps; the step in ``u`` is below ``step_tolerance``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .problem import CalibrationProblem, Evaluation, evaluate_forward, evaluate_reverse

OPTIMIZERS = ("adam", "lbfgs")
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
    tolerance: float | None = None  # relative loss change; default 1e-4 (adam) / 1e-9 (lbfgs)
    patience: int | None = None  # steps the loss change must stay small; default 10 (adam) / 2 (lbfgs)
    gradient_tolerance: float = 1e-8
    step_tolerance: float = 1e-8
    memory_size: int = 10  # L-BFGS
    linesearch_steps: int = 12  # L-BFGS zoom line search
    gradient: str = "auto"  # auto | forward | reverse

    def resolved_tolerance(self) -> float:
        return self.tolerance if self.tolerance is not None else (1e-4 if self.name == "adam" else 1e-9)

    def resolved_patience(self) -> int:
        return self.patience if self.patience is not None else (10 if self.name == "adam" else 2)

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
    return jax.tree_util.tree_map(np.asarray, evaluation)


class _Evaluator:
    """The compiled batched evaluation, counted; also the host side of the L-BFGS callback."""

    def __init__(self, problem: CalibrationProblem, mode: str):
        self.problem, self.count = problem, 0
        self.function = evaluate_forward if mode == "forward" else evaluate_reverse

    def __call__(self, U) -> Evaluation:
        self.count += 1
        return _to_numpy(self.function(self.problem, jnp.asarray(U, jnp.float64)))

    def value_and_gradient(self, U):
        """Host callback: ``U`` is ``[p]`` or ``[starts, p]``; NaN (failed solves) become +inf so
        a line search backs off instead of propagating NaN."""
        U = np.asarray(U, np.float64)
        batch = U.reshape(-1, U.shape[-1])
        evaluation = self(batch)
        value = np.where(np.isfinite(evaluation.loss), evaluation.loss, np.inf)
        gradient = np.where(np.isfinite(evaluation.gradient), evaluation.gradient, 0.0)
        return value.reshape(U.shape[:-1]), gradient.reshape(U.shape)


def _callback_loss(evaluator: _Evaluator) -> Callable:
    """A traceable loss of one point ``u`` whose value and gradient come from ``evaluator``."""

    def host(u):
        return evaluator.value_and_gradient(u)

    def call(u):
        shapes = (jax.ShapeDtypeStruct(u.shape[:-1], jnp.float64), jax.ShapeDtypeStruct(u.shape, jnp.float64))
        return jax.pure_callback(host, shapes, u, vmap_method="expand_dims")

    @jax.custom_vjp
    def loss(u):
        return call(u)[0]

    def forward(u):
        value, gradient = call(u)
        return value, gradient

    def backward(gradient, cotangent):
        return (cotangent * gradient,)

    loss.defvjp(forward, backward)
    return loss


def _optimizer(options: OptimizerOptions) -> optax.GradientTransformationExtraArgs:
    if options.name == "adam":
        return optax.adam(options.learning_rate)
    if options.name == "lbfgs":
        return optax.lbfgs(
            memory_size=options.memory_size,
            linesearch=optax.scale_by_zoom_linesearch(max_linesearch_steps=options.linesearch_steps, initial_guess_strategy="one"),
        )
    raise ValueError(f"unknown optimizer {options.name!r}; expected one of {OPTIMIZERS}")


def _select(mask, new, old):
    """Per start: ``new`` where ``mask`` else ``old`` (leaves have the starts first)."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b), new, old)


def fit(problem: CalibrationProblem, start_points: np.ndarray, options: OptimizerOptions, progress: bool = True) -> FitResult:
    """Minimise the problem's loss from every row of ``start_points`` (unconstrained)."""
    from tqdm.auto import tqdm

    mode = options.gradient_mode(start_points.shape[1])
    evaluator = _Evaluator(problem, mode)
    optimizer = _optimizer(options)
    U = np.asarray(start_points, np.float64)
    starts = U.shape[0]

    began = time.perf_counter()
    first = evaluator(U)
    first_call_seconds = time.perf_counter() - began
    values, gradients = first.loss.copy(), first.gradient.copy()
    histories = [[float(v)] for v in values]
    active = np.isfinite(values)
    reasons = ["" if ok else "solver failed at the start point" for ok in active]
    converged = np.zeros(starts, bool)
    steps_taken = np.zeros(starts, int)
    quiet_steps = np.zeros(starts, int)
    tolerance, patience = options.resolved_tolerance(), options.resolved_patience()

    state = jax.vmap(optimizer.init)(jnp.asarray(U))
    if options.name == "lbfgs":
        loss = _callback_loss(evaluator)
        update = jax.jit(jax.vmap(lambda g, s, u, v: optimizer.update(g, s, u, value=v, grad=g, value_fn=loss)))
    else:
        update = jax.jit(jax.vmap(lambda g, s, u, v: optimizer.update(g, s, u)))

    bar = tqdm(range(options.steps), desc=f"calibrate ({options.name}, {starts} start{'s' * (starts > 1)})", disable=not progress, leave=False)
    for _ in bar:
        if not active.any():
            break
        mask = jnp.asarray(active)
        updates, new_state = update(jnp.asarray(gradients), state, jnp.asarray(U), jnp.asarray(values))
        state = _select(mask, new_state, state)
        new_U = np.where(active[:, None], U + np.asarray(updates), U)
        if options.name == "lbfgs":
            # the line search already evaluated the accepted point: reuse its value and gradient
            new_values = np.asarray(optax.tree_utils.tree_get(state, "value"))
            new_gradients = np.asarray(optax.tree_utils.tree_get(state, "grad"))
        else:
            evaluation = evaluator(new_U)
            new_values, new_gradients = evaluation.loss, evaluation.gradient
        for s in np.flatnonzero(active):
            steps_taken[s] += 1
            if not np.isfinite(new_values[s]):
                active[s], reasons[s] = False, "solver failed; kept the last good point"
                continue
            change = abs(values[s] - new_values[s]) / max(abs(new_values[s]), 1e-300)
            step = np.max(np.abs(new_U[s] - U[s]))
            U[s], values[s], gradients[s] = new_U[s], new_values[s], new_gradients[s]
            histories[s].append(float(values[s]))
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
        best = np.nanmin(np.where(np.isfinite(values), values, np.nan)) if np.isfinite(values).any() else np.nan
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
