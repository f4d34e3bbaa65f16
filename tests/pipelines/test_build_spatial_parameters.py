"""Dotted parameter paths on a spatial (``dimension = 3``) mechanism: the leaves that
sweeps, fits and designs write reproduce the mechanism built from the config with that
value, and the config answers ``si_value``/``with_values`` as the planar one does."""

import jax
import numpy as np
import pytest

from pipelines.build import ParameterMap, build_mechanism
from pipelines.config import load_mechanism
from pipelines.errors import ConfigError
from pipelines.sweeping.results import metric_units
from tests.helpers import CONFIGS

BASE = CONFIGS / "flores_slider_crank_3d.toml"
CASES = [
    ("joints.pin.clearance", "0.3 mm", 3e-4),
    ("joints.pin.contact.restitution", 0.6, 0.6),
    ("joints.pin.contact.stiffness_factor", 0.1, 0.1),
    ("joints.pin.bearing_radius", "12 mm", 0.012),
    ("joints.pin.friction.static_coefficient", 0.15, 0.15),  # left out of the file: mu_s = mu
    ("bodies.slider.mass", "0.2 kg", 0.2),
    ("drivers.motor.speed", "3000 rpm", 3000 * 2 * np.pi / 60),
]


@pytest.fixture(scope="module")
def config():
    return load_mechanism(BASE)


@pytest.mark.slow  # 7 CPU s, most of it compiling
@pytest.mark.parametrize("path, raw, si", CASES)
def test_leaf_equals_a_fresh_build(config, path, raw, si):
    assert config.with_values({path: raw}).si_value(path) == pytest.approx(si)
    mechanism = build_mechanism(config)
    written = ParameterMap(mechanism, [path]).apply(mechanism, np.array([si]))
    built = build_mechanism(config.with_values({path: raw}))
    assert jax.tree_util.tree_structure(written) == jax.tree_util.tree_structure(built)
    for a, b in zip(jax.tree_util.tree_leaves(written), jax.tree_util.tree_leaves(built)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_discrete_and_derived_values_are_refused(config):
    mechanism = build_mechanism(config)
    with pytest.raises(ConfigError, match="not a continuous parameter"):
        ParameterMap(mechanism, ["joints.pin.slices"])
    palmgren = build_mechanism(config.with_values({"joints.pin.contact.stiffness": "palmgren"}))
    with pytest.raises(ConfigError, match="palmgren"):
        ParameterMap(palmgren, ["joints.pin.contact.stiffness"])


def test_unit_labels_and_metric_names(config):
    assert config.si_value("joints.pin")["clearance [m]"] == pytest.approx(5e-4)
    units = metric_units(config)
    assert units["pin.max_normal_force"] == "N" and units["slider.max_abs_az"] == "m/s^2"
    assert list(units)[:6] == [f"pin.{name}" for name in ("max_normal_force", "max_penetration", "first_impact_time",
                                                          "first_impact_velocity", "num_impacts", "contact_fraction")]


BALL = {
    "name": "ball", "dimension": 3,
    "materials": {"steel": {"youngs_modulus": "207 GPa", "poisson_ratio": 0.3}},
    "bodies": [{"name": "ball", "mass": "2 kg", "inertia": ["1e-4 kg*m^2"] * 3, "position": ["0 m"] * 3}],
    "joints": [{"name": "socket", "type": "spherical_clearance", "bodies": ["ball", "ground"], "socket_radius": "10 mm",
                "clearance": "0.1 mm", "materials": ["steel", "steel"],
                "contact": {"model": "hertz", "exponent": 1.5, "stiffness": "hertz"}}],
    "simulation": {"t_end": "1 ms", "output_interval": "0.1 ms"},
}


@pytest.mark.parametrize("engine", ["planar", "spatial"])
def test_hertz_stiffness_follows_a_written_clearance(engine):
    """A swept clearance of a joint with stiffness = "hertz" changes its Hertz stiffness as a
    fresh build with that clearance does (the stiffness is no constant of the build)."""
    from pipelines.config import mechanism_from_dict

    if engine == "planar":
        config, path = load_mechanism(CONFIGS / "flores_slider_crank.toml"), "joints.pin.clearance"
    else:
        config, path = mechanism_from_dict(BALL, "ball.toml"), "joints.socket.clearance"
    mechanism = build_mechanism(config)
    written = ParameterMap(mechanism, [path]).apply(mechanism, np.array([2e-4]))
    built = build_mechanism(config.with_values({path: "0.2 mm"}))
    before, after, expected = (float(m.clearance_joints[0].stiffness()) for m in (mechanism, written, built))
    assert after == pytest.approx(expected, rel=1e-12) and abs(after / before - 1.0) > 0.1
