"""One calibration from a loaded config: the fit (continuation in the horizon or a direct
fit on the configured windows) and the uncertainty at its optimum."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from ..errors import ConfigError
from .continuation import ContinuationResult, continuation
from .fit import FitResult, OptimizerOptions, fit
from .problem import CalibrationProblem, residual_jacobian
from .setup import Calibration
from .uncertainty import Uncertainty, gauss_newton


@dataclasses.dataclass
class Outcome:
    fit: FitResult  # the fit on the final window
    problem: CalibrationProblem  # on the final window, with the noise levels used
    windows: tuple[tuple[float, float], ...]
    continuation: ContinuationResult | None
    strategy: str  # continuation | direct
    values: np.ndarray  # best parameters, SI
    uncertainty: Uncertainty
    physical: Callable[[np.ndarray], np.ndarray]  # unconstrained -> SI


def resolve_strategy(calibration: Calibration, options: OptimizerOptions) -> str:
    """``auto``: continuation for a time-domain loss without configured windows, else direct."""
    possible = calibration.loss_kind == "time" and calibration.gradient_mode == "forward"
    if options.strategy != "auto":
        if options.strategy == "continuation" and not possible:
            raise ConfigError(str(calibration.config_path), "optimizer.strategy",
                              "continuation needs loss.kind = \"time\" and forward-mode gradients (optimizer.gradient)")
        return options.strategy
    return "continuation" if possible and not calibration.windows_given else "direct"


def calibrate(calibration: Calibration, options: OptimizerOptions, progress: bool = True) -> Outcome:
    """Fit, then the covariance at the best start (Newey–West for a time-domain loss)."""
    problem, transform = calibration.problem, calibration.problem.transform
    starts = transform.starts(options.starts, options.spread, options.seed)
    strategy = resolve_strategy(calibration, options)
    stages = None
    if strategy == "continuation":
        log = (lambda message: print(message, file=sys.stderr)) if progress else (lambda message: None)
        stages = continuation(problem, calibration.record.times, calibration.record.valid, starts, options, progress, log)
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
        forward = dataclasses.replace(problem, settings=dataclasses.replace(problem.settings, adjoint="forward"))
        residual, jacobian_u = (np.asarray(a) for a in residual_jacobian(forward, jnp.asarray(result.final_points[best])))
    derivative = np.asarray(transform.derivative(jnp.asarray(result.final_points[best])))
    with np.errstate(divide="ignore", invalid="ignore"):
        jacobian_x = np.where(derivative != 0, jacobian_u / derivative[None, :], 0.0)
    time_domain = calibration.loss_kind == "time"
    uncertainty = gauss_newton(
        calibration.paths, values, residual, jacobian_x, float(problem.loss.count), calibration.noise_known,
        calibration.independent_fraction, transform.scaled_position(values),
        signals=len(problem.signal_names) if time_domain else None,
        mask=np.asarray(problem.loss.mask) if time_domain else None,
    )
    return Outcome(result, problem, tuple(windows), stages, strategy, values, uncertainty, physical)
