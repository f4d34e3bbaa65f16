"""Calibration of mechanism parameters (contact stiffness, restitution, friction, clearance)
against measured responses: ``clearance calibrate`` (see docs/calibration.md).

Modules: ``data`` (records, low-pass), ``signals`` (simulated signals at measurement times),
``loss`` (time-domain, spectral and peak-statistics residuals), ``parameters`` (bounds and
scales), ``problem`` (parameters -> residuals through the solver), ``fit`` (optax Adam,
L-BFGS, Levenberg–Marquardt; batched multi-start), ``uncertainty`` (Gauss–Newton), ``report``
(plots), ``setup`` (config -> problem), ``synthesize`` (synthetic records).
"""

from . import report
from .data import LowPass, MeasuredRecord, load_record
from .fit import FitResult, OptimizerOptions, fit
from .loss import PeakLoss, SpectralLoss, TimeDomainLoss, build_loss
from .parameters import FitParameter, ParameterTransform
from .problem import CalibrationProblem, evaluate_forward, evaluate_reverse, residual_jacobian
from .setup import Calibration, load_calibration
from .signals import sample_at, signal_units, trajectory_signals
from .uncertainty import Uncertainty, gauss_newton

__all__ = [
    "Calibration", "CalibrationProblem", "FitParameter", "FitResult", "LowPass", "MeasuredRecord",
    "OptimizerOptions", "ParameterTransform", "PeakLoss", "SpectralLoss", "TimeDomainLoss", "Uncertainty",
    "build_loss", "evaluate_forward", "evaluate_reverse", "fit", "gauss_newton", "load_calibration",
    "load_record", "report", "residual_jacobian", "sample_at", "signal_units", "trajectory_signals",
]
