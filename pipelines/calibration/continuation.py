"""Continuation in the horizon: fit a long, chaotic record without hand-chosen windows.

A mechanism with an impacting clearance joint is chaotic: after a few impacts a small
parameter change shifts every later impact, and a least-squares loss over a long record has
many local minima (Voss, Timmer & Kurths 2004 on chaotic parameter estimation; Baake et al.
1992 on windowing/multiple shooting). What is smooth is the loss over the *predictable*
part of the record. So the fit grows its window (Bock 1983's idea of following the data
with the trajectory, done here by continuation in the horizon):

1. **First window**: an eighth of a driver revolution (a quarter of the record when no
   driver has a constant speed), at least ``MIN_SAMPLES`` samples; with several records
   (each at its own speed), the shortest of theirs, and every window spans the same time
   from each record's first sample. Every start is fitted
   there (Levenberg–Marquardt, batched). When the best fit's loss stays above
   ``SCREEN_ABOVE`` (in the noise levels estimated from the record: the fit missed it, as
   in a rough landscape whose basins are narrower than the starts' distance from the
   truth), ``SCREEN_POINTS_PER_PARAMETER`` points per parameter of a scrambled Sobol set
   over the bounded ranges are evaluated in one batched call and the best of them fitted;
   that fit is kept when its loss is lower. The noise levels stay those of the record
   (given, or estimated from it alone): levels re-estimated from a fit's residuals would
   make any fit, a wrong basin's too, look consistent (``goodness.py`` tests the final fit).
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
   The fit is then also tested on the whole record (``record_residual``): the goodness
   tests (``goodness.py``) judge every sample the user gave, so a model that follows only
   the first window is a misfit rather than a fit of the part that agrees.
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
from .problem import CalibrationProblem, Evaluation, evaluate_forward, evaluate_loss

PREDICTABLE_SPREAD = 1.0  # predicted spread (noise units) where the trajectory stops being predictable
MIN_GROWTH, MAX_GROWTH = 1.25, 2.0  # window growth per stage
CONSISTENCY = 2.0  # reduced chi-square of a window against the first one
MIN_SAMPLES = 40
# A first-window fit whose loss (noise units) stays above this missed the record: screen.
SCREEN_ABOVE = 4.0
SCREEN_POINTS_PER_PARAMETER = 32
FIRST_STAGE_STEPS, STAGE_STEPS = 30, 15  # Levenberg–Marquardt steps per stage (at most; later stages start near the optimum)


@dataclasses.dataclass
class Stage:
    """One window of the continuation and its fit."""

    window: tuple[float, float]  # record time (s); with several records, time since each record's first sample
    u: np.ndarray  # best point, unconstrained
    reduced_chi2: float  # mean(r^2) over the window at u
    consistent: bool
    predictable_until: float  # where the predicted spread passes PREDICTABLE_SPREAD (same time as window)
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
    initial_signals: list[np.ndarray]  # per record, simulated at the configured initial values
    screen: dict | None = None  # the first window's start screen, when the starts missed the record
    # the whole record (every present sample) and its residuals at the final fit's best
    # point: what the goodness tests judge when the kept window is shorter than the record
    record_problem: CalibrationProblem | None = None
    record_residual: np.ndarray | None = None

    @property
    def window(self) -> tuple[float, float]:
        return self.stages[self.accepted].window

    @property
    def whole_record(self) -> bool:
        """Whether the kept window spans every record to its end."""
        return self.record_problem is None


def first_window(record, times: np.ndarray) -> float:
    """Length (s) of the first window of one record (see the module docstring); ``record``
    has the ``mechanism`` whose constant-speed drivers set the time scale."""
    speeds = [abs(float(d.speed)) for d in record.mechanism.drivers if d.kind == "constant_speed" and float(d.speed) != 0.0]
    span = float(times[-1] - times[0])
    length = 2.0 * math.pi / max(speeds) / 8.0 if speeds else span / 4.0
    minimum = float(times[min(MIN_SAMPLES, times.size - 1)] - times[0])
    return min(span, max(length, minimum))


class Records:
    """The records' sample times since their first sample and their masks of present values."""

    def __init__(self, times: list[np.ndarray], valid: list[np.ndarray]):
        self.origins = [float(t[0]) for t in times]
        self.elapsed = [np.asarray(t, np.float64) - t[0] for t in times]
        self.valid = [np.asarray(v, np.float64) for v in valid]
        self.span = max(float(e[-1]) for e in self.elapsed)
        # a single record's windows are reported in its own time, several records' in elapsed time
        self.origin = self.origins[0] if len(times) == 1 else 0.0

    def windowed(self, problem: CalibrationProblem, length: float) -> CalibrationProblem:
        """The problem with every record's loss restricted to its first ``length`` seconds."""
        return problem.with_records([
            eqx.tree_at(lambda m: m.loss, model, model.loss.with_window(valid * (elapsed <= length * (1 + 1e-12))[:, None]))
            for model, valid, elapsed in zip(problem.records, self.valid, self.elapsed)
        ])

    def window(self, length: float) -> tuple[float, float]:
        return (self.origin, self.origin + length)


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


