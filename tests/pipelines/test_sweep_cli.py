"""``clearance sweep``: the example runs as written; bad input is one line and no files."""

import json
import shutil
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.config import load_pipeline_mechanism
from pipelines.sweeping.results import metric_units
from tests.helpers import CONFIGS

PATHS = ["joints.pin.clearance", "joints.pin.contact.restitution", "joints.pin.contact.model"]


def copy_example(folder: Path) -> Path:
    """configs/sweep_example.toml beside its base mechanism."""
    for name in ("sweep_example.toml", "flores_slider_crank.toml"):
        shutil.copy(CONFIGS / name, folder)
    return folder / "sweep_example.toml"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("example")
    config, out = copy_example(folder), folder / "out"
    code = main(["sweep", str(config), "--out", str(out), "--no-progress"])
    return code, config, out


@pytest.mark.slow
def test_spec_example_runs_as_written(example):
    code, _, out = example
    assert code == 0
    assert {p.name for p in out.iterdir()} == {
        "results.parquet", "results", "sweep.json", "resolved_config.json", "chunks", "metrics.png",
        "main_effects.png", "map_pin.max_normal_force.png",
    }
    # the table grown chunk by chunk ends as the results table, row for row
    grown = pd.read_parquet(out / "results").sort_values("point").reset_index(drop=True)
    pd.testing.assert_frame_equal(grown, pd.read_parquet(out / "results.parquet"), check_dtype=False)
    for figure in ("metrics.png", "main_effects.png", "map_pin.max_normal_force.png"):
        image = matplotlib.image.imread(out / figure)
        assert image.shape[0] > 300 and image.shape[1] > 300 and np.ptp(image) > 0


@pytest.mark.slow
def test_results_have_one_row_per_point_with_contract_columns(example):
    _, config, out = example
    frame = pd.read_parquet(out / "results.parquet")
    _, base = load_pipeline_mechanism(config)
    assert len(frame) == 24
    for column in PATHS + list(metric_units(base)) + ["status", "steps", "rejected_steps"]:
        assert column in frame.columns, column
    assert (frame["status"] == "ok").all()
    assert frame["joints.pin.clearance"].dtype == np.float64
    assert sorted(frame["joints.pin.clearance"].unique()) == pytest.approx([1e-4, 2.5e-4, 5e-4])
    assert set(frame["joints.pin.contact.model"]) == {"lankarani_nikravesh", "flores"}
    assert (frame["steps"] > 0).all() and (frame["pin.max_normal_force"] > 0).all()


@pytest.mark.slow
def test_first_impact_comes_later_with_more_clearance(example):
    """The journal starts centred, so it travels farther before the first impact."""
    frame = pd.read_parquet(example[2] / "results.parquet")
    for _, line in frame.groupby(["joints.pin.contact.restitution", "joints.pin.contact.model"]):
        times = line.sort_values("joints.pin.clearance")["pin.first_impact_time"].to_numpy()
        assert np.all(np.diff(times) > 0), times
    # Before the first impact the law and the restitution play no part; the onset is
    # interpolated between 10 us output samples, one of which already feels the law, so
    # the times agree to a small share of the output interval.
    per_clearance = frame.groupby("joints.pin.clearance")["pin.first_impact_time"]
    assert (per_clearance.max() - per_clearance.min() < 0.02 * 10e-6).all()


@pytest.mark.slow
def test_sweep_json_counts_and_groups(example):
    summary = json.loads((example[2] / "sweep.json").read_text())
    assert summary["git_revision"] and summary["versions"]["jax"] and summary["versions"]["diffrax"]
    assert sum(len(chunk["points"]) for chunk in summary["chunks"]) == 24
    assert all(0.0 < chunk["lockstep_efficiency"] <= 1.0 for chunk in summary["chunks"])
    assert summary["points"] == 24 and summary["ok"] == 24 and summary["failed"] == 0
    assert [g["choices"]["joints.pin.contact.model"] for g in summary["groups"]] == ["lankarani_nikravesh", "flores"]
    assert all(g["points"] == 12 and g["solver"] == "tsit5" for g in summary["groups"])
    assert summary["parameters"]["joints.pin.contact.model"]["continuous"] is False


@pytest.mark.parametrize(
    "extra, file_is_config, key",
    [
        (["--set", "sweep.design=random"], True, "sweep.design"),
        (["--set", "sweep.parameters.0.values=[\"0.1 kg\"]"], True, "sweep.parameters.0.values"),
        (["--set", "joints.pin.clearance=-1 mm"], True, "joints.pin.clearance"),
        (["--plot-metric", "pin.max_force"], False, "pin.max_force"),
        (["--batch-size", "0"], False, ""),
        (["--chunk-size", "0"], False, "--chunk-size"),
        (["--derivatives", "pin.max_force"], False, "pin.max_force"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, extra, file_is_config, key):
    config = copy_example(tmp_path)
    out = tmp_path / "out"
    code = main(["sweep", str(config), "--out", str(out), "--no-progress", *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    if file_is_config:
        assert err.startswith(f"error: {config}: {key}: "), err
    else:
        assert key in err
    assert not out.exists()


def test_main_config_loads():
    """The README's first command: configs/flores_sweep.toml is a valid sweep."""
    assert main(["check", str(CONFIGS / "flores_sweep.toml")]) == 0


@pytest.mark.slow
@pytest.mark.validation  # two runs of the command with two worker processes each
def test_ctrl_c_then_resume_completes_the_sweep(tmp_path):
    """Ctrl-C (SIGINT to the command's process group, as a terminal sends it) while worker
    processes run chunks: one line, status 130, the finished chunks kept; ``--resume`` then
    runs only the rest, and the results hold every point once."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers import REPOSITORY, write_sweep

    config = write_sweep(tmp_path, 'design = "grid"',
                         'path = "joints.pin.clearance"\nrange = ["0.1 mm", "0.5 mm"]\nnum = 8',
                         'path = "joints.pin.contact.restitution"\nrange = [0.5, 0.95]\nnum = 8')
    out = tmp_path / "out"
    command = [sys.executable, "-m", "pipelines.cli", "sweep", str(config), "--out", str(out), "--no-progress",
               "--executor", "processes", "--workers", "2", "--chunk-size", "2", "--set", 'simulation.t_end="1 ms"']
    environment = os.environ | {"CLEARANCE_JAX_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPOSITORY)}
    command_line = subprocess.Popen(command, cwd=REPOSITORY, env=environment, start_new_session=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    manifest = out / "chunks" / "manifest.json"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and command_line.poll() is None:
        if manifest.exists() and json.loads(manifest.read_text())["chunks"]:
            break
        time.sleep(0.05)
    os.killpg(command_line.pid, signal.SIGINT)
    _, err = command_line.communicate(timeout=300)
    assert command_line.returncode == 130, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: interrupted; ") and f"--out {out} --resume" in last, last
    stored = sum(len(chunk["points"]) for chunk in json.loads(manifest.read_text())["chunks"])
    assert 2 <= stored < 64
    resumed = subprocess.run([*command, "--resume"], cwd=REPOSITORY, env=environment, capture_output=True,
                             text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    frame = pd.read_parquet(out / "results.parquet")
    assert frame["point"].tolist() == list(range(64)) and (frame["status"] == "ok").all()
    summary = json.loads((out / "sweep.json").read_text())
    assert summary["resumed_points"] == stored
    assert sorted(p for chunk in summary["chunks"] for p in chunk["points"]) == list(range(64))
