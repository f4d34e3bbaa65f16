"""Every solver in ``model.SOLVERS`` reproduces the first impact of the Flores benchmark,
``solver = "auto"`` resolves to the study's choice, and a failed solve reports itself."""

import pathlib

import jax
import numpy as np
import pytest

import model
from model.integrate._diffrax import RESULT_MAX_STEPS_REACHED
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import FLORES

CONFIG = FLORES
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
    mechanism = build_mechanism(config, "absolute")
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
    settings = solver_settings(config, solver="dopri8", rtol=1e-11, atol=1e-14, **WINDOW)
    trajectory = SIMULATE(mechanism, settings)
    assert int(trajectory.result) == 0
    return first_impact(trajectory)


# One solver of each family in the default run (explicit Runge-Kutta, ESDIRK, IMEX
# additive Runge-Kutta, Rosenbrock); the other variants share their family's code path and
# run in the validation tier.
FAMILY_REPRESENTATIVES = ("tsit5", "kvaerno3", "kencarp3", "rodas5p")


@pytest.mark.slow
@pytest.mark.parametrize("solver", [
    solver if solver in FAMILY_REPRESENTATIVES else pytest.param(solver, marks=pytest.mark.validation)
    for solver in sorted(model.SOLVERS)
])
def test_solver_reproduces_first_impact(flores, reference, solver):
    config, mechanism = flores
    settings = solver_settings(config, solver=solver, rtol=RTOL, atol=ATOL, **WINDOW)
    trajectory = SIMULATE(mechanism, settings)
    assert int(trajectory.result) == 0, model.result_message(int(trajectory.result))
    assert int(trajectory.steps) > 0
    got = first_impact(trajectory)
    period = float(model.contact_periods(mechanism)[0])
    assert abs(got["time"] - reference["time"]) < TIME_SHARE * period
    assert got["speed"] == pytest.approx(reference["speed"], rel=SPEED_REL)
    assert got["peak"] == pytest.approx(reference["peak"], rel=PEAK_REL)


@pytest.mark.slow  # compiles the Dopri8 reference solve
def test_reference_is_a_real_impact(reference):
    # Starting centred at 5000 rpm, the journal crosses the 0.5 mm clearance and hits at
    # a few m/s, penetrating tens of micrometres (measured: 4.4 m/s, 78 um); guards
    # against a vacuous comparison.
    assert 0.5 < reference["speed"] < 10.0
    assert 1e-5 < reference["peak"] < 1.5e-4


def test_auto_resolves_to_the_study_choice(flores):
    config, _ = flores
    assert config.simulation.solver == "auto"
    assert solver_settings(config).solver == model.AUTO_SOLVER == "tsit5"
    assert model.resolve_solver("rodas5p") == "rodas5p"  # a named solver stays itself


@pytest.mark.slow
def test_output_interval_does_not_change_the_steps(flores):
    """Why ``auto`` does not weigh the output interval: the adaptive steps follow the
    contact dynamics and the output is interpolated, so a ten times coarser output leaves
    the step count and the shared samples as they were.

    Both grids are binary fractions of a second with the same end time: the step sequence
    depends on ``t1`` to the last bit (an end time 2 ulp apart, as ``10 * 1e-6`` against
    ``1e-5`` gives, changes the step count by ~10 % through the first impact)."""
    config, mechanism = flores
    fine_interval = 2.0**-20  # s, ~0.95 us
    window = dict(t_end=368 * fine_interval)  # ~0.35 ms, the first impact whole
    fine, coarse = (
        SIMULATE(mechanism, solver_settings(config, solver="tsit5", rtol=RTOL, atol=ATOL, output_interval=interval,
                                            **window))
        for interval in (fine_interval, 8 * fine_interval)
    )
    assert float(fine.t[-1]) == float(coarse.t[-1]) == window["t_end"]
    assert int(fine.steps) > 50 and int(fine.steps) == int(coarse.steps)
    assert int(fine.rejected_steps) == int(coarse.rejected_steps)
    np.testing.assert_allclose(np.asarray(fine.q)[::8], np.asarray(coarse.q), rtol=0, atol=1e-12)


@pytest.mark.slow
def test_failed_solve_reports_result(flores):
    config, mechanism = flores
    settings = solver_settings(config, solver="tsit5", max_steps=5, **WINDOW)
    trajectory = SIMULATE(mechanism, settings)
    assert int(trajectory.result) != 0
    assert int(trajectory.result) == RESULT_MAX_STEPS_REACHED
    assert "maximum number of solver steps" in model.result_message(int(trajectory.result))
    # the output times the failed solve never reached are not filled with plausible values
    assert not np.all(np.isfinite(np.asarray(trajectory.q)))
