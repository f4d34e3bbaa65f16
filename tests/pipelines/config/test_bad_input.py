"""Bad input refused alike in both mechanism formats: each mistake made in the planar
slider-crank and in its spatial twin (or the spatial ball in a socket) through
``clearance check --set``, one line ``error: FILE: KEY: message`` and exit status 2."""

import pytest

from pipelines.cli import main
from tests.helpers import CONFIGS, ball_in_socket

PLANAR = CONFIGS / "flores_slider_crank.toml"
CRANK = CONFIGS / "flores_slider_crank_3d.toml"
LOADS = CONFIGS / "cylindrical_joint_loads.toml"
CANTILEVER = CONFIGS / "flexible_cantilever.toml"
PLANAR_FILES = ("planar", "cantilever")

# (what, [(file, --set, key) in the planar format, the same in the spatial one], a fragment both messages hold)
TWINS = [
    ("missing unit", [("planar", "joints.pin.clearance=0.5", "joints.pin.clearance"),
                      ("crank", "joints.pin.clearance=0.5", "joints.pin.clearance")], "missing unit"),
    ("wrong dimension", [("planar", 'joints.pin.clearance="5 kg"', "joints.pin.clearance"),
                         ("crank", 'joints.pin.clearance="5 kg"', "joints.pin.clearance")], "'5 kg'"),
    ("misspelt joint key", [("planar", 'joints.pin.clearence="1 mm"', "joints.pin.clearence"),
                            ("crank", "joints.pin.slice=20", "joints.pin.slice")], "unknown key"),
    ("misspelt key of a ball joint", [("planar", 'joints.pin.radius="10 mm"', "joints.pin.radius"),
                                      ("ball", 'joints.socket.radius="10 mm"', "joints.socket.radius")], "unknown key"),
    ("key of a table that has none", [("planar", 'joints.main.stiffness="1 N/m"', "joints.main.stiffness"),
                                      ("crank", 'joints.main.stiffness="1 N/m"', "joints.main.stiffness")],
     "unknown key"),
    ("misspelt load key", [("cantilever", 'loads.tip.magnitude="1 N"', "loads.tip.magnitude"),
                           ("loads", 'loads.end_force.magnitude="1 N"', "loads.end_force.magnitude")], "unknown key"),
    ("unknown top-level key", [("planar", 'colour="red"', "colour"), ("crank", 'colour="red"', "colour")],
     "unknown key"),
    ("unknown contact model", [("planar", "joints.pin.contact.model=lankarani", "joints.pin.contact.model"),
                               ("crank", "joints.pin.contact.model=lankarani", "joints.pin.contact.model")],
     "'flores'"),
    ("unknown friction model", [("planar", "joints.pin.friction.model=coulomb", "joints.pin.friction.model"),
                                ("crank", "joints.pin.friction.model=coulomb", "joints.pin.friction.model")],
     "coulomb_tanh"),
    ("unknown joint type", [("planar", "joints.guide.type=slider", "joints.guide.type"),
                            ("crank", "joints.guide.type=slider", "joints.guide.type")], "'prismatic'"),
    ("joint type of the other format", [("planar", "joints.pin.type=cylindrical_clearance", "joints.pin.type"),
                                        ("crank", "joints.pin.type=revolute_clearance", "joints.pin.type")],
     "clearance"),
    ("unknown solver", [("planar", "simulation.solver=rk4", "simulation.solver"),
                        ("crank", "simulation.solver=rk4", "simulation.solver")], "'tsit5'"),
    ("zero clearance", [("planar", 'joints.pin.clearance="0 mm"', "joints.pin.clearance"),
                        ("crank", 'joints.pin.clearance="0 mm"', "joints.pin.clearance")], "> 0"),
    ("journal not smaller than the bearing", [("planar", 'joints.pin.clearance="10 mm"', "joints.pin.clearance"),
                                              ("crank", 'joints.pin.clearance="10 mm"', "joints.pin.clearance")],
     "bearing_radius"),
    ("ball not smaller than the socket", [("planar", 'joints.pin.clearance="10 mm"', "joints.pin.clearance"),
                                         ("ball", 'joints.socket.clearance="10 mm"', "joints.socket.clearance")],
     "radius is positive"),
    ("restitution above one", [("planar", "joints.pin.contact.restitution=1.2", "joints.pin.contact.restitution"),
                               ("crank", "joints.pin.contact.restitution=1.2", "joints.pin.contact.restitution")],
     "got 1.2"),
    ("zero mass", [("planar", 'bodies.conrod.mass="0 kg"', "bodies.conrod.mass"),
                   ("crank", 'bodies.conrod.mass="0 kg"', "bodies.conrod.mass")], "> 0 kg"),
    ("zero inertia", [("planar", 'bodies.crank.inertia="0 kg*m^2"', "bodies.crank.inertia"),
                      ("crank", 'bodies.crank.inertia=["1e-4 kg*m^2", "0 kg*m^2", "1e-4 kg*m^2"]',
                       "bodies.crank.inertia.1")], "> 0"),
    ("inertia tensor not positive definite", [
        ("planar", 'bodies.crank.inertia="-1 kg*m^2"', "bodies.crank.inertia"),
        ("crank", 'bodies.crank.inertia=[["1 kg*m^2", "2 kg*m^2", "0 kg*m^2"], ["2 kg*m^2", "1 kg*m^2", "0 kg*m^2"], '
                  '["0 kg*m^2", "0 kg*m^2", "1 kg*m^2"]]', "bodies.crank.inertia")], "-1"),
    ("vector too short", [("planar", 'bodies.crank.position=["1 mm"]', "bodies.crank.position"),
                          ("crank", 'bodies.crank.position=["1 mm", "2 mm"]', "bodies.crank.position")], "missing"),
    ("wrong dimension in a vector", [("planar", 'gravity.1="9.81 m"', "gravity.1"),
                                     ("crank", 'gravity.1="9.81 m"', "gravity.1")], "'9.81 m'"),
    ("unknown body", [("planar", 'joints.pin.bodies=["conrod", "piston"]', "joints.pin.bodies"),
                      ("crank", 'joints.pin.bodies=["conrod", "piston"]', "joints.pin.bodies")], "'piston'"),
    ("unknown material", [("planar", 'joints.pin.materials=["steel", "bronze"]', "joints.pin.materials"),
                          ("crank", 'joints.pin.materials=["steel", "bronze"]', "joints.pin.materials")], "'bronze'"),
    ("driver on a clearance joint", [("planar", "drivers.motor.joint=pin", "drivers.motor.joint"),
                                     ("crank", "drivers.motor.joint=pin", "drivers.motor.joint")], "revolute"),
    ("driver on no joint", [("planar", "drivers.motor.joint=mian", "drivers.motor.joint"),
                            ("crank", "drivers.motor.joint=mian", "drivers.motor.joint")], "'mian'"),
    ("stiffness in the wrong unit", [
        ("planar", 'joints.pin.contact.stiffness="6.6e10 N/m"', "joints.pin.contact.stiffness"),
        ("crank", 'joints.pin.contact.stiffness="6.6e10 N/m"', "joints.pin.contact.stiffness")], "N/m^1.5"),
    ("eccentricity beyond the clearance", [
        ("planar", 'joints.pin.initial_eccentricity=["0.6 mm", "0 mm"]', "joints.pin.initial_eccentricity"),
        ("crank", 'joints.pin.initial_eccentricity=["0.6 mm", "0 mm"]', "joints.pin.initial_eccentricity")],
     "exceeds the clearance"),
    ("ball eccentricity beyond the clearance", [
        ("planar", 'joints.pin.initial_eccentricity=["0.4 mm", "0.4 mm"]', "joints.pin.initial_eccentricity"),
        ("ball", 'joints.socket.initial_eccentricity=["0.1 mm", "0.1 mm", "0 mm"]',
         "joints.socket.initial_eccentricity")],
     "exceeds the clearance"),
    ("ground declared", [("planar", "bodies.slider.name=ground", "bodies.ground.name"),
                         ("crank", "bodies.slider.name=ground", "bodies.ground.name")], "fixed frame"),
    ("duplicate name", [("planar", "joints.guide.name=pin", "joints.pin.name"),
                        ("crank", "joints.guide.name=pin", "joints.pin.name")], "unique"),
    ("zero axis", [("planar", "joints.guide.axis=[0.0, 0.0]", "joints.guide.axis"),
                   ("crank", "joints.guide.axis=[0.0, 0.0, 1e-12]", "joints.guide.axis")], "zero"),
    ("friction velocities out of order", [
        ("planar", 'joints.pin.friction={model = "ambrosio", stiction_velocity = "2 mm/s"}',
         "joints.pin.friction.dynamic_velocity"),
        ("crank", 'joints.pin.friction={model = "ambrosio", stiction_velocity = "2 mm/s"}',
         "joints.pin.friction.dynamic_velocity")], "stiction_velocity"),
    ("lubrication on an ideal joint", [
        ("planar", 'joints.main.lubrication={viscosity = "400 cP", length = "20 mm"}', "joints.main.lubrication"),
        ("crank", 'joints.guide.lubrication={viscosity = "400 cP"}', "joints.guide.lubrication")],
     "takes a lubrication table"),
    ("film viscosity zero", [
        ("planar", 'joints.pin.lubrication={viscosity = "0 cP", length = "20 mm"}', "joints.pin.lubrication.viscosity"),
        ("crank", 'joints.pin.lubrication={viscosity = "0 cP"}', "joints.pin.lubrication.viscosity")], "> 0"),
    ("requested velocity of no body", [
        ("planar", "initial.velocities={piston = {}}", "initial.velocities.piston"),
        ("crank", "initial.velocities={piston = {}}", "initial.velocities.piston")], "no body named"),
    ("metrics window past the end", [("planar", 'metrics.skip="1 s"', "metrics.skip"),
                                     ("crank", 'metrics.skip="1 s"', "metrics.skip")], "t_end"),
    ("output interval beyond t_end", [("planar", 'simulation.output_interval="1 s"', "simulation.output_interval"),
                                      ("crank", 'simulation.output_interval="1 s"', "simulation.output_interval")],
     "t_end"),
    ("dimension neither 2 nor 3", [("planar", "dimension=4", "dimension"), ("crank", "dimension=4", "dimension")],
     "2 (planar) or 3 (spatial)"),
]
CASES = [pytest.param(file, override, key, fragment, id=f"{what} ({file})")
         for what, twins, fragment in TWINS for file, override, key in twins]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    ball = tmp_path_factory.mktemp("ball") / "ball.toml"
    simulation = 't_end = "1 ms"\noutput_interval = "0.1 ms"'
    ball.write_text(ball_in_socket('model = "hertz"\nstiffness = "hertz"', simulation))
    return {"planar": PLANAR, "cantilever": CANTILEVER, "crank": CRANK, "loads": LOADS, "ball": ball}


def test_each_planar_case_has_its_spatial_twin():
    assert all([file in PLANAR_FILES for file, _, _ in twins] == [True, False] for _, twins, _ in TWINS)


@pytest.mark.parametrize(("file", "override", "key", "fragment"), CASES)
def test_bad_input_is_one_line_naming_file_and_key(file, override, key, fragment, files, capsys):
    path = files[file]
    assert main(["check", str(path), "--set", override]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"error: {path}: {key}: "), captured.err
    assert fragment in captured.err, captured.err
