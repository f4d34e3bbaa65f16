"""``clearance simulate`` end to end: contract files, physics sanity, failures."""

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipelines.cli import main
from tests.helpers import CONFIGS

CONTRACT_JOINT_METRICS = ("max_normal_force", "max_penetration", "first_impact_time", "first_impact_velocity",
                          "num_impacts", "contact_fraction")

pytestmark = pytest.mark.slow  # the simulate pipeline end to end on the Flores and four-bar configs


@pytest.fixture(scope="module")
def flores_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("flores")
    assert main(["simulate", str(CONFIGS / "flores_slider_crank.toml"), "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text()), pd.read_parquet(out / "timeseries.parquet")


def test_flores_contract_files(flores_run):
    out, summary, series = flores_run
    expected = {"t"}
    for body in ("crank", "conrod", "slider"):
        expected |= {f"{body}.{k}" for k in ("x", "y", "theta", "vx", "vy", "omega", "ax", "ay", "alpha")}
    expected |= {f"pin.{k}" for k in ("ex", "ey", "penetration", "normal_force", "tangential_force", "slip_velocity")}
    expected |= {"motor.torque"}
    # the ideal joints' reactions on their second bodies
    expected |= {f"{joint}.{k}" for joint in ("main", "crankpin", "guide")
                 for k in ("reaction_x", "reaction_y", "reaction_moment")}
    assert expected <= set(series.columns)
    assert len(series) == 2401 and series["t"].iloc[-1] == pytest.approx(0.024)
    for metric in CONTRACT_JOINT_METRICS:
        assert f"pin.{metric}" in summary
    for body in ("crank", "conrod", "slider"):
        assert f"{body}.max_abs_ax" in summary and f"{body}.max_abs_ay" in summary
    assert set(summary["solver"]) >= {"name", "steps", "rejected_steps", "status", "compile_seconds", "run_seconds"}
    assert summary["solver"]["status"] == "ok"
    assert (series["pin.normal_force"] >= 0).all()
    for plot in ("orbits.png", "normal_force.png", "accelerations.png", "driver_torque.png"):
        assert (out / plot).stat().st_size > 10_000


def test_flores_physics(flores_run):
    _, summary, series = flores_run
    clearance = 0.5e-3
    # penetration far below the clearance (< 10 % is the usual criterion; Hertz K here
    # gives peaks of a few percent to ~15 % at the hardest impacts)
    assert 0 < summary["pin.max_penetration"] < 0.2 * clearance
    # first impact: the free slider keeps its TDC velocity while the pin accelerates at
    # about r w^2 (1 + r/L) = 19,419 m/s^2, so it crosses c at t = sqrt(2c/a), v = a t
    a = 19419.0
    assert summary["pin.first_impact_time"] == pytest.approx(math.sqrt(2 * clearance / a), rel=0.03)
    assert summary["pin.first_impact_velocity"] == pytest.approx(math.sqrt(2 * clearance * a), rel=0.03)
    assert summary["pin.num_impacts"] >= 3
    assert summary["ideal"]["slider.max_abs_ax"] == pytest.approx(19419, rel=1e-3)
    assert summary["slider.max_abs_ax"] > 2 * summary["ideal"]["slider.max_abs_ax"]  # impacts amplify
    regime = summary["pin.regime"]
    assert sum(regime.values()) == pytest.approx(1.0)
    assert regime["free_flight"] > 0.01 and regime["impact"] > 0
    assert summary["max_constraint_violation"] < 1e-7  # projected onto the joints after every step


def test_fourbar_reports_both_joints(tmp_path):
    out = tmp_path / "fourbar"
    code = main(["simulate", str(CONFIGS / "fourbar_two_clearances.toml"), "--out", str(out), "--no-plots",
                 "--set", "simulation.t_end=20 ms"])
    assert code == 0
    series = pd.read_parquet(out / "timeseries.parquet")
    summary = json.loads((out / "summary.json").read_text())
    for joint in ("knee", "pivot"):
        assert series[f"{joint}.normal_force"].max() > 0
        assert summary[f"{joint}.num_impacts"] >= 1


def test_failed_solve_is_reported(tmp_path, capsys):
    out = tmp_path / "fail"
    code = main(["simulate", str(CONFIGS / "flores_slider_crank.toml"), "--out", str(out), "--no-plots",
                 "--no-ideal", "--set", "simulation.max_steps=50", "--set", "simulation.t_end=2 ms"])
    assert code != 0
    assert "solve failed" in capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["solver"]["status"] != "ok"


def test_inconsistent_initial_positions_are_refused(tmp_path, capsys):
    config = tmp_path / "bad.toml"
    text = (CONFIGS / "flores_slider_crank.toml").read_text().replace('position = ["170 mm", "0 mm"]',
                                                                       'position = ["190 mm", "0 mm"]')
    config.write_text(text)
    assert main(["simulate", str(config), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.toml" in err[0] and "bodies.slider.position" in err[0]
    assert not (tmp_path / "o" / "summary.json").exists()


def test_small_position_errors_are_projected_with_a_warning(tmp_path):
    config = tmp_path / "near.toml"
    shutil.copy(CONFIGS / "flores_slider_crank.toml", config)
    config.write_text(config.read_text().replace('position = ["170 mm", "0 mm"]', 'position = ["170.01 mm", "0 mm"]'))
    with pytest.warns(UserWarning, match="projected"):
        assert main(["simulate", str(config), "--out", str(tmp_path / "o"), "--no-plots", "--no-ideal",
                     "--set", "simulation.t_end=0.2 ms"]) == 0
