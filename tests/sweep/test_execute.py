"""Worker processes: chunks run in spawned processes give the rows of an in-process run,
and ``executor="auto"`` uses one process per core only when there is work to share."""

import json
import multiprocessing
import os
import sys

import jax
import numpy as np
import pandas as pd
import pytest

from sweep.execute import LocalExecutor, ProcessExecutor, worker_cores
from sweep.faults import FAULT_VARIABLE
from sweep.run import enable_compilation_cache
from pipelines.sweeping.study import cpu_chunk_size, load_sweep, make_executor, run_sweep
from tests.helpers import write_sweep

TINY = ['simulation.t_end="0.3 ms"']
COMPARED = ["pin.max_normal_force", "pin.max_penetration", "pin.first_impact_time", "status"]


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """Four points, and a compilation cache that every worker process of the module shares."""
    folder = tmp_path_factory.mktemp("grid")
    config = write_sweep(
        folder, 'design = "grid"',
        'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.2 mm"]',
        'path = "joints.pin.contact.restitution"\nvalues = [0.5, 0.9]',
    )
    return load_sweep(config, TINY), folder / "cache"


@pytest.fixture(scope="module")
def local(grid):
    (design, base), _ = grid
    return run_sweep(design, base, progress=False, chunk_size=2, executor="local")


def assert_same_rows(frame, reference, points):
    """``frame``'s rows of ``points`` equal ``reference``'s (to the batch-size round-off,
    docs/sweep.md)."""
    mine, theirs = (f.set_index("point").loc[points] for f in (frame, reference))
    assert (mine["status"] == "ok").all()
    np.testing.assert_allclose(mine[COMPARED[:-1]].to_numpy(float), theirs[COMPARED[:-1]].to_numpy(float), rtol=1e-4)


@pytest.mark.slow
def test_processes_match_local_run(grid, local, tmp_path):
    (design, base), cache = grid
    enable_compilation_cache(cache)  # as `clearance sweep` does before it runs
    spread = run_sweep(design, base, progress=False, chunk_size=2, out_dir=tmp_path / "out", executor="processes",
                       workers=2)
    # the driver stopped writing the cache once its workers started (XLA's serialisation crashed there)
    assert jax.config.jax_compilation_cache_dir is None
    assert spread.executor == "processes" and len(spread.chunks) == 2
    assert all(chunk["worker"] != "local" for chunk in spread.chunks)
    assert (tmp_path / "out" / "chunks").is_dir()
    ordered = spread.frame.sort_values("point").reset_index(drop=True)
    pd.testing.assert_series_equal(ordered["point"], local.frame["point"])
    assert_same_rows(ordered, local.frame, list(range(4)))


@pytest.mark.slow
def test_killed_workers_are_replaced_and_a_poison_point_is_given_up(grid, local, tmp_path, monkeypatch):
    """A point whose worker process is SIGKILLed every time (as by the out-of-memory
    killer): its chunk of two kills two processes, its halves run on fresh ones, the
    poison half kills a third and becomes a failed row; the other three points are those
    of an uninterrupted run, each stored once."""
    (design, base), cache = grid
    from pipelines.sweeping.plan import plan_groups

    values = plan_groups(design, base)[0].values
    deaths = tmp_path / "deaths"
    monkeypatch.setenv(FAULT_VARIABLE, json.dumps({"row": values[3].tolist(), "times": -1, "count": str(deaths)}))
    enable_compilation_cache(cache)
    out = tmp_path / "out"
    study = run_sweep(design, base, progress=False, chunk_size=2, out_dir=out, executor="processes", workers=2)
    assert len(deaths.read_text().splitlines()) == 3  # whole chunk twice, then its poison half
    manifest = json.loads((out / "chunks" / "manifest.json").read_text())
    stored = [point for chunk in manifest["chunks"] for point in chunk["points"]]
    assert sorted(stored) == [0, 1, 2, 3]  # every point, none twice
    frame = study.frame
    assert frame["point"].tolist() == [0, 1, 2, 3]
    poison = frame.set_index("point").loc[3]
    assert poison["status"].startswith("worker lost: the worker process was killed by SIGKILL (3 workers lost")
    assert np.isnan(poison["pin.max_normal_force"]) and poison["steps"] == -1
    assert_same_rows(frame, local.frame, [0, 1, 2])


def test_auto_executor_shares_work_only_when_there_is_some():
    single = make_executor("auto", chunks=1, workers=2)
    assert isinstance(single, LocalExecutor)
    shared = make_executor("auto", chunks=5, workers=2)
    try:
        assert isinstance(shared, ProcessExecutor) and shared.workers == 2
    finally:
        shared.close()


def test_cpu_chunks_share_points_between_workers():
    assert cpu_chunk_size(40, 2) == 20  # the main job: one chunk per core
    assert cpu_chunk_size(10, 2) == 16  # never fewer points than lanes
    assert cpu_chunk_size(10_000, 2) == 128  # a kill loses at most one chunk


def test_single_threaded_flags_keep_the_users_choice(monkeypatch):
    from sweep.run import prefer_single_threaded_cpu

    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=true --xla_dump_to=/tmp/x")
    prefer_single_threaded_cpu()
    flags = os.environ["XLA_FLAGS"].split()
    assert "--xla_cpu_multi_thread_eigen=true" in flags and "--xla_cpu_multi_thread_eigen=false" not in flags
    assert "--xla_dump_to=/tmp/x" in flags
    prefer_single_threaded_cpu()
    assert os.environ["XLA_FLAGS"].split() == flags  # idempotent


