"""The Ray executor on a local two-CPU cluster: chunks run as actor tasks, each worker
compiles once, an actor killed in the middle of a chunk is replaced and its chunk run
again, and the results are those of the local executor.

Ray runs in a child process, never in the test process: with Ray imported, started and
shut down inside pytest, the suite segfaulted later in XLA code (four CI-like runs,
jaxlib 0.10.2, in different tests each time). The child is what a user's driver is."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pipelines.sweeping.study import load_sweep, run_sweep
from tests.helpers import write_sweep

if importlib.util.find_spec("ray") is None:
    pytest.skip('the Ray executor needs the extra "distributed" (ray[default])', allow_module_level=True)

from tests.helpers import REPOSITORY
TINY = ['simulation.t_end="0.3 ms"']
METRICS = ["pin.max_normal_force", "pin.max_penetration", "pin.first_impact_time", "steps", "status"]

# The driver, as `clearance sweep --executor ray` runs it: the persistent cache turned on
# first, then a local Ray of two CPUs.
DRIVER = """
import json, os, pathlib, sys
import jax, ray
from sweep.run import enable_compilation_cache
from pipelines.sweeping.study import load_sweep, run_sweep

config, out = sys.argv[1], pathlib.Path(sys.argv[2])
enable_compilation_cache(out / "cache")
design, base = load_sweep(config, {tiny!r})
# the actor that first runs the last point is killed (SIGKILL) there, once
from pipelines.sweeping.plan import plan_groups
from sweep.faults import FAULT_VARIABLE
row = plan_groups(design, base)[0].values[3].tolist()
os.environ[FAULT_VARIABLE] = json.dumps(dict(row=row, times=1, count=str(out / "deaths")))
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
study = run_sweep(design, base, batch_size=1, progress=False, chunk_size=1, out_dir=out / "run", executor="ray")
study.frame.to_parquet(out / "frame.parquet")
report = dict(executor=study.executor, chunks=study.chunks, workers=study.runs[0].workers,
              compile_seconds=study.runs[0].compile_seconds, driver_cache=jax.config.jax_compilation_cache_dir)
(out / "report.json").write_text(json.dumps(report, default=float))
ray.shutdown()
"""


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return write_sweep(
        tmp_path_factory.mktemp("ray"), 'design = "grid"',
        'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.2 mm"]',
        'path = "joints.pin.contact.restitution"\nvalues = [0.5, 0.9]',
    )


@pytest.mark.slow  # starts a Ray cluster in a child process and compiles a sweep there
def test_ray_chunks_match_local_run_after_an_actor_is_killed(config, tmp_path):
    child = subprocess.run([sys.executable, "-c", DRIVER.format(tiny=TINY), str(config), str(tmp_path)],
                           cwd=REPOSITORY, capture_output=True, text=True, timeout=1200)
    assert child.returncode == 0, child.stderr[-3000:]
    remote = json.loads((tmp_path / "report.json").read_text())
    frame = pd.read_parquet(tmp_path / "frame.parquet")
    design, base = load_sweep(config, TINY)
    local = run_sweep(design, base, batch_size=1, progress=False, executor="local", chunk_size=1)
    assert remote["executor"] == "ray" and len(remote["chunks"]) == 4
    workers = {chunk["worker"] for chunk in remote["chunks"]}
    assert len((tmp_path / "deaths").read_text().splitlines()) == 1  # an actor was killed ...
    assert 1 <= len(workers) <= 3  # ... and replaced: two actors, one per CPU, reused across chunks
    # each worker compiled once: on its first chunk only (the killed one reported none)
    assert sum(chunk["compile_seconds"] > 0 for chunk in remote["chunks"]) == len(workers)
    assert remote["workers"] == 2 and remote["compile_seconds"] > 0
    # the driver stopped writing the cache once its workers started (XLA's serialisation crashed there)
    assert remote["driver_cache"] is None
    assert (frame["status"] == "ok").all()
    pd.testing.assert_frame_equal(frame[["point", *METRICS]], local.frame[["point", *METRICS]])
    assert sorted(p for chunk in remote["chunks"] for p in chunk["points"]) == list(range(4))
    assert np.all(frame["pin.max_normal_force"] > 0)
