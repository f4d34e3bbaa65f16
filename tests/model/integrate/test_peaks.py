"""Contact peaks reduced over the accepted steps (``model/integrate/peaks.py``): the joint
metrics of the Flores slider-crank do not depend on the output interval, and agree with a
tight Dopri8 solve and with that solve's densely sampled output (an independent
formulation: the sample maxima of the old, grid-based metrics), in ``model.simulate`` and
in the refilling lanes of ``model.solve_ensemble``."""

import dataclasses

import diffrax
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


def check_output_grid_independence(flores, t_end, output_interval=1e-6):
    mechanism, settings = flores
    simulate = jax.jit(model.simulate, static_argnums=1)
    reference = simulate(mechanism, tight(settings, t_end, output_interval))
    expected = joint_metrics(mechanism, reference)
    assert expected["num_impacts"] >= 1
    # the reduction over steps matches the densely sampled tight solve (independent formulation)
    assert_metrics_agree(sampled_metrics(mechanism, reference), expected, SAMPLED_METRICS)
    # so do the bodies' peak accelerations (their ends' state derivative, the interpolant's
    # derivative inside, the largest refined by a parabola), within 1e-4 (measured 1e-5)
    dense_accelerations = np.max(np.abs(np.asarray(reference.body_accelerations)), axis=0)
    scale = np.max(dense_accelerations)
    assert scale > 1e5  # the slider's impact accelerations
    for interval in OUTPUT_INTERVALS:
        trajectory = simulate(mechanism, dataclasses.replace(settings, t_end=t_end, output_interval=interval))
        assert int(trajectory.result) == 0
        actual = joint_metrics(mechanism, trajectory)
        assert_metrics_agree(actual, expected)
        np.testing.assert_allclose(trajectory.peaks.max_abs_acceleration, dense_accelerations, rtol=1e-4,
                                   atol=1e-9 * scale)
        assert float(model.summary_metrics(mechanism, trajectory)["slider.max_abs_ax"]) == \
            float(trajectory.peaks.max_abs_acceleration[2, 0])
        # a peak is a maximum over the whole solution, so no output sample exceeds it
        samples = sampled_metrics(mechanism, trajectory)
        for name in ("max_normal_force", "max_penetration"):
            assert actual[name] >= samples[name] * (1.0 - 1e-9), (interval, name)


@pytest.mark.slow
def test_metrics_do_not_depend_on_the_output_interval(flores):
    # outputs every 0.2 us: the dense samples are the independent check of the maxima (a
    # 1 us grid is 5e-4 low on the accelerations' peaks)
    check_output_grid_independence(flores, SHORT, 2e-7)


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
    # The step sequence does not depend on the output grid, but the suite compiles without
    # LLVM's optimisations (tests/conftest.py), and the machine code's rounding then varies
    # with the output grid's size; two revolutions amplify it (contact fraction 0.8015
    # against 0.8010). An optimised build gives equal metrics at 1, 10 and 100 us.
    for other in runs[1:]:
        for name in first_impact:
            assert other[name] == pytest.approx(runs[0][name], rel=1e-9), name
        for name in JOINT_METRICS:
            assert other[name] == pytest.approx(runs[0][name], rel=AGREEMENT, abs=1.0 if name == "num_impacts" else 0.0), name


