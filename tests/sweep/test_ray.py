"""The Ray executor on a local two-CPU cluster: chunks run as actor tasks, each worker
compiles once, and the results are those of the local executor."""

import jax
import numpy as np
import pandas as pd
import pytest

from sweep.run import enable_compilation_cache
from sweep.study import load_sweep, run_sweep
from tests.sweep.test_design import write_sweep

ray = pytest.importorskip("ray", reason='the Ray executor needs the extra "distributed" (ray[default])')

TINY = ['simulation.t_end="0.3 ms"']
METRICS = ["pin.max_normal_force", "pin.max_penetration", "pin.first_impact_time", "steps", "status"]


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return write_sweep(
        tmp_path_factory.mktemp("ray"), 'design = "grid"',
        'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.2 mm"]',
        'path = "joints.pin.contact.restitution"\nvalues = [0.5, 0.9]',
    )


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_chunks_match_local_run(config, cluster, tmp_path):
    design, base = load_sweep(config, TINY)
    enable_compilation_cache(tmp_path / "cache")  # as `clearance sweep` does before it runs
    remote = run_sweep(design, base, batch_size=1, progress=False, chunk_size=1, out_dir=tmp_path, executor="ray")
    # the driver stopped writing the cache once its workers started (XLA's serialisation crashed there)
    assert jax.config.jax_compilation_cache_dir is None
    local = run_sweep(design, base, batch_size=1, progress=False, executor="local", chunk_size=1)
    assert remote.executor == "ray" and len(remote.chunks) == 4
    workers = {chunk["worker"] for chunk in remote.chunks}
    assert 1 <= len(workers) <= 2  # two actors, one per CPU, reused across chunks
    # each worker compiled once: on its first chunk only
    assert sum(chunk["compile_seconds"] > 0 for chunk in remote.chunks) == len(workers)
    assert remote.runs[0].workers == 2 and remote.runs[0].compile_seconds > 0
    assert (remote.frame["status"] == "ok").all()
    pd.testing.assert_frame_equal(remote.frame[["point", *METRICS]], local.frame[["point", *METRICS]])
    assert sorted(p for chunk in remote.chunks for p in chunk["points"]) == list(range(4))
    assert np.all(remote.frame["pin.max_normal_force"] > 0)
