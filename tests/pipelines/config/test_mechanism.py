"""Mechanism and pipeline configs: the examples load with the right SI values, bad input is refused."""

import math
import shutil
from pathlib import Path

import pytest

from pipelines.config import (
    MechanismConfig,
    RevoluteClearanceJoint,
    get_by_path,
    load_mechanism,
    load_pipeline_mechanism,
    load_toml,
    load_with_base,
    mechanism_from_dict,
    parse_override,
    set_by_path,
)
from pipelines.errors import ConfigError
from tests.helpers import CONFIGS

SPEC = CONFIGS / "flores_slider_crank.toml"
PIPELINES = ("sweep_example.toml", "calibrate_example.toml", "optimize_example.toml")


def write_variant(tmp_path: Path, old: str, new: str, name: str = "bad.toml") -> Path:
    """The spec mechanism with one snippet replaced, written to ``tmp_path``."""
    text = SPEC.read_text()
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.fixture(scope="module")
def spec() -> MechanismConfig:
    return load_mechanism(SPEC)


def test_spec_loads_with_si_values(spec):
    bodies = {body.name: body for body in spec.bodies}
    joints = {joint.name: joint for joint in spec.joints}
    assert spec.name == "flores-slider-crank"
    assert spec.gravity == (0.0, 0.0)
    assert spec.materials["steel"].youngs_modulus == pytest.approx(207e9)
    assert spec.materials["steel"].poisson_ratio == 0.3
    assert bodies["crank"].mass == pytest.approx(0.30)
    assert bodies["conrod"].inertia == pytest.approx(2.5e-4)
    assert bodies["slider"].position == pytest.approx((0.170, 0.0))
    assert bodies["crank"].angle == 0.0
    assert joints["main"].points == ((0.0, 0.0), (-0.025, 0.0))
    pin = joints["pin"]
    assert isinstance(pin, RevoluteClearanceJoint)
    assert pin.bodies == ("conrod", "slider")
    assert pin.clearance == pytest.approx(5e-4)
    assert pin.bearing_radius == pytest.approx(10e-3)
    assert pin.journal_radius == pytest.approx(9.5e-3)
    assert pin.materials == ("steel", "steel")
    assert pin.contact.model == "lankarani_nikravesh"
    assert pin.contact.restitution == 0.9
    assert pin.contact.exponent == 1.5
    assert pin.contact.stiffness == "hertz"
    assert pin.contact.stiffness_factor == 1.0
    assert pin.contact.penetration_max == pytest.approx(1e-4)
    assert pin.friction.model == "none"
    assert pin.friction.coefficient == 0.0
    assert joints["guide"].axis == (1.0, 0.0)
    assert joints["guide"].points == ((0.0, 0.0), (0.0, 0.0))
    assert spec.drivers[0].speed == pytest.approx(523.599, abs=1e-3)
    assert spec.drivers[0].speed == pytest.approx(5000 * 2 * math.pi / 60, rel=1e-12)
    assert spec.initial.velocities == "from_drivers"
    assert spec.simulation.t_end == pytest.approx(0.024)
    assert spec.simulation.output_interval == pytest.approx(1e-5)
    assert (spec.simulation.solver, spec.simulation.rtol, spec.simulation.atol) == ("auto", 1e-6, 1e-9)
    assert spec.simulation.dtmax is None
    assert spec.simulation.max_steps == 200_000
    assert (spec.simulation.baumgarte_alpha, spec.simulation.baumgarte_beta) == (5.0, 5.0)


def test_source_raw_and_summary(spec):
    assert spec.source == str(SPEC)
    assert spec.raw == load_toml(SPEC)
    summary = spec.si_summary()
    assert summary["joints"]["pin"]["clearance [m]"] == pytest.approx(5e-4)
    assert summary["drivers"]["motor"]["speed [rad/s]"] == pytest.approx(523.599, abs=1e-3)
    assert summary["materials"]["steel"]["youngs_modulus [Pa]"] == pytest.approx(207e9)
    assert spec.si_value("joints.pin.contact.restitution") == 0.9
    assert spec.si_value("bodies.crank.position.0") == pytest.approx(0.025)


