"""``clearance optimize`` end to end on the example config (shortened), and its one-line errors."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipelines.cli import main
from tests.helpers import CONFIGS

SPEC = CONFIGS / "optimize_example.toml"
LIMIT = "1 MN"


@pytest.fixture(scope="module")
def optimum(tmp_path_factory):
    out = tmp_path_factory.mktemp("optimize")
    # the example as written, shortened: 4 ms, 2 samples, 2 iterations, 2 verification samples;
    # a 1 MN force limit (the peaks are a few kN) makes every design feasible, so the tests
    # know which branch of the report to expect
    code = main([
        "optimize", str(SPEC), "--set", "simulation.t_end=4 ms", "--set", f"constraints.0.max={LIMIT}", "--samples", "2", "--iterations", "2",
        "--verify-samples", "2", "--verify-points", "1", "--pareto-points", "2", "--backoff-steps", "0",
        "--no-progress", "--out", str(out),
    ])
    assert code == 0
    return out, json.loads((out / "optimum.json").read_text())


@pytest.mark.slow  # the optimize run: search, Pareto and verification sweeps
def test_optimum_json_follows_the_contract(optimum):
    _, report = optimum
    assert set(report["design"]) == {"joints.pin.clearance"}
    clearance = report["design"]["joints.pin.clearance"]
    assert 1e-5 <= clearance <= 5e-4
    assert isinstance(report["objective"], float) and report["objective"] > 0
    assert set(report["constraints"]) == {"pin.max_normal_force"}
    assert report["feasible"] is True
    verified = report["verification"]["points"][0]
    assert verified["label"] == "optimum" and len(report["verification"]["samples"]["drivers.motor.speed"]) == 2
    assert 0.0 < report["constraints"]["pin.max_normal_force"] <= 1e6
    assert len(report["search"]["history"]) == 2 and len(report["pareto"]) == 2


@pytest.mark.slow  # the optimize run: search, Pareto and verification sweeps
def test_recommended_band_and_fits_are_consistent(optimum):
    _, report = optimum
    band = report["recommended_clearance"]["pin"]
    assert band["nominal_diameter"] == pytest.approx(0.02)
    assert band["max_clearance"] == pytest.approx(report["design"]["joints.pin.clearance"])
    for fit in band["iso286_fits"]:
        low, high = fit["radial_clearance_m"]
        assert fit["within_band"] == (low >= band["min_clearance"] and high <= band["max_clearance"] + 1e-12)


@pytest.mark.slow  # the optimize run: search, Pareto and verification sweeps
def test_outputs_are_written(optimum):
    out, report = optimum
    for name in ("pareto.png", "history.png", "verification.png"):
        assert (out / name).stat().st_size > 10_000
    rows = pd.read_parquet(out / "sweep.parquet")
    assert {"role", "joints.pin.clearance", "uncertain:drivers.motor.speed", "pin.max_normal_force"} <= set(rows.columns)
    pareto = rows[rows.role == "pareto"]
    assert len(pareto) == 2 * 2  # 2 designs x 2 samples
    # the cost-performance sweep spans the bounds: the smallest clearance costs the most
    costs = pareto.groupby("joints.pin.clearance")["cost"].first()
    assert costs.index.min() == pytest.approx(1e-5) and costs.idxmax() == costs.index.min()


def test_bad_config_is_one_line_and_writes_nothing(tmp_path, capsys):
    shutil.copy(CONFIGS / "flores_slider_crank.toml", tmp_path)
    bad = tmp_path / "optimize.toml"
    bad.write_text(SPEC.read_text().replace('max = "5 kN"', 'max = "5 kg"'))
    out = tmp_path / "out"
    assert main(["optimize", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: constraints.0.max: ")
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.validation  # a minute of spatial compiles; the default run keeps the planar run above, the
# spatial config's loading (test_problem.py) and the spatial design metrics against the planar
# ones (tests/model/mechanics/spatial/test_slider_crank.py)
def test_spatial_base_runs_end_to_end(tmp_path):
    """The spatial example, shortened as the planar one above: the same report and files."""
    code = main([
        "optimize", str(CONFIGS / "optimize_spatial.toml"), "--set", "simulation.t_end=4 ms", "--set", f"constraints.0.max={LIMIT}",
        "--samples", "2", "--iterations", "2", "--verify-samples", "2", "--verify-points", "1", "--pareto-points", "2",
        "--backoff-steps", "0", "--no-progress", "--out", str(tmp_path),
    ])
    assert code == 0
    report = json.loads((tmp_path / "optimum.json").read_text())
    assert report["feasible"] is True and 1e-5 <= report["design"]["joints.pin.clearance"] <= 5e-4
    assert 0.0 < report["constraints"]["pin.max_normal_force"] <= 1e6
    assert report["recommended_clearance"]["pin"]["nominal_diameter"] == pytest.approx(0.02)
    rows = pd.read_parquet(tmp_path / "sweep.parquet")
    assert {"slider.max_abs_az", "pin.max_normal_force"} <= set(rows.columns)
    assert rows["slider.max_abs_az"].abs().max() < 1e-3 * rows["slider.max_abs_ax"].abs().max()  # it stays planar
    for name in ("pareto.png", "history.png", "verification.png"):
        assert (tmp_path / name).stat().st_size > 10_000
