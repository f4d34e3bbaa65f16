"""``clearance wear`` on a spatial base: the cylindrical clearance joint resolved per slice,
and bad input as one ``error: FILE: KEY: message`` line with exit status 2."""

from pathlib import Path

import numpy as np
import pytest

from pipelines.cli import main
from pipelines.wear.study import load_wear_study
from tests.helpers import CONFIGS

from .test_schema import refused

DOUBLE_LINK = CONFIGS / "wear_double_link.toml"


def write(tmp_path: Path, **changes: str) -> Path:
    """The shipped double-link wear config with ``[wear]`` lines replaced (``key=None``: removed) or added."""
    lines = DOUBLE_LINK.read_text().replace('base = "', f'base = "{CONFIGS}/').splitlines()
    table = {line.split("=")[0].strip(): index for index, line in enumerate(lines) if "=" in line}
    for key, value in changes.items():
        if key in table:
            lines[table[key]] = f"{key} = {value}"
        else:
            lines.append(f"{key} = {value}")
    path = tmp_path / "wear.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_shipped_config_resolves_per_slice():
    """The profile is one row per slice; the bearing length is the joint's contact length."""
    study = load_wear_study(DOUBLE_LINK)
    assert study.cylindrical and study.profile_shape == (20, 360)
    assert study.bearing_length == pytest.approx(0.02) and float(study.law.length) == pytest.approx(0.02)
    assert study.period == pytest.approx(0.2) and study.updates == 4 and study.start_time == 0.0
    np.testing.assert_allclose(study.axial_positions, (np.arange(20) + 0.5) * 1e-3 - 0.01, rtol=1e-12)
    assert float(study.worn_joint.effective_modulus) == pytest.approx(207e9 / (2 * (1 - 0.3**2)))
    worn = study.with_profile(np.ones(20 * 360) * 1e-6)
    assert worn.cylindrical_joints[0].wear.depth.shape == (20, 360)
    assert worn.cylindrical_joints[1].wear is None


def test_joint_must_be_a_cylindrical_clearance_joint(tmp_path, capsys):
    line = refused(capsys, write(tmp_path, joint='"link1"'), "wear.joint")
    assert "not a cylindrical clearance joint" in line and "['joint1', 'joint2']" in line


def test_resolution_must_resolve_the_contact_width(tmp_path, capsys):
    """At 1 kN over 20 mm the joint's Hertz half-width is 0.52 mm: 120 bins of the 10 mm bore at least."""
    assert "use at least 120" in refused(capsys, write(tmp_path, resolution="90"), "wear.resolution")


def test_bearing_length_is_the_joints(tmp_path, capsys):
    assert "contact length" in refused(capsys, write(tmp_path, bearing_length='"20 mm"'), "wear.bearing_length")


def test_planar_joint_needs_a_bearing_length(tmp_path, capsys):
    path = tmp_path / "planar.toml"
    path.write_text(f'base = "{CONFIGS}/flores_slider_crank.toml"\n[wear]\njoint = "pin"\n'
                    'coefficient = "8e-14 1/Pa"\ncycles = 2000\nextrapolation = 1000\n')
    assert main(["wear", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}: wear.bearing_length: ")