def test_numeric_stiffness_is_checked_against_the_exponent(tmp_path):
    path = write_variant(tmp_path, 'stiffness = "hertz"', 'stiffness = "6.6e10 N/m^1.5"')
    config = load_mechanism(path)
    assert config.joints[2].contact.stiffness == pytest.approx(6.6e10)
    assert config.si_summary()["joints"]["pin"]["contact"]["stiffness [N/m^1.5]"] == pytest.approx(6.6e10)
    path = write_variant(tmp_path, 'exponent = 1.5\nstiffness = "hertz"', 'exponent = 1.1\nstiffness = "1e9 N/m^1.1"')
    assert load_mechanism(path).joints[2].contact.stiffness == pytest.approx(1e9)


BAD_INPUTS = [
    # (what, old snippet, new snippet, key, fragment of the message)
    ("missing unit", 'clearance = "0.5 mm"', "clearance = 0.5", "joints.pin.clearance", "missing unit"),
    ("wrong dimension", 'clearance = "0.5 mm"', 'clearance = "5 kg"', "joints.pin.clearance", "'5 kg'"),
    ("unparseable", 'clearance = "0.5 mm"', 'clearance = "0.5 mmm"', "joints.pin.clearance", "cannot parse"),
    ("unknown key", 'clearance = "0.5 mm"', 'clearance = "0.5 mm"\nclearence = "1 mm"',
     "joints.pin.clearence", "unknown key"),
    ("unknown top-level key", 'name = "flores-slider-crank"', 'name = "x"\ncolour = "red"', "colour", "unknown key"),
    ("unknown contact model", 'model = "lankarani_nikravesh"', 'model = "lankarani"', "joints.pin.contact.model",
     "'flores'"),
    ("unknown friction model", 'model = "none"', 'model = "coulomb"', "joints.pin.friction.model", "coulomb_tanh"),
    ("unknown joint type", 'type = "prismatic"', 'type = "slider"', "joints.guide.type", "'revolute_clearance'"),
    ("unknown solver", 'solver = "auto"', 'solver = "rk4"', "simulation.solver", "'tsit5'"),
    ("zero clearance", 'clearance = "0.5 mm"', 'clearance = "0 mm"', "joints.pin.clearance", "'0 mm'"),
    ("negative clearance", 'clearance = "0.5 mm"', 'clearance = "-0.1 mm"', "joints.pin.clearance", "> 0"),
    ("journal not smaller", 'clearance = "0.5 mm"', 'clearance = "10 mm"', "joints.pin.clearance", "bearing_radius"),
    ("restitution zero", "restitution = 0.9", "restitution = 0.0", "joints.pin.contact.restitution", "got 0.0"),
    ("restitution above one", "restitution = 0.9", "restitution = 1.2", "joints.pin.contact.restitution", "got 1.2"),
    ("negative mass", 'mass = "0.21 kg"', 'mass = "-0.21 kg"', "bodies.conrod.mass", "'-0.21 kg'"),
    ("zero mass", 'mass = "0.21 kg"', 'mass = "0 kg"', "bodies.conrod.mass", "> 0 kg"),
    ("negative inertia", 'inertia = "2.5e-4 kg*m^2"', 'inertia = "-2.5e-4 kg*m^2"', "bodies.conrod.inertia", "> 0"),
    ("zero inertia", 'inertia = "2.5e-4 kg*m^2"', 'inertia = "0 kg*m^2"', "bodies.conrod.inertia", "> 0"),
    ("unknown body", 'bodies = ["conrod", "slider"]', 'bodies = ["conrod", "piston"]', "joints.pin.bodies",
     "'piston'"),
    ("unknown material", 'materials = ["steel", "steel"]', 'materials = ["steel", "bronze"]',
     "joints.pin.materials", "'bronze'"),
    ("hertz without materials", 'materials = ["steel", "steel"]\n', "", "joints.pin.materials", "hertz"),
    ("driver on a clearance joint", 'joint = "main"', 'joint = "pin"', "drivers.motor.joint", "revolute"),
    ("driver on no joint", 'joint = "main"', 'joint = "mian"', "drivers.motor.joint", "'mian'"),
    ("stiffness unit", 'stiffness = "hertz"', 'stiffness = "6.6e10 N/m"', "joints.pin.contact.stiffness",
     "N/m^1.5"),
    ("eccentricity beyond clearance", 'initial_eccentricity = ["0 mm", "0 mm"]',
     'initial_eccentricity = ["0.6 mm", "0 mm"]', "joints.pin.initial_eccentricity", "clearance"),
    ("ground declared", 'name = "slider"', 'name = "ground"', "bodies.ground.name", "fixed frame"),
    ("duplicate name", 'name = "guide"', 'name = "pin"', "joints.pin.name", "unique"),
    ("zero axis", "axis = [1.0, 0.0]", "axis = [0.0, 0.0]", "joints.guide.axis", "non-zero"),
    ("wrong gravity dimension", 'gravity = ["0 m/s^2", "0 m/s^2"]', 'gravity = ["0 m/s^2", "9.81 m"]', "gravity.1",
     "'9.81 m'"),
    ("transition velocities out of order", 'model = "none"', 'model = "ambrosio"\nstiction_velocity = "2 mm/s"',
     "joints.pin.friction.dynamic_velocity", "stiction_velocity"),
    ("missing t_end", 't_end = "24 ms"', "", "simulation.t_end", "missing"),
    ("interval beyond t_end", 'output_interval = "10 us"', 'output_interval = "1 s"', "simulation.output_interval",
     "t_end"),
]


