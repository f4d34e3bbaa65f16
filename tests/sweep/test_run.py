"""Batched runs: the vmapped, leaf-replacing path reproduces independent simulations, batch
size does not change results, and failing points become rows instead of crashing the sweep."""

import jax
import numpy as np
import pytest

import model
from pipelines.build import build_mechanism
from sweep import run
from pipelines.sweeping.study import load_sweep, run_sweep
from tests.helpers import write_sweep

# Flores slider-crank, 3 ms, e = 0.95: every point needs several hundred steps (tsit5), so
# the group with max_steps = 40 fails; 0.5 mm clearance in a 0.4 mm bearing is invalid.
OVERRIDES = ["joints.pin.contact.restitution=0.95", 'simulation.t_end="3 ms"']
ONLY_ENOUGH_STEPS = ["sweep.parameters.2.values=[100000]"]
METRICS = ["pin.max_normal_force", "pin.max_penetration", "pin.first_impact_time", "pin.num_impacts", "slider.max_abs_ax"]
CONTINUOUS = [name for name in METRICS if name != "pin.num_impacts"]
# Two solves of the same mechanism that differ only in how XLA orders the floating-point
# work (vmapped or not, batch of 1 or 2) agree to about the integrator's tolerance
# (rtol = 1e-6), amplified a little over a few impacts; a mix-up of points or parameters
# changes these metrics by percents. The impact count is a count of sign changes of the
# sampled penetration: at (0.1 mm, 0.4 mm) one sample between two contacts sits 1.6 nm
# outside the bearing (the position tolerance is 1e-9 m), so rounding decides whether it
# separates two impacts; counts may differ by one.
AGREEMENT = 1e-4
COUNT_AGREEMENT = 1


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return write_sweep(
        tmp_path_factory.mktemp("sweep"), 'design = "grid"',
        'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.5 mm"]',
        'path = "joints.pin.bearing_radius"\nvalues = ["10 mm", "0.4 mm"]',
        'path = "simulation.max_steps"\nvalues = [100000, 40]',
    )


@pytest.fixture(scope="module")
def one_by_one(config):
    return run_sweep(*load_sweep(config, OVERRIDES), batch_size=1, progress=False, executor="local")


@pytest.fixture(scope="module")
def in_pairs(config):
    return run_sweep(*load_sweep(config, OVERRIDES + ONLY_ENOUGH_STEPS), batch_size=2, progress=False, executor="local")


@pytest.mark.slow
def test_failed_points_are_rows_with_their_status(one_by_one):
    frame = one_by_one.frame
    assert frame["point"].tolist() == list(range(8))
    enough, starved = frame[frame["simulation.max_steps"] == 100000], frame[frame["simulation.max_steps"] == 40]
    invalid = (frame["joints.pin.clearance"] == 5e-4) & (frame["joints.pin.bearing_radius"] == 4e-4)
    assert frame.loc[invalid, "status"].str.startswith("invalid: joints.pin.clearance").all()
    assert np.isnan(frame.loc[invalid, METRICS].to_numpy(float)).all()
    assert (frame.loc[invalid, "steps"] == run.NOT_RUN).all()
    assert (enough.loc[~invalid, "status"] == "ok").all()
    assert starved.loc[~invalid, "status"].str.contains("maximum number of solver steps").all()
    assert (starved.loc[~invalid, "steps"] == 40).all()
    summary = one_by_one.summary()
    assert summary["ok"] == 3 and summary["failed"] == 5 and len(summary["groups"]) == 2