def _stage(problem, records: Records, length, starts, options, progress, steps=STAGE_STEPS) -> tuple[FitResult, CalibrationProblem]:
    stage_problem = records.windowed(problem, length)
    stage_options = dataclasses.replace(options, name="levenberg_marquardt", steps=min(options.steps, steps))
    return fit(stage_problem, starts, stage_options, progress=progress), stage_problem


def _masks(problem: CalibrationProblem) -> list[np.ndarray]:
    return [np.asarray(model.loss.mask) for model in problem.records]


def _predictable(problem, records: Records, residual, jacobian, covariance, length) -> float:
    """Elapsed time where the first record's predicted spread passes PREDICTABLE_SPREAD."""
    until = records.span
    for elapsed, jacobian_part in zip(records.elapsed, problem.split(jacobian)):
        spread = predicted_spread(jacobian_part, covariance)
        beyond = (elapsed > length) & ~(spread <= PREDICTABLE_SPREAD)
        if elapsed[-1] > length:
            until = min(until, float(elapsed[np.argmax(beyond)]) if beyond.any() else float(elapsed[-1]))
    return until


def _screened(problem, records: Records, length, result: FitResult, options, progress, log, show) -> tuple[FitResult, dict]:
    """The first window refitted from the best points of a quasi-random screen of the whole
    bounded range, kept when its loss is lower: the fit from the configured starts missed the
    record (a rough landscape, e.g. stick-slip friction, whose basins are narrower than the
    starts' distance from the truth)."""
    stage_problem = records.windowed(problem, length)
    transform = problem.transform
    count = max(SCREEN_POINTS_PER_PARAMETER * int(transform.initial.size), result.start_points.shape[0])
    candidates = transform.screen(count, options.spread, options.seed)
    losses = np.asarray(evaluate_loss(stage_problem, jnp.asarray(candidates)))
    best = candidates[np.argsort(np.where(np.isfinite(losses), losses, np.inf))[: result.start_points.shape[0]]]
    screened, _ = _stage(problem, records, length, best, options, progress, FIRST_STAGE_STEPS)
    kept = screened.losses[screened.best] < result.losses[result.best]
    log(f"{show(length)}: the fit from the starts missed the record (loss {result.losses[result.best]:.4g}); "
        f"screened {count} points, refitted the best {best.shape[0]}: loss {screened.losses[screened.best]:.4g} "
        f"({'kept' if kept else 'not lower, first fit kept'})")
    report = {"points": count, "loss_from_starts": float(result.losses[result.best]),
              "loss_from_screen": float(screened.losses[screened.best]), "kept": bool(kept)}
    return (screened if kept else result), report


