"""ADAMS export: unit conversion to mm, c_max from the hysteresis factor, atomic file."""

import json
from pathlib import Path

import pytest

import model
from pipelines.cli import main
from pipelines.config import load_mechanism
from pipelines.design import adams
from pipelines.design.adams import ImpactVelocity, adams_parameters, write_adams_files

from tests.helpers import CONFIGS, ball_in_socket
SPEC = CONFIGS / "flores_slider_crank.toml"
QUOTED_STIFFNESS = ["--set", 'joints.pin.contact.stiffness="2.5e8 N/m^1.5"']


def test_quoted_stiffness_figure(tmp_path, capsys):
    code = main(["export-adams", str(SPEC), *QUOTED_STIFFNESS, "--no-simulate", "--out", str(tmp_path)])
    assert code == 0
    joint = json.loads((tmp_path / "adams_contact.json").read_text())["joints"]["pin"]
    assert joint["stiffness_si"] == 2.5e8
    assert joint["stiffness"] == pytest.approx(2.5e8 * 3.16e-5, rel=1e-3)  # 1000^-1.5 = 3.16e-5
    assert round(joint["stiffness"], -2) == 7.9e3
    text = (tmp_path / "adams_contact.txt").read_text()
    assert "stiffness   = 7.905694E+03  N/mm^1.5" in text and "1000^1.5" in text
    assert "stiffness = 7.905694E+03" in text  # the ADAMS/View command
    assert "default 1 m/s" in text


def test_damping_follows_the_hysteresis_factor_and_units():
    config = load_mechanism(SPEC, ["joints.pin.contact.penetration_max=0.02 mm"])
    joint = adams_parameters(config, {"pin": ImpactVelocity(0.8, "test")})["pin"]
    K = joint["stiffness_si"]
    expected_si = float(model.adams_damping_max(K, 1.5, 0.9, 0.8, 2e-5))
    assert expected_si == pytest.approx(3 * K * (1 - 0.81) * (2e-5) ** 1.5 / (4 * 0.8))
    assert joint["damping_si"] == pytest.approx(expected_si)
    assert joint["damping"] == pytest.approx(expected_si / 1000)  # N s/m -> N s/mm
    assert joint["dmax"] == pytest.approx(0.02) and "config" in joint["dmax_source"]
    # in mm units directly: chi K_mm d_mm^n / v_mm gives the same number
    chi = 3 * (1 - 0.81) / 4
    assert joint["damping"] == pytest.approx(chi * joint["stiffness"] * 0.02**1.5 / 800.0)


def test_friction_in_mm_per_s():
    config = load_mechanism(SPEC, [
        "joints.pin.friction.model=static_dynamic", "joints.pin.friction.coefficient=0.1",
        "joints.pin.friction.static_coefficient=0.15",
    ])
    friction = adams_parameters(config, {"pin": ImpactVelocity(1.0, "test")})["pin"]["friction"]
    assert friction["coulomb_friction"] == "on"
    assert (friction["mu_static"], friction["mu_dynamic"]) == pytest.approx((0.15, 0.1))
    assert friction["stiction_transition_velocity_mm_s"] == pytest.approx(1.0)  # the law's default 1.0 mm/s
    assert friction["friction_transition_velocity_mm_s"] == pytest.approx(1.5)


def test_file_is_written_atomically(tmp_path, monkeypatch):
    config = load_mechanism(SPEC)
    parameters = adams_parameters(config, {"pin": ImpactVelocity(1.0, "test")})
    target = tmp_path / "adams_contact.txt"
    target.write_text("previous export\n")

    def broken(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(adams, "render_text", broken)
    with pytest.raises(RuntimeError):
        write_adams_files(tmp_path, config, parameters)
    assert target.read_text() == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adams_contact.txt"]  # no temporary left behind


@pytest.mark.slow
def test_impact_velocity_from_a_simulation(tmp_path):
    # Flores case: the centred journal first hits the bearing after ~0.23 ms at ~4.4 m/s
    code = main(["export-adams", str(SPEC), "--set", "simulation.t_end=0.5 ms", "--out", str(tmp_path)])
    assert code == 0
    joint = json.loads((tmp_path / "adams_contact.json").read_text())["joints"]["pin"]
    assert "first impact in a simulation" in joint["impact_velocity_source"]
    assert joint["impact_velocity_m_s"] == pytest.approx(4.4, rel=0.05)
    chi = 3 * (1 - 0.9**2) / 4
    expected = chi * joint["stiffness_si"] * 1e-5**1.5 / joint["impact_velocity_m_s"] / 1000
    assert joint["damping"] == pytest.approx(expected)


BALL = ball_in_socket('model = "flores"\nrestitution = 0.8\nstiffness = "2.5e8 N/m^1.5"',
                      't_end = "1 ms"\noutput_interval = "0.1 ms"')


@pytest.mark.parametrize(("file", "name", "kind", "geometry"), [
    ("ball", "socket", "spherical_clearance", "ball_sphere"),
    ("flores_slider_crank_3d.toml", "pin", "cylindrical_clearance", "journal_cylinder"),
])
def test_every_spatial_clearance_joint_is_exported(tmp_path, file, name, kind, geometry):
    """A spherical joint as a ball in a socket (IMPACT along the centres too), a spatial
    cylindrical one as a cylinder in a bore (no IMPACT alternative: its journal tilts); the
    stiffness converted to N/mm^n as for the planar pin."""
    config = tmp_path / "ball.toml" if file == "ball" else CONFIGS / file
    if file == "ball":
        config.write_text(BALL)
    code = main(["export-adams", str(config), "--no-simulate", "--out", str(tmp_path / "out")])
    assert code == 0
    joint = json.loads((tmp_path / "out" / "adams_contact.json").read_text())["joints"][name]
    assert joint["joint_type"] == kind
    assert joint["stiffness"] == pytest.approx(joint["stiffness_si"] / 1000.0 ** joint["exponent"], rel=1e-12)
    text = (tmp_path / "out" / "adams_contact.txt").read_text()
    assert f"{name}_{geometry}" in text and ("IMPACT(" in text) == (kind == "spherical_clearance")
