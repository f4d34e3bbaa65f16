"""One calibration from a loaded config: the fit (continuation in the horizon or a direct
fit on the configured windows) and the uncertainty at its optimum."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ..errors import ConfigError
from .continuation import ContinuationResult, continuation, first_window
from .fit import FitResult, OptimizerOptions, fit
from .goodness import Goodness, goodness_of_fit
from .offset import estimate_offset, fit_bounds
from .parameters import FitParameter, ParameterTransform
from .problem import CalibrationProblem, residual_jacobian, simulated_signals
from .setup import Calibration
from .solver_error import TIGHTENING, solver_shift
from .uncertainty import Uncertainty, gauss_newton


@dataclasses.dataclass
class Outcome:
    fit: FitResult  # the fit on the final window
    problem: CalibrationProblem  # on the final window, with the noise levels used
    windows: tuple[tuple[float, float], ...]
    continuation: ContinuationResult | None
    strategy: str  # continuation | direct
    values: np.ndarray  # best parameters, SI: the fit's optimum corrected for the solver's error
    uncertainty: Uncertainty
    physical: Callable[[np.ndarray], np.ndarray]  # unconstrained -> SI
    offsets: dict[str, dict]  # per automatically estimated time offset: its path -> estimate and fit bounds
    fit_optimum: np.ndarray  # SI: where the fit ended, before the solver correction
    goodness: Goodness | None  # the fit's residuals against the record's noise (time-domain loss; else None)
    # the same tests on the whole record, when the continuation kept a shorter window (else None)
    record_goodness: Goodness | None = None

    @property
    def misfit(self) -> bool | None:
        """The fit is a misfit on its window or on the whole record; None when not tested
        (a loss not in noise units)."""
        if self.goodness is None:
            return None
        return self.goodness.misfit or (self.record_goodness is not None and self.record_goodness.misfit)


def resolve_strategy(calibration: Calibration, options: OptimizerOptions) -> str:
    """``auto``: continuation for a time-domain loss without configured windows, else direct."""
    possible = calibration.loss_kind == "time" and calibration.gradient_mode == "forward"
    if options.strategy != "auto":
        if options.strategy == "continuation" and not possible:
            raise ConfigError(str(calibration.config_path), "optimizer.strategy",
                              "continuation needs loss.kind = \"time\" and forward-mode gradients (optimizer.gradient)")
        return options.strategy
    return "continuation" if possible and not calibration.windows_given else "direct"


def estimate_offsets(calibration: Calibration, log=print) -> tuple[CalibrationProblem, dict[str, dict]]:
    """Each automatic time offset estimated from its record (``offset.py``); the problem with
    the offsets' initial values and bounds set a few samples around the estimates."""
    problem = calibration.problem
    parameters = list(calibration.parameters)
    x = np.asarray([p.initial for p in parameters])
    report = {}
    for index, position in calibration.automatic_offsets.items():
        setup, model = calibration.records[index], problem.records[index]
        grid, simulated, ok = (np.asarray(a) for a in simulated_signals(model, jnp.asarray(x)))
        if not ok:
            raise ConfigError(str(calibration.config_path), "fit", "the simulation at the initial values failed (see [simulation])")
        times = setup.record.times
        window = first_window(model, times - times[0])
        scale = np.asarray(model.loss.scale)
        estimate = estimate_offset(grid, simulated, times, setup.measured, setup.record.valid, scale,
                                   [name in setup.biased for name in model.signal_names], window, setup.offset_range)
        initial, lower, upper = fit_bounds(estimate, setup.sample_step, setup.offset_range)
        parameters[position] = FitParameter(setup.offset_path, initial, lower, upper, "linear")
        report[setup.offset_path] = {"estimate": estimate, "bounds": [lower, upper], "searched": list(setup.offset_range)}
        log(f"{setup.offset_path}: estimated {1e6 * estimate:.4g} us from the record's first {1e3 * window:.3g} ms "
            f"(searched {1e6 * setup.offset_range[0]:.4g} to {1e6 * setup.offset_range[1]:.4g} us); fitted within "
            f"{1e6 * lower:.4g} to {1e6 * upper:.4g} us")
    if report:
        problem = eqx.tree_at(lambda p: p.transform, problem, ParameterTransform(parameters))
        calibration.parameters = tuple(parameters)
    return problem, report


