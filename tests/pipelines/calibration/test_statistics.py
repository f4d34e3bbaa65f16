"""Noise estimation, bias profiling, gaps and the Newey–West covariance: no simulation."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from pipelines.calibration.continuation import first_window, predicted_spread
from pipelines.calibration.data import estimate_noise, load_record
from pipelines.calibration.loss import build_loss
from pipelines.calibration.solver_error import gauss_newton_shift
from pipelines.calibration.uncertainty import gauss_newton


def test_noise_estimate_ignores_a_smooth_signal_and_spikes():
    """White noise of std 0.3 on a fast sine plus sparse large spikes (1 % of the samples): the estimate is the
    noise level (to the MAD estimator's spread at 4000 samples), not the signal's RMS."""
    rng = np.random.default_rng(1)
    t = np.arange(4000) * 1e-5
    spikes = np.where(rng.uniform(size=t.size) < 0.01, 200.0, 0.0)
    values = np.stack([50.0 * np.sin(2 * np.pi * 300 * t) + spikes + 0.3 * rng.standard_normal(t.size),
                       0.17 + 0.05 * np.cos(2 * np.pi * 80 * t) + 1e-4 * rng.standard_normal(t.size)], axis=1)
    estimated = estimate_noise(values)
    np.testing.assert_allclose(estimated, [0.3, 1e-4], rtol=0.1)


def test_gaps_are_skipped_with_a_warning(tmp_path):
    t = np.arange(50) * 1e-5
    frame = pd.DataFrame({"t": t, "slider.ax": np.sin(1e3 * t), "slider.x": np.cos(1e3 * t)})
    frame.loc[[3, 4, 20], "slider.ax"] = np.nan
    frame.loc[10, "t"] = np.nan
    frame.to_csv(tmp_path / "m.csv", index=False)
    record = load_record(tmp_path / "m.csv", "t", ("slider.ax", "slider.x"))
    assert record.num_samples == 49 and len(record.warnings) == 2
    assert (~record.valid[:, 0]).sum() == 3 and record.valid[:, 1].all()
    assert np.all(np.isfinite(record.values))  # filled for filters and plots
    loss = build_loss("time", record.times, record.values, [(0.0, 1.0)], np.ones(2), np.ones(2), valid=record.valid)
    assert float(loss.count) == 49 * 2 - 3
    assert np.all(np.asarray(loss(jnp.asarray(record.values + 1.0))).reshape(-1, 2)[~record.valid] == 0.0)


def test_bias_is_profiled_out_exactly():
    """A constant offset on one signal: zero residual at the true signal, and the reported
    bias is the offset; the other signal keeps its offset in the residual."""
    t = np.linspace(0.0, 1e-3, 200)
    truth = np.stack([np.sin(1e4 * t), np.cos(3e3 * t)], axis=1)
    measured = truth + np.array([0.7, 0.0])
    loss = build_loss("time", t, measured, [(0.0, 1.0)], np.ones(2), np.ones(2), biased=[True, False])
    assert np.max(np.abs(np.asarray(loss(jnp.asarray(truth))))) < 1e-12
    assert np.asarray(loss.bias(jnp.asarray(truth))) == pytest.approx([0.7, 0.0])
    shifted = truth + np.array([0.0, 0.1])
    residual = np.asarray(loss(jnp.asarray(shifted))).reshape(-1, 2)
    np.testing.assert_allclose(residual, np.stack([np.zeros(200), 0.1 * np.ones(200)], axis=1), atol=1e-12)
    gradient = jax.grad(lambda a: jnp.sum(loss(jnp.asarray(truth) * a) ** 2))(1.1)
    assert np.isfinite(gradient) and gradient > 0


def test_newey_west_covers_autocorrelated_noise():
    """Linear regression with AR(1) noise (phi = 0.9): the plain Gauss–Newton std is far
    too small, the Newey–West std is close to the std of the estimates over realisations."""
    rng = np.random.default_rng(3)
    n, phi = 800, 0.9
    t = np.linspace(0.0, 1.0, n)
    design = np.stack([np.ones(n), t], axis=1)
    estimates, plain, sandwich = [], [], []
    for _ in range(200):
        e = np.zeros(n)
        shocks = rng.standard_normal(n) * np.sqrt(1 - phi**2)
        for i in range(1, n):
            e[i] = phi * e[i - 1] + shocks[i]
        y = design @ np.array([1.0, 2.0]) + 0.1 * e
        coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
        residual = design @ coefficients - y
        estimates.append(coefficients)
        plain.append(gauss_newton(["a", "b"], coefficients, residual, design, n, noise_known=False).std)
        sandwich.append(gauss_newton(["a", "b"], coefficients, residual, design, n, noise_known=False, signals=1).std)
    spread = np.std(estimates, axis=0)
    assert np.all(np.mean(plain, axis=0) < 0.5 * spread)
    np.testing.assert_allclose(np.mean(sandwich, axis=0), spread, rtol=0.3)


def test_predicted_spread_is_the_linear_propagation():
    jacobian = np.array([[[1.0, 0.0]], [[0.0, 2.0]], [[3.0, 4.0]]])
    covariance = np.diag([0.04, 0.01])
    np.testing.assert_allclose(predicted_spread(jacobian, covariance), [0.2, 0.2, np.sqrt(9 * 0.04 + 16 * 0.01)])


def test_first_window_is_an_eighth_of_a_revolution():
    class Driver:
        kind, speed = "constant_speed", 5000 * 2 * np.pi / 60

    class Problem:
        class mechanism:
            drivers = (Driver(),)

    times = np.arange(601) * 1e-5
    assert first_window(Problem, times) == pytest.approx(1.5e-3)
    assert first_window(Problem, times[:30]) == pytest.approx(times[29])


def test_solver_shift_is_the_move_of_the_optimum_and_widens_the_interval():
    """A straight line fitted to noisy data by a model carrying a systematic error (a
    stand-in for the ODE solver's): the Gauss-Newton shift between the residuals with and
    without the error is exactly the difference of the two least-squares optima, and the
    reported std then covers the truth, which the noise-only std does not."""
    rng = np.random.default_rng(4)
    t = np.linspace(0.0, 1.0, 400)
    truth = np.array([2.0, 0.5])
    design = np.stack([t, np.ones_like(t)], axis=1)
    measured = design @ truth + 0.01 * rng.standard_normal(t.size)
    error = 0.02 * np.sin(7.0 * t)  # the loose model's systematic error
    fitted = np.linalg.lstsq(design, measured - error, rcond=None)[0]  # the fit with the erring model
    exact = np.linalg.lstsq(design, measured, rcond=None)[0]  # the fit with the accurate model
    residual = (design @ fitted + error - measured) / 0.01
    accurate = (design @ fitted - measured) / 0.01
    shift = gauss_newton_shift(residual, accurate, design / 0.01)
    np.testing.assert_allclose(fitted + shift, exact, rtol=1e-10)
    plain = gauss_newton(["a", "b"], fitted, residual, design / 0.01, t.size, noise_known=True)
    widened = gauss_newton(["a", "b"], fitted, residual, design / 0.01, t.size, noise_known=True, solver_shift=shift)
    assert np.any(np.abs(fitted - truth) > 4 * plain.std)  # the noise-only interval misses the truth
    assert np.all(np.abs(fitted - truth) < 4 * widened.std)
    np.testing.assert_allclose(widened.noise_std, plain.std)
    np.testing.assert_allclose(widened.std**2, plain.std**2 + shift**2)
    assert any("tighter [simulation] rtol" in warning for warning in widened.warnings)
    assert not any("rtol" in warning for warning in plain.warnings)
