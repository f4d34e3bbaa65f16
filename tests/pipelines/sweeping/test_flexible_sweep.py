"""``clearance sweep`` on a base with a flexible body: the damping ratio is swept in the
refilling lanes, every row equals a single simulation of its point, and the flexible body's
own metrics (from its segments' centre of mass) are filled."""

import shutil

import jax
import numpy as np
import pandas as pd
import pytest

import model
from pipelines.build import build_mechanism, solver_settings
from pipelines.cli import main
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

BASE = "flores_flexible.toml"
SWEEP = f"""base = "{BASE}"
[sweep]
design = "grid"
[[sweep.parameters]]
path = "bodies.conrod.flexible.damping_ratio"
values = [0.01, 0.03]
[simulation]
t_end = "0.4 ms"
"""


@pytest.mark.slow  # a sweep and a single solve of the 13-body flexible slider-crank
def test_flexible_sweep_rows_equal_single_simulations(tmp_path):
    shutil.copy(CONFIGS / BASE, tmp_path)
    (tmp_path / "sweep.toml").write_text(SWEEP)
    out = tmp_path / "out"
    assert main(["sweep", str(tmp_path / "sweep.toml"), "--out", str(out), "--no-progress", "--executor", "local"]) == 0
    frame = pd.read_parquet(out / "results.parquet")
    assert len(frame) == 2 and (frame["status"] == "ok").all()
    assert frame["group"].nunique() == 1  # a continuous path: one compiled group
    config = load_mechanism(tmp_path / BASE, ["simulation.t_end=0.4 ms"])
    simulate = jax.jit(model.simulate, static_argnums=1)
    for _, row in frame.iterrows():
        point = load_mechanism(tmp_path / BASE, [f"bodies.conrod.flexible.damping_ratio={row['bodies.conrod.flexible.damping_ratio']}",
                                                 "simulation.t_end=0.4 ms"])
        mechanism = build_mechanism(point)
        metrics = model.summary_metrics(mechanism, simulate(mechanism, solver_settings(config)))
        for name in ("pin.first_impact_time", "pin.max_normal_force", "conrod.max_abs_ay"):
            assert np.isfinite(row[name])
            # lanes and a single solve agree to the integrator's tolerance, not to round-off
            assert row[name] == pytest.approx(float(metrics[name]), rel=1e-3), name
