"""Continuation in the horizon: fit a long, chaotic record without hand-chosen windows.

A mechanism with an impacting clearance joint is chaotic: after a few impacts a small
parameter change shifts every later impact, and a least-squares loss over a long record has
many local minima (Voss, Timmer & Kurths 2004 on chaotic parameter estimation; Baake et al.
1992 on windowing/multiple shooting). What is smooth is the loss over the *predictable*
part of the record. So the fit grows its window (Bock 1983's idea of following the data
with the trajectory, done here by continuation in the horizon):

1. **First window**: an eighth of a driver revolution (a quarter of the record when no
   driver has a constant speed), at least ``MIN_SAMPLES`` samples. Every start is fitted
   there (Levenberg–Marquardt, batched). The per-signal noise levels are then re-estimated
   from this fit's residuals (the model is the smoother) and the window refitted.
2. **Predictability**: at the fit, forward sensitivities ``J(t) = dr(t)/du`` over the whole
   record and the Gauss–Newton covariance ``C`` of the window give the spread that the
   remaining parameter uncertainty puts on every later sample, ``sigma(t)^2 = J(t) C
   J(t)^T`` (in noise units). Where it passes ``PREDICTABLE_SPREAD`` the trajectory is no
   longer pinned down by the current fit (sensitivities grow exponentially in the chaotic
   part).
3. **Extension**: the next window ends there, but grows by at least ``MIN_GROWTH`` and at
   most ``MAX_GROWTH`` times; it is fitted from the previous optimum and from points drawn
   from its covariance. The window is **consistent** when its reduced chi-square stays
   within ``CONSISTENCY`` times that of the first window. An inconsistent window is retried
   halfway; when that fails too the continuation stops and keeps the last consistent
   window: beyond it the model no longer follows the record (chaos, or model mismatch).
4. **Polish**: when the config names another optimiser (adam, bfgs, lbfgs), it gets the
   last window's optimum as its start; its result is kept only if the loss is lower.

Every evaluation simulates the whole record (the windows are masks, array leaves of the
problem), so the whole continuation compiles the simulation once per kind of call.
"""

from __future__ import annotations

import dataclasses
import math
import time

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .fit import FitResult, OptimizerOptions, fit
from .problem import CalibrationProblem, Evaluation, evaluate_forward

PREDICTABLE_SPREAD = 1.0  # predicted spread (noise units) where the trajectory stops being predictable
MIN_GROWTH, MAX_GROWTH = 1.25, 2.0  # window growth per stage
CONSISTENCY = 2.0  # reduced chi-square of a window against the first one
MIN_SAMPLES = 40
FIRST_STAGE_STEPS, STAGE_STEPS = 30, 15  # Levenberg–Marquardt steps per stage (at most; later stages start near the optimum)


@dataclasses.dataclass
class Stage:
    """One window of the continuation and its fit."""

    window: tuple[float, float]  # record time (s)
    u: np.ndarray  # best point, unconstrained
    reduced_chi2: float  # mean(r^2) over the window at u
    consistent: bool
    predictable_until: float  # record time where the predicted spread passes PREDICTABLE_SPREAD
    covariance: np.ndarray  # Gauss–Newton covariance of u on the window
    fit: FitResult

    def as_dict(self, physical) -> dict:
        return {
            "window": list(self.window), "parameters": physical(self.u).tolist(), "reduced_chi2": self.reduced_chi2,
            "consistent": self.consistent, "predictable_until": self.predictable_until,
            "steps": self.fit.steps_taken.tolist(), "seconds": self.fit.fit_seconds,
        }


@dataclasses.dataclass
class ContinuationResult:
    stages: list[Stage]
    accepted: int  # index of the last consistent stage
    problem: CalibrationProblem  # with the final window and noise levels
    final: FitResult  # the fit on the final window (polished when another optimiser was named)
    evaluation: Evaluation  # at final.final_points, final window
    seconds: float
    initial_signals: np.ndarray  # simulated at the configured initial values

    @property
    def window(self) -> tuple[float, float]:
        return self.stages[self.accepted].window


def first_window(problem: CalibrationProblem, times: np.ndarray) -> float:
    """Length (s) of the first window (see the module docstring)."""
    speeds = [abs(float(d.speed)) for d in problem.mechanism.drivers if d.kind == "constant_speed" and float(d.speed) != 0.0]
    span = float(times[-1] - times[0])
    length = 2.0 * math.pi / max(speeds) / 8.0 if speeds else span / 4.0
    minimum = float(times[min(MIN_SAMPLES, times.size - 1)] - times[0])
    return min(span, max(length, minimum))


def windowed(problem: CalibrationProblem, valid: np.ndarray, times: np.ndarray, window: tuple[float, float]) -> CalibrationProblem:
    inside = ((times >= window[0]) & (times <= window[1]))[:, None]
    return eqx.tree_at(lambda p: p.loss, problem, problem.loss.with_window(valid * inside))


def _reshape(evaluation: Evaluation, samples: int, signals: int):
    """Residuals [starts, samples, signals] and Jacobian [starts, samples, signals, p]."""
    residual = np.asarray(evaluation.residuals).reshape(-1, samples, signals)
    jacobian = np.asarray(evaluation.jacobian).reshape(-1, samples, signals, evaluation.jacobian.shape[-1])
    return residual, jacobian


def _covariance(residual, jacobian, mask) -> np.ndarray:
    """Gauss–Newton covariance in ``u`` of the masked residuals, scaled by their variance."""
    rows = mask.reshape(-1) > 0
    J = jacobian.reshape(-1, jacobian.shape[-1])[rows]
    r = residual.reshape(-1)[rows]
    variance = float(np.sum(r**2) / max(r.size - J.shape[1], 1))
    return variance * np.linalg.pinv(J.T @ J, hermitian=True)


