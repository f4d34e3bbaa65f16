"""``clearance optimize`` on a lubricated joint (configs/optimize_lubricated.toml), shortened:
the uncertain viscosity reaches the film model, and the reported optimum is verified
feasible with the hard peak force below its bound on every verification sample."""

import json

import pytest

from pipelines.cli import main

from tests.helpers import CONFIGS

CONFIG = CONFIGS / "optimize_lubricated.toml"
BOUND = 4000.0  # N, the config's limit on pin.max_normal_force


@pytest.mark.slow
@pytest.mark.validation  # 50 s; the default run keeps the dry optimize run (test_optimize_cli.py) and the
# lubricated solves and their viscosity derivative (tests/model/lubrication/test_engine.py)
def test_lubricated_tolerance_design_is_verified_feasible(tmp_path):
    code = main([
        "optimize", str(CONFIG), "--set", "simulation.t_end=3 ms", "--samples", "2", "--iterations", "2",
        "--verify-samples", "2", "--verify-points", "1", "--pareto-points", "2", "--backoff-steps", "2",
        "--no-progress", "--out", str(tmp_path),
    ])
    assert code == 0
    report = json.loads((tmp_path / "optimum.json").read_text())
    clearance = report["design"]["joints.pin.clearance"]
    assert 5e-5 <= clearance <= 5e-4
    viscosities = report["verification"]["samples"]["joints.pin.lubrication.viscosity"]
    assert min(viscosities) >= 0.1 - 1e-12 and max(viscosities) <= 0.4 + 1e-12
    assert report["feasible"] is True
    assert report["constraints"]["pin.max_normal_force"] <= BOUND
    verified = [p for p in report["verification"]["points"] if p["design"]["joints.pin.clearance"] == clearance]
    assert verified and all(p["feasible"] and p["solver_ok"] for p in verified)
    assert verified[0]["worst"]["pin.max_normal_force"] == pytest.approx(report["constraints"]["pin.max_normal_force"])
