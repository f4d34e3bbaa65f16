"""``clearance sweep`` on a base with a flexible body: the damping ratio is swept in the
refilling lanes, every row equals a single simulation of its point, and the flexible body's
own metrics (from its segments' centre of mass) are filled."""

import jax
import numpy as np
import pandas as pd
import pytest

import model
from pipelines.build import build_mechanism, solver_settings
from pipelines.cli import main
from pipelines.config import load_mechanism
from sweep.run import stop_compilation_cache_writes
from tests.helpers import CONFIGS, write_sweep

BASE = "flores_flexible.toml"


@pytest.mark.slow  # a sweep and a single solve of the 13-body flexible slider-crank
# the default run keeps the path: sweep rows against single simulations of the planar Flores
# slider-crank (tests/sweep/test_run.py), the same lanes whatever the engine
@pytest.mark.validation
def test_flexible_sweep_rows_equal_single_simulations(tmp_path):
    config = write_sweep(tmp_path, 'design = "grid"', 'path = "bodies.conrod.flexible.damping_ratio"\nvalues = [0.01, 0.03]',
                         base=CONFIGS / BASE, simulation='t_end = "0.4 ms"')
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--out", str(out), "--no-progress", "--executor", "local"]) == 0
    stop_compilation_cache_writes()  # the command left its persistent cache on: the checks below compile without it
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
