"""Every solver in ``model.SOLVERS`` reproduces the first impact of the Flores benchmark,
``solver = "auto"`` resolves sensibly, and a failed solve reports itself."""

import pathlib

import jax
import numpy as np
import pytest

import model
from model.simulate import STIFF_SOLVERS
from model.solver_choice import stiffness_ratio
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism

CONFIG = pathlib.Path(__file__).resolve().parents[2] / "configs" / "flores_slider_crank.toml"
# The first contact begins at ~0.22 ms and lasts ~0.06 ms: 0.35 ms covers it whole.
WINDOW = dict(t_end=3.5e-4, output_interval=1e-6)
RTOL, ATOL = 1e-6, 1e-9
# Allowed deviations from the rtol-1e-11 Dopri8 reference at rtol 1e-6 (third-order
# solvers included): impact time as a share of the contact period, speed and peak
# penetration relative.
TIME_SHARE, SPEED_REL, PEAK_REL = 1e-3, 1e-3, 1e-3

SIMULATE = jax.jit(model.simulate, static_argnums=1)


@pytest.fixture(scope="module")
def flores():
    config = load_mechanism(CONFIG)
    mechanism = build_mechanism(config)
    return config, mechanism


def first_impact(trajectory):
    penetration = np.asarray(trajectory.penetration[:, 0])
    t = np.asarray(trajectory.t)
    index = int(np.argmax(penetration > 0))
    assert index > 0, "no contact in the window"
    share = -penetration[index - 1] / (penetration[index] - penetration[index - 1])
    episode_end = index + int(np.argmax(penetration[index:] <= 0))
    assert episode_end > index, "the first contact did not end inside the window"
    return dict(
        time=t[index - 1] + share * (t[index] - t[index - 1]),
        speed=float(trajectory.impact_memory[index, 0]),
        peak=float(penetration[index:episode_end].max()),
    )


@pytest.fixture(scope="module")
def reference(flores):
    config, mechanism = flores
    settings = solver_settings(config, mechanism, solver="dopri8", rtol=1e-11, atol=1e-14, **WINDOW)
    trajectory = SIMULATE(mechanism, settings)
    assert int(trajectory.result) == 0
    return first_impact(trajectory)


@pytest.mark.parametrize("solver", sorted(model.SOLVERS))
def test_solver_reproduces_first_impact(flores, reference, solver):
    config, mechanism = flores
    settings = solver_settings(config, mechanism, solver=solver, rtol=RTOL, atol=ATOL, **WINDOW)
    trajectory = SIMULATE(mechanism, settings)
    assert int(trajectory.result) == 0, model.result_message(int(trajectory.result))
    assert int(trajectory.steps) > 0
    got = first_impact(trajectory)
    period = float(model.contact_periods(mechanism)[0])
    assert abs(got["time"] - reference["time"]) < TIME_SHARE * period
    assert got["speed"] == pytest.approx(reference["speed"], rel=SPEED_REL)
    assert got["peak"] == pytest.approx(reference["peak"], rel=PEAK_REL)


def test_reference_is_a_real_impact(reference):
    # Starting centred at 5000 rpm, the journal crosses the 0.5 mm clearance and hits at
    # a few m/s, penetrating tens of micrometres (measured: 4.4 m/s, 78 um); guards
    # against a vacuous comparison.
    assert 0.5 < reference["speed"] < 10.0
    assert 1e-5 < reference["peak"] < 1.5e-4


def test_auto_soft_and_stiff(flores):
    config, mechanism = flores
    interval = config.simulation.output_interval
    assert model.choose_solver(mechanism, interval) == "tsit5"  # the study: explicit wins
    factor_100 = _with_stiffness_factor(mechanism, 100.0)
    # 100x stiffer, contact still resolved by the 10 us output: explicit still wins
    assert model.choose_solver(factor_100, interval) == "tsit5"
    # the same stiff contact sampled at 0.1 ms (8 contact periods): the stiff path
    assert model.choose_solver(factor_100, 1e-4) in STIFF_SOLVERS
    # stiffness grows -> the ratio grows
    assert stiffness_ratio(factor_100, interval) == pytest.approx(10.0 * stiffness_ratio(mechanism, interval), rel=1e-9)
    assert model.choose_solver(mechanism.idealised(), interval) == "tsit5"


def _with_stiffness_factor(mechanism, factor):
    return ParameterMap(mechanism, ["joints.pin.contact.stiffness_factor"]).apply(mechanism, [factor])


def test_failed_solve_reports_result(flores):
    config, mechanism = flores
    settings = solver_settings(config, mechanism, solver="tsit5", max_steps=5, **WINDOW)
    trajectory = SIMULATE(mechanism, settings)
    assert int(trajectory.result) != 0
    assert model.result_message(int(trajectory.result)) != "ok"
    # whatever diffrax left after the failure, the failure is flagged, not silent
    assert not np.all(np.isfinite(np.asarray(trajectory.q))) or int(trajectory.result) != 0
