"""The Flores slider-crank built spatially reproduces the planar model's first impact."""

from pathlib import Path

import jax
import numpy as np
import pytest

import model
from model.integrate import simulate
from pipelines.build import build_mechanism, solver_settings
from pipelines.build_spatial import build_spatial
from pipelines.config import load_mechanism
from pipelines.design.performance import metric_dimensions, trajectory_metrics

CONFIGS = Path(__file__).resolve().parents[4] / "configs"
FIRST_IMPACT = ("first_impact_time", "first_impact_velocity", "max_normal_force", "max_penetration")


@pytest.fixture(scope="module")
def runs():
    planar_config = load_mechanism(CONFIGS / "flores_slider_crank.toml", ["simulation.t_end=0.5 ms"])
    planar = build_mechanism(planar_config)
    planar_settings = solver_settings(planar_config, output_interval=1e-6)
    planar_run = jax.jit(model.simulate, static_argnums=1)(planar, planar_settings)
    spatial_config = load_mechanism(CONFIGS / "flores_slider_crank_3d.toml")
    spatial = build_spatial(spatial_config)
    spatial_run = jax.jit(simulate, static_argnums=1)(spatial, solver_settings(spatial_config))
    return (model.summary_metrics(planar, planar_run), model.summary_metrics(spatial, spatial_run), spatial_run,
            (planar, planar_run, spatial, spatial_config))


@pytest.mark.slow
@pytest.mark.parametrize("metric", FIRST_IMPACT)
def test_first_impact_matches_planar(runs, metric):
    planar, spatial, *_ = runs
    assert np.isfinite(float(planar[f"pin.{metric}"]))
    np.testing.assert_allclose(float(spatial[f"pin.{metric}"]), float(planar[f"pin.{metric}"]), rtol=5e-3)


@pytest.mark.slow
def test_stays_planar(runs):
    _, _, trajectory, _ = runs
    assert int(trajectory.result) == 0
    x = np.asarray(trajectory.x).reshape(len(trajectory.t), -1, 7)
    v = np.asarray(trajectory.v).reshape(len(trajectory.t), -1, 6)
    assert np.max(np.abs(x[:, :, 2])) < 1e-12  # z of every centre of mass (m)
    assert np.max(np.abs(x[:, :, 4:6])) < 1e-10  # quaternion components about x and y
    assert np.max(np.abs(v[:, :, 3:5])) < 1e-8  # angular velocity about x and y (rad/s)
    assert np.max(np.abs(np.asarray(trajectory.tilt))) < 1e-10


@pytest.mark.slow
def test_body_motion_and_design_metrics_match_planar(runs):
    """The engine-independent views of a trajectory (``body_positions``,
    ``body_accelerations``) and the tolerance-design metrics built on them agree between the
    two engines, read from their different state layouts (planar x, y, theta per body;
    spatial position and quaternion)."""
    _, _, spatial_run, (planar, planar_run, spatial, _) = runs
    assert planar_run.t.shape == spatial_run.t.shape
    np.testing.assert_allclose(spatial_run.body_positions[..., :2], planar_run.body_positions, rtol=1e-6, atol=1e-8)
    assert np.max(np.abs(np.asarray(spatial_run.body_positions[..., 2]))) < 1e-12
    peak = float(np.max(np.abs(np.asarray(planar_run.body_accelerations))))
    # through the impact the accelerations differ by the two engines' step sequences
    np.testing.assert_allclose(spatial_run.body_accelerations[..., :2], planar_run.body_accelerations, rtol=0, atol=2e-2 * peak)
    planar_metrics = trajectory_metrics(planar, planar_run)
    spatial_metrics = trajectory_metrics(spatial, spatial_run)
    assert set(metric_dimensions(spatial)) == set(metric_dimensions(planar)) | {f"{b}.max_abs_az" for b in spatial.body_names}
    for name in planar_metrics:
        np.testing.assert_allclose(float(spatial_metrics[name]), float(planar_metrics[name]), rtol=2e-2, atol=1e-9, err_msg=name)
    assert all(float(spatial_metrics[f"{b}.max_abs_az"]) < 1e-6 for b in spatial.body_names)


@pytest.mark.slow
def test_summary_regimes_and_contact_period_match_planar(runs):
    """``summary.json`` of the spatial run carries the planar one's regime shares and contact
    period estimate, and over this first impact they agree with the planar run's."""
    from pipelines.simulation import SimulationRun, joint_regimes, summary as run_summary

    _, _, spatial_run, (planar, planar_run, spatial, config) = runs
    run = SimulationRun(config, spatial, solver_settings(config), spatial_run, None, None, 0.0, 0.0, "ok")
    summary = run_summary(run)
    expected = joint_regimes(planar, planar_run)
    assert summary["pin.contact_period_estimate"] == pytest.approx(expected["pin.contact_period_estimate"], rel=1e-4)
    shares = summary["pin.regime"]
    assert sum(shares.values()) == pytest.approx(1.0) and shares["impact"] > 0.0
    for regime, share in expected["pin.regime"].items():
        assert shares[regime] == pytest.approx(share, abs=0.01), regime
