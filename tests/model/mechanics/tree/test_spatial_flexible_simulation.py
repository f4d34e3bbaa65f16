"""Spatial flexible bodies solved on the joint-coordinate engine against the absolute
engine, through the command line as shipped: the loaded cantilever of
``configs/flexible_cantilever_3d.toml`` (20 elements) over its first vibrations and the
flexible double link of ``configs/double_link_flexible.toml`` (two bodies of four elements
hung on cylindrical clearance joints) over its first impacts, rtol 1e-8. Two compiles of
the full integrator per config (minutes of CPU): ``validation``. Results: docs/engine.md."""

import json

import numpy as np
import pandas as pd
import pytest

from pipelines.build import build_mechanism
from pipelines.cli import main
from pipelines.columns import column_units
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]

WINDOWS = {"flexible_cantilever_3d.toml": "20 ms", "double_link_flexible.toml": "30 ms"}  # first impacts: 6, 10 ms
TOLERANCE = 1e-5  # relative, at rtol 1e-8: positions and the peaks that carry the results
RATE_TOLERANCE = 1e-3  # relative to the unit's largest magnitude: rates and forces of the stiff modes
POSITION_UNITS = ("m", "rad", "")  # "": the quaternions' components


def _run(tmp_path, name: str, engine: str):
    """``clearance simulate`` of the shipped config on ``engine`` at rtol 1e-8, atol 1e-11:
    its ``summary.json`` and ``timeseries.parquet``."""
    out = tmp_path / engine
    assert main(["simulate", str(CONFIGS / name), "--no-plots", "--no-ideal", "--out", str(out),
                 "--set", f"simulation.engine={engine}", "--set", "simulation.rtol=1e-8",
                 "--set", "simulation.atol=1e-11", "--set", f"simulation.t_end={WINDOWS[name]}"]) == 0
    return json.loads((out / "summary.json").read_text()), pd.read_parquet(out / "timeseries.parquet")


def _peaks(summary: dict) -> dict[str, float]:
    """The summary's peak values (``max_*`` keys at any depth), by their dotted key."""
    found = {}

    def visit(prefix, value):
        if isinstance(value, dict):
            for key, item in value.items():
                visit(f"{prefix}.{key}" if prefix else key, item)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and "max_" in prefix.rsplit(".", 1)[-1]:
            found[prefix] = float(value)

    visit("", summary)
    return found


def _unit_scales(name: str, frame: pd.DataFrame) -> tuple[dict[str, str], dict[str, float]]:
    """Each timeseries column's SI unit (a tracked point's: m) and, per unit, the largest
    magnitude of any column in it over the run: the scale an integrator's error is
    relative to (rtol bounds each state entry's error relative to its own size, so a
    segment's out-of-plane position of 2 um carries the error of the 0.4 m it moves
    with, and an element's axial force the error of the stretch between two such
    positions)."""
    units = column_units(build_mechanism(load_mechanism(CONFIGS / name), "absolute"))
    units = {column: units.get(column, "m") for column in frame.columns if column != "t"}
    scales: dict[str, float] = {}
    for column, unit in units.items():
        scales[unit] = max(scales.get(unit, 0.0), float(np.abs(frame[column].to_numpy()).max()))
    return units, scales


def _peak_unit(key: str, units: dict[str, str]) -> str | None:
    """The unit of a summary peak ``owner.max_[abs_]quantity``: its timeseries column's
    (``owner.quantity``, or an element's ``owner.quantity_0``); None for a ratio."""
    owner, metric = key.rsplit(".", 1)
    quantity = metric.removeprefix("max_").removeprefix("abs_")
    return units.get(f"{owner}.{quantity}", units.get(f"{owner}.{quantity}_0"))


def compare_engines(name: str, joint_summary: dict, joint: pd.DataFrame, absolute_summary: dict,
                    absolute: pd.DataFrame) -> None:
    """The checks of :func:`test_spatial_flexible_bodies_match_the_absolute_engine` on two
    runs' outputs."""
    assert list(joint.columns) == list(absolute.columns) and len(joint) == len(absolute)
    np.testing.assert_array_equal(joint["t"], absolute["t"])
    units, scales = _unit_scales(name, absolute)

    def tolerance(unit):
        return (TOLERANCE if unit in POSITION_UNITS else RATE_TOLERANCE) * scales[unit]

    for column, unit in units.items():
        if column.endswith("constraint_violation"):
            continue
        np.testing.assert_allclose(np.abs(joint[column].to_numpy()).max(), np.abs(absolute[column].to_numpy()).max(),
                                   rtol=0, atol=tolerance(unit), err_msg=column)
        np.testing.assert_allclose(joint[column].iloc[-1], absolute[column].iloc[-1], rtol=0, atol=tolerance(unit),
                                   err_msg=column)
    joint_peaks, absolute_peaks = _peaks(joint_summary), _peaks(absolute_summary)
    assert joint_peaks.keys() == absolute_peaks.keys() and len(absolute_peaks) > 3
    own = ("max_normal_force", "max_abs_deflection", "max_abs_bending_moment")
    for key, value in absolute_peaks.items():
        if key.endswith("constraint_violation"):
            assert joint_peaks[key] < 1e-12, key
            continue
        unit = _peak_unit(key, units)
        atol = TOLERANCE * abs(value) if key.endswith(own) else TOLERANCE if unit is None else tolerance(unit)
        np.testing.assert_allclose(joint_peaks[key], value, rtol=0, atol=atol, err_msg=key)


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_spatial_flexible_bodies_match_the_absolute_engine(tmp_path, name):
    """Positions (m, rad, quaternions) at their peak and at the final sample, and the peak
    contact forces, deflections and bending moments, agree to 1e-5: the positions of their
    unit's largest magnitude in the run (:func:`_unit_scales`), the peaks of their own
    value; a ratio's (penetration over clearance) to 1e-5. Rates, accelerations and
    forces (every other column and peak: the segments' spin about their axis, the
    elements' axial forces and torques, contact forces between peaks) to 1e-3 of their
    unit's largest magnitude: they follow the elements' stiff axial and torsional modes,
    which multiply the integrator's position error by their frequency (docs/engine.md).
    The joint engine holds its ideal joints to roundoff."""
    compare_engines(name, *_run(tmp_path, name, "joint"), *_run(tmp_path, name, "absolute"))
