"""Calibration of a structural parameter: the flexible rod's damping ratio recovered from a
record made by the same model with another noise draw."""

import json
import shutil

import pytest

from pipelines.calibration.synthesize import synthesize
from pipelines.cli import main

from tests.helpers import CONFIGS

PATH = "bodies.conrod.flexible.damping_ratio"


@pytest.mark.slow
@pytest.mark.validation  # about a minute of forward-mode compiles through the flexible model; the default run
# keeps the damping ratio as a continuous path (the sweep and parameter-map tests) and the contact fits
@pytest.mark.parametrize("signals", [
    None,  # the config's: slider and mid-rod accelerations
    '["conrod.deflection", "conrod.bending_moment_4"]',  # what strain gauges on the rod give
], ids=["accelerations", "deflection_and_moment"])
def test_recovers_the_damping_ratio(tmp_path, signals):
    for name in ("flores_flexible.toml", "calibrate_damping.toml"):
        shutil.copy(CONFIGS / name, tmp_path / name)
    config = tmp_path / "calibrate_damping.toml"
    overrides = () if signals is None else (f"data.signals={signals}",)
    frame, _ = synthesize(config, {PATH: 0.02}, noise_fraction=0.02, seed=11, overrides=overrides)
    frame.to_csv(tmp_path / "calibrate_damping_measured.csv", index=False)
    argv = ["calibrate", str(config), "--out", str(tmp_path / "out"), "--no-progress"]
    for override in overrides:
        argv += ["--set", override]
    assert main(argv) == 0
    result = json.loads((tmp_path / "out" / "calibration.json").read_text())
    assert result["parameters"][PATH] == pytest.approx(0.02, rel=0.05)
