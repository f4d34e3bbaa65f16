"""Flexible-body config: the format loads, bad input is refused with the key, the body
expands into segments with its loads on the segment that holds them."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from pipelines.errors import ConfigError

CANTILEVER = Path(__file__).resolve().parents[3] / "configs" / "flexible_cantilever.toml"


def test_cantilever_expands_into_segments():
    config = load_mechanism(CANTILEVER)
    mechanism = build_mechanism(config)
    assert mechanism.num_bodies == 21  # 20 elements: 19 segments and two half-length end ones
    assert float(mechanism.masses.sum()) == pytest.approx(config.bodies[0].mass)
    chain = mechanism.beam_chains[0]
    assert chain.segments == tuple(range(21))
    assert mechanism.loads[0].body == 20
    np.testing.assert_allclose(mechanism.loads[0].point, [0.00375, 0.0])  # the far end of the end segment
    assert mechanism.fixed_joints[0].body_j == 0
    np.testing.assert_allclose(mechanism.fixed_joints[0].point_j, [-0.00375, 0.0])
    # Cantilever: omega_1 = 1.8751^2 sqrt(E I / mu) / L^2 (92.2 Hz Euler-Bernoulli, 92.1 Hz
    # Timoshenko); the chain's within 0.5 % at 20 elements.
    assert float(chain.first_bending_frequency()) / (2 * np.pi) == pytest.approx(92.1, rel=0.005)
    assert solver_settings(config).solver == "ros34pw2"  # auto: the Rayleigh rate of the beam modes


@pytest.mark.parametrize(
    "override, key",
    [
        ("bodies.beam.flexible.segments=0", "bodies.beam.flexible.segments"),
        ('bodies.beam.flexible.section.width="-1 mm"', "bodies.beam.flexible.section.width"),
        ("bodies.beam.flexible.damping_ratio=1.0", "bodies.beam.flexible.damping_ratio"),
        ("bodies.beam.flexible.shear_factor=0", "bodies.beam.flexible.shear_factor"),
        ('materials.steel.youngs_modulus="0 GPa"', "materials.steel.youngs_modulus"),
        ('bodies.beam.flexible.material="brass"', "bodies.beam.flexible.material"),
        ('joints.clamp.points=[["0 mm", "0 mm"], ["-151 mm", "0 mm"]]', "joints.clamp.points"),
        ('loads.tip.body="wheel"', "loads.tip.body"),
    ],
)
def test_bad_flexible_input_names_the_key(override, key):
    with pytest.raises(ConfigError) as error:
        load_mechanism(CANTILEVER, [override])
    assert key in str(error.value)


def test_cli_refuses_bad_input_and_writes_nothing(tmp_path, capsys):
    from pipelines.cli import main

    config = tmp_path / "beam.toml"
    shutil.copy(CANTILEVER, config)
    out = tmp_path / "out"
    assert main(["simulate", str(config), "--out", str(out), "--set", "bodies.beam.flexible.segments=0"]) == 2
    stderr = capsys.readouterr().err
    assert stderr.strip().count("\n") == 0 and "bodies.beam.flexible.segments" in stderr
    assert not out.exists()


def test_damping_ratio_is_a_continuous_parameter():
    """Rayleigh beta = 2 zeta / omega_1 follows the ratio written through the parameter map."""
    from pipelines.build import ParameterMap

    mechanism = build_mechanism(load_mechanism(CANTILEVER))
    parameters = ParameterMap(mechanism, ["bodies.beam.flexible.damping_ratio"])
    changed = parameters.apply(mechanism, [0.1])
    assert float(parameters.read(changed)[0]) == 0.1
    ratio = float(changed.beam_chains[0].rayleigh_beta() / mechanism.beam_chains[0].rayleigh_beta())
    assert ratio == pytest.approx(2.0)


def _rectangle_as_properties(width: float, height: float) -> list[str]:
    """The section of a ``width`` x ``height`` rectangle given as ``shape = "properties"``
    (the torsion constant from Roark's table, written out here)."""
    long_side, short_side = max(width, height), min(width, height)
    ratio = short_side / long_side
    torsion = (1 / 3 - 0.21 * ratio * (1 - ratio**4 / 12)) * long_side * short_side**3
    section = (f'{{shape="properties", area="{width * height * 1e6!r} mm^2", iyy="{height * width**3 / 12 * 1e12!r} mm^4", '
               f'izz="{width * height**3 / 12 * 1e12!r} mm^4", ixx="{torsion!r} m^4"}}')
    return [f"bodies.beam.flexible.section={section}", "bodies.beam.flexible.shear_factor=1.2"]


@pytest.mark.parametrize("config", [CANTILEVER, CANTILEVER.with_name("flexible_cantilever_3d.toml")])
def test_section_properties_given_directly_equal_the_shape(config):
    base = load_mechanism(config, ['bodies.beam.flexible.section={shape="rectangle", width="10 mm", height="6 mm"}'])
    given = build_mechanism(load_mechanism(config, _rectangle_as_properties(0.010, 0.006)))
    expected = build_mechanism(base)
    np.testing.assert_allclose(given.beam_chains[0].stiffness(), expected.beam_chains[0].stiffness(), rtol=1e-12)
    np.testing.assert_allclose(given.masses, expected.masses, rtol=1e-12)


@pytest.mark.parametrize(
    "change, key",
    [
        (lambda o: [o[0]], "bodies.beam.flexible.shear_factor"),  # no shape to take it from
        (lambda o: [o[0].replace('area="', 'areas="'), o[1]], "bodies.beam.flexible.section.area"),
        (lambda o: [o[0].replace(' mm^2"', ' mm"'), o[1]], "bodies.beam.flexible.section.area"),
        (lambda o: [o[0].replace('izz="', 'izz="-'), o[1]], "bodies.beam.flexible.section.izz"),
        (lambda o: [o[0].replace('shape="properties", ', 'shape="properties", width="1 mm", '), o[1]],
         "bodies.beam.flexible.section.width"),
    ],
)
def test_bad_section_properties_name_the_key(change, key):
    with pytest.raises(ConfigError) as error:
        load_mechanism(CANTILEVER, change(_rectangle_as_properties(0.01, 0.01)))
    assert key in str(error.value)


@pytest.mark.parametrize("config", [CANTILEVER, CANTILEVER.with_name("flexible_cantilever_3d.toml")])
def test_jacobian_reuse_reaches_the_solver(config):
    from model.integrate.rosenbrock_w import DEFAULT_JACOBIAN_REUSE

    assert solver_settings(load_mechanism(config)).jacobian_reuse == DEFAULT_JACOBIAN_REUSE
    assert solver_settings(load_mechanism(config, ["simulation.jacobian_reuse=4"])).jacobian_reuse == 4
    with pytest.raises(ConfigError) as error:
        load_mechanism(config, ["simulation.jacobian_reuse=0"])
    assert "simulation.jacobian_reuse" in str(error.value)
