"""Pieces of the calibration that need no simulation: parameter maps, losses, signals,
Gauss–Newton statistics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pipelines.calibration.loss import build_loss
from pipelines.calibration.parameters import FitParameter, ParameterTransform
from pipelines.calibration.signals import sample_at
from pipelines.calibration.uncertainty import gauss_newton


def test_transform_round_trip_and_bounds():
    parameters = [
        FitParameter("e", 0.6, 0.2, 1.0, "linear"),
        FitParameter("K", 3e10, 1e9, 1e12, "log"),
        FitParameter("mu", 0.1, None, None, "linear"),
        FitParameter("v", 0.01, None, None, "log"),
    ]
    transform = ParameterTransform(parameters)
    x0 = np.array([p.initial for p in parameters])
    u0 = transform.to_unconstrained(x0)
    np.testing.assert_allclose(np.asarray(transform.to_physical(jnp.asarray(u0))), x0, rtol=1e-12)
    far = np.asarray(transform.to_physical(jnp.asarray(u0 + np.array([50.0, -50.0, 0.0, 0.0]))))
    assert 0.2 <= far[0] <= 1.0 and 1e9 * (1 - 1e-12) <= far[1] <= 1e12
    numeric = [(transform.to_physical(jnp.asarray(u0 + h)) - transform.to_physical(jnp.asarray(u0 - h)))[i] / 2e-6
               for i, h in enumerate(1e-6 * np.eye(4))]
    np.testing.assert_allclose(np.asarray(transform.derivative(jnp.asarray(u0))), numeric, rtol=1e-6)
    starts = transform.starts(5, 0.2, seed=1)
    assert starts.shape == (5, 4) and np.allclose(starts[0], u0)
    physical = np.array([transform.to_physical(jnp.asarray(u)) for u in starts])
    assert np.all((physical[:, 0] > 0.2) & (physical[:, 0] < 1.0)) and len(np.unique(physical[:, 0])) == 5


def test_screen_covers_the_bounded_ranges_evenly():
    parameters = [FitParameter("mu_s", 0.12, 0.01, 0.5, "log"), FitParameter("e", 0.6, 0.2, 1.0, "linear"),
                  FitParameter("v", 0.01, None, None, "log")]
    transform = ParameterTransform(parameters)
    points = transform.screen(64, 0.2, seed=0)
    assert points.shape == (64, 3) and np.all(np.isfinite(points))
    np.testing.assert_array_equal(points, transform.screen(64, 0.2, seed=0))
    physical = np.array([transform.to_physical(jnp.asarray(u)) for u in points])
    position = np.array([transform.scaled_position(x)[:2] for x in physical])
    # every eighth of each bounded (log or linear) range holds some points, none a crowd
    for column in position.T:
        counts = np.histogram(column, bins=8, range=(0.0, 1.0))[0]
        assert counts.min() >= 4 and counts.max() <= 12, counts
    # an unbounded parameter: within +-3 spread (log) of its initial value, both sides used
    log_ratio = np.log(physical[:, 2] / 0.01)
    assert np.all(np.abs(log_ratio) <= 0.6 + 1e-9) and log_ratio.min() < -0.3 and log_ratio.max() > 0.3


def test_sample_at_interpolates_and_differentiates_in_time():
    grid = jnp.linspace(0.0, 1.0, 11)
    values = jnp.stack([grid**2, 3.0 * grid], axis=1)
    out = sample_at(grid, values, jnp.array([0.05, 0.5]))
    np.testing.assert_allclose(np.asarray(out), [[0.005, 0.15], [0.25, 1.5]], atol=1e-12)
    slope = jax.grad(lambda s: sample_at(grid, values, jnp.array([0.55]) + s)[0, 1])(0.0)
    assert slope == pytest.approx(3.0)


@pytest.mark.slow  # 4 CPU s, most of it compiling
@pytest.mark.parametrize("kind", ["time", "spectrum", "peaks"])
def test_losses_vanish_on_the_measurement_and_grow_with_a_change(kind):
    interval = 1e-5
    t = np.arange(400) * interval
    measured = np.stack([np.sin(2 * np.pi * 2e3 * t) * np.exp(-t / 2e-3), np.cos(2 * np.pi * 7e3 * t)], axis=1)
    loss = build_loss(kind, t, measured, [(0.0, 2e-3), (1e-3, 4e-3)], np.ones(2), np.array([1.0, 2.0]), interval, bands=12)
    assert np.max(np.abs(np.asarray(loss(jnp.asarray(measured))))) < 1e-9
    changed = jnp.asarray(measured * np.array([1.3, 1.0]))
    value = float(jnp.sum(loss(changed) ** 2) / loss.count)
    assert value > 1e-4
    gradient = jax.grad(lambda scale: jnp.sum(loss(jnp.asarray(measured) * scale) ** 2))(1.2)
    assert np.isfinite(gradient) and gradient > 0


def test_gauss_newton_matches_linear_regression_and_flags_unidentifiable():
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 1.0, 200)
    sigma = 0.1
    design = np.stack([np.ones_like(t), t], axis=1)
    y = design @ np.array([1.0, 2.0]) + sigma * rng.standard_normal(t.size)
    estimate, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = (design @ estimate - y) / sigma
    result = gauss_newton(["a", "b"], estimate, residual, design / sigma, t.size, noise_known=True)
    exact = np.sqrt(np.diag(sigma**2 * np.linalg.inv(design.T @ design)))
    np.testing.assert_allclose(result.std, exact, rtol=1e-10)
    assert result.warnings == []
    assert -1 < result.correlation[0, 1] < 0  # intercept and slope trade off
    # a third parameter the residuals do not depend on, and one that duplicates "b"
    jacobian = np.concatenate([design, np.zeros((t.size, 1)), design[:, 1:] * 1.0000001], axis=1) / sigma
    flagged = gauss_newton(["a", "b", "mu", "b2"], np.array([1.0, 2.0, 0.1, 2.0]), residual, jacobian, t.size, noise_known=True)
    text = " ".join(flagged.warnings)
    assert "mu: not identifiable" in text and "near-singular" in text


def test_fitted_values_of_a_switching_friction_law_are_flagged():
    from pipelines.build import build_mechanism
    from pipelines.calibration.setup import _switching_law_warnings
    from pipelines.config import load_mechanism

    from tests.helpers import CONFIGS

    config = CONFIGS / "low_speed_slider_crank.toml"
    fitted = [FitParameter("joints.pin.friction.static_coefficient", 0.1), FitParameter("joints.pin.contact.restitution", 0.8)]
    switching = build_mechanism(load_mechanism(config, ['joints.pin.friction.model="static_dynamic"', 'joints.pin.friction.stiction_velocity="10 mm/s"',
                                                             'joints.pin.friction.dynamic_velocity="20 mm/s"']))
    (warning,) = _switching_law_warnings(switching, fitted)
    assert warning.startswith("joints.pin.friction.static_coefficient: the static_dynamic friction law")
    assert _switching_law_warnings(build_mechanism(load_mechanism(config)), fitted) == []
