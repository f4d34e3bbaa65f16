"""A fit that follows only part of the record is a misfit: when the continuation keeps a
window shorter than the record, the goodness tests judge the whole record as well
(``pipelines/calibration/run.py``, ``Outcome.misfit``)."""

import json

import numpy as np
import pytest

from pipelines.calibration.goodness import goodness_of_fit
from pipelines.calibration.run import Outcome
from pipelines.calibration.synthesize import synthesize
from pipelines.cli import main

RNG = np.random.default_rng(7)
SAMPLES = 400


def _goodness(residual, mask):
    return goodness_of_fit([residual[:, None]], [mask[:, None]], [("signal",)], parameters=1)


def _outcome(goodness, record_goodness=None) -> Outcome:
    return Outcome(None, None, (), None, "continuation", np.zeros(1), None, None, {}, np.zeros(1), goodness,
                   record_goodness)


def test_a_window_that_agrees_does_not_hide_the_record_that_does_not():
    # noise over the kept first quarter, a systematic miss of 5 noise levels after it
    residual = RNG.standard_normal(SAMPLES)
    residual[SAMPLES // 4:] += 5.0
    kept = (np.arange(SAMPLES) < SAMPLES // 4).astype(float)
    window, whole = _goodness(residual, kept), _goodness(residual, np.ones(SAMPLES))
    assert not window.misfit and whole.misfit
    assert _outcome(window, whole).misfit is True
    assert _outcome(window).misfit is False  # the kept window was the whole record
    assert _outcome(None).misfit is None  # a loss not in noise units is not tested
    assert _outcome(_goodness(residual, np.ones(SAMPLES)), _goodness(residual, kept)).misfit is True


DROP = """name = "drop"
gravity = ["0 m/s^2", "-9.81 m/s^2"]
[materials.steel]
youngs_modulus = "207 GPa"
poisson_ratio = 0.3
[[bodies]]
name = "rod"
mass = "1 kg"
inertia = "7.5e-3 kg*m^2"
position = ["0 mm", "-150 mm"]
angle = "0 deg"
[[joints]]
name = "top"
type = "revolute_clearance"
bodies = ["rod", "ground"]
points = [["0 mm", "150 mm"], ["0 mm", "0 mm"]]
bearing_radius = "10 mm"
clearance = "0.1 mm"
materials = ["steel", "steel"]
[joints.contact]
model = "flores"
restitution = 0.8
exponent = 1.5
stiffness = "1e10 N/m^1.5"
[initial]
velocities = "zero"
[simulation]
t_end = "16 ms"
output_interval = "0.05 ms"
"""
CALIBRATION = """base = "drop.toml"
[data]
path = "measured.csv"
time = "t"
signals = ["rod.vy"]
time_offset = "0 s"
[[fit]]
path = "joints.top.contact.stiffness"
initial = "1.3e10 N/m^1.5"
bounds = ["1e9 N/m^1.5", "1e11 N/m^1.5"]
scale = "log"
[optimizer]
name = "levenberg_marquardt"
starts = 2
"""


@pytest.mark.validation  # a forward-mode continuation of a planar drop test (minutes of CPU)
def test_restitution_held_wrong_is_a_misfit_not_a_fit_of_the_free_fall(tmp_path):
    # the rod falls 4.5 ms through the clearance (the continuation's first window is the
    # record's first quarter, 4 ms: free fall, where K does not act), then bounces with e =
    # 0.8; the record is its vertical velocity with 1 % noise (3e-4 m/s; the rebound speeds
    # for e = 0.8 and 0.5 differ by 0.013 m/s). The fit holds e at a wrong 0.5 and fits K
    # only: no K follows the bounces, so the continuation keeps the free-fall window, and the
    # whole record makes it a misfit.
    (tmp_path / "drop.toml").write_text(DROP)
    config = tmp_path / "calibration.toml"
    config.write_text(CALIBRATION)
    frame, _ = synthesize(config, {"joints.top.contact.restitution": 0.8}, 0.01, 3,
                          overrides=('simulation.solver="dopri8"', "simulation.rtol=1e-9", "simulation.atol=1e-12"))
    frame.to_csv(tmp_path / "measured.csv", index=False)
    status = main(["calibrate", str(config), "--out", str(tmp_path / "out"), "--no-progress",
                   "--set", "joints.top.contact.restitution=0.5"])
    result = json.loads((tmp_path / "out" / "calibration.json").read_text())
    assert result["predictable_window"][1] < 16e-3  # the continuation stopped before the record's end
    assert result["goodness_of_fit"]["misfit"] is False  # the kept window alone agrees
    assert result["record_goodness_of_fit"]["misfit"] is True
    assert status == 3 and result["misfit"] is True
