"""Calibration of mechanism parameters (contact stiffness, restitution, friction, clearance)
against measured responses: ``clearance calibrate`` (see docs/calibration.md).

Modules: ``data`` (records, gaps, noise estimate, low-pass), ``signals`` (simulated signals
at measurement times), ``loss`` (time-domain with profiled biases, spectral and
peak-statistics residuals), ``parameters`` (bounds and scales), ``problem`` (parameters ->
residuals through the solver), ``fit`` (optimistix Levenberg–Marquardt, BFGS, L-BFGS and
optax Adam; batched multi-start), ``continuation`` (continuation in the horizon),
``uncertainty`` (Gauss–Newton, Newey–West), ``run`` (one calibration), ``report`` (plots),
``schema`` (the config's tables as pydantic models), ``records`` (one record and its part of
the problem), ``offset`` (time offset of a record from the data), ``setup`` (config ->
problem; one record or several fitted together), ``synthesize`` (synthetic records).
"""

from . import report
from .continuation import ContinuationResult, continuation
from .data import LowPass, MeasuredRecord, estimate_noise, load_record
from .fit import FitResult, OptimizerOptions, fit
from .loss import PeakLoss, SpectralLoss, TimeDomainLoss, build_loss
from .parameters import FitParameter, ParameterTransform
from .offset import estimate_offset
from .problem import CalibrationProblem, RecordModel, evaluate_forward, evaluate_reverse, residual_jacobian
from .run import Outcome, calibrate
from .setup import Calibration, load_calibration
from .signals import sample_at, signal_units, trajectory_signals
from .uncertainty import Uncertainty, gauss_newton

__all__ = [
    "Calibration", "CalibrationProblem", "RecordModel", "ContinuationResult", "FitParameter", "FitResult", "LowPass", "MeasuredRecord",
    "OptimizerOptions", "Outcome", "ParameterTransform", "PeakLoss", "SpectralLoss", "TimeDomainLoss", "Uncertainty",
    "build_loss", "calibrate", "continuation", "estimate_noise", "estimate_offset", "evaluate_forward", "evaluate_reverse", "fit",
    "gauss_newton", "load_calibration", "load_record", "report", "residual_jacobian", "sample_at", "signal_units",
    "trajectory_signals",
]
