"""``python -m benchmarks.throughput --case gpu --quick`` runs end to end on the CPU, so that the script works
the first time a GPU is there: every mode runs every size without a failed point, and the
accelerator-side modes agree with the CPU path."""

import json
import pathlib
import subprocess
import sys

import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
# the default run keeps its paths: refilling lanes against single solves in
# tests/model/integrate/test_ensemble.py, a benchmark script as a module in test_harness.py
@pytest.mark.validation
def test_quick_run_end_to_end(tmp_path):
    done = subprocess.run([sys.executable, "-m", "benchmarks.throughput", "--case", "gpu", "--quick", "--out", str(tmp_path)],
                          cwd=REPOSITORY, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads((tmp_path / "gpu_sweep.json").read_text())["runs"]
    assert {run["mode"] for run in runs} == {"refilling lanes", "plain vmap", "CPU path (refilling lanes, one process)"}
    assert all(run["failed"] == 0 and run["simulations_per_second"] > 0 for run in runs)
    compared = [run for run in runs if run["agreement_with_cpu"]]
    assert len(compared) == 4 and all(run["agreement_with_cpu"]["passed"] for run in compared)
    assert (tmp_path / "gpu_sweep.md").read_text().count("| yes |") == 4
