"""Measured records: bad data is refused with one ConfigError naming the file and the column;
the low-pass filter matches the zero-phase Butterworth it stands for."""

import shutil
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from pipelines.calibration.data import LowPass, load_record
from pipelines.calibration.setup import load_calibration
from pipelines.cli import main
from pipelines.errors import ConfigError

from tests.helpers import REPOSITORY as REPO


def write(path: Path, frame: pd.DataFrame) -> Path:
    frame.to_csv(path, index=False)
    return path


def good_frame(samples=101, interval=1e-5):
    t = np.arange(samples) * interval
    return pd.DataFrame({"t": t, "slider.ax": np.sin(2e3 * t), "slider.x": 0.17 + 0 * t})


def test_good_record_loads(tmp_path):
    record = load_record(write(tmp_path / "m.csv", good_frame()), "t", ("slider.ax", "slider.x"))
    assert record.values.shape == (101, 2) and record.sample_interval() == pytest.approx(1e-5)


def test_parquet_record_loads(tmp_path):
    path = tmp_path / "m.parquet"
    good_frame().to_parquet(path)
    assert load_record(path, "t", ("slider.ax",)).num_samples == 101


@pytest.mark.parametrize(
    "mutate, column, phrase",
    [
        (lambda f: f.drop(columns=["slider.ax"]), "slider.ax", "no such column"),
        (lambda f: f.drop(columns=["t"]), "t", "no such column"),
        (lambda f: f.assign(**{"slider.ax": f["slider.ax"].where(f.index < 3)}), "slider.ax", "values are missing"),
        (lambda f: f.assign(**{"slider.ax": np.where(f.index == 17, np.inf, f["slider.ax"])}), "slider.ax", "data row 18"),
        (lambda f: f.assign(t=np.r_[f["t"].to_numpy()[:5], f["t"].to_numpy()[4:-1]]), "t", "increase strictly"),
        (lambda f: f.assign(t=f["t"].to_numpy()[::-1]), "t", "increase strictly"),
        (lambda f: f.iloc[:2], "t", "at least"),
    ],
    ids=["missing-signal", "missing-time", "mostly-missing", "infinite", "repeated-time", "decreasing-time", "too-short"],
)
def test_bad_records_are_refused(tmp_path, mutate, column, phrase):
    path = write(tmp_path / "m.csv", mutate(good_frame()))
    with pytest.raises(ConfigError) as error:
        load_record(path, "t", ("slider.ax",))
    assert error.value.file == str(path) and error.value.key == column
    assert phrase in error.value.message


def test_non_numeric_value_is_refused(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("t,slider.ax\n0,1\n1e-5,oops\n2e-5,3\n3e-5,4\n")
    with pytest.raises(ConfigError, match="non-numeric"):
        load_record(path, "t", ("slider.ax",))


def test_lowpass_is_the_zero_phase_butterworth():
    from scipy import signal

    interval, cutoff, order = 1e-5, 5e3, 4
    t = np.arange(2000) * interval
    x = np.sin(2 * np.pi * 500 * t) + 0.5 * np.sin(2 * np.pi * 20e3 * t)
    ours = np.asarray(LowPass(cutoff, order, interval)(jnp.asarray(x[:, None])))[:, 0]
    b, a = signal.butter(order, cutoff, fs=1 / interval)
    reference = signal.filtfilt(b, a, x)
    middle = slice(200, -200)  # edge handling differs (odd reflection vs scipy's padding)
    assert np.max(np.abs(ours[middle] - reference[middle])) < 0.02
    assert np.max(np.abs(ours[middle] - np.sin(2 * np.pi * 500 * t[middle]))) < 0.02  # 20 kHz removed, 500 Hz kept


# --- config-level errors (no simulation is compiled: setup stops before) ---------------------

@pytest.fixture()
def spec_dir(tmp_path):
    for name in ("flores_slider_crank.toml", "calibrate_example.toml"):
        shutil.copy(REPO / "configs" / name, tmp_path / name)
    write(tmp_path / "measured.csv", good_frame(samples=101))
    return tmp_path


def one_error_line(capsys, *argv) -> str:
    code = main(["calibrate", *map(str, argv)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_record_longer_than_simulation(spec_dir, capsys):
    line = one_error_line(capsys, spec_dir / "calibrate_example.toml", "--set", 'simulation.t_end="0.5 ms"')
    assert line.startswith(f"error: {spec_dir / 'measured.csv'}: t: the record is longer than the simulation")


def test_unknown_signal(spec_dir, capsys):
    line = one_error_line(capsys, spec_dir / "calibrate_example.toml", "--set", 'data.signals=["slider.az"]')
    assert line.startswith(f"error: {spec_dir / 'calibrate_example.toml'}: data.signals: unknown signal 'slider.az'")


def test_signal_missing_from_record(spec_dir, capsys):
    line = one_error_line(capsys, spec_dir / "calibrate_example.toml", "--set", 'data.signals=["slider.ay"]')
    assert line.startswith(f"error: {spec_dir / 'measured.csv'}: slider.ay: no such column")


@pytest.mark.parametrize(
    "override, key",
    [
        ('fit.0.bounds=[0.7, 1.0]', "fit.0.initial"),
        ('fit.0.path="joints.pin.contact.model"', "fit.0.initial"),
        ('fit.1.bounds=["1e9 N/m^1.5", "1 m"]', "fit.1.bounds"),
        ('optimizer.name="sgd"', "optimizer.name"),
        ('optimizer.stepz=3', "optimizer.stepz"),
        ('data.lowpass="80 kHz"', "data.lowpass"),
        ('loss={kind = "wavelet"}', "loss.kind"),
        ('loss={windows = [["2 ms", "3 ms"]]}', "loss.windows.0"),
        ('loss={kind = "time", bands = 8}', "loss.bands"),
        ('data.noise={"slider.ax" = "3 m"}', "data.noise.slider.ax"),
    ],
)
def test_bad_calibration_settings(spec_dir, override, key):
    with pytest.raises(ConfigError) as error:
        load_calibration(spec_dir / "calibrate_example.toml", [override])
    assert error.value.key == key and error.value.file == str(spec_dir / "calibrate_example.toml"), error.value
