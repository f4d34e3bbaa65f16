"""Calibration signals of flexible bodies: the deflection and section-load columns of the
timeseries, with their units, differentiable through the simulation like any other signal."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.calibration.signals import signal_units, trajectory_signals
from pipelines.config import load_mechanism

from tests.helpers import CONFIGS

PATH = "bodies.beam.flexible.damping_ratio"
SIGNALS = ("beam.deflection", "beam.bending_moment_0", "beam.axial_force_3", "beam.ay")


@pytest.mark.slow  # 8 ms of the flexible cantilever at rtol 1e-10 in forward mode
def test_flexible_columns_are_signals_with_units_and_derivatives():
    # the cantilever under its tip load, 4 elements, the first 8 ms (about 3/4 of the first period)
    config = load_mechanism(CONFIGS / "flexible_cantilever.toml",
                            ["bodies.beam.flexible.segments=4", 'simulation.t_end="8 ms"', 'simulation.output_interval="0.5 ms"',
                             'simulation.solver="tsit5"', "simulation.rtol=1e-10", "simulation.atol=1e-13"])
    mechanism = build_mechanism(config)
    settings = solver_settings(config, adjoint="forward")
    units = signal_units(mechanism)
    assert [units[name] for name in SIGNALS] == ["m", "N*m", "N", "m/s^2"]
    parameters = ParameterMap(mechanism, [PATH])

    # the mechanism is an argument, so its arrays (the element length among them) are traced
    # as in the calibration's compiled evaluation
    @eqx.filter_jit
    def traced(zeta, mechanism):
        changed = parameters.apply(mechanism, jnp.stack([zeta]))
        return trajectory_signals(changed, model.simulate(changed, settings), SIGNALS)

    def signals(zeta):
        # an array, not a Python float (which filter_jit keeps static): one compiled solve
        # serves the value and both finite-difference points
        return traced(jnp.asarray(zeta), mechanism)

    values = np.asarray(signals(0.05))
    # The tip load P bends the beam down; its midpoint stays above the chord (to the left of
    # root -> tip) by P L^3 / (16 E I) = 98 um in the static limit, overshot by the step load
    # (at most twice); the root moment is towards P L = 3 N m; the axial force nearly zero.
    static = 10.0 * 0.3**3 / (16 * 207e9 * 0.01**4 / 12)
    assert 0.5 * static < values[-1, 0] < 2.0 * static
    assert 0.5 < abs(values[-1, 1]) < 2 * 3.0 and abs(values[-1, 2]) < 0.1
    _, tangent = jax.jvp(signals, (jnp.asarray(0.05),), (jnp.asarray(1.0),))
    step = 1e-4
    central = (np.asarray(signals(0.05 + step)) - np.asarray(signals(0.05 - step))) / (2 * step)
    # the deflection, the root moment and the acceleration; the axial force is a small
    # second-order effect here, whose differences carry the adaptive steps' noise
    columns = [0, 1, 3]
    scale = np.max(np.abs(central[:, columns]), axis=0)
    assert np.all(scale > 0)  # damping changes them
    np.testing.assert_allclose(np.asarray(tangent)[:, columns] / scale, central[:, columns] / scale, rtol=1e-4, atol=1e-5)
