"""Contact peaks reduced over the accepted steps (``model/integrate/peaks.py``): the joint
metrics of the Flores slider-crank do not depend on the output interval, and agree with a
tight Dopri8 solve and with that solve's densely sampled output (an independent
formulation: the sample maxima of the old, grid-based metrics), in ``model.simulate`` and
in the refilling lanes of ``model.solve_ensemble``."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import FLORES

SHORT = 3e-3  # s: the first impacts (the first at ~0.23 ms) and their rebounds
TWO_REVOLUTIONS = 24e-3  # s
OUTPUT_INTERVALS = (1e-6, 1e-5, 1e-4)  # s
AGREEMENT = 1e-3  # relative: the tolerance of the metrics asked of the peaks
# A 1 us grid samples a contact peak within (pi 1 us / T_c)^2 / 2 of its maximum: < 0.05 %
# for the Flores contacts (T_c ~ 0.1 ms); it is the independent check of the maxima.
SAMPLED_METRICS = ("max_normal_force", "max_penetration", "first_impact_time", "first_impact_velocity")
JOINT_METRICS = ("max_normal_force", "max_penetration", "first_impact_time", "first_impact_velocity",
                 "num_impacts", "contact_fraction")


def joint_metrics(mechanism, trajectory) -> dict[str, float]:
    metrics = model.summary_metrics(mechanism, trajectory)
    return {name: float(metrics[f"pin.{name}"]) for name in JOINT_METRICS}


def sampled_metrics(mechanism, trajectory) -> dict[str, float]:
    """The metrics of ``trajectory``'s output samples alone."""
    return joint_metrics(mechanism, eqx.tree_at(lambda t: t.peaks, trajectory, None, is_leaf=lambda x: x is None))


def assert_metrics_agree(actual: dict, expected: dict, names=JOINT_METRICS):
    for name in names:
        assert actual[name] == pytest.approx(expected[name], rel=AGREEMENT), name


@pytest.fixture(scope="module")
def flores():
    config = load_mechanism(FLORES)
    return build_mechanism(config), solver_settings(config)


def tight(settings, t_end, output_interval=1e-6):
    return dataclasses.replace(settings, t_end=t_end, output_interval=output_interval, solver="dopri8",
                               rtol=1e-9, atol=1e-12, max_steps=1_000_000)


def check_output_grid_independence(flores, t_end):
    mechanism, settings = flores
    simulate = jax.jit(model.simulate, static_argnums=1)
    reference = simulate(mechanism, tight(settings, t_end))
    expected = joint_metrics(mechanism, reference)
    assert expected["num_impacts"] >= 1
    # the reduction over steps matches the densely sampled tight solve (independent formulation)
    assert_metrics_agree(sampled_metrics(mechanism, reference), expected, SAMPLED_METRICS)
    for interval in OUTPUT_INTERVALS:
        trajectory = simulate(mechanism, dataclasses.replace(settings, t_end=t_end, output_interval=interval))
        assert int(trajectory.result) == 0
        actual = joint_metrics(mechanism, trajectory)
        assert_metrics_agree(actual, expected)
        # a peak is a maximum over the whole solution, so no output sample exceeds it
        samples = sampled_metrics(mechanism, trajectory)
        for name in ("max_normal_force", "max_penetration"):
            assert actual[name] >= samples[name] * (1.0 - 1e-9), (interval, name)


@pytest.mark.slow
def test_metrics_do_not_depend_on_the_output_interval(flores):
    check_output_grid_independence(flores, SHORT)


@pytest.mark.slow
@pytest.mark.validation  # the 3 ms case above checks the same independence in the default run
def test_metrics_over_two_revolutions_do_not_depend_on_the_output_interval(flores):
    # Over two revolutions the motion is chaotic: the later impacts, and with them the
    # largest peak, move with the solver's tolerance, so only the first impact is compared
    # with the tight solve; the output interval must not change any metric at all (the
    # step sequence does not depend on the output grid).
    mechanism, settings = flores
    simulate = jax.jit(model.simulate, static_argnums=1)
    first_impact = ("first_impact_time", "first_impact_velocity")
    expected = joint_metrics(mechanism, simulate(mechanism, tight(settings, TWO_REVOLUTIONS, 1e-4)))
    runs = []
    for interval in OUTPUT_INTERVALS:
        trajectory = simulate(mechanism, dataclasses.replace(settings, t_end=TWO_REVOLUTIONS, output_interval=interval))
        assert int(trajectory.result) == 0
        runs.append(joint_metrics(mechanism, trajectory))
        assert_metrics_agree(runs[-1], expected, first_impact)
    for other in runs[1:]:
        for name in JOINT_METRICS:
            assert other[name] == pytest.approx(runs[0][name], rel=1e-9), name


@pytest.mark.slow
def test_refilling_lanes_carry_the_peaks(flores):
    mechanism, settings = flores
    parameters = ParameterMap(mechanism, ("joints.pin.clearance", "joints.pin.contact.restitution"))
    values = jnp.array([[0.5e-3, 0.9], [0.2e-3, 0.5], [0.3e-3, 0.7]])
    mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)
    solve = jax.jit(model.solve_ensemble, static_argnums=(1, 2))
    results = []
    for interval in (1e-5, 1e-4):
        solution = solve(mechanisms, dataclasses.replace(settings, t_end=SHORT, output_interval=interval), 2)
        assert np.all(np.asarray(solution.result) == 0)
        results.append(solution.map_points(lambda m, t: model.summary_metrics(m, t), mechanisms))
    tight_solve = jax.jit(jax.vmap(model.simulate, (0, None)), static_argnums=1)
    references = tight_solve(mechanisms, tight(settings, SHORT, 1e-4))
    for point in range(values.shape[0]):
        one = jax.tree_util.tree_map(lambda leaf: leaf[point], mechanisms)
        expected = joint_metrics(one, jax.tree_util.tree_map(lambda leaf: leaf[point], references))
        for metrics in results:
            assert_metrics_agree({name: float(metrics[f"pin.{name}"][point]) for name in JOINT_METRICS}, expected)


@pytest.mark.slow
def test_peak_derivatives_in_forward_mode(flores):
    # d(peaks)/d(restitution) by forward mode through the solve against central differences
    # of the same solve; tight tolerances keep the adaptive stepping's noise out of the
    # differences. (The restitution does not move the contact onset, so no saltation term
    # is missed: tests/sweep/test_sensitivity.py.)
    mechanism, settings = flores
    settings = dataclasses.replace(settings, t_end=5e-4, output_interval=1e-4, rtol=1e-10, atol=1e-13,
                                   adjoint="forward")
    parameters = ParameterMap(mechanism, ("joints.pin.contact.restitution",))

    def peaks(values):
        point = parameters.apply(mechanism, values)
        metrics = model.summary_metrics(point, model.simulate(point, settings))
        return jnp.stack([metrics["pin.max_penetration"], metrics["pin.max_normal_force"]])

    values = jnp.array([0.7])
    derivative = jax.jit(jax.jacfwd(peaks))(values)[:, 0]
    step = 1e-4
    compiled = jax.jit(peaks)
    difference = (compiled(values + step) - compiled(values - step)) / (2 * step)
    assert np.all(np.abs(np.asarray(derivative)) > 0.0)
    np.testing.assert_allclose(derivative, difference, rtol=1e-3)