def _cores_of_this_process(both_running) -> tuple[int, ...]:
    both_running.wait(timeout=120)  # the two tasks run at once, so in two different workers
    return tuple(sorted(os.sched_getaffinity(0)))


@pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                    reason="pinning needs Linux and two cores")
def test_worker_processes_each_get_their_own_core():
    assert worker_cores(len(os.sched_getaffinity(0)) + 1) == ()  # more workers than cores: no pinning
    executor = ProcessExecutor(2)
    manager = multiprocessing.get_context("spawn").Manager()
    try:
        barrier = manager.Barrier(2)
        cores = executor.broadcast(_cores_of_this_process, barrier)
    finally:
        executor.close()
        manager.shutdown()
    assert all(len(core) == 1 for core in cores) and cores[0] != cores[1]


def test_importing_the_packages_leaves_jax_backend_unstarted():
    """A worker pins itself to its core before its first JAX computation, so that XLA sizes
    its CPU thread pool for one core; a JAX array made at import time would start the
    backend before that (sized for every core, the pinned worker then ran 1.7x slower)."""
    import subprocess
    import sys

    probe = ("import model, sweep.execute, sweep.run, pipelines.build, pipelines.build_spatial, "
             "pipelines.sweeping.study; from jax._src import xla_bridge; print(bool(xla_bridge._backends))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.slow  # three sweeps of the Flores slider-crank over 0.3 ms, a compile each
def test_a_sweep_of_discrete_parameters_only(tmp_path):
    """Every parameter discrete: each point is a group of its own with no continuous path,
    whose values have shape (points, 0). The first row equals the same point swept beside
    a continuous parameter held at the base value (one group, so one more compile)."""
    laws = '"lankarani_nikravesh", "flores"'
    only_discrete = write_sweep(tmp_path, 'design = "grid"', f'path = "joints.pin.contact.model"\nvalues = [{laws}]',
                                name="discrete.toml")
    design, base = load_sweep(only_discrete, TINY)
    swept = run_sweep(design, base, progress=False, executor="local").frame
    assert (swept["status"] == "ok").all() and len(swept) == 2
    first_law = 'path = "joints.pin.contact.model"\nvalues = ["lankarani_nikravesh"]'
    with_continuous = write_sweep(tmp_path, 'design = "grid"', first_law,
                                  'path = "joints.pin.clearance"\nvalues = ["0.5 mm"]', name="mixed.toml")
    reference = run_sweep(*load_sweep(with_continuous, TINY), progress=False, executor="local").frame
    assert swept["joints.pin.contact.model"].iloc[0] == "lankarani_nikravesh"
    np.testing.assert_allclose(swept[COMPARED[:-1]].to_numpy(float)[:1], reference[COMPARED[:-1]].to_numpy(float),
                               rtol=1e-12)
    assert swept["pin.max_normal_force"].iloc[0] != swept["pin.max_normal_force"].iloc[1]


def test_a_workers_payload_unpickles_without_the_config_stack(tmp_path):
    """The resolver travels by name (sweep.plan.ResolverByName): unpickling a chunk's payload
    in a fresh process imports the simulator but not the config schema or pint, and the
    named resolver is the real one once called."""
    import pickle
    import subprocess

    from pipelines.build import ParameterMap
    from pipelines.sweeping.plan import plan_groups
    from sweep.execute import ChunkTask, _payloads
    from sweep.run import _executable_key

    config = write_sweep(tmp_path, 'design = "grid"', 'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.2 mm"]')
    design, base = load_sweep(config, TINY)
    group = plan_groups(design, base)[0]
    payload = _payloads([group], [ChunkTask(0, np.arange(2), group.values)], 2, ())[0]
    named = payload[3]
    assert named.resolve() is ParameterMap
    previous = jax.config.jax_compilation_cache_dir
    enable_compilation_cache(tmp_path / "cache")  # the key exists only with the cache on
    try:
        device = (jax.devices()[0],)
        keys = [_executable_key(group.mechanism, group.settings, group.paths, resolver, 2, (), device, 4)
                for resolver in (named, ParameterMap)]
    finally:
        jax.config.update("jax_compilation_cache_dir", previous)
    assert keys[0] is not None and keys[0] == keys[1]
    probe = ("import pickle, sys; pickle.loads(sys.stdin.buffer.read()); "
             "print(sorted(m for m in ('pint', 'pydantic', 'pipelines.build', 'model') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], input=pickle.dumps(payload), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "['model']"


def test_an_unreachable_ray_address_is_refused_at_once():
    """``ray.init`` retries an unreachable cluster without end; the executor checks the
    address first (a port that was just closed refuses the connection)."""
    import socket

    from sweep.execute import ExecutorUnavailable, _check_reachable

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ExecutorUnavailable, match=f"cannot reach the Ray cluster at '127.0.0.1:{port}'"):
        _check_reachable(f"127.0.0.1:{port}", timeout=5)
    with pytest.raises(ExecutorUnavailable, match="expected host:port"):
        _check_reachable("nowhere")
    _check_reachable("auto")  # left to Ray
