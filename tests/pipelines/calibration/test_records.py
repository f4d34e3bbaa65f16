"""Several records of one mechanism fitted together (``[[data]]``): each record with its own
file, signals, time offset and mechanism values (here the crank speed); one loss over all
of them, shared parameters, a bias and an offset per record."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.calibration.setup import load_calibration
from pipelines.calibration.synthesize import synthesize
from pipelines.cli import main
from pipelines.errors import ConfigError

from tests.helpers import REPOSITORY as REPO

FIT = """
[[fit]]
path = "joints.pin.contact.restitution"
initial = 0.6
bounds = [0.2, 1.0]

[[fit]]
path = "joints.pin.contact.stiffness"
initial = "3e10 N/m^1.5"
bounds = ["1e9 N/m^1.5", "1e12 N/m^1.5"]
scale = "log"
"""


def two_records(folder: Path, fast: str, slow: str, simulation: str = 't_end = "1 ms"', extra: str = "") -> Path:
    shutil.copy(REPO / "configs" / "flores_slider_crank.toml", folder / "flores_slider_crank.toml")
    text = f"""base = "flores_slider_crank.toml"
[[data]]
name = "fast"
path = "{fast}"
signals = ["slider.x", "slider.ax"]
bias = ["slider.ax"]
[[data]]
name = "slow"
path = "{slow}"
signals = ["slider.ax"]
set = {{ "drivers.motor.speed" = "3000 rpm" }}
{FIT}
{extra}
[optimizer]
starts = 2
[simulation]
{simulation}
"""
    (folder / "joint.toml").write_text(text)
    return folder / "joint.toml"


def small_record(path: Path, samples: int = 101, interval: float = 1e-5, start: float = 0.0) -> str:
    t = start + np.arange(samples) * interval
    pd.DataFrame({"t": t, "slider.ax": np.sin(2e3 * t) + 1e-3 * np.cos(7e5 * t), "slider.x": 0.17 + 1e-6 * np.sin(9e5 * t)}).to_csv(path, index=False)
    return path.name


def test_each_record_gets_its_own_mechanism_offset_and_loss(tmp_path):
    config = two_records(tmp_path, small_record(tmp_path / "a.csv"), small_record(tmp_path / "b.csv", samples=51, start=2e-4))
    calibration = load_calibration(config)
    fast, slow = calibration.problem.records
    assert float(fast.mechanism.drivers[0].speed) == pytest.approx(5000 * 2 * np.pi / 60)
    assert float(slow.mechanism.drivers[0].speed) == pytest.approx(3000 * 2 * np.pi / 60)
    assert fast.signal_names == ("slider.x", "slider.ax") and slow.signal_names == ("slider.ax",)
    assert fast.loss.biased == (False, True) and slow.loss.biased == (False,)
    # record "a" fills the 1 ms simulation (offset fixed at 0); "b" (0.2-0.7 ms) may start from -0.2 to +0.3 ms
    assert calibration.paths == ("joints.pin.contact.restitution", "joints.pin.contact.stiffness", "data.slow.time_offset")
    assert fast.offset_index is None and slow.offset_index == 2
    assert fast.mechanism_indices == slow.mechanism_indices == (0, 1)
    assert calibration.records[1].offset_range == pytest.approx((-2e-4, 3e-4))
    assert float(calibration.problem.count) == 101 * 2 + 51


@pytest.mark.parametrize(
    "extra, override, key",
    [
        ("", 'data.slow.set={"drivers.motor.sped" = "1 rpm"}', "data.slow.set"),
        ("", 'data.slow.set={"joints.pin.contact.restitution" = 0.5}', "data.slow.set.joints.pin.contact.restitution"),
        ("", 'data.slow.name="fast"', "data.fast.name"),
        ("", 'data.slow.time_offset="soon"', "data.slow.time_offset"),
        ("", 'data.fast.bias=["slider.y"]', "data.fast.bias"),
        ('[[fit]]\npath = "data.slow.time_offset"\nbounds = ["-1 ms", "0 ms"]\n', "", "t"),
        ('[[fit]]\npath = "data.medium.time_offset"\nbounds = ["0 ms", "0.1 ms"]\n', "", "fit.2.path"),
    ],
    ids=["unknown-mechanism-path", "fitted-path-fixed", "duplicate-name", "bad-offset", "bias-not-a-signal", "offset-bounds", "unknown-record"],
)
def test_bad_record_settings_are_refused(tmp_path, extra, override, key):
    config = two_records(tmp_path, small_record(tmp_path / "a.csv"), small_record(tmp_path / "b.csv", samples=51, start=2e-4), extra=extra)
    with pytest.raises(ConfigError) as error:
        load_calibration(config, [override] if override else [])
    assert error.value.key == key, error.value


def test_single_record_keys_of_several_records_are_refused(tmp_path):
    shutil.copy(REPO / "configs" / "flores_slider_crank.toml", tmp_path / "flores_slider_crank.toml")
    shutil.copy(REPO / "configs" / "calibrate_example.toml", tmp_path / "calibrate_example.toml")
    small_record(tmp_path / "measured.csv")
    code = main(["calibrate", str(tmp_path / "calibrate_example.toml"), "--set", 'data.set={"drivers.motor.speed" = "1 rpm"}'])
    assert code == 2


@pytest.mark.slow
@pytest.mark.validation
def test_two_speeds_recover_restitution_and_stiffness(tmp_path):
    """Records at 5000 and 3000 rpm (1 ms each, Dopri8 at rtol 1e-9, 8 us samples, 2 %
    noise, e = 0.75, K = 2e10 N/m^1.5), fitted together from e = 0.6 and K = 3e10."""
    shutil.copy(REPO / "configs" / "flores_slider_crank.toml", tmp_path / "flores_slider_crank.toml")
    config = two_records(tmp_path, "fast.csv", "slow.csv")
    truth = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": "2.0e10 N/m^1.5"}
    maker = tmp_path / "maker.toml"
    maker.write_text('base = "flores_slider_crank.toml"\n[data]\npath = "x.csv"\nsignals = ["slider.x", "slider.ax"]\n')
    solver = ('simulation.t_end="1 ms"', 'simulation.solver="dopri8"', "simulation.rtol=1e-9", "simulation.atol=1e-12",
              'simulation.output_interval="2 us"')
    for name, speed, seed in (("fast", "5000 rpm", 1), ("slow", "3000 rpm", 2)):
        frame, _ = synthesize(maker, truth, noise_fraction=0.02, seed=seed, interval=8e-6, duration=0.992e-3,
                              overrides=(*solver, f'drivers.motor.speed="{speed}"'))
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    assert main(["calibrate", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    result = json.loads((tmp_path / "out" / "calibration.json").read_text())
    e, K = result["parameters"]["joints.pin.contact.restitution"], result["parameters"]["joints.pin.contact.stiffness"]
    assert abs(e - 0.75) < 0.02 and K == pytest.approx(2.0e10, rel=0.05)
    assert set(result["records"]) == {"fast", "slow"} and "slider.ax" in result["records"]["fast"]["bias"]
    for name in ("signals_fast.png", "signals_slow.png", "loss_history.png", "correlation.png"):
        assert (tmp_path / "out" / name).stat().st_size > 5000
