"""``clearance sweep --derivatives`` with the oil viscosity as a swept path: the forward-mode
derivative through the film model and the solver against a central difference built from
the same sweep's neighbouring points."""

import shutil

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main

from tests.helpers import CONFIGS

VISCOSITY = 0.4  # Pa s, the lubricated Flores config's oil
STEP = 1e-3 * VISCOSITY
PATH = "joints.pin.lubrication.viscosity"
METRIC = "pin.max_normal_force"
# 3 ms (a quarter revolution: the journal leaves the centre and the film takes the load),
# tight tolerances so that the difference is not drowned by the adaptive stepping's noise.
SWEEP = """base = "flores_lubricated.toml"
[sweep]
design = "grid"
[[sweep.parameters]]
path = "{path}"
values = [{values}]
[simulation]
t_end = "3 ms"
rtol = 1e-10
atol = 1e-13
"""


@pytest.mark.slow
@pytest.mark.validation  # 40 s; the default run keeps the same derivative through one solve
# (tests/model/lubrication/test_engine.py) and the sweep's derivative columns on dry paths
# (tests/sweep/test_sensitivity.py)
def test_viscosity_derivative_matches_central_difference(tmp_path):
    shutil.copy(CONFIGS / "flores_lubricated.toml", tmp_path)
    values = ", ".join(f'"{v!r} Pa*s"' for v in (VISCOSITY - STEP, VISCOSITY, VISCOSITY + STEP))
    config = tmp_path / "viscosity.toml"
    config.write_text(SWEEP.format(path=PATH, values=values))
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--derivatives", METRIC, "--out", str(out), "--no-progress"]) == 0
    frame = pd.read_parquet(out / "results.parquet").sort_values(PATH).reset_index(drop=True)
    assert (frame["status"] == "ok").all() and len(frame) == 3
    np.testing.assert_allclose(frame[PATH], [VISCOSITY - STEP, VISCOSITY, VISCOSITY + STEP], rtol=1e-12)
    central = (frame[METRIC][2] - frame[METRIC][0]) / (2 * STEP)
    forward = frame[f"d({METRIC})/d({PATH})"][1]
    print(f"d({METRIC})/d(viscosity): forward {forward:.6g} N/(Pa s), central difference {central:.6g}")
    assert abs(central) > 1.0  # the film does move the peak force
    assert forward == pytest.approx(central, rel=1e-3)
