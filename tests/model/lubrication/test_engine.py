"""A lubricated clearance joint in the planar engine: the film keeps the journal off the wall,
and derivatives through the solver with respect to the viscosity are right."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import build_mechanism, parameter_leaf, solver_settings
from pipelines.config import load_mechanism

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


@pytest.mark.slow
def test_film_keeps_the_journal_off_the_wall_and_differentiates():
    config = load_mechanism(CONFIGS / "flores_lubricated.toml", ["simulation.t_end=3 ms"])
    mechanism = build_mechanism(config)
    settings = solver_settings(config, rtol=1e-9, atol=1e-12, adjoint="forward")
    _, set_viscosity = parameter_leaf(mechanism, "joints.pin.lubrication.viscosity")

    @jax.jit
    def final_gap(viscosity):
        trajectory = model.simulate(set_viscosity(mechanism, viscosity), settings)
        return trajectory.penetration[-1, 0], jnp.max(trajectory.penetration[:, 0])

    (gap, deepest), (derivative, _) = jax.jvp(final_gap, (jnp.asarray(0.4),), (jnp.asarray(1.0),))
    assert float(deepest) < 0.0  # never touches the wall
    step = 1e-4 * 0.4
    central = (final_gap(0.4 + step)[0] - final_gap(0.4 - step)[0]) / (2 * step)
    assert float(derivative) == pytest.approx(float(central), rel=1e-3)
    assert np.isfinite(float(gap))
