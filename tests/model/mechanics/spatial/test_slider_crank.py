"""The Flores slider-crank built spatially reproduces the planar model's first impact."""

from pathlib import Path

import jax
import numpy as np
import pytest

import model
from model.integrate import simulate
from model.metrics_spatial import spatial_summary_metrics
from pipelines.build import build_mechanism, solver_settings
from pipelines.build_spatial import build_spatial, spatial_settings
from pipelines.config import load_mechanism

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
    spatial_run = jax.jit(simulate, static_argnums=1)(spatial, spatial_settings(spatial_config))
    return (model.summary_metrics(planar, planar_run), spatial_summary_metrics(spatial, spatial_run), spatial_run)


@pytest.mark.slow
@pytest.mark.parametrize("metric", FIRST_IMPACT)
def test_first_impact_matches_planar(runs, metric):
    planar, spatial, _ = runs
    assert np.isfinite(float(planar[f"pin.{metric}"]))
    np.testing.assert_allclose(float(spatial[f"pin.{metric}"]), float(planar[f"pin.{metric}"]), rtol=5e-3)


@pytest.mark.slow
def test_stays_planar(runs):
    *_, trajectory = runs
    assert int(trajectory.result) == 0
    x = np.asarray(trajectory.x).reshape(len(trajectory.t), -1, 7)
    v = np.asarray(trajectory.v).reshape(len(trajectory.t), -1, 6)
    assert np.max(np.abs(x[:, :, 2])) < 1e-12  # z of every centre of mass (m)
    assert np.max(np.abs(x[:, :, 4:6])) < 1e-10  # quaternion components about x and y
    assert np.max(np.abs(v[:, :, 3:5])) < 1e-8  # angular velocity about x and y (rad/s)
    assert np.max(np.abs(np.asarray(trajectory.tilt))) < 1e-10