def predicted_spread(jacobian: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """Per sample: the largest over signals of ``sqrt(J C J^T)`` (noise units)."""
    return np.sqrt(np.maximum(np.einsum("nkp,pq,nkq->nk", jacobian, covariance, jacobian), 0.0)).max(axis=1)


def _stage(problem, valid, times, window, starts, options, progress, steps=STAGE_STEPS) -> tuple[FitResult, CalibrationProblem]:
    stage_problem = windowed(problem, valid, times, window)
    stage_options = dataclasses.replace(options, name="levenberg_marquardt", steps=min(options.steps, steps))
    return fit(stage_problem, starts, stage_options, progress=progress), stage_problem


def continuation(problem: CalibrationProblem, times: np.ndarray, valid: np.ndarray, starts: np.ndarray,
                 options: OptimizerOptions, progress: bool = True, log=print) -> ContinuationResult:
    """Fit by continuation in the horizon (module docstring). ``problem.loss`` must be a
    :class:`TimeDomainLoss`; ``valid`` is the record's [samples, signals] mask of present values."""
    began = time.perf_counter()
    valid = np.asarray(valid, np.float64)
    samples, signals = valid.shape
    full = windowed(problem, valid, times, (times[0], times[-1]))
    rng = np.random.default_rng(options.seed)
    window = (float(times[0]), float(times[0] + first_window(problem, times)))

    result, stage_problem = _stage(problem, valid, times, window, starts, options, progress, FIRST_STAGE_STEPS)
    initial_signals = np.asarray(result.first.prediction.signals[0])
    # noise levels from the first fit's residuals, then the first window again from its optimum
    residual = np.asarray(result.last.residuals[result.best]).reshape(samples, signals)
    mask = np.asarray(stage_problem.loss.mask)
    ratio = np.sqrt(np.sum(residual**2 * mask, axis=0) / np.maximum(np.sum(mask, axis=0), 1.0))
    problem = eqx.tree_at(lambda p: p.loss.scale, problem, problem.loss.scale * np.where(ratio > 0, ratio, 1.0))
    full = windowed(problem, valid, times, (times[0], times[-1]))
    log(f"window {1e3 * window[0]:.4g}-{1e3 * window[1]:.4g} ms: noise levels re-estimated from the fit (x {np.round(ratio, 3).tolist()})")
    best = result.final_points[result.best]
    refit_starts = np.repeat(best[None], starts.shape[0], axis=0)
    result, stage_problem = _stage(problem, valid, times, window, refit_starts, options, progress)

    stages: list[Stage] = []
    reference = None
    while True:
        best = result.final_points[result.best]
        evaluation = evaluate_forward(full, jnp.asarray(np.repeat(best[None], starts.shape[0], axis=0)))
        residual, jacobian = (a[0] for a in _reshape(evaluation, samples, signals))
        mask = np.asarray(stage_problem.loss.mask)
        chi2 = float(np.sum(residual**2 * mask) / max(np.sum(mask), 1.0))
        reference = chi2 if reference is None else reference
        consistent = bool(np.isfinite(chi2) and chi2 <= CONSISTENCY * max(reference, 1.0))
        covariance = _covariance(residual, jacobian, mask)
        spread = predicted_spread(jacobian, covariance)
        beyond = (times > window[1]) & ~(spread <= PREDICTABLE_SPREAD)
        predictable = float(times[np.argmax(beyond)]) if beyond.any() else float(times[-1])
        stages.append(Stage(window, best, chi2, consistent, predictable, covariance, result))
        log(f"window {1e3 * window[0]:.4g}-{1e3 * window[1]:.4g} ms: reduced chi2 {chi2:.3g} "
            f"({'consistent' if consistent else 'inconsistent'}), predictable to {1e3 * predictable:.4g} ms")
        accepted = max((i for i, s in enumerate(stages) if s.consistent), default=0)
        if not consistent:
            previous = stages[accepted].window[1]
            if len(stages) > 1 and stages[-2].consistent and window[1] - previous > 0.2 * (previous - window[0]):
                window = (window[0], previous + 0.5 * (window[1] - previous))  # retry halfway
            else:
                break
        elif window[1] >= times[-1]:
            break
        else:
            length = window[1] - window[0]
            end = min(max(predictable, window[0] + MIN_GROWTH * length), window[0] + MAX_GROWTH * length)
            window = (window[0], float(min(end, times[-1])))
        anchor = stages[accepted]
        spread_u = np.sqrt(np.maximum(np.diag(anchor.covariance), 0.0))
        draws = anchor.u + 2.0 * spread_u * rng.standard_normal((starts.shape[0] - 1, anchor.u.size))
        result, stage_problem = _stage(problem, valid, times, window, np.vstack([anchor.u[None], draws]), options, progress)

    accepted = max((i for i, s in enumerate(stages) if s.consistent), default=0)
    final_problem = windowed(problem, valid, times, stages[accepted].window)
    final = stages[accepted].fit
    if options.name != "levenberg_marquardt":
        polish = fit(final_problem, np.repeat(stages[accepted].u[None], starts.shape[0], axis=0), options, progress=progress)
        if np.nanmin(polish.losses) < final.losses[final.best]:
            final = polish
        log(f"{options.name} polish on the final window: loss {np.nanmin(polish.losses):.6g} "
            f"({'kept' if final is polish else 'not lower, Levenberg–Marquardt result kept'})")
    evaluation = evaluate_forward(final_problem, jnp.asarray(final.final_points))
    return ContinuationResult(stages, accepted, final_problem, final, evaluation, time.perf_counter() - began, initial_signals)
