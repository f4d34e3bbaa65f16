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

from pipelines.cli import main
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]

WINDOWS = {"flexible_cantilever_3d.toml": "20 ms", "double_link_flexible.toml": "30 ms"}  # first impacts: 6, 10 ms
TOLERANCE = 1e-5  # relative, at rtol 1e-8


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


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_spatial_flexible_bodies_match_the_absolute_engine(tmp_path, name):
    """Every timeseries column (positions, the flexible bodies' deflection, section loads,
    tracked points, contact forces, reactions) at its peak and at the final sample, and
    every peak of ``summary.json`` (deflection, bending moment, axial force, contact force
    and penetration, accelerations) agree to 1e-5 of their scale; the joint engine holds its
    ideal joints to roundoff."""
    joint_summary, joint = _run(tmp_path, name, "joint")
    absolute_summary, absolute = _run(tmp_path, name, "absolute")
    assert list(joint.columns) == list(absolute.columns) and len(joint) == len(absolute)
    np.testing.assert_array_equal(joint["t"], absolute["t"])
    compared = 0
    for column in absolute.columns:
        reference = np.abs(absolute[column].to_numpy())
        scale = float(reference.max())
        if column == "t" or scale == 0.0 or column.endswith("constraint_violation"):
            continue
        np.testing.assert_allclose(np.abs(joint[column].to_numpy()).max(), scale, rtol=TOLERANCE, err_msg=column)
        np.testing.assert_allclose(joint[column].iloc[-1], absolute[column].iloc[-1], rtol=0,
                                   atol=TOLERANCE * scale, err_msg=column)
        compared += 1
    assert compared > 20
    joint_peaks, absolute_peaks = _peaks(joint_summary), _peaks(absolute_summary)
    assert joint_peaks.keys() == absolute_peaks.keys() and len(absolute_peaks) > 3
    for key, value in absolute_peaks.items():
        if key.endswith("constraint_violation"):
            assert joint_peaks[key] < 1e-12, key
            continue
        np.testing.assert_allclose(joint_peaks[key], value, rtol=TOLERANCE, err_msg=key)