@pytest.mark.slow
def test_refilling_lanes_carry_the_peaks(flores):
    mechanism, settings = flores
    parameters = ParameterMap(mechanism, ("joints.pin.clearance", "joints.pin.contact.restitution"))
    values = jnp.array([[0.5e-3, 0.9], [0.2e-3, 0.5], [0.3e-3, 0.7]])
    mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)
    # outputs 100 us apart, as long as a contact (T_c ~ 0.1 ms): the metrics can only come
    # from the peaks
    solution = jax.jit(model.solve_ensemble, static_argnums=(1, 2))(
        mechanisms, dataclasses.replace(settings, t_end=SHORT, output_interval=1e-4), 2)
    assert np.all(np.asarray(solution.result) == 0)
    results = [solution.map_points(lambda m, t: model.summary_metrics(m, t), mechanisms)]
    tight_solve = jax.jit(jax.vmap(model.simulate, (0, None)), static_argnums=1)
    references = tight_solve(mechanisms, tight(settings, SHORT, 1e-4))
    for point in range(values.shape[0]):
        one = jax.tree_util.tree_map(lambda leaf: leaf[point], mechanisms)
        reference = jax.tree_util.tree_map(lambda leaf: leaf[point], references)
        expected = joint_metrics(one, reference)
        # the bodies' peak accelerations too (the slider's reach 3e5 m/s^2; the crank's
        # y-component stays at rounding level, hence the absolute tolerance)
        accelerations = {name: float(value) for name, value in model.summary_metrics(one, reference).items()
                         if ".max_abs_a" in name}
        scale = max(accelerations.values())
        for metrics in results:
            assert_metrics_agree({name: float(metrics[f"pin.{name}"][point]) for name in JOINT_METRICS}, expected)
            for name, value in accelerations.items():
                assert float(metrics[name][point]) == pytest.approx(value, rel=AGREEMENT, abs=1e-9 * scale), name


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


class _Oscillator:
    """Stands in for a mechanism where :func:`end_rate` evaluates the field itself."""

    def flat_vector_field(self, t, y):
        return jnp.stack([y[1], 1.5 * (1 - y[0] ** 2) * y[1] - y[0] + jnp.cos(2.0 * t)])


def _implicit(name):
    return model.integrate.make_solver(model.SolverSettings(t_end=1.0, output_interval=1.0, solver=name))


@pytest.mark.parametrize("solver", [
    model.integrate.explicit.Tsit5(), diffrax.Tsit5(), diffrax.Dopri8(), _implicit("kvaerno5"), _implicit("kencarp5"),
    model.integrate.Rodas4(), model.integrate.Ros34PW2()], ids=lambda solver: type(solver).__name__)
def test_end_rate_is_the_field_at_the_step_end(solver):
    """The step-end derivative the acceleration peaks read: the first-same-as-last stage
    (explicit and ESDIRK Runge-Kutta), the Rosenbrock-W solver's kept field, or a fresh
    evaluation (Rodas), each equal to the field at ``(t1, y1)``."""
    oscillator = _Oscillator()
    field = diffrax.ODETerm(lambda t, y, args: oscillator.flat_vector_field(t, y))
    terms = diffrax.MultiTerm(diffrax.ODETerm(lambda t, y, args: jnp.zeros_like(y)), field) \
        if isinstance(solver, diffrax.KenCarp5) else field
    y0, t0, t1 = jnp.array([0.8, -0.3]), jnp.asarray(0.1), jnp.asarray(0.15)
    state = solver.init(terms, t0, t1, y0, None)
    y1, *_, state, result = solver.step(terms, t0, t1, y0, None, state, False)
    assert result == diffrax.RESULTS.successful
    rate = model.integrate.peaks.end_rate(solver, state, t1, y1, oscillator)
    # the implicit stages' rate is the root finder's, converged to its tolerance
    implicit = isinstance(solver, (diffrax.Kvaerno5, diffrax.KenCarp5))
    np.testing.assert_allclose(rate, oscillator.flat_vector_field(t1, y1), rtol=1e-5 if implicit else 1e-12)


@pytest.mark.slow  # 50 ms of the ideal double link
def test_bodies_of_an_ideal_mechanism_have_peak_accelerations():
    """Without clearance joints the peaks still carry the bodies' accelerations."""
    config = load_mechanism(FLORES.parent / "double_link_ideal.toml")
    mechanism = build_mechanism(config)
    settings = dataclasses.replace(solver_settings(config), t_end=0.05, output_interval=1e-4)
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    assert not mechanism.clearance_joints and int(trajectory.result) == 0
    sampled = np.max(np.abs(np.asarray(trajectory.body_accelerations)), axis=0)
    peaks = np.asarray(trajectory.peaks.max_abs_acceleration)
    tolerance = 1e-9 * np.max(sampled)  # components that stay at rounding level (motion in a plane)
    assert np.all(peaks >= sampled * (1 - 1e-3) - tolerance) and np.all(peaks <= sampled * (1 + 1e-2) + tolerance)
