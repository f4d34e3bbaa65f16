"""Friction parameters are calibrated like contact ones: a static/dynamic friction pair
(``static_dynamic`` law) from a record of the low-speed slider-crank with friction.

The mechanism: configs/low_speed_slider_crank.toml (20 rad/s, gravity, the journal in
continuous contact most of the time, so friction acts throughout) with the pin's friction
switched to ``static_dynamic`` with mu_s = 0.08 and mu_d = 0.05 (stiction and dynamic
velocities 10 and 20 mm/s, so the static branch is crossed at every slip reversal). The
record: the driver torque and the slider acceleration over 0.1 s, 1 % noise; the fit starts
mu_d 40 % off and mu_s 50 % off or in the neighbouring basin. The fit integrates at rtol 1e-8: in this persistent, sliding contact
Tsit5 at the default rtol 1e-6 leaves the simulation at the true values 5x the record's
noise away from it (measured), more than a change of mu_s does near the truth. The record
is made with Dopri8 at rtol 1e-11, so that its own solver error is far below the fit's.
"""

import json
import shutil
from pathlib import Path

import pytest

from pipelines.calibration.synthesize import synthesize
from pipelines.cli import main

REPO = Path(__file__).resolve().parents[3]
TRUTH = {"joints.pin.friction.static_coefficient": 0.08, "joints.pin.friction.coefficient": 0.05}
LAW = ('joints.pin.friction.model="static_dynamic"', 'joints.pin.friction.stiction_velocity="10 mm/s"',
       'joints.pin.friction.dynamic_velocity="20 mm/s"', "joints.pin.friction.static_coefficient=0.08")
CONFIG = """
base = "low_speed_slider_crank.toml"

[data]
path = "measured.csv"
signals = ["motor.torque", "slider.ax"]

[[fit]]
path = "joints.pin.friction.static_coefficient"
initial = 0.12
bounds = [0.01, 0.5]
scale = "log"

[[fit]]
path = "joints.pin.friction.coefficient"
initial = 0.03
bounds = [0.005, 0.3]
scale = "log"

[optimizer]
starts = 2

[simulation]
t_end = "0.1 s"
output_interval = "0.5 ms"
rtol = 1e-8
atol = 1e-11
"""


@pytest.mark.slow
@pytest.mark.validation
@pytest.mark.parametrize("static_start", [0.12, 0.02], ids=["half_off", "neighbouring_basin"])
def test_static_dynamic_friction_pair_is_recovered(tmp_path, static_start):
    """From 50 % off the first window's fit reaches the truth's basin; from 0.02, a start in
    the neighbouring basin (the loss there is about 900 in noise units), it cannot, and the
    start screen finds the basin."""
    shutil.copy(REPO / "configs" / "low_speed_slider_crank.toml", tmp_path / "low_speed_slider_crank.toml")
    (tmp_path / "friction.toml").write_text(CONFIG.replace("initial = 0.12", f"initial = {static_start}"))
    frame, _ = synthesize(tmp_path / "friction.toml", {**TRUTH}, noise_fraction=0.01, seed=3,
                          interval=1e-3, overrides=(*LAW, 'simulation.solver="dopri8"', "simulation.rtol=1e-11", "simulation.atol=1e-14"))
    frame.to_csv(tmp_path / "measured.csv", index=False)
    argv = ["calibrate", str(tmp_path / "friction.toml"), "--out", str(tmp_path / "out"), "--no-progress"]
    for override in LAW[:3]:
        argv += ["--set", override]
    assert main(argv) == 0
    result = json.loads((tmp_path / "out" / "calibration.json").read_text())
    for path, truth in TRUTH.items():
        assert result["parameters"][path] == pytest.approx(truth, rel=0.05), path
    # The linearised intervals of this non-smooth law are not asserted: measured 1.4 to 12
    # reported std off at errors of 1e-5 relative (docs/calibration.md).
    assert any("friction law switches" in warning for warning in result["warnings"])
    screen = result["start_screen"]
    if static_start == 0.02:
        assert screen["kept"] and screen["loss_from_starts"] > 100 and screen["loss_from_screen"] < 1
    else:
        assert screen is None
