"""``clearance animate``: frames drawn from a run folder for a planar, a spatial and a
flexible mechanism, and the magnified deflection of a flexible body.

The run folders hold the geometry ``simulate`` writes (from the built mechanism) and a
timeseries of prescribed motion, so no solve is compiled here."""

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from pipelines.animation import DEFLECTION_SHARE, _magnified, animate_run, write_geometry
from pipelines.build import build_mechanism
from pipelines.cli import main
from pipelines.config import load_mechanism

TIMES = np.linspace(0.0, 1e-3, 5)


def _run_folder(folder, config_path):
    """``geometry.json`` of the config's mechanism and a timeseries of its bodies swinging
    about their initial poses, each journal circling inside its clearance."""
    mechanism = build_mechanism(load_mechanism(config_path))
    write_geometry(folder, mechanism, "test")
    wave = np.sin(2 * np.pi * TIMES / TIMES[-1])
    columns = {"t": TIMES}
    size = 3 if mechanism.dimension == 2 else 7
    initial = np.asarray(mechanism.initial_positions).reshape(-1, size)
    for b, name in enumerate(mechanism.body_names):
        if mechanism.dimension == 2:
            x, y, theta = initial[b]
            columns.update({f"{name}.x": x + 1e-3 * wave, f"{name}.y": y + 1e-3 * b * wave, f"{name}.theta": theta + 0.1 * wave})
        else:
            for k, axis in enumerate("xyz"):
                columns[f"{name}.{axis}"] = initial[b, k] + 1e-3 * b * wave
            for k in range(4):
                columns[f"{name}.q{k}"] = np.full_like(TIMES, initial[b, 3 + k])
    for k, name in enumerate(mechanism.clearance_names):
        c = float(mechanism.clearance_joints[k].clearance)
        columns.update({f"{name}.ex": c * np.cos(6 * TIMES / TIMES[-1]), f"{name}.ey": c * np.sin(6 * TIMES / TIMES[-1]),
                        f"{name}.normal_force": 100.0 * np.maximum(wave, 0.0)})
    pd.DataFrame(columns).to_parquet(folder / "timeseries.parquet")
    return folder


@pytest.mark.parametrize("config", ["configs/fourbar_two_clearances.toml", "configs/spherical_pendulum.toml",
                                    "configs/flores_flexible.toml"])
def test_frames_are_drawn(tmp_path, config):
    folder = _run_folder(tmp_path, config)
    path = animate_run(folder, frames=2, progress=False)
    with Image.open(path) as image:
        assert image.n_frames == 2


def test_the_command_writes_into_the_run_folder_and_refuses_a_folder_without_a_run(tmp_path, capsys):
    folder = _run_folder(tmp_path, "configs/flores_slider_crank.toml")
    assert main(["animate", str(folder), "--frames", "2"]) == 0
    with Image.open(folder / "animation.gif") as image:
        assert image.n_frames == 2
    capsys.readouterr()
    assert main(["animate", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {tmp_path / 'missing'}: no timeseries.parquet; animate a folder written by `clearance simulate`"]


def test_deflection_is_magnified_to_its_share_of_the_length():
    along = np.linspace(0.0, 0.3, 7)
    bow = 1e-4 * np.sin(np.pi * along / 0.3)  # a half-sine bow of 0.1 mm on a 300 mm body
    chain = np.stack([np.stack([along, bow], -1)] * 2)  # two samples
    drawn, magnification = _magnified(chain)
    assert magnification == pytest.approx(DEFLECTION_SHARE * 0.3 / 1e-4)
    np.testing.assert_allclose(drawn[..., 1], magnification * chain[..., 1], atol=1e-12)
    np.testing.assert_allclose(drawn[..., 0], chain[..., 0], atol=1e-12)
