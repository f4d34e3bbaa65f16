"""The goodness-of-fit tests on residuals in noise units: white noise passes at the tests'
level, a model that misses the record's shape fails, and a low-passed record's correlated
noise passes once its independent share is given."""

import numpy as np
import pytest

from pipelines.calibration.data import LowPass
from pipelines.calibration.goodness import ALPHA, goodness_of_fit

SAMPLES = 400


def _test(residual, fraction=1.0, parameters=2, mask=None):
    residual = np.asarray(residual, float).reshape(SAMPLES, -1)
    mask = np.ones_like(residual) if mask is None else mask
    return goodness_of_fit([residual], [mask], [tuple(f"s{k}" for k in range(residual.shape[1]))], parameters, fraction)


def test_white_noise_is_consistent_at_the_stated_level():
    """Over 200 draws of two signals of unit white noise, the share called a misfit stays
    near the tests' level (at most a few in 200 for ALPHA = 1e-3), and the statistics have
    their null distributions' means."""
    rng = np.random.default_rng(0)
    results = [_test(rng.standard_normal((SAMPLES, 2))) for _ in range(200)]
    assert sum(result.misfit for result in results) <= 2
    assert np.mean([r.reduced_chi2 for r in results]) == pytest.approx(1.0, abs=0.01)
    assert np.mean([r.runs_z for r in results]) == pytest.approx(0.0, abs=0.2)
    assert np.std([r.runs_z for r in results]) == pytest.approx(1.0, abs=0.15)


def test_a_misfit_is_called_by_each_test():
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 1.0, SAMPLES)
    noise = rng.standard_normal(SAMPLES)
    # residuals 10x the noise (the noise level a fit's own residuals would have given)
    large = _test(10.0 * noise + 10.0 * np.sin(9 * t))
    assert large.misfit and large.chi2_rejects and large.chi2_p_value < ALPHA and large.reduced_chi2 > 50
    # a systematic miss of the size of the noise: the variance passes, the runs do not
    shape = _test(noise + 1.0 * np.sign(np.sin(2 * np.pi * 4 * t)), parameters=0)
    assert shape.reduced_chi2 < 2.5 and shape.runs_reject and shape.misfit and shape.runs_z < -5


def test_low_passed_noise_is_consistent_with_its_independent_share():
    """White noise through the record's low-pass keeps 2 f_c dt of its variance and is
    correlated over about 1 / (2 f_c dt) samples; with that share the tests see it as
    noise, without it the runs test would call it a misfit."""
    rng = np.random.default_rng(2)
    interval, cutoff = 1e-5, 5e3
    fraction = 2 * cutoff * interval
    calls = []
    for _ in range(20):
        filtered = np.asarray(LowPass(cutoff, 4, interval)(rng.standard_normal((SAMPLES, 1)))) / np.sqrt(fraction)
        calls.append((_test(filtered, fraction).misfit, _test(filtered, 1.0).runs_reject))
    assert sum(consistent for consistent, _ in calls) <= 1
    assert all(naive for _, naive in calls)


def test_only_the_masked_window_counts():
    rng = np.random.default_rng(3)
    residual = rng.standard_normal((SAMPLES, 1))
    residual[SAMPLES // 2 :] += 20.0  # beyond the window: the model may drift there
    mask = np.zeros_like(residual)
    mask[: SAMPLES // 2] = 1.0
    result = _test(residual, mask=mask)
    assert not result.misfit and result.residuals == SAMPLES // 2
    assert _test(residual).misfit
