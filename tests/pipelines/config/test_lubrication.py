"""``[joints.lubrication]``: loads, builds into the model, and refuses bad input with one line
naming the file and the key (exit status 2 from the CLI)."""

from pathlib import Path

import pytest

from pipelines.build import build_mechanism, parameter_leaf
from pipelines.cli import main
from pipelines.config import load_mechanism
from pipelines.errors import ConfigError

CONFIGS = Path(__file__).resolve().parents[3] / "configs"
LUBRICATED = CONFIGS / "flores_lubricated.toml"
TABLE = 'viscosity = "400 cP"'


def variant(tmp_path: Path, old: str, new: str) -> Path:
    text = LUBRICATED.read_text()
    assert old in text, old
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_lubricated_config_builds():
    config = load_mechanism(LUBRICATED)
    lubrication = config.clearance_joints[0].lubrication
    assert (lubrication.viscosity, lubrication.length) == (pytest.approx(0.4), pytest.approx(0.04))
    assert lubrication.transition == (pytest.approx(0.95), pytest.approx(0.975))
    joint = build_mechanism(config).clearance_joints[0]
    assert joint.lubrication.model == "finite_bearing"
    assert float(joint.lubrication.transition_cap) == pytest.approx(0.975)
    get, _ = parameter_leaf(build_mechanism(config), "joints.pin.lubrication.viscosity")
    assert float(get(build_mechanism(config))) == pytest.approx(0.4)


def test_two_transition_values_and_defaults(tmp_path):
    path = variant(tmp_path, "transition = 0.95", "transition = [0.9, 0.97]")
    assert load_mechanism(path).clearance_joints[0].lubrication.transition == (0.9, 0.97)
    path = variant(tmp_path, 'model = "finite_bearing"', "")
    path.write_text(path.read_text().replace("transition = 0.95", ""))
    lubrication = load_mechanism(path).clearance_joints[0].lubrication
    assert lubrication.model == "finite_bearing" and lubrication.transition == (0.95, 0.975)
    assert lubrication.supply == "maximum_gap"


def test_film_supply_reaches_the_model(tmp_path):
    path = variant(tmp_path, "transition = 0.95", 'transition = 0.95\nsupply = "none"')
    assert build_mechanism(load_mechanism(path)).clearance_joints[0].lubrication.supply == "none"
    assert build_mechanism(load_mechanism(LUBRICATED)).clearance_joints[0].lubrication.supply == "maximum_gap"


BAD = [
    ("viscosity without unit", TABLE, "viscosity = 0.4", "joints.pin.lubrication.viscosity", "missing unit"),
    ("viscosity zero", TABLE, 'viscosity = "0 cP"', "joints.pin.lubrication.viscosity", "must be > 0"),
    ("viscosity not a viscosity", TABLE, 'viscosity = "0.4 Pa"', "joints.pin.lubrication.viscosity", ""),
    ("length negative", 'length = "40 mm"', 'length = "-40 mm"', "joints.pin.lubrication.length", "must be > 0"),
    ("transition above 1", "transition = 0.95", "transition = 1.2", "joints.pin.lubrication.transition", ""),
    ("transition out of order", "transition = 0.95", "transition = [0.97, 0.9]", "joints.pin.lubrication.transition",
     "eps_0 < eps_1"),
    ("unknown model", 'model = "finite_bearing"', 'model = "infinite"', "joints.pin.lubrication.model", "unknown"),
    ("unknown supply", "transition = 0.95", 'transition = 0.95\nsupply = "groove"', "joints.pin.lubrication.supply",
     "unknown"),
    ("unknown key", "transition = 0.95", "transition = 0.95\nsuply = \"none\"", "joints.pin.lubrication.suply", ""),
    ("on an ideal joint", 'points = [["25 mm", "0 mm"], ["-60 mm", "0 mm"]]',
     'points = [["25 mm", "0 mm"], ["-60 mm", "0 mm"]]\nlubrication = { viscosity = "1 cP", length = "1 mm" }',
     "joints.crankpin.lubrication", "only a revolute_clearance joint"),
]


@pytest.mark.parametrize("what, old, new, key, fragment", BAD, ids=[case[0] for case in BAD])
def test_bad_input_is_one_line_naming_file_and_key(tmp_path, capsys, what, old, new, key, fragment):
    path = variant(tmp_path, old, new)
    with pytest.raises(ConfigError) as caught:
        load_mechanism(path)
    assert (caught.value.file, caught.value.key) == (str(path), key)
    assert fragment in caught.value.message
    assert main(["check", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: {key}: ")