@pytest.mark.parametrize("what, old, new, key, fragment", BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_bad_input_names_file_and_key(tmp_path, what, old, new, key, fragment):
    path = write_variant(tmp_path, old, new)
    with pytest.raises(ConfigError) as caught:
        load_mechanism(path)
    error = caught.value
    assert (error.file, error.key) == (str(path), key)
    assert str(error).startswith(f"{path}: {key}: ")
    assert fragment in error.message
    assert "\n" not in str(error)


def test_toml_syntax_error_and_missing_file(tmp_path):
    path = write_variant(tmp_path, "restitution = 0.9", "restitution = ")
    with pytest.raises(ConfigError, match="TOML syntax error") as caught:
        load_mechanism(path)
    assert caught.value.file == str(path)
    with pytest.raises(ConfigError, match="file not found"):
        load_mechanism(tmp_path / "nowhere.toml")


def test_pipeline_config_is_not_a_mechanism():
    with pytest.raises(ConfigError, match="pipeline config") as caught:
        load_mechanism(CONFIGS / "sweep_example.toml")
    assert caught.value.key == "base"


# --- overrides ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("joints.pin.clearance=0.25 mm", ("joints.pin.clearance", "0.25 mm")),
        ('joints.pin.clearance="0.25 mm"', ("joints.pin.clearance", "0.25 mm")),
        ("joints.pin.contact.restitution=0.5", ("joints.pin.contact.restitution", 0.5)),
        ("simulation.max_steps=1000", ("simulation.max_steps", 1000)),
        ("gravity=[1, 2]", ("gravity", [1, 2])),
        ("joints.pin.contact.model=flores", ("joints.pin.contact.model", "flores")),
        (' name = "x y" ', ("name", "x y")),
        ("joints.pin.friction={model = 'ambrosio'}", ("joints.pin.friction", {"model": "ambrosio"})),
    ],
)
def test_parse_override(expr, expected):
    assert parse_override(expr) == expected