@pytest.mark.slow
def test_batched_points_match_independent_simulations(one_by_one):
    """Each ok row equals a simulation of the mechanism built from scratch with its values."""
    design, base = one_by_one.design, one_by_one.base
    group = one_by_one.groups[0]
    assert group.choices == {"simulation.max_steps": 100000.0}
    simulate = jax.jit(model.simulate, static_argnums=1)
    for index in (2, 4):  # (0.1 mm, 0.4 mm) and (0.5 mm, 10 mm)
        point = design.points()[index]
        config = base.with_si_values({level_path: level.si for level_path, level in zip(design.paths, point)})
        mechanism = build_mechanism(config)
        expected = model.summary_metrics(mechanism, simulate(mechanism, group.settings))
        row = one_by_one.frame.loc[index]
        assert row["joints.pin.clearance"] == config.joints[2].clearance
        assert row["joints.pin.bearing_radius"] == config.joints[2].bearing_radius
        for name in CONTINUOUS:
            assert row[name] == pytest.approx(float(expected[name]), rel=AGREEMENT), name
        assert abs(row["pin.num_impacts"] - float(expected["pin.num_impacts"])) <= COUNT_AGREEMENT
    # the two points really differ (a mix-up of rows would be caught)
    forces = one_by_one.frame.loc[[2, 4], "pin.max_normal_force"]
    assert abs(forces.iloc[1] / forces.iloc[0] - 1.0) > 0.5


@pytest.mark.slow
def test_batch_size_does_not_change_results(one_by_one, in_pairs):
    """Three valid points in batches of two: the last batch is padded."""
    assert in_pairs.runs[0].batch_size == 2 and in_pairs.groups[0].runnable.size == 3
    single = one_by_one.frame[one_by_one.frame["simulation.max_steps"] == 100000].reset_index(drop=True)
    assert in_pairs.frame["status"].tolist() == single["status"].tolist()
    ok = single["status"] == "ok"
    np.testing.assert_allclose(
        in_pairs.frame.loc[ok, CONTINUOUS].to_numpy(float), single.loc[ok, CONTINUOUS].to_numpy(float), rtol=AGREEMENT
    )
    np.testing.assert_allclose(in_pairs.frame.loc[ok, "pin.num_impacts"], single.loc[ok, "pin.num_impacts"],
                               rtol=0, atol=COUNT_AGREEMENT)


@pytest.mark.slow
def test_compiled_groups_are_reused(config, one_by_one):
    compiled = len(run._COMPILED)
    again = run_sweep(*load_sweep(config, OVERRIDES), batch_size=1, progress=False, executor="local")
    assert len(run._COMPILED) == compiled and again.runs[0].compile_seconds == 0.0
    np.testing.assert_array_equal(again.frame[METRICS].to_numpy(float), one_by_one.frame[METRICS].to_numpy(float))


def test_lanes_are_chosen_per_backend():
    """A CPU runs a few dozen lanes (a lane step costs arithmetic); a GPU thousands (a loop
    iteration costs kernel launches, whatever its width), each lane refilled ~2 times."""
    from sweep.run import ACCELERATOR_MAX_LANES, ACCELERATOR_MIN_LANES, CPU_LANES, default_lanes

    for batch in (1_024, 4_096, 16_384):
        cpu, gpu = default_lanes(batch, "cpu"), default_lanes(batch, "gpu")
        assert cpu == CPU_LANES and ACCELERATOR_MIN_LANES <= gpu <= ACCELERATOR_MAX_LANES
        assert gpu >= batch // 2 or gpu == ACCELERATOR_MAX_LANES  # a lane runs ~2 points at most
        assert gpu > 10 * cpu
    assert default_lanes(16_384, "gpu") == ACCELERATOR_MAX_LANES
    for batch in (1, 7, 100):  # never more lanes than points on either
        assert default_lanes(batch, "cpu") <= batch and default_lanes(batch, "gpu") == batch
    assert default_lanes(64, "tpu") == default_lanes(64, "gpu")


def test_chunks_are_chosen_per_backend():
    """CPU: a share per worker process, capped so a kill loses little; GPU: the whole sweep
    in one call when memory allows."""
    from sweep.run import ACCELERATOR_MAX_CHUNK, CPU_CHUNK, default_chunk_size

    assert default_chunk_size("cpu", 16_384, 2, memory_points=CPU_CHUNK) == CPU_CHUNK
    assert default_chunk_size("gpu", 16_384, 1, memory_points=10**6) == ACCELERATOR_MAX_CHUNK == 16_384
    assert default_chunk_size("gpu", 16_384, 1, memory_points=5_000) == 5_000  # memory bounds it
    assert default_chunk_size("cpu", 40, 2, memory_points=CPU_CHUNK) == 20
