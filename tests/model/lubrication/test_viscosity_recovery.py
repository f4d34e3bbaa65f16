"""Viscosity from a record: the oil's viscosity is identifiable from the slider's
acceleration alone, and Levenberg–Marquardt with forward-mode Jacobians through the solver
recovers it from a start 30 % off."""

from pathlib import Path

import jax
import jax.numpy as jnp
import optimistix as optx
import pytest

import model
from pipelines.build import build_mechanism, parameter_leaf, solver_settings
from pipelines.config import load_mechanism

CONFIGS = Path(__file__).resolve().parents[3] / "configs"
TRUE_VISCOSITY = 0.4  # Pa s, the config's SAE 40
# 2 ms: the journal leaves the centre and the film carries the conrod-slider load, so the
# slider's acceleration depends on the viscosity (squeeze and wedge forces ~ mu).
SHORT = ["simulation.t_end=2 ms", "simulation.output_interval=20 us"]


@pytest.mark.slow
@pytest.mark.validation  # a fit of minutes; the derivative it uses: tests/pipelines/sweeping/test_viscosity_derivative.py
def test_levenberg_marquardt_recovers_the_viscosity_from_the_slider_acceleration():
    config = load_mechanism(CONFIGS / "flores_lubricated.toml", SHORT)
    mechanism = build_mechanism(config)
    settings = solver_settings(config, rtol=1e-9, atol=1e-12, adjoint="forward")
    _, set_viscosity = parameter_leaf(mechanism, "joints.pin.lubrication.viscosity")
    slider_ax = 3 * mechanism.body_names.index("slider")  # coordinates (x, y, theta) per body

    @jax.jit
    def slider_acceleration(viscosity):
        return model.simulate(set_viscosity(mechanism, viscosity), settings).qdd[:, slider_ax]

    record = slider_acceleration(jnp.asarray(TRUE_VISCOSITY))
    scale = jnp.max(jnp.abs(record))

    def residuals(log_viscosity, _):
        return (slider_acceleration(jnp.exp(log_viscosity)) - record) / scale

    start = jnp.log(0.7 * TRUE_VISCOSITY)
    assert float(jnp.max(jnp.abs(residuals(start, None)))) > 1e-3  # the record does see the oil
    solution = optx.least_squares(residuals, optx.LevenbergMarquardt(rtol=1e-8, atol=1e-10), start,
                                  max_steps=20, throw=False)
    recovered = float(jnp.exp(solution.value))
    print(f"recovered {recovered:.6g} Pa s in {int(solution.stats['num_steps'])} steps")
    assert recovered == pytest.approx(TRUE_VISCOSITY, rel=1e-2)
