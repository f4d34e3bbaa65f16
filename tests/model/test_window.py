"""The metrics' window (``model/window.py``, ``[metrics] skip``): a rod hung by a journal
centred in its bearing falls through the clearance, bounces and settles on its seat. With
the window starting after it has settled, the peaks are those of the settled contact (the
weight), one compiled solve honours the window as a traced value (batched too), and the
start transient is found where it is. The solves are marked ``validation`` (two compiles,
about a minute of CPU); the reductions themselves are checked in the default run by
``tests/model/integrate/test_peaks_window.py``."""

import copy

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.mechanism import Driver
from pipelines.build import build_mechanism, solver_settings
from pipelines.config.loading import mechanism_from_dict

GRAVITY = 9.81  # m/s^2
MASS = 1.0  # kg
CLEARANCE = 1e-4  # m
SETTLED = 15e-3  # s: the window's start, the bounces long over
PENDULUM = {
    "name": "drop", "gravity": ["0 m/s^2", f"-{GRAVITY} m/s^2"],
    "materials": {"steel": {"youngs_modulus": "207 GPa", "poisson_ratio": 0.3}},
    "bodies": [{"name": "rod", "mass": f"{MASS} kg", "inertia": "7.5e-3 kg*m^2", "position": ["0 mm", "-150 mm"],
                "angle": "0 deg"}],
    "joints": [{"name": "top", "type": "revolute_clearance", "bodies": ["rod", "ground"],
                "points": [["0 mm", "150 mm"], ["0 mm", "0 mm"]], "bearing_radius": "10 mm",
                "clearance": f"{CLEARANCE} m", "materials": ["steel", "steel"],
                "contact": {"model": "flores", "restitution": 0.3, "exponent": 1.5, "stiffness": "hertz"}}],
    "simulation": {"t_end": "20 ms", "output_interval": "0.05 ms"},
}


def test_the_window_starts_after_the_driver_s_turns():
    drivers = (Driver(0, "constant_torque", jnp.asarray(0.0), jnp.asarray(1.0), jnp.asarray(0.0)),
               Driver(1, "constant_speed", jnp.asarray(-4 * np.pi), jnp.asarray(0.0),
                                                jnp.asarray(0.0)))
    window = model.MetricsWindow(skip=jnp.asarray(0.1), revolutions=jnp.asarray(3.0))
    assert float(window.start(drivers)) == pytest.approx(0.1 + 3 * 0.5, rel=1e-12)  # 2 rev/s
    assert float(window.start(drivers[:1])) == pytest.approx(0.1, rel=1e-12)  # no turning driver: the time only
    assert float(model.MetricsWindow().start(drivers)) == 0.0


def _windowed(mechanism, skip: float):
    return eqx.tree_at(lambda m: m.metrics_window, mechanism, model.MetricsWindow(skip=jnp.asarray(skip)))


@pytest.fixture(scope="module")
def drop():
    """The mechanism and its trajectories without a window and with the window from
    ``SETTLED`` on, both from one executable (the window is a traced value)."""
    config = mechanism_from_dict(copy.deepcopy(PENDULUM), "drop.toml")
    mechanism, settings = build_mechanism(config), solver_settings(config)
    simulate = jax.jit(model.simulate, static_argnums=1)
    later = _windowed(mechanism, SETTLED)
    return mechanism, later, simulate(mechanism, settings), simulate(later, settings)


def _metrics(mechanism, trajectory) -> dict[str, float]:
    return {name: float(value) for name, value in model.summary_metrics(mechanism, trajectory).items()}


@pytest.mark.validation
def test_the_whole_run_holds_the_drop_and_the_window_the_settled_seat(drop):
    mechanism, later, whole_run, windowed = drop
    assert int(whole_run.result) == 0 and int(windowed.result) == 0
    whole, settled = _metrics(mechanism, whole_run), _metrics(later, windowed)
    weight = MASS * GRAVITY
    # free fall through the clearance: the first contact at sqrt(2 c / g), closing at sqrt(2 g c),
    # the run's first whatever the window
    for metrics in (whole, settled):
        assert metrics["top.first_impact_time"] == pytest.approx(np.sqrt(2 * CLEARANCE / GRAVITY), rel=1e-3)
        assert metrics["top.first_impact_velocity"] == pytest.approx(np.sqrt(2 * GRAVITY * CLEARANCE), rel=1e-3)
    assert whole["top.max_normal_force"] > 10 * weight  # the impact
    assert whole["top.num_impacts"] > 1 and whole["top.contact_fraction"] < 1.0
    # settled: the seat carries the weight, in contact over the whole window (one impact:
    # in contact at its start), and the rod hardly accelerates
    assert settled["top.max_normal_force"] == pytest.approx(weight, rel=1e-3)
    assert settled["top.num_impacts"] == 1.0
    assert settled["top.contact_fraction"] == pytest.approx(1.0, abs=1e-9)
    assert settled["rod.max_abs_ay"] < 1e-2 * whole["rod.max_abs_ay"]
    # the window changes the reductions only, not the solve
    np.testing.assert_array_equal(np.asarray(whole_run.q), np.asarray(windowed.q))


@pytest.mark.validation
def test_the_window_counts_what_the_output_samples_count(drop):
    # an independent reduction: the window's samples of the same (shared) solve
    mechanism, later, _, windowed = drop
    stepwise = _metrics(later, windowed)
    counted = np.asarray(windowed.t) >= SETTLED
    force = np.asarray(windowed.normal_force[:, 0])
    assert stepwise["top.max_normal_force"] == pytest.approx(np.max(force[counted]), rel=1e-4)
    sampled = model.metrics.sampled_joint_metrics(windowed.t, windowed.penetration[:, 0], windowed.normal_force[:, 0],
                                                  windowed.impact_memory[:, 0], later.metrics_start())
    for name in ("max_normal_force", "max_penetration", "num_impacts", "contact_fraction"):
        assert float(sampled[name]) == pytest.approx(stepwise[f"top.{name}"], rel=1e-4), name


@pytest.mark.validation
def test_a_batch_gives_each_point_its_own_window(drop):
    # vmap over the window's start: each lane reduces over its own window
    mechanism, later, whole_run, windowed = drop
    starts = jnp.asarray([0.0, SETTLED])
    batch = jax.vmap(lambda skip: _windowed(mechanism, skip))(starts)
    config = mechanism_from_dict(copy.deepcopy(PENDULUM), "drop.toml")
    peaks = jax.jit(jax.vmap(model.simulate, (0, None)), static_argnums=1)(batch, solver_settings(config)).peaks
    for lane, single in enumerate((whole_run, windowed)):
        np.testing.assert_allclose(np.asarray(peaks.max_normal_force[lane]), np.asarray(single.peaks.max_normal_force),
                                   rtol=1e-6)
        np.testing.assert_allclose(np.asarray(peaks.num_impacts[lane]), np.asarray(single.peaks.num_impacts))


@pytest.mark.validation
def test_the_start_transient_is_the_drop(drop):
    mechanism, _, whole_run, _ = drop
    found = model.start_transient(whole_run.t, whole_run.normal_force)
    assert bool(found.detected[0])
    # it ends after the first impact and before the seat has settled
    assert np.sqrt(2 * CLEARANCE / GRAVITY) < float(found.end_time[0]) < SETTLED
    assert float(found.later_peak[0]) == pytest.approx(MASS * GRAVITY, rel=1e-3)
