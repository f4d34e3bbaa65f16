"""End to end on the example calibration config (configs/calibrate_example.toml, copied beside
configs/flores_slider_crank.toml with a synthetic measured.csv).

The record: 1 ms of the Flores slider-crank's slider acceleration made with the known
parameters e = 0.9 and K = 6.6e10 N/m^1.5 (the Hertz value), plus 2 % Gaussian noise;
the simulation is shortened to the record with --set simulation.t_end="1 ms". All tests
here share one problem structure, so the batched forward-mode evaluation compiles once.
"""

import json
import shutil
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from pipelines.calibration.problem import evaluate_forward
from pipelines.calibration.setup import load_calibration
from pipelines.calibration.synthesize import synthesize
from pipelines.cli import main

from tests.helpers import REPOSITORY as REPO

pytestmark = pytest.mark.slow  # end-to-end fits: minutes each on 2 cores
TRUTH = {"joints.pin.contact.restitution": 0.9, "joints.pin.contact.stiffness": 6.6e10}
SHORT = ['simulation.t_end="1 ms"']
# Stated recovery tolerance from the example's starting values (e: 0.6, 33 % off; K: 3e10,
# 55 % off) and 2 % noise: relative error below 1 % for e and 3 % for K.
TOLERANCE = {"joints.pin.contact.restitution": 0.01, "joints.pin.contact.stiffness": 0.03}


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spec")
    for name in ("flores_slider_crank.toml", "calibrate_example.toml"):
        shutil.copy(REPO / "configs" / name, folder / name)
    truth = {"joints.pin.contact.restitution": 0.9, "joints.pin.contact.stiffness": "6.6e10 N/m^1.5"}
    frame, _ = synthesize(folder / "calibrate_example.toml", truth, noise_fraction=0.02, seed=0, overrides=tuple(SHORT))
    frame.to_csv(folder / "measured.csv", index=False)
    return folder


def run(spec: Path, out: Path, *extra: str) -> dict:
    argv = ["calibrate", str(spec / "calibrate_example.toml"), "--out", str(out), "--no-progress"]
    for override in SHORT:
        argv += ["--set", override]
    assert main([*argv, *extra]) == 0
    return json.loads((out / "calibration.json").read_text())


@pytest.mark.parametrize("optimizer", ["adam", pytest.param("bfgs", marks=pytest.mark.validation)])
def test_spec_example_runs_as_written(spec, tmp_path, optimizer):
    """The example as written (adam, 4 starts; and with BFGS), only shortened: 1 ms, 3 steps
    per stage (continuation in the horizon, then the named optimiser's polish)."""
    result = run(spec, tmp_path, "--set", "optimizer.steps=3", "--optimizer", optimizer)
    assert set(result["parameters"]) == set(TRUTH) and set(result["initial"]) == set(TRUTH)
    assert result["initial"]["joints.pin.contact.stiffness"] == pytest.approx(3e10)
    assert len(result["starts"]) == 4 and isinstance(result["converged"], bool)
    assert len(result["history"]) >= 2 and result["optimizer"]["strategy"] == "continuation"
    assert set(result["uncertainty"]["std"]) == set(TRUTH) and len(result["correlation"]["matrix"]) == 2
    for name in ("loss_history.png", "signals.png", "correlation.png"):
        assert (tmp_path / name).stat().st_size > 5000


def test_gradient_matches_central_differences(spec):
    """Forward-mode gradient through the solver, the interpolation and the loss vs central
    differences of the loss in the unconstrained coordinates, at the example's initial values
    (tight solver tolerances, so the differences are not dominated by step-size changes).

    The forward-mode derivative is that of the discrete adaptive algorithm; where a step
    straddles a contact onset it misses part of the jump, an error that shrinks with the
    tolerance. At rtol 1e-9 it measured 1e-4 or 1e-2 on the stiffness component depending
    on rounding (pytree or flat integrator state); at 1e-10 both were within 2e-4."""
    calibration = load_calibration(spec / "calibrate_example.toml", [*SHORT, "simulation.rtol=1e-10", "simulation.atol=1e-13"])
    problem = calibration.problem
    u = problem.transform.to_unconstrained(np.array([p.initial for p in calibration.parameters]))
    step = 1e-3
    unit = np.eye(2)
    evaluation = evaluate_forward(problem, jnp.asarray(np.array([u + step * unit[0], u - step * unit[0], u + step * unit[1], u - step * unit[1]])))
    loss = np.asarray(evaluation.loss)
    numeric = np.array([loss[0] - loss[1], loss[2] - loss[3]]) / (2 * step)
    centre = evaluate_forward(problem, jnp.asarray(np.array([u] * 4)))
    gradient = np.asarray(centre.gradient[0])
    assert np.all(np.abs(numeric) > 1e-2)
    np.testing.assert_allclose(gradient, numeric, rtol=2e-3)
    assert float(centre.loss[0]) == pytest.approx(float(np.sum(np.asarray(centre.residuals[0]) ** 2) / problem.loss.count))


def test_recovers_known_parameters(spec, tmp_path):
    """optimistix Levenberg–Marquardt, 4 starts (the example's), at most 40 steps, direct
    on the whole 1 ms record."""
    result = run(spec, tmp_path, "--optimizer", "levenberg_marquardt", "--steps", "40", "--strategy", "direct")
    for path, truth in TRUTH.items():
        assert result["initial"][path] != pytest.approx(truth, rel=0.3)  # started >= 30 % off
        assert result["parameters"][path] == pytest.approx(truth, rel=TOLERANCE[path]), path
    # residuals scaled by the noise level estimated from the record: mean(r^2) near 1 at the fit
    assert result["loss"] < 2.0 and result["history"][0] > 10.0
    # and consistent with that noise: neither goodness-of-fit test calls the right model a misfit
    goodness = result["goodness_of_fit"]
    assert result["misfit"] is False and not goodness["chi2"]["rejects"] and not goodness["runs"]["rejects"]
    assert goodness["chi2"]["reduced"] < 2.0 and abs(goodness["runs"]["z"]) < 3.3
