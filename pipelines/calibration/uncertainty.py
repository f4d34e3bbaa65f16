"""Parameter uncertainty at the optimum from the residual Jacobian (Gauss–Newton).

With residuals ``r(x)`` (``n`` that count, ``p`` parameters) and ``J = dr/dx`` at the optimum,
the linearised least-squares covariance is ``C = s^2 (J^T J)^-1`` (e.g. Bard, *Nonlinear
Parameter Estimation*, 1974, ch. 7; Seber & Wild, *Nonlinear Regression*, 1989, §2.1):

- ``s^2 = 1`` when the residuals were divided by the measurement noise levels (a true
  chi-square); else ``s^2 = sum(r^2) / (n - p)`` estimates the residual variance.
- A low-pass filter correlates neighbouring residuals: only about ``2 f_c T`` of the samples
  are independent, so ``C`` is inflated by ``n / n_eff`` (``n_eff = n * min(1, 2 f_c dt)``).

``J^T J`` is inverted after scaling each column by the parameter's value (a relative
information matrix), so its condition number compares relative sensitivities. A parameter
is reported as not identifiable when its relative standard deviation is above a threshold,
when the information matrix is near-singular (then the parameter combinations with the
smallest eigenvalues are named), or when it ends at a bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

RELATIVE_STD_LIMIT = 0.5  # above this the data do not pin the parameter down
CONDITION_LIMIT = 1e8  # of the relative information matrix
CORRELATION_LIMIT = 0.99
BOUND_MARGIN = 1e-3  # of the scaled range


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

    def as_dict(self) -> dict:
        return {
            "std": dict(zip(self.paths, self.std.tolist())),
            "relative_std": dict(zip(self.paths, self.relative_std.tolist())),
            "ci95": {path: [v - 1.96 * s, v + 1.96 * s] for path, v, s in zip(self.paths, self.values.tolist(), self.std.tolist())},
            "covariance": self.covariance.tolist(),
            "condition_number": self.condition_number,
            "residual_variance": self.residual_variance,
            "degrees_of_freedom": self.degrees_of_freedom,
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
) -> Uncertainty:
    """Covariance, correlation and identifiability warnings.

    ``jacobian`` is ``dr/dx`` in SI (rows: residuals, columns: ``paths``); ``count`` the
    number of residuals that count; ``independent_fraction`` the share of them that are
    independent (low-pass); ``scaled_position`` where each value sits within its bounds.
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
    relative_covariance = variance * inflation * np.linalg.pinv(information, rcond=1e-15, hermitian=True)
    covariance = relative_covariance * np.outer(scale, scale)
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
    return Uncertainty(paths, values, covariance, std, relative_std, correlation, condition, variance, dof, warnings)