def calibrate(calibration: Calibration, options: OptimizerOptions, progress: bool = True) -> Outcome:
    """Time offsets, fit, then the covariance at the best start (Newey–West for a time-domain loss)."""
    log = (lambda message: print(message, file=sys.stderr)) if progress else (lambda message: None)
    problem, offsets = estimate_offsets(calibration, log)
    transform = problem.transform
    starts = transform.starts(options.starts, options.spread, options.seed)
    strategy = resolve_strategy(calibration, options)
    stages = None
    if strategy == "continuation":
        stages = continuation(problem, [r.record.times for r in calibration.records], [r.record.valid for r in calibration.records],
                              starts, options, progress, log)
        result, problem, windows = stages.final, stages.problem, (stages.window,)
    else:
        result, windows = fit(problem, starts, options, progress=progress), calibration.windows
    best = result.best
    if not np.isfinite(result.losses[best]):
        raise ConfigError(str(calibration.config_path), "", "every start failed: the solver failed at all starting points (see [simulation])")

    def physical(u):
        return np.asarray(transform.to_physical(jnp.asarray(u)))

    values = physical(result.final_points[best])
    # covariance in physical units: dr/dx = dr/du / (dx/du)
    if result.last.jacobian is not None:
        residual, jacobian_u = result.last.residuals[best], result.last.jacobian[best]
    else:  # reverse mode: one forward-mode Jacobian at the optimum
        forward = problem.with_settings(lambda settings: dataclasses.replace(settings, adjoint="forward"))
        residual, jacobian_u = (np.asarray(a) for a in residual_jacobian(forward, jnp.asarray(result.final_points[best])))
    derivative = np.asarray(transform.derivative(jnp.asarray(result.final_points[best])))
    with np.errstate(divide="ignore", invalid="ignore"):
        jacobian_x = np.where(derivative != 0, jacobian_u / derivative[None, :], 0.0)
    time_domain = calibration.loss_kind == "time"
    log(f"solver error: the optimum's residuals integrated {TIGHTENING:g}x tighter")
    shift_u = solver_shift(problem, result.final_points[best], residual, jacobian_u)
    fit_optimum = values
    if shift_u is not None:  # the optimum of the more accurate model (solver_error.py)
        values = physical(result.final_points[best] + shift_u)
    uncertainty = gauss_newton(
        calibration.paths, values, residual, jacobian_x, float(problem.count), calibration.noise_known,
        calibration.independent_fraction, transform.scaled_position(values),
        signals=[m.loss.measured.shape for m in problem.records] if time_domain else None,
        mask=np.concatenate([np.asarray(m.loss.mask).reshape(-1) for m in problem.records]) if time_domain else None,
        solver_shift=None if shift_u is None else values - fit_optimum,
    )
    for path, entry in offsets.items():
        entry["fitted"] = float(values[calibration.paths.index(path)])
    goodness = fit_goodness(problem, residual, len(calibration.paths), calibration.independent_fraction) if time_domain else None
    record_goodness = None
    if goodness is not None and stages is not None and not stages.whole_record:
        record_goodness = fit_goodness(stages.record_problem, stages.record_residual, len(calibration.paths),
                                       calibration.independent_fraction)
    return Outcome(result, problem, tuple(windows), stages, strategy, values, uncertainty, physical, offsets, fit_optimum,
                   goodness, record_goodness)


def fit_goodness(problem: CalibrationProblem, residual: np.ndarray, parameters: int, independent_fraction: float) -> Goodness:
    """The goodness-of-fit tests (``goodness.py``) on the residuals of the problem's windows,
    the signals' weights taken out so that every residual is in noise units."""
    parts = [part / np.asarray(model.loss.root_weight)[None, :] for part, model in zip(problem.split(residual), problem.records)]
    return goodness_of_fit(parts, [np.asarray(model.loss.mask) for model in problem.records],
                           [model.signal_names for model in problem.records], parameters, independent_fraction)
