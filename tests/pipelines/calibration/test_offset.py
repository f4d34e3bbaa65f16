"""The time offset of a record, estimated by sliding its first window along the simulated
signals: a record cut from a known signal at a known shift, sampled on another grid, with
noise and an unknown bias, gives the shift back within a fraction of a sample."""

import numpy as np
import pytest

from pipelines.calibration.offset import estimate_offset, fit_bounds, shift_misfit


def signal(t):
    """A smooth motion with a decaying impact-like burst (not periodic over the search)."""
    burst = np.exp(-((t - 0.4e-3) / 30e-6) ** 2) * np.sin(2 * np.pi * 40e3 * t)
    return np.stack([0.05 * np.cos(2 * np.pi * 800 * t), 2e4 * np.sin(2 * np.pi * 1.3e3 * t) + 3e4 * burst], axis=1)


@pytest.mark.parametrize("shift", [0.0, 13.7e-6, 61e-6])
def test_known_shift_is_recovered_within_a_sample(shift):
    grid = np.arange(0.0, 2e-3, 2e-6)  # the simulation's output grid
    step = 8e-6  # the record's sample interval, not a multiple of the grid's
    times = np.arange(0.0, 1.2e-3, step)
    rng = np.random.default_rng(0)
    noise = np.array([1e-4, 500.0])
    measured = signal(times + shift) + noise * rng.standard_normal((times.size, 2)) + np.array([0.0, 700.0])  # biased sensor
    valid = np.ones_like(measured, bool)
    valid[5:9, 1] = False  # a gap
    estimate = estimate_offset(grid, signal(grid), times, measured, valid, noise, [False, True], window=0.6e-3,
                               offset_range=(0.0, 0.5e-3))
    assert abs(estimate - shift) < 0.25 * step


def test_misfit_is_smallest_at_the_shift_and_removes_a_bias():
    grid = np.linspace(0.0, 1e-3, 2001)
    times = np.linspace(0.0, 0.5e-3, 101)
    measured = signal(times + 1e-4) + np.array([0.0, 123.0])
    misfit = shift_misfit(grid, signal(grid), times, measured, np.ones_like(measured, bool), np.ones(2),
                          np.array([False, True]), np.array([0.0, 1e-4, 2e-4]))
    assert misfit[1] < 1e-6 * min(misfit[0], misfit[2])


def test_fit_bounds_reach_a_sample_beyond_the_range_with_the_initial_value_off_them():
    initial, lower, upper = fit_bounds(0.0, 8e-6, (0.0, 32e-6))
    assert lower == pytest.approx(-8e-6) and upper == pytest.approx(24e-6) and lower < initial < upper
    initial, lower, upper = fit_bounds(16e-6, 8e-6, (-1.0, 1.0))
    assert (lower, initial, upper) == pytest.approx((-8e-6, 16e-6, 40e-6))
