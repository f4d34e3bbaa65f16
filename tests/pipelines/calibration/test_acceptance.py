"""Acceptance: the example config as written (adam named, 4 starts, e from 0.6 and K from
3e10 N/m^1.5, i.e. 20 % and 50 % off), fitted to slider.x and slider.ax records of the
Flores slider-crank with e = 0.75 and K = 2.0e10 N/m^1.5.

The records are made by the project's model with another solver (Dopri8), tighter
tolerances (rtol 1e-9) and a finer output grid (2 us) than the fit uses (Tsit5, rtol 1e-6,
outputs at half the sample interval), sampled at 8 us (not a multiple of the 10 us output
interval of the mechanism config) from 24 us after the simulation start, with 2 % Gaussian
noise. The record's clock starts at 0 when its first sample is taken (a logger started
late), so the tool must find the 24 us itself (``data.time_offset = "auto"``, the default);
it chooses its windows itself too (continuation in the horizon).
"""

import json
import shutil
from pathlib import Path

import pytest

from pipelines.calibration.synthesize import synthesize
from pipelines.cli import main

REPO = Path(__file__).resolve().parents[3]
TRUTH = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": 2.0e10}
SIGNALS = 'data.signals=["slider.x", "slider.ax"]'
RECORD_START, RECORD_INTERVAL = 24e-6, 8e-6  # s
RECORD_SOLVER = ('simulation.solver="dopri8"', "simulation.rtol=1e-9", "simulation.atol=1e-12", 'simulation.output_interval="2 us"')


def example_with_record(folder: Path, t_end_ms: float, seed: int = 0) -> Path:
    for name in ("flores_slider_crank.toml", "calibrate_example.toml"):
        shutil.copy(REPO / "configs" / name, folder / name)
    truth = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": "2.0e10 N/m^1.5"}
    frame, _ = synthesize(
        folder / "calibrate_example.toml", truth, noise_fraction=0.02, seed=seed,
        duration=t_end_ms * 1e-3 - RECORD_START - RECORD_INTERVAL, interval=RECORD_INTERVAL, time_offset=RECORD_START,
        overrides=(f'simulation.t_end="{t_end_ms} ms"', SIGNALS, *RECORD_SOLVER),
    )
    frame.to_csv(folder / "measured.csv", index=False)
    return folder / "calibrate_example.toml"


def calibrate(config: Path, out: Path, *overrides: str) -> dict:
    argv = ["calibrate", str(config), "--out", str(out), "--no-progress", "--set", SIGNALS]
    for override in overrides:
        argv += ["--set", override]
    assert main(argv) == 0
    return json.loads((out / "calibration.json").read_text())


def check_recovery(result: dict) -> None:
    e, K = (result["parameters"][path] for path in TRUTH)
    assert abs(e - TRUTH["joints.pin.contact.restitution"]) < 0.02, e
    assert K == pytest.approx(TRUTH["joints.pin.contact.stiffness"], rel=0.05), K
    for path, truth in TRUTH.items():
        assert result["initial"][path] != pytest.approx(truth, rel=0.19)  # started 20-50 % off
        # the truth within 4 standard deviations of the reported (Newey–West) uncertainty
        assert abs(result["parameters"][path] - truth) < 4 * result["uncertainty"]["std"][path], path
    assert result["optimizer"]["strategy"] == "continuation" and result["uncertainty"]["method"] == "newey_west"
    offset = result["time_offset"]["data.time_offset"]
    assert abs(offset["fitted"] - RECORD_START) < RECORD_INTERVAL, offset  # within a sample


@pytest.mark.slow
@pytest.mark.validation
def test_example_on_a_short_record(tmp_path):
    """The example as written but for the signals, shortened to a 1.5 ms record (the first
    window: one stage of the continuation) and 2 starts, so that it runs in the suite."""
    config = example_with_record(tmp_path, 1.5)
    result = calibrate(config, tmp_path / "out", 'simulation.t_end="1.5 ms"', "optimizer.starts=2")
    check_recovery(result)


@pytest.mark.slow
@pytest.mark.validation
def test_example_as_written_on_a_6_ms_record(tmp_path):
    """The example config unchanged but for the two signals: 6 ms record."""
    result = calibrate(example_with_record(tmp_path, 6.0), tmp_path / "out")
    check_recovery(result)
    assert result["stages"][0]["window"][1] < 2e-3 < result["predictable_window"][1]  # it extended the window itself


@pytest.mark.slow
@pytest.mark.validation
def test_example_on_a_24_ms_record(tmp_path):
    """Two crank revolutions: the tool stops extending where the record stops being predictable."""
    result = calibrate(example_with_record(tmp_path, 24.0), tmp_path / "out", 'simulation.t_end="24 ms"')
    check_recovery(result)
