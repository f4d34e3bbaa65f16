"""``clearance sweep`` on a spatial (``dimension = 3``) base: every row of a 4-point
clearance x restitution sweep equals a single simulation of that point."""

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

BASE = "flores_slider_crank_3d.toml"
# the lanes and a single solve round differently, so accept/reject decisions and the states
# agree to the integrator's tolerance (rtol 1e-6), not to round-off (model/integrate/ensemble.py);
# the first impact comes before any contact, the peaks through one impact, the acceleration
# peak from the output samples during it
AGREEMENT = {"pin.first_impact_time": 1e-5, "pin.first_impact_velocity": 1e-4, "pin.max_normal_force": 1e-3,
             "pin.max_penetration": 1e-3, "slider.max_abs_ax": 1e-2}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spatial_sweep")
    config = write_sweep(folder, 'design = "grid"', 'path = "joints.pin.clearance"\nvalues = ["0.25 mm", "0.5 mm"]',
                         'path = "joints.pin.contact.restitution"\nvalues = [0.5, 0.9]', base=CONFIGS / BASE,
                         simulation='t_end = "0.6 ms"\noutput_interval = "10 us"')
    out = folder / "out"
    code = main(["sweep", str(config), "--out", str(out), "--no-progress", "--executor", "local"])
    stop_compilation_cache_writes()  # the command left its persistent cache on: the test's solves compile without it
    return code, folder, pd.read_parquet(out / "results.parquet") if code == 0 else None


@pytest.mark.slow
# the default run keeps the path: sweep rows against single simulations of the planar Flores
# slider-crank (tests/sweep/test_run.py), the same lanes whatever the engine
@pytest.mark.validation
def test_spatial_sweep_rows_equal_single_simulations(sweep):
    code, folder, frame = sweep
    assert code == 0
    assert len(frame) == 4 and (frame["status"] == "ok").all()
    for column in ("pin.max_normal_force", "pin.first_impact_time", "slider.max_abs_az", "steps"):
        assert column in frame.columns
    simulate = jax.jit(model.simulate, static_argnums=1)
    for _, row in frame.iterrows():
        config = load_mechanism(folder / BASE, [
            f"joints.pin.clearance={row['joints.pin.clearance']} m",
            f"joints.pin.contact.restitution={row['joints.pin.contact.restitution']}",
            "simulation.t_end=0.6 ms", "simulation.output_interval=10 us"])
        mechanism = build_mechanism(config)
        metrics = model.summary_metrics(mechanism, simulate(mechanism, solver_settings(config)))
        assert np.isfinite(metrics["pin.first_impact_time"])  # the window holds the first impact
        for name, agreement in AGREEMENT.items():
            assert row[name] == pytest.approx(float(metrics[name]), rel=agreement), name
