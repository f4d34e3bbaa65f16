"""Goodness of fit against the record's own noise: is the fitted model consistent with the data?

The residuals of a time-domain loss are divided by each signal's noise level, taken from the
record alone (``data.noise``, or :func:`~pipelines.calibration.data.estimate_noise`: robust
differences of order k, cf. Gasser, Sroka & Jennen-Steinmetz 1986), never from the fit. At a
fit that describes the record they are noise: about unit variance and without structure. Two
classical tests check that on the fitted window:

- **Chi-square** (e.g. Bevington & Robinson, *Data Reduction and Error Analysis*, 2003,
  §11.1): with ``n`` residuals of which a share ``f`` are independent (a low-pass filter of
  cutoff ``f_c`` keeps ``f = 2 f_c dt``) and ``p`` fitted parameters,
  ``T = f sum(r^2)`` follows a chi-square law with ``nu = f n - p`` degrees of freedom.
  The reduced chi-square is ``sum(r^2) / (n - p / f)``.
- **Wald–Wolfowitz runs test** (Wald & Wolfowitz 1940) on the signs of each signal's
  residuals, thinned to every ``1/f``-th sample: with ``n+`` positive and ``n-`` negative
  signs, the number of runs ``R`` has mean ``mu = 2 n+ n- / n + 1`` and variance
  ``(mu - 1)(mu - 2) / (n - 1)``; too few runs (``z = (R - mu) / sigma`` far below 0) means
  residuals that stay on one side of the record for stretches: the model misses its shape.
  The signals' runs and moments are summed into one ``z``.

A fit is a **misfit** when the chi-square test rejects at level ``ALPHA`` *and* the reduced
chi-square exceeds ``CHI2_LIMIT`` (the continuation's own tolerance for a window: the
model's and solver's errors may add to the noise, up to doubling its variance), or when the
runs test rejects at level ``ALPHA``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import stats

ALPHA = 1e-3  # level of both tests
CHI2_LIMIT = 2.0  # reduced chi-square a consistent fit stays below (noise variance at most doubled)
MIN_SIGNS = 8  # fewer signs per signal say nothing about runs


@dataclasses.dataclass(frozen=True)
class Goodness:
    """The two tests on the residuals (noise units) of the fitted window."""

    residuals: int  # residuals that count
    parameters: int
    independent_fraction: float
    reduced_chi2: float
    chi2_p_value: float
    runs: int  # observed runs over the signals
    expected_runs: float
    runs_z: float
    runs_p_value: float  # one-sided: too few runs
    residual_rms: dict[str, float]  # per signal, noise units

    @property
    def chi2_rejects(self) -> bool:
        return bool(self.chi2_p_value < ALPHA and self.reduced_chi2 > CHI2_LIMIT)

    @property
    def runs_reject(self) -> bool:
        return bool(self.runs_p_value < ALPHA)

    @property
    def misfit(self) -> bool:
        return self.chi2_rejects or self.runs_reject

    def as_dict(self) -> dict:
        return {
            "misfit": self.misfit, "residuals": self.residuals, "parameters": self.parameters,
            "independent_fraction": self.independent_fraction,
            "chi2": {"reduced": self.reduced_chi2, "p_value": self.chi2_p_value, "limit": CHI2_LIMIT,
                     "alpha": ALPHA, "rejects": self.chi2_rejects},
            "runs": {"observed": self.runs, "expected": self.expected_runs, "z": self.runs_z,
                     "p_value": self.runs_p_value, "alpha": ALPHA, "rejects": self.runs_reject},
            "residual_rms": self.residual_rms,
        }

    def describe(self) -> str:
        """One line: the statistics and the verdict."""
        rms = ", ".join(f"{name} {value:.3g}" for name, value in self.residual_rms.items())
        return (f"reduced chi-square {self.reduced_chi2:.3g} (p = {self.chi2_p_value:.2g}), "
                f"runs {self.runs} of {self.expected_runs:.1f} expected (z = {self.runs_z:.2f}, p = {self.runs_p_value:.2g}); "
                f"residual RMS in noise units: {rms}")


def _runs(signs: np.ndarray) -> tuple[int, float, float]:
    """Runs, their expected number and variance for one sequence of signs (Wald & Wolfowitz 1940)."""
    n = signs.size
    positive = int(np.sum(signs))
    negative = n - positive
    if n < MIN_SIGNS or positive == 0 or negative == 0:
        return 0, 0.0, 0.0
    runs = 1 + int(np.sum(signs[1:] != signs[:-1]))
    mean = 2.0 * positive * negative / n + 1.0
    variance = (mean - 1.0) * (mean - 2.0) / (n - 1.0)
    return runs, mean, variance


def goodness_of_fit(residuals: list[np.ndarray], masks: list[np.ndarray], names: list[tuple[str, ...]],
                    parameters: int, independent_fraction: float = 1.0) -> Goodness:
    """Both tests on per-record residuals ``[samples, signals]`` in noise units; ``masks`` (1
    where a residual counts) select the fitted window, ``names`` label each record's signals."""
    fraction = float(min(max(independent_fraction, 1e-12), 1.0))
    stride = max(1, int(round(1.0 / fraction)))
    total, count = 0.0, 0.0
    runs, mean, variance = 0, 0.0, 0.0
    rms: dict[str, float] = {}
    for residual, mask, labels in zip(residuals, masks, names):
        residual = np.asarray(residual, np.float64).reshape(mask.shape)
        keep = np.asarray(mask) > 0
        total += float(np.sum(residual[keep] ** 2))
        count += float(np.sum(keep))
        for k, name in enumerate(labels):
            column = residual[keep[:, k], k]
            rms[name] = float(np.sqrt(np.mean(column**2))) if column.size else float("nan")
            signs = column[::stride]
            signs = signs[signs != 0.0] > 0.0
            r, m, v = _runs(signs)
            runs, mean, variance = runs + r, mean + m, variance + v
    degrees = max(fraction * count - parameters, 1.0)
    reduced = total / max(count - parameters / fraction, 1.0)
    chi2_p = float(stats.chi2.sf(fraction * total, degrees))
    z = (runs - mean) / math.sqrt(variance) if variance > 0 else 0.0
    return Goodness(int(count), parameters, fraction, float(reduced), chi2_p, runs, float(mean), float(z),
                    float(stats.norm.cdf(z)), rms)
