"""Refilling lanes (``model.solve_ensemble``): every point gets the solve that
``model.simulate`` gives it, whatever the lane count and the order of the queue; a lane
that finishes takes the next point; failures stay with their point."""

import dataclasses
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import FLORES

CONFIG = FLORES
# 0.4 ms: the first impact (~0.23 ms) and its rebound; points differ 2x in steps.
SETTINGS = dict(t_end=4e-4, output_interval=1e-5)
CLEARANCES = np.array([0.1e-3, 0.2e-3, 0.3e-3, 0.5e-3, 0.15e-3])
RESTITUTIONS = np.array([0.9, 0.5, 0.7, 0.99, 0.6])
# Two solves of one point that differ only in how XLA orders the floating-point work
# (batched or not) take slightly different steps (the accept/reject decision is sensitive
# to rounding) and so agree to the integrator's tolerance, not to rounding: rtol 1e-6 on
# coordinates up to 0.17 m (measured: 3e-8 m). A mix-up of points differs by more than
# 1e-5 m (asserted below).
POSITION_AGREEMENT = 2e-7  # m

pytestmark = pytest.mark.slow  # refilling-lane ensembles compiled per lane count and solver


@pytest.fixture(scope="module")
def case():
    config = load_mechanism(CONFIG)
    base = build_mechanism(config, "absolute")
    settings = dataclasses.replace(solver_settings(config), **SETTINGS)
    parameters = ParameterMap(base, ("joints.pin.clearance", "joints.pin.contact.restitution"))
    values = jnp.stack([CLEARANCES, RESTITUTIONS], axis=1)
    mechanisms = jax.vmap(parameters.apply, (None, 0))(base, values)
    single = jax.jit(model.simulate, static_argnums=1)
    references = [single(jax.tree_util.tree_map(lambda leaf: leaf[i], mechanisms), settings) for i in range(len(values))]
    return mechanisms, settings, references


def solve(mechanisms, settings, lanes):
    return jax.jit(model.solve_ensemble, static_argnums=(1, 2))(mechanisms, settings, lanes)


@pytest.mark.slow
@pytest.mark.parametrize("lanes", [1, pytest.param(2, marks=pytest.mark.validation), 5])  # 1: no refill; 5: refills
def test_every_point_gets_its_own_solve(case, lanes):
    mechanisms, settings, references = case
    solution = solve(mechanisms, settings, lanes)
    assert np.all(np.asarray(solution.result) == 0)
    for point, reference in enumerate(references):
        np.testing.assert_allclose(solution.ys.q[point], reference.q, rtol=0, atol=POSITION_AGREEMENT)
        np.testing.assert_allclose(solution.ys.qd[point], reference.qd, rtol=1e-4, atol=1e-4)
        assert abs(int(solution.steps[point]) - int(reference.steps)) <= 0.15 * int(reference.steps)
    np.testing.assert_array_equal(solution.ts, references[0].t)
    # the points really differ: the 0.1 mm and 0.5 mm clearances first touch at different times
    assert np.max(np.abs(references[0].q - references[3].q)) > 1e-5


def test_lanes_refill_instead_of_waiting(case):
    mechanisms, settings, _ = case
    lanes = 2
    solution = solve(mechanisms, settings, lanes)
    steps = np.asarray(solution.steps)
    iterations = int(solution.iterations)
    # each loop iteration advances every busy lane by one step attempt
    assert iterations * lanes >= steps.sum() and iterations >= steps.max()
    # lockstep would cost max(steps) per batch of two: 3 batches here
    lockstep_iterations = sum(steps[i : i + lanes].max() for i in range(0, len(steps), lanes))
    assert iterations < lockstep_iterations
    assert 0.0 < float(solution.lane_efficiency()) <= 1.0


def test_queue_order_does_not_change_results(case):
    mechanisms, settings, _ = case
    order = np.array([3, 0, 4, 1, 2])
    forward = solve(mechanisms, settings, 2)
    shuffled = solve(jax.tree_util.tree_map(lambda leaf: leaf[order], mechanisms), settings, 2)
    np.testing.assert_allclose(shuffled.ys.q, forward.ys.q[order], rtol=0, atol=POSITION_AGREEMENT)


@pytest.mark.slow
def test_failures_stay_with_their_point(case):
    mechanisms, settings, references = case
    starved = dataclasses.replace(settings, max_steps=60)
    solution = solve(mechanisms, starved, 2)
    codes = np.asarray(solution.result)
    assert np.all(codes != 0) and np.all(np.asarray(solution.steps) == 60)
    assert model.result_message(int(codes[0])) == model.result_message(int(jax.jit(
        model.simulate, static_argnums=1)(jax.tree_util.tree_map(lambda leaf: leaf[0], mechanisms), starved).result))
    # states after the failure are inf, as diffeqsolve leaves them; earlier ones are finite
    q = np.asarray(solution.ys.q)
    assert np.isinf(q[:, -1]).all() and np.isfinite(q[:, 0]).all()


@pytest.mark.slow
def test_simulate_ensemble_matches_trajectory_post_processing(case):
    mechanisms, settings, references = case
    trajectories = jax.jit(model.simulate_ensemble, static_argnums=(1, 2))(mechanisms, settings, 3)
    for point, reference in enumerate(references):
        scale = float(np.max(np.abs(reference.normal_force))) + 1.0
        np.testing.assert_allclose(trajectories.normal_force[point], reference.normal_force, rtol=0, atol=0.02 * scale)
        assert int(trajectories.result[point]) == 0


@pytest.mark.slow
@pytest.mark.parametrize("solver", [  # auto's stiff choice (a W-method); Rosenbrock; the ESDIRK path
    "ros34pw2", pytest.param("rodas5p", marks=pytest.mark.validation),
    pytest.param("kvaerno5", marks=pytest.mark.validation)])
def test_stiff_solvers_in_lanes(case, solver):
    # The sweep runs a stiff group through the same lanes: its solver state (none for
    # Rodas*, the kept Jacobian and the end field for the W-method, the root finder's for
    # an ESDIRK) must ride along with each point.
    mechanisms, settings, _ = case
    stiff = dataclasses.replace(settings, solver=solver)
    subset = jax.tree_util.tree_map(lambda leaf: leaf[:3], mechanisms)
    solution = solve(subset, stiff, 2)
    assert np.all(np.asarray(solution.result) == 0)
    single = jax.jit(model.simulate, static_argnums=1)
    for point in range(3):
        reference = single(jax.tree_util.tree_map(lambda leaf: leaf[point], subset), stiff)
        np.testing.assert_allclose(solution.ys.q[point], reference.q, rtol=0, atol=POSITION_AGREEMENT)
        assert abs(int(solution.steps[point]) - int(reference.steps)) <= 0.15 * int(reference.steps)
