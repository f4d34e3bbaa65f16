"""The figures of a simulate run (pipelines/simulation_plots.py): a spatial run's set, chosen
by its joints and tracked points."""

from pathlib import Path
from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np
import pytest

from pipelines.build_spatial import build_spatial
from pipelines.config import load_mechanism

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.fixture(scope="module")
def double_link():
    config = load_mechanism(CONFIGS / "double_link_clearance.toml")
    return config, build_spatial(config)


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_spatial_plots_are_written(double_link, tmp_path):
    from pipelines.simulation_plots import plot_friction, plot_simulation

    config, mechanism = double_link
    times = 6
    x0 = np.asarray(mechanism.initial_positions)
    x = np.repeat(x0[None], times, axis=0)
    x[:, 8] -= np.linspace(0.0, 1e-3, times)  # link 2 drops 1 mm
    joints = np.ones((times, 2))
    trajectory = SimpleNamespace(
        t=jnp.linspace(0.0, 1e-3, times), x=jnp.asarray(x), normal_force=jnp.asarray(joints),
        normal_force_a=jnp.asarray(0.5 * joints), normal_force_b=jnp.asarray(0.5 * joints),
        tangential_force=jnp.asarray(0.1 * joints), slip_velocity=jnp.asarray(1e-3 * joints),
        penetration=jnp.asarray(1e-6 * joints), eccentricity=jnp.zeros((times, 2, 3)))
    run = SimpleNamespace(config=config, mechanism=mechanism, trajectory=trajectory, ideal=trajectory)
    names = plot_simulation(run, tmp_path)
    assert names == ["tracked_points.png", "end_forces.png", "orbits.png"]  # frictionless joints: no friction.png
    assert all((tmp_path / name).stat().st_size > 0 for name in names)
    rubbing = load_mechanism(CONFIGS / "double_link_clearance_friction.toml")
    run.mechanism = build_spatial(rubbing)
    assert plot_friction(run, tmp_path) == ["friction.png"]
    assert (tmp_path / "friction.png").stat().st_size > 0