@pytest.mark.parametrize("expr", ["joints.pin.clearance", "=0.5", "joints..clearance=1 mm", ".x=1"])
def test_malformed_override(expr):
    with pytest.raises(ConfigError) as caught:
        parse_override(expr)
    assert caught.value.file == "--set"
    assert str(caught.value).startswith(f"--set: {expr}: ")


def test_overrides_by_name():
    config = load_mechanism(
        SPEC,
        [
            'joints.pin.clearance="0.25 mm"',
            "joints.pin.contact.restitution=0.5",
            "joints.pin.contact.model=flores",
            "drivers.motor.speed=1000 rpm",
            "bodies.slider.mass=0.5 kg",
            "gravity.1=-9.81 m/s^2",
            "simulation.dtmax=1 us",
        ],
    )
    pin = config.joints[2]
    assert pin.clearance == pytest.approx(2.5e-4)
    assert (pin.contact.restitution, pin.contact.model) == (0.5, "flores")
    assert config.drivers[0].speed == pytest.approx(1000 * 2 * math.pi / 60)
    assert config.bodies[2].mass == 0.5
    assert config.gravity == (0.0, -9.81)
    assert config.simulation.dtmax == pytest.approx(1e-6)
    assert config.raw["joints"][2]["clearance"] == "0.25 mm"


def test_override_with_a_bad_value_names_the_file_and_set():
    with pytest.raises(ConfigError) as caught:
        load_mechanism(SPEC, ["joints.pin.clearance=0 mm"])
    assert (caught.value.file, caught.value.key) == (str(SPEC), "joints.pin.clearance")
    assert "--set" in caught.value.message


@pytest.mark.parametrize(
    "expr, key",
    [("joints.pinn.clearance=1 mm", "joints.pinn.clearance"), ("bodys.crank.mass=1 kg", "bodys.crank.mass")],
)
def test_override_of_unknown_path(expr, key):
    with pytest.raises(ConfigError) as caught:
        load_mechanism(SPEC, [expr])
    assert (caught.value.file, caught.value.key) == ("--set", key)


def test_set_and_get_by_path_copy_and_address_by_name():
    raw = load_toml(SPEC)
    changed = set_by_path(raw, "joints.pin.contact.restitution", 0.5, "test")
    assert get_by_path(changed, "joints.pin.contact.restitution", "test") == 0.5
    assert get_by_path(raw, "joints.pin.contact.restitution", "test") == 0.9
    created = set_by_path(raw, "joints.pin.contact.stiffness_factor", 2.0, "test")
    assert mechanism_from_dict(created, "test").joints[2].contact.stiffness_factor == 2.0
    assert get_by_path(raw, "bodies.1.name", "test") == "conrod"
    with pytest.raises(ConfigError, match="no key 'missing'"):
        set_by_path(raw, "joints.pin.missing.x", 1, "test")
    with pytest.raises(ConfigError, match="no key"):
        get_by_path(raw, "joints.pin.contact.stiffness_factor", "test")


def test_with_values_derives_a_variant(spec):
    variant = spec.with_values({"joints.pin.clearance": "0.1 mm"})
    assert variant.joints[2].clearance == pytest.approx(1e-4)
    assert spec.joints[2].clearance == pytest.approx(5e-4)
    assert variant.source == spec.source


# --- pipeline configs --------------------------------------------------------------------------


