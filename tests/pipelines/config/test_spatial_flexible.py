"""Flexible bodies in the spatial format: loading, one-line refusals, and the build (the
segments, where points go, the damping tuned as in the planar engine)."""

import numpy as np
import pytest

from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from pipelines.errors import ConfigError

from tests.helpers import CONFIGS

SPATIAL = CONFIGS / "flexible_cantilever_3d.toml"
PLANAR = CONFIGS / "flexible_cantilever.toml"


def test_spatial_cantilever_builds_like_the_planar_one():
    spatial_config = load_mechanism(SPATIAL)
    spatial, planar = build_mechanism(spatial_config), build_mechanism(load_mechanism(PLANAR))
    assert spatial.body_names == planar.body_names and len(spatial.body_names) == 21
    np.testing.assert_allclose(spatial.masses, planar.masses, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(spatial.inertias)[:, 2, 2], planar.inertias, rtol=1e-12)
    blocks = np.asarray(spatial.initial_positions).reshape(-1, 7)
    np.testing.assert_allclose(blocks[:, :2], np.asarray(planar.initial_positions).reshape(-1, 3)[:, :2], atol=1e-15)
    (chain,), (planar_chain,) = spatial.beam_chains, planar.beam_chains
    assert chain.segments == planar_chain.segments
    assert float(chain.frequency_coefficient) == pytest.approx(float(planar_chain.frequency_coefficient), rel=1e-12)
    # the clamp holds the first segment at its outer end; the tip load sits on the last one
    (clamp,) = spatial.joints
    assert clamp.body_j == 0 and float(clamp.point_j[0]) == pytest.approx(-0.3 / 20 / 4)
    (load,) = spatial.loads
    assert load.body == 20 and float(load.point[0]) == pytest.approx(0.3 / 20 / 4)
    assert solver_settings(spatial_config).solver == "ros34pw2"  # auto: the beam's axial modes


def test_a_rotated_flexible_body_lays_its_segments_along_its_axis(tmp_path):
    config = load_mechanism(SPATIAL, ["bodies.beam.rotation={axis = [0.0, 0.0, 1.0], angle = \"90 deg\"}",
                                      'bodies.beam.position=["0 mm", "150 mm", "0 mm"]',
                                      "joints.clamp.points=[[\"0 mm\", \"0 mm\", \"0 mm\"], [\"-150 mm\", \"0 mm\", \"0 mm\"]]"])
    blocks = np.asarray(build_mechanism(config).initial_positions).reshape(-1, 7)
    np.testing.assert_allclose(blocks[:, 0], 0.0, atol=1e-15)
    assert blocks[0, 1] == pytest.approx(0.3 / 80) and blocks[-1, 1] == pytest.approx(0.3 - 0.3 / 80)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("bodies.beam.flexible.segments=0", "bodies.beam.flexible.segments"),
        ('bodies.beam.flexible.material="brass"', "bodies.beam.flexible.material"),
        ("bodies.beam.flexible.damping_ratio=1.0", "bodies.beam.flexible.damping_ratio"),
        ('bodies.beam.flexible.section.width="-1 mm"', "bodies.beam.flexible.section.width"),
        ('loads.tip.point=["200 mm", "0 mm", "0 mm"]', "loads.tip.point"),
        ('joints.clamp.points=[["0 mm", "0 mm", "0 mm"], ["-151 mm", "0 mm", "0 mm"]]', "joints.clamp.points"),
        ("bodies.beam.colour=1", "bodies.beam.colour"),
    ],
)
def test_bad_flexible_input_names_the_key(override, key):
    with pytest.raises(ConfigError) as caught:
        load_mechanism(SPATIAL, [override])
    assert caught.value.key == key, str(caught.value)
    assert caught.value.file in (str(SPATIAL), "--set")


@pytest.mark.slow  # two solves: the spatial one compiles in about 15 s
def test_tip_vibration_in_the_plane_matches_the_planar_engine():
    """The tip-loaded cantilever (m = 4, released straight, undamped) swings in y as in the
    planar engine, and in z by the out-of-plane load's share, to the solvers' tolerance."""
    import jax

    import model

    overrides = ["bodies.beam.flexible.segments=4", "bodies.beam.flexible.damping_ratio=0.0", 'simulation.t_end="5 ms"',
                 'simulation.output_interval="0.05 ms"', 'simulation.solver="tsit5"', "simulation.rtol=1e-9",
                 "simulation.atol=1e-12"]
    runs = {}
    for name, path in (("spatial", SPATIAL), ("planar", PLANAR)):
        config = load_mechanism(path, overrides)
        mechanism = build_mechanism(config)
        runs[name] = jax.jit(model.simulate, static_argnums=1)(mechanism, solver_settings(config))
    spatial, planar = runs["spatial"], runs["planar"]
    assert int(spatial.result) == 0 and int(planar.result) == 0
    tip_y = np.asarray(planar.body_positions[:, -1, 1])
    assert np.ptp(tip_y) > 1e-4  # it swings by about twice the static deflection
    np.testing.assert_allclose(spatial.body_positions[:, -1, 1], tip_y, rtol=0, atol=1e-6 * np.ptp(tip_y))
    # square section: the 5 N along +z gives minus half the 10 N along -y's deflection
    np.testing.assert_allclose(spatial.body_positions[:, -1, 2], -0.5 * tip_y, rtol=0, atol=1e-6 * np.ptp(tip_y))


def test_damping_ratio_is_a_continuous_path():
    """``bodies.B.flexible.damping_ratio`` reads and writes the chain's leaf, as in the planar
    engine, so sweeps and derivatives take it; a flexible body's mass is not one leaf."""
    from pipelines.build import ParameterMap, parameter_leaf

    mechanism = build_mechanism(load_mechanism(SPATIAL))
    get, set_ = parameter_leaf(mechanism, "bodies.beam.flexible.damping_ratio")
    assert float(get(mechanism)) == pytest.approx(0.05)
    assert float(set_(mechanism, 0.1).beam_chains[0].damping_ratio) == pytest.approx(0.1)
    assert float(ParameterMap(mechanism, ["bodies.beam.flexible.damping_ratio"]).apply(mechanism, np.array([0.2]))
                 .beam_chains[0].rayleigh_beta()) == pytest.approx(4.0 * float(mechanism.beam_chains[0].rayleigh_beta()))
    with pytest.raises(ConfigError):
        parameter_leaf(mechanism, "bodies.beam.mass")


def test_contact_length_fits_the_flexible_body():
    path = CONFIGS / "double_link_flexible.toml"
    with pytest.raises(ConfigError) as caught:
        load_mechanism(path, ['joints.joint1.length="400 mm"'])
    assert caught.value.key == "joints.joint1.length" and "0.3 m" in caught.value.message
    assert load_mechanism(path, ['joints.joint1.length="290 mm"']).joints[0]["length"] == pytest.approx(0.29)


def test_tracked_point_lies_on_the_flexible_body():
    with pytest.raises(ConfigError) as caught:
        load_mechanism(CONFIGS / "double_link_flexible.toml", ['tracked_points.tip.point=["130 mm", "0 mm", "0 mm"]'])
    assert caught.value.key == "tracked_points.tip.point" and "outside the length" in caught.value.message
