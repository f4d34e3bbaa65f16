"""The spatial mechanism format: the example files load, bad input is one error naming the key."""

import dataclasses
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.config import load_mechanism
from pipelines.errors import ConfigError
from tests.helpers import CONFIGS

CRANK = CONFIGS / "flores_slider_crank_3d.toml"
LOADS = CONFIGS / "cylindrical_joint_loads.toml"


def test_spatial_examples_load():
    crank = load_mechanism(CRANK)
    assert crank.dimension == 3 and [j["type"] for j in crank.joints][2] == "cylindrical_clearance"
    loads = load_mechanism(LOADS)
    assert [load["enabled"] for load in loads.loads] == [True, False, False]
    assert loads.joints[0]["contact"].stiffness == "palmgren" and loads.joints[0]["slices"] == 20


@pytest.mark.parametrize(
    ("path", "override", "key"),
    [
        (CRANK, "joints.main.axis=[0.0, 0.0, 2.0]", "joints.main.axis"),
        (CRANK, "joints.main.axis=[0.0, 0.0, 0.0]", "joints.main.axis"),
        (CRANK, "joints.pin.slices=0", "joints.pin.slices"),
        (CRANK, 'joints.pin.length="0 mm"', "joints.pin.length"),
        (CRANK, 'joints.pin.length="3 m"', "joints.pin.length"),
        (CRANK, "joints.pin.type=revolute_clearance", "joints.pin.type"),
        (LOADS, "loads.end_force.body=crank", "loads.end_force.body"),
        (CRANK, 'bodies.crank.position=["1 mm", "2 mm"]', "bodies.crank.position"),
        (LOADS, "joints.bush.axial=sliding", "joints.bush.axial"),
        (CRANK, 'joints.pin.contact.stiffness="hertz"', "joints.pin.contact.stiffness"),  # a line contact
        (CRANK, "simulation.engine=tree", "simulation.engine"),
    ],
)
def test_bad_spatial_input_names_the_key(path, override, key):
    with pytest.raises(ConfigError) as error:
        load_mechanism(path, [override])
    assert error.value.key == key and str(path) == error.value.file


def test_spatial_joint_in_planar_file_is_refused():
    with pytest.raises(ConfigError) as error:
        load_mechanism(CONFIGS / "flores_slider_crank.toml", ["joints.pin.type=cylindrical_clearance"])
    assert "joints" in error.value.key


@pytest.mark.slow
def test_redundant_user_constraints_are_named():
    from pipelines.build_spatial import build_spatial

    config = load_mechanism(CRANK, ["joints.pin.type=revolute"])
    with pytest.raises(ConfigError) as error:
        build_spatial(config)
    assert "redundant" in error.value.message and error.value.key == "joints"


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_ideal_twin_keeps_independent_rows():
    """The slider-crank's pin made ideal closes the planar loop with a spatial revolute joint,
    which repeats out-of-plane rows; the build records the independent ones, so every
    ``idealised()`` twin (the simulate command's ideal run, the design metrics) is regular."""
    import numpy as np

    from model.mechanics.spatial import initial_state
    from model.mechanics.spatial.constraints import constraint_jacobian
    from model.mechanics.spatial.redundancy import redundant_joints
    from pipelines.build_spatial import build_spatial

    mechanism = build_spatial(load_mechanism(CRANK))
    twin = mechanism.idealised()
    x0 = initial_state(twin).x
    assert twin.kept_rows is not None and redundant_joints(twin, x0) == []
    jacobian = np.asarray(constraint_jacobian(twin, x0, 0.0))
    assert np.linalg.matrix_rank(jacobian) == jacobian.shape[0]
    assert redundant_joints(dataclasses.replace(twin, kept_rows=None), x0)  # without the record it is redundant


LUBRICATION_TABLE = '''
[joints.lubrication]
model = "finite_bearing"
viscosity = "400 cP"
transition = 0.95
'''


def _with_lubrication(tmp_path, after: str, table: str = LUBRICATION_TABLE) -> Path:
    """The 3-D slider-crank with ``table`` inserted after the line ``after``."""
    text = CRANK.read_text()
    assert after in text
    path = tmp_path / "lubricated_3d.toml"
    path.write_text(text.replace(after, after + table, 1))
    return path


@pytest.mark.slow
def test_lubrication_table_on_the_cylindrical_pin_loads_and_builds(tmp_path, capsys):
    from pipelines.build_spatial import build_spatial

    path = _with_lubrication(tmp_path, 'coefficient = 0.0\n')
    config = load_mechanism(path)
    lubrication = config.joints[2]["lubrication"]
    assert lubrication.viscosity == pytest.approx(0.4) and lubrication.transition == (0.95, 0.975)
    assert lubrication.length == pytest.approx(config.joints[2]["length"])  # defaults to the contact length
    film = build_spatial(config).cylindrical_joints[0].lubrication
    assert film.model == "finite_bearing" and float(film.length) == pytest.approx(0.02)
    explicit = load_mechanism(path, ['joints.pin.lubrication.length="40 mm"'])
    assert explicit.joints[2]["lubrication"].length == pytest.approx(0.04)
    assert main(["check", str(path)]) == 0, capsys.readouterr().err


def test_lubrication_on_another_spatial_joint_is_one_error_line(tmp_path, capsys):
    path = _with_lubrication(tmp_path, 'axis = [1.0, 0.0, 0.0]\n')  # the prismatic guide
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (f"error: {path}: joints.guide.lubrication: "
                                               "only a cylindrical_clearance joint takes a lubrication table")
    with pytest.raises(ConfigError) as error:
        load_mechanism(_with_lubrication(tmp_path, 'coefficient = 0.0\n'), ['joints.pin.lubrication.model="thin"'])
    assert error.value.key.startswith("joints.pin.lubrication.model")


def test_an_axis_rounded_in_its_last_digits_is_normalised():
    config = load_mechanism(CRANK, ["joints.main.axis=[0.0, 0.0, 0.99998]"])
    axis = next(joint for joint in config.joints if joint["name"] == "main")["axis"]
    assert axis == (0.0, 0.0, 1.0)


def test_si_values_written_in_validate_as_the_unit_strings_do():
    """A variant with SI values set (as a sweep checks its points) is the variant the unit
    strings give, every table kept; it goes through the same checks."""
    config = load_mechanism(LOADS)
    written = config.with_si_values({"joints.bush.clearance": 1.5e-3, "joints.bush.slices": 7})
    strings = config.with_values({"joints.bush.clearance": "1.5 mm", "joints.bush.slices": 7})
    assert written.model_dump() == strings.model_dump()
    assert written.unit_of_path("joints.bush.clearance") == "m" and written.si_value("joints.bush.slices") == 7
    with pytest.raises(ConfigError) as error:
        config.with_si_values({"joints.bush.clearance": 0.05})
    assert error.value.key == "joints.bush.clearance" and "bearing_radius" in error.value.message
