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
    assert solver_settings(config).solver == "rodas5p"


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


def test_cli_refuses_bad_input_and_writes_nothing(tmp_path):
    import subprocess
    import sys

    config = tmp_path / "beam.toml"
    shutil.copy(CANTILEVER, config)
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "simulate", str(config), "--out", str(out),
         "--set", "bodies.beam.flexible.segments=0"], capture_output=True, text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "bodies.beam.flexible.segments" in result.stderr
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
