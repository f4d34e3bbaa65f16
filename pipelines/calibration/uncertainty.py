"""Parameter uncertainty at the optimum from the residual Jacobian (Gauss–Newton).

With residuals ``r(x)`` (``n`` that count, ``p`` parameters) and ``J = dr/dx`` at the optimum,
the linearised least-squares covariance is ``C = s^2 (J^T J)^-1`` (e.g. Bard, *Nonlinear
Parameter Estimation*, 1974, ch. 7; Seber & Wild, *Nonlinear Regression*, 1989, §2.1):

- ``s^2 = 1`` when the residuals were divided by the measurement noise levels (a true
  chi-square); else ``s^2 = sum(r^2) / (n - p)`` estimates the residual variance.
- A low-pass filter correlates neighbouring residuals: only about ``2 f_c T`` of the samples
  are independent, so ``C`` is inflated by ``n / n_eff`` (``n_eff = n * min(1, 2 f_c dt)``).
- With ``signals`` given (the residuals are a time series, sample-major), the covariance is
  the heteroskedasticity- and autocorrelation-consistent sandwich of Newey & West (1987):
  ``C = H^-1 S H^-1`` with ``H = J^T J`` and ``S = sum_l w_l (G_l + G_l^T)`` over lags of
  the per-sample scores ``g_t = J_t^T r_t`` (Bartlett weights ``w_l = 1 - l / (L + 1)``).
  It uses the residuals themselves, so noise that differs from the assumed level, model
  mismatch and correlated residuals (filters, slightly shifted impacts) widen the intervals
  instead of making them overconfident. The bandwidth ``L`` is twice the lag where the
  residuals' autocorrelation first falls below ``ACF_CUTOFF``, at least Newey & West's
  (1994) rule ``4 (n / 100)^(2/9)``, at most ``n / 4``.
- With ``solver_shift`` given, ``C + dx dx^T``: the ODE solver's systematic error (see
  ``solver_error.py``), which no noise statistic sees.

``J^T J`` is inverted after scaling each column by the parameter's value (a relative
information matrix), so its condition number compares relative sensitivities. A parameter
is reported as not identifiable when its relative standard deviation is above a threshold,
when the information matrix is near-singular (then the parameter combinations with the
smallest eigenvalues are named), or when it ends at a bound.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

RELATIVE_STD_LIMIT = 0.5  # above this the data do not pin the parameter down
CONDITION_LIMIT = 1e8  # of the relative information matrix
CORRELATION_LIMIT = 0.99
BOUND_MARGIN = 1e-3  # of the scaled range
ACF_CUTOFF = 0.1


def bandwidth(series: np.ndarray) -> int:
    """Bartlett bandwidth for residuals ``series[t, k]`` (see the module docstring)."""
    n = series.shape[0]
    total = series.sum(axis=1) - series.sum(axis=1).mean()
    spectrum = np.abs(np.fft.rfft(total, 2 * n)) ** 2
    acf = np.fft.irfft(spectrum)[:n]
    acf = acf / acf[0] if acf[0] > 0 else acf
    below = np.flatnonzero(np.abs(acf) < ACF_CUTOFF)
    lag = int(below[0]) if below.size else n
    rule = int(math.ceil(4.0 * (n / 100.0) ** (2.0 / 9.0)))
    return int(min(max(2 * lag, rule), max(n // 4, 1)))


def newey_west(scores: np.ndarray, lags: int) -> np.ndarray:
    """``S = G_0 + sum_{l=1}^{L} (1 - l/(L+1)) (G_l + G_l^T)``, ``G_l = sum_t g_t g_{t-l}^T``."""
    S = scores.T @ scores
    for lag in range(1, lags + 1):
        G = scores[lag:].T @ scores[:-lag]
        S += (1.0 - lag / (lags + 1.0)) * (G + G.T)
    return S


@dataclasses.dataclass
class Uncertainty:
    """Gauss–Newton statistics at the optimum (SI units)."""

    paths: tuple[str, ...]
    values: np.ndarray
    covariance: np.ndarray
    std: np.ndarray
    relative_std: np.ndarray  # std / |value| (NaN for a zero value)
    correlation: np.ndarray
    condition_number: float
    residual_variance: float  # s^2
    degrees_of_freedom: float
    warnings: list[str]
    method: str = "gauss_newton"  # gauss_newton | newey_west
    lags: int = 0
    noise_std: np.ndarray | None = None  # the noise's part of std (without the solver's)
    solver_shift: np.ndarray | None = None  # the optimum's move with a tighter solver (solver_error.py); None: not estimated

    def as_dict(self) -> dict:
        return {
            "std": dict(zip(self.paths, self.std.tolist())),
            "relative_std": dict(zip(self.paths, self.relative_std.tolist())),
            "ci95": {path: [v - 1.96 * s, v + 1.96 * s] for path, v, s in zip(self.paths, self.values.tolist(), self.std.tolist())},
            "covariance": self.covariance.tolist(),
            "condition_number": self.condition_number,
            "residual_variance": self.residual_variance,
            "degrees_of_freedom": self.degrees_of_freedom,
            "method": self.method,
            "lags": self.lags,
            "noise_std": None if self.noise_std is None else dict(zip(self.paths, self.noise_std.tolist())),
            "solver_shift": None if self.solver_shift is None else dict(zip(self.paths, self.solver_shift.tolist())),
        }


def gauss_newton(
    paths: Sequence[str],
    values: np.ndarray,
    residuals: np.ndarray,
    jacobian: np.ndarray,
    count: float,
    noise_known: bool,
    independent_fraction: float = 1.0,
    scaled_position: np.ndarray | None = None,
    relative_std_limit: float = RELATIVE_STD_LIMIT,
    signals: int | Sequence[tuple[int, int]] | None = None,
    mask: np.ndarray | None = None,
    solver_shift: np.ndarray | None = None,
) -> Uncertainty:
    """Covariance, correlation and identifiability warnings.

    ``jacobian`` is ``dr/dx`` in SI (rows: residuals, columns: ``paths``); ``count`` the
    number of residuals that count; ``independent_fraction`` the share of them that are
    independent (low-pass); ``scaled_position`` where each value sits within its bounds;
    ``signals`` (residuals ordered sample-major, ``signals`` per sample; or, for several
    independent records one after the other, their ``(samples, signals)`` shapes) and ``mask``
    (1 where a residual counts) select the Newey–West sandwich, summed over the records.
    ``solver_shift`` (SI, per path; see ``solver_error.py``) adds the solver's systematic
    error ``dx dx^T`` to the covariance.
    """
    paths, values = tuple(paths), np.asarray(values, np.float64)
    jacobian, residuals = np.asarray(jacobian, np.float64), np.asarray(residuals, np.float64)
    p = values.size
    warnings: list[str] = []
    scale = np.where(values != 0.0, np.abs(values), 1.0)
    relative_jacobian = jacobian * scale[None, :]
    information = relative_jacobian.T @ relative_jacobian
    eigenvalues, eigenvectors = np.linalg.eigh(information)
    largest = max(float(eigenvalues[-1]), 1e-300)
    condition = float(largest / max(float(eigenvalues[0]), 1e-300 * largest)) if eigenvalues[0] > 0 else float("inf")
    effective = max(count * min(1.0, independent_fraction), p + 1.0)
    dof = effective - p
    variance = 1.0 if noise_known else float(np.sum(residuals**2) / max(count - p, 1.0))
    inflation = count / effective if independent_fraction < 1.0 else 1.0
    inverse = np.linalg.pinv(information, rcond=1e-15, hermitian=True)
    relative_covariance = variance * inflation * inverse
    method, lags = "gauss_newton", 0
    if signals is not None:
        keep = np.ones(residuals.size, bool) if mask is None else np.asarray(mask).reshape(-1) > 0
        blocks = [signals] if isinstance(signals, int) else list(signals)
        sizes = [residuals.size] if isinstance(signals, int) else [samples * k for samples, k in blocks]
        S, lags, start = np.zeros((p, p)), 0, 0
        for size, block in zip(sizes, blocks):
            k = block if isinstance(block, int) else block[1]
            part = slice(start, start + size)
            start += size
            rows = keep[part].reshape(-1, k).any(axis=1)
            series = (residuals[part] * keep[part]).reshape(-1, k)[rows]
            if not rows.any():
                continue
            scores = np.einsum("tkp,tk->tp", (relative_jacobian[part] * keep[part, None]).reshape(-1, k, p)[rows], series)
            record_lags = bandwidth(series)  # independent records: their score sums add
            S += newey_west(scores, record_lags)
            lags = max(lags, record_lags)
        relative_covariance = inverse @ S @ inverse
        method = "newey_west"
    covariance = relative_covariance * np.outer(scale, scale)
    noise_std = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    if solver_shift is not None:
        covariance = covariance + np.outer(solver_shift, solver_shift)
    std = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    std = np.where(np.diag(information) > 0.0, std, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative_std = np.where(values != 0.0, std / np.abs(values), np.nan)
        correlation = covariance / np.outer(std, std)
    correlation = np.where(np.isfinite(correlation), correlation, np.nan)
    np.fill_diagonal(correlation, 1.0)

    for i, path in enumerate(paths):
        if not np.any(jacobian[:, i]):
            warnings.append(f"{path}: not identifiable: the residuals do not depend on it (zero sensitivity)")
        elif np.isfinite(relative_std[i]) and relative_std[i] > relative_std_limit:
            warnings.append(
                f"{path}: poorly identified by these data: relative standard deviation {100 * relative_std[i]:.0f} % "
                f"(limit {100 * relative_std_limit:.0f} %)"
            )
        if scaled_position is not None and np.isfinite(scaled_position[i]) and not BOUND_MARGIN < scaled_position[i] < 1 - BOUND_MARGIN:
            side = "lower" if scaled_position[i] <= BOUND_MARGIN else "upper"
            warnings.append(f"{path}: ended at its {side} bound: the optimum may lie outside the bounds; the uncertainty is not meaningful")
    if solver_shift is not None:
        for path, shift, noise in zip(paths, np.abs(solver_shift), noise_std):
            if shift > noise:
                warnings.append(f"{path}: the ODE solver's error moves it by {shift:.3g}, more than the noise does "
                                f"(std {noise:.3g}): a tighter [simulation] rtol would narrow its interval")
    if condition > CONDITION_LIMIT:
        weakest = eigenvectors[:, 0]
        combination = " ".join(f"{weight:+.2f}*{path}" for weight, path in zip(weakest, paths) if abs(weight) > 0.1)
        warnings.append(
            f"information matrix near-singular (condition number {condition:.3g}): the data cannot separate the parameters "
            f"along the relative direction {combination}"
        )
    for i in range(p):
        for j in range(i + 1, p):
            if abs(correlation[i, j]) > CORRELATION_LIMIT:
                warnings.append(f"{paths[i]} and {paths[j]} are {correlation[i, j]:+.3f} correlated: only a combination of them is identified")
    return Uncertainty(paths, values, covariance, std, relative_std, correlation, condition, variance, dof, warnings, method, lags,
                       noise_std, solver_shift)
