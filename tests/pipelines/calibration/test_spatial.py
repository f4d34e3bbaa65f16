"""Calibration on a spatial base: the 3-D slider-crank's pin contact parameters recovered
from a record made by the same model with a different noise draw."""

import json
import shutil

import pytest

from pipelines.calibration.synthesize import synthesize
from pipelines.cli import main

from tests.helpers import CONFIGS

TRUTH = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": 6.61e10}


@pytest.mark.slow
@pytest.mark.validation  # about 4 minutes of spatial forward-mode compiles and fits; the default run
# checks the spatial config and its signal names (tests/pipelines/test_check_cli.py) and fits planar bases
def test_recovers_contact_parameters_on_a_spatial_base(tmp_path):
    for name in ("flores_slider_crank_3d.toml", "calibrate_spatial.toml"):
        shutil.copy(CONFIGS / name, tmp_path / name)
    config = tmp_path / "calibrate_spatial.toml"
    truth = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": "6.61e10 N/m^1.5"}
    frame, _ = synthesize(config, truth, noise_fraction=0.02, seed=7)
    frame.to_csv(tmp_path / "calibrate_spatial_measured.csv", index=False)
    assert main(["calibrate", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    result = json.loads((tmp_path / "out" / "calibration.json").read_text())
    fitted = result["parameters"]
    assert fitted["joints.pin.contact.restitution"] == pytest.approx(TRUTH["joints.pin.contact.restitution"], abs=0.02)
    assert fitted["joints.pin.contact.stiffness"] == pytest.approx(TRUTH["joints.pin.contact.stiffness"], rel=0.05)
