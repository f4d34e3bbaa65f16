"""The time offset between a record's clock and the simulation's, estimated from the data.

A logger starts wherever it starts: the record's ``t = 0`` is some unknown simulation time
``d`` (simulation time = record time + d). Before the fit, ``d`` is estimated by sliding
the record's first window along the simulation at the initial parameter values and taking
the shift with the smallest noise-scaled squared difference (the least-squares form of the
cross-correlation; a signal with an unknown bias has its mean difference removed). A
parabola through the best shift and its neighbours gives the estimate between grid shifts.
The offset is then fitted with the other parameters, within a few record samples of the
estimate (the fit differentiates through the interpolation of the simulated signals).
"""

from __future__ import annotations

import numpy as np

MAX_SHIFTS = 20_000  # candidate shifts searched (the grid is coarsened beyond this)
CHUNK = 512  # shifts per vectorised block
FIT_HALF_WIDTH = 3  # record samples either side of the estimate the fit may move the offset


def shift_misfit(grid: np.ndarray, simulated: np.ndarray, times: np.ndarray, measured: np.ndarray, valid: np.ndarray,
                 scale: np.ndarray, biased: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Per shift ``d``: ``sum_i,k valid (s_k(t_i + d) - y_ik - b_k)^2 / scale_k^2`` with the
    simulated signals ``s`` linearly interpolated on ``grid``; ``b_k`` is the mean difference
    for biased signals, else 0."""
    misfit = np.empty(shifts.size)
    weights = valid.astype(np.float64)
    count = np.maximum(weights.sum(axis=0), 1.0)
    for start in range(0, shifts.size, CHUNK):
        block = shifts[start:start + CHUNK]
        at = times[None, :] + block[:, None]  # [shifts, samples]
        sampled = np.stack([np.interp(at, grid, simulated[:, k]) for k in range(simulated.shape[1])], axis=-1)
        difference = (sampled - measured[None]) * weights[None]
        bias = np.where(biased, difference.sum(axis=1) / count, 0.0)[:, None, :]
        misfit[start:start + CHUNK] = np.sum(((difference - bias * weights[None]) / scale) ** 2, axis=(1, 2))
    return misfit


def estimate_offset(grid: np.ndarray, simulated: np.ndarray, times: np.ndarray, measured: np.ndarray, valid: np.ndarray,
                    scale: np.ndarray, biased, window: float, offset_range: tuple[float, float]) -> float:
    """The offset in ``offset_range`` (s) that best lays the record's first ``window`` seconds
    onto the simulated signals (``simulated[grid_time, signal]`` on ``grid``)."""
    low, high = offset_range
    inside = times <= times[0] + window
    step = max(float(np.min(np.diff(grid))) / 2.0, (high - low) / MAX_SHIFTS)
    shifts = np.linspace(low, high, max(int(np.ceil((high - low) / step)) + 1, 2))
    misfit = shift_misfit(grid, simulated, times[inside], measured[inside], valid[inside], np.asarray(scale, np.float64),
                          np.asarray(biased, bool), shifts)
    best = int(np.nanargmin(misfit))
    if 0 < best < shifts.size - 1:  # vertex of the parabola through the best shift and its neighbours
        left, centre, right = misfit[best - 1:best + 2]
        curvature = left - 2.0 * centre + right
        if curvature > 0:
            return float(shifts[best] + 0.5 * (left - right) / curvature * (shifts[1] - shifts[0]))
    return float(shifts[best])


def fit_bounds(estimate: float, sample_step: float, offset_range: tuple[float, float]) -> tuple[float, float, float]:
    """``(initial, lower, upper)`` of the fitted offset: ``FIT_HALF_WIDTH`` samples either
    side of the estimate, and at most one sample beyond the offsets that keep the record in
    the simulation. That sample of slack keeps a true offset at the edge of the range (a
    record that starts with the simulation) inside the bounds, where the bounded transform
    is not flat; the simulated signals are held at their end values for it. The initial
    value is kept off the bounds for the same reason."""
    lower = max(offset_range[0] - sample_step, estimate - FIT_HALF_WIDTH * sample_step)
    upper = min(offset_range[1] + sample_step, estimate + FIT_HALF_WIDTH * sample_step)
    margin = 0.05 * (upper - lower)
    return float(np.clip(estimate, lower + margin, upper - margin)), lower, upper