def copy_configs(tmp_path: Path) -> Path:
    for name in ("flores_slider_crank.toml", *PIPELINES):
        shutil.copy(CONFIGS / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_examples_load_with_their_base(tmp_path, monkeypatch, name):
    (tmp_path / "configs").mkdir()
    folder = copy_configs(tmp_path / "configs")
    monkeypatch.chdir(tmp_path)  # base is relative to the pipeline file, not the working folder
    pipeline, base = load_with_base(folder / name)
    assert pipeline["base"] == "flores_slider_crank.toml"
    assert base["name"] == "flores-slider-crank"
    assert base["simulation"]["output_interval"] == "10 us"  # kept from the base
    _, config = load_pipeline_mechanism(folder / name)
    expected_t_end = {"sweep_example.toml": 0.024, "calibrate_example.toml": 0.006, "optimize_example.toml": 0.12}
    assert config.simulation.t_end == pytest.approx(expected_t_end[name])
    assert config.source == str(folder / "flores_slider_crank.toml")


def test_pipeline_overrides_are_routed(tmp_path):
    copy_configs(tmp_path)
    pipeline, base = load_with_base(
        tmp_path / "sweep_example.toml",
        ["joints.pin.clearance=0.25 mm", "simulation.t_end=12 ms", "sweep.design=lhs", "sweep.samples=8"],
    )
    assert base["joints"][2]["clearance"] == "0.25 mm"
    assert base["simulation"]["t_end"] == "12 ms"
    assert pipeline["sweep"]["design"] == "lhs"
    assert pipeline["sweep"]["samples"] == 8
    assert "clearance" not in pipeline


def test_pipeline_simulation_errors_name_the_pipeline_file(tmp_path):
    copy_configs(tmp_path)
    path = tmp_path / "sweep_example.toml"
    path.write_text(path.read_text().replace('t_end = "24 ms"', 't_end = "24 kg"'))
    with pytest.raises(ConfigError) as caught:
        load_pipeline_mechanism(path)
    assert (caught.value.file, caught.value.key) == (str(path), "simulation.t_end")


def test_pipeline_with_missing_base(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text('base = "nowhere.toml"\n')
    with pytest.raises(ConfigError, match="file not found") as caught:
        load_with_base(path)
    assert caught.value.file == str(tmp_path / "nowhere.toml")


def test_pipeline_override_may_add_a_section_the_file_lacks(tmp_path):
    copy_configs(tmp_path)
    assert "loss" not in load_toml(tmp_path / "calibrate_example.toml")
    pipeline, _ = load_with_base(tmp_path / "calibrate_example.toml", ['loss.windows=[["1 ms", "2 ms"]]'])
    assert pipeline["loss"] == {"windows": [["1 ms", "2 ms"]]}
    # A mechanism path still has to exist: a typo is refused, naming the --set.
    with pytest.raises(ConfigError) as caught:
        load_with_base(tmp_path / "calibrate_example.toml", ["joints.pinn.clearance=1 mm"])
    assert caught.value.file == "--set"


def test_set_reaches_fit_and_sweep_entries_by_their_path(tmp_path):
    """``[[fit]]`` and ``[[sweep.parameters]]`` entries have no name: ``--set`` addresses them
    by the dotted path they name (or by position), as mechanism entries by name."""
    copy_configs(tmp_path)
    pipeline, _ = load_with_base(tmp_path / "sweep_example.toml", [
        'sweep.parameters.joints.pin.clearance.values=["0.2 mm", "0.3 mm"]',
        "sweep.parameters.joints.pin.contact.restitution.num=2"])
    entries = {entry["path"]: entry for entry in pipeline["sweep"]["parameters"]}
    assert entries["joints.pin.clearance"]["values"] == ["0.2 mm", "0.3 mm"]
    assert entries["joints.pin.contact.restitution"]["num"] == 2
    pipeline, base = load_with_base(tmp_path / "calibrate_example.toml", [
        "fit.joints.pin.contact.restitution.initial=0.7", "fit.1.scale=linear", "joints.pin.contact.restitution=0.5"])
    assert [entry.get("initial") for entry in pipeline["fit"]][0] == 0.7 and pipeline["fit"][1]["scale"] == "linear"
    assert base["joints"][2]["contact"]["restitution"] == 0.5  # a mechanism path still goes to the base
    with pytest.raises(ConfigError, match="joints.pin.contact.restitution, joints.pin.contact.stiffness"):
        load_with_base(tmp_path / "calibrate_example.toml", ["fit.joints.pin.clearance.initial=1"])