def continuation(problem: CalibrationProblem, times, valid, starts: np.ndarray,
                 options: OptimizerOptions, progress: bool = True, log=print) -> ContinuationResult:
    """Fit by continuation in the horizon (module docstring). Every record's loss must be a
    :class:`TimeDomainLoss`; ``times`` and ``valid`` give each record's sample times and its
    [samples, signals] mask of present values (one array each for a single record)."""
    began = time.perf_counter()
    records = Records(list(times) if isinstance(times, (list, tuple)) else [times],
                      list(valid) if isinstance(valid, (list, tuple)) else [valid])
    rng = np.random.default_rng(options.seed)
    length = min(first_window(model, elapsed) for model, elapsed in zip(problem.records, records.elapsed))

    def show(length):
        low, high = records.window(length)
        return f"window {1e3 * low:.4g}-{1e3 * high:.4g} ms"

    result, stage_problem = _stage(problem, records, length, starts, options, progress, FIRST_STAGE_STEPS)
    screen = None
    if not result.losses[result.best] <= SCREEN_ABOVE:
        result, screen = _screened(problem, records, length, result, options, progress, log, show)
    initial_signals = [np.asarray(prediction.signals[0]) for prediction in result.first.predictions]
    # the noise levels stay those of the record: a fit's residuals would call any fit consistent
    full = records.windowed(problem, records.span)

    stages: list[Stage] = []
    lengths: list[float] = []
    reference = None
    while True:
        best = result.final_points[result.best]
        evaluation = evaluate_forward(full, jnp.asarray(np.repeat(best[None], starts.shape[0], axis=0)))
        residual, jacobian = np.asarray(evaluation.residuals[0]), np.asarray(evaluation.jacobian[0])
        mask = np.concatenate([m.reshape(-1) for m in _masks(stage_problem)])
        chi2 = float(np.sum(residual**2 * mask) / max(np.sum(mask), 1.0))
        reference = chi2 if reference is None else reference
        consistent = bool(np.isfinite(chi2) and chi2 <= CONSISTENCY * max(reference, 1.0))
        covariance = _covariance(residual, jacobian, mask)
        predictable = _predictable(problem, records, residual, jacobian, covariance, length)
        stages.append(Stage(records.window(length), best, chi2, consistent, records.origin + predictable, covariance, result))
        lengths.append(length)
        log(f"{show(length)}: reduced chi2 {chi2:.3g} ({'consistent' if consistent else 'inconsistent'}), "
            f"predictable to {1e3 * (records.origin + predictable):.4g} ms")
        accepted = max((i for i, s in enumerate(stages) if s.consistent), default=0)
        if not consistent:
            previous = lengths[accepted]
            if len(stages) > 1 and stages[-2].consistent and length - previous > 0.2 * previous:
                length = previous + 0.5 * (length - previous)  # retry halfway
            else:
                break
        elif length >= records.span:
            break
        else:
            length = float(min(min(max(predictable, MIN_GROWTH * length), MAX_GROWTH * length), records.span))
        anchor = stages[accepted]
        spread_u = np.sqrt(np.maximum(np.diag(anchor.covariance), 0.0))
        draws = anchor.u + 2.0 * spread_u * rng.standard_normal((starts.shape[0] - 1, anchor.u.size))
        result, stage_problem = _stage(problem, records, length, np.vstack([anchor.u[None], draws]), options, progress)

    accepted = max((i for i, s in enumerate(stages) if s.consistent), default=0)
    final_problem = records.windowed(problem, lengths[accepted])
    final = stages[accepted].fit
    if options.name != "levenberg_marquardt":
        polish = fit(final_problem, np.repeat(stages[accepted].u[None], starts.shape[0], axis=0), options, progress=progress)
        if np.nanmin(polish.losses) < final.losses[final.best]:
            final = polish
        log(f"{options.name} polish on the final window: loss {np.nanmin(polish.losses):.6g} "
            f"({'kept' if final is polish else 'not lower, Levenberg–Marquardt result kept'})")
    evaluation = evaluate_forward(final_problem, jnp.asarray(final.final_points))
    record_problem = record_residual = None
    if lengths[accepted] < records.span:
        # the record beyond the kept window is judged too (goodness.py): a window that stopped
        # because the model cannot follow the record must not leave only the part that agrees
        record_problem = full
        at_best = np.repeat(final.final_points[final.best][None], starts.shape[0], axis=0)
        record_residual = np.asarray(evaluate_forward(full, jnp.asarray(at_best)).residuals[0])
        log(f"kept {show(lengths[accepted])} of the record's {1e3 * records.span:.4g} ms: the goodness of fit is "
            "tested on the whole record too")
    return ContinuationResult(stages, accepted, final_problem, final, evaluation, time.perf_counter() - began,
                              initial_signals, screen, record_problem, record_residual)
