"""Bad spatial input through the CLI: one line ``error: FILE: KEY: message``, exit status 2,
and no output folder written (``clearance simulate`` stops before it creates one)."""

from pathlib import Path

import pytest

from pipelines.cli import main

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
LINK = CONFIGS / "double_link_clearance.toml"
LOADS = CONFIGS / "cylindrical_joint_loads.toml"
PLANAR = CONFIGS / "flores_slider_crank.toml"
CRANK_3D = CONFIGS / "flores_slider_crank_3d.toml"


@pytest.mark.parametrize(
    ("path", "override", "key"),
    [
        (LINK, "joints.joint2.axis=[0.0, 0.5, 0.5]", "joints.joint2.axis"),  # not unit
        (LINK, "joints.joint1.axis=[0.0, 0.0, 0.0]", "joints.joint1.axis"),  # zero
        (LINK, "joints.joint1.slices=0", "joints.joint1.slices"),
        (LINK, "joints.joint1.slices=2.5", "joints.joint1.slices"),
        (LINK, 'joints.joint1.length="-20 mm"', "joints.joint1.length"),
        (LINK, 'joints.joint1.length="3 m"', "joints.joint1.length"),
        (LINK, "joints.joint1.type=revolute_clearance", "joints.joint1.type"),  # planar type, spatial file
        (PLANAR, "joints.pin.type=cylindrical_clearance", "joints.pin.type"),  # spatial type, planar file
        (LOADS, "loads.end_force.body=crank", "loads.end_force.body"),  # no such body
        (LINK, "tracked_points.tip.body=link3", "tracked_points.tip.body"),
        (LINK, 'gravity=["0 m/s^2", "-9.81 m/s^2"]', "gravity"),  # a 2-vector for a 3-vector
        (LINK, 'tracked_points.tip.point=["125 mm", "0 mm"]', "tracked_points.tip.point"),
        (LOADS, 'loads.centre_torque.value=["10 N*m", "0 N*m"]', "loads.centre_torque.value"),
        # a mis-assembled file (the slider 30 mm off its pin), refused alike in both formats
        (CRANK_3D, 'bodies.slider.position=["200 mm", "0 mm", "0 mm"]', "bodies.slider.position"),
        (PLANAR, 'bodies.slider.position=["200 mm", "0 mm"]', "bodies.slider.position"),
    ],
)
def test_bad_spatial_input_is_one_line_exit_2_and_nothing_written(path, override, key, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["simulate", str(path), "--set", override, "--out", str(out)])
    error = capsys.readouterr().err
    assert status == 2
    assert error.count("\n") == 1 and error.startswith(f"error: {path}: {key}: ")
    assert not out.exists()
