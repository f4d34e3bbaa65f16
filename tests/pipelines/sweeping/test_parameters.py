"""One representation of a swept parameter: writing an SI value through the pytree setter
of its dotted path (``ParameterMap``) gives the mechanism built from the config with that
value, for every continuous path a sweep, fit or design may vary. This is what lets a sweep
build each group's mechanism once and write every point into it."""

import jax
import numpy as np
import pytest

from pipelines.build import ParameterMap, build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

FRICTION = ['joints.pin.friction.model="ambrosio"', "joints.pin.friction.coefficient=0.1",
            "joints.pin.friction.static_coefficient=0.15"]
# (config, overrides, path, SI value) with values the schema accepts
CASES = [
    ("flores_slider_crank.toml", [], "bodies.crank.mass", 0.4),
    ("flores_slider_crank.toml", [], "bodies.conrod.inertia", 1e-3),
    ("flores_slider_crank.toml", [], "joints.pin.clearance", 2.5e-4),
    ("flores_slider_crank.toml", [], "joints.pin.bearing_radius", 1.2e-2),
    ("flores_slider_crank.toml", [], "joints.pin.contact.restitution", 0.6),
    ("flores_slider_crank.toml", [], "joints.pin.contact.stiffness_factor", 0.3),
    ("flores_slider_crank.toml", [], "joints.pin.contact.damping", 5.0),
    ("flores_slider_crank.toml", [], "joints.pin.contact.penetration_max", 2e-5),
    ("flores_slider_crank.toml", [], "joints.pin.contact.impact_velocity_floor", 2e-3),
    ("flores_slider_crank.toml", FRICTION, "joints.pin.friction.coefficient", 0.2),
    ("flores_slider_crank.toml", FRICTION, "joints.pin.friction.static_coefficient", 0.3),
    ("flores_slider_crank.toml", FRICTION, "joints.pin.friction.stiction_velocity", 3e-4),
    ("flores_slider_crank.toml", FRICTION, "joints.pin.friction.dynamic_velocity", 0.05),
    ("flores_slider_crank.toml", [], "drivers.motor.speed", 300.0),
    ("flores_slider_crank.toml", [], "simulation.baumgarte_alpha", 7.0),
    ("flores_lubricated.toml", [], "joints.pin.lubrication.viscosity", 0.2),
    ("flores_lubricated.toml", [], "joints.pin.lubrication.length", 0.03),
]


@pytest.mark.parametrize("config, overrides, path, value", CASES, ids=[case[2] for case in CASES])
def test_setter_writes_what_the_config_builds(config, overrides, path, value):
    base = load_mechanism(CONFIGS / config, overrides)
    written = ParameterMap(build_mechanism(base), [path]).apply(build_mechanism(base), np.array([value]))
    built = build_mechanism(base.with_si_values({path: value}))
    assert base.with_si_values({path: value}).si_value(path) == pytest.approx(value)
    assert jax.tree_util.tree_structure(written) == jax.tree_util.tree_structure(built)
    for ours, theirs in zip(jax.tree_util.tree_leaves(written), jax.tree_util.tree_leaves(built)):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    # the value really changed something (a setter that writes nowhere would pass the above)
    before = jax.tree_util.tree_leaves(build_mechanism(base))
    assert any(not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(before, jax.tree_util.tree_leaves(built)))


def test_a_coefficient_that_also_stands_for_the_static_one_is_refused(tmp_path):
    """Without static_coefficient the build uses the coefficient for both: writing only the
    coefficient's leaf would differ from the config, so the sweep refuses to batch it."""
    from pipelines.errors import ClearanceError
    from pipelines.sweeping.plan import plan_groups
    from pipelines.sweeping.study import load_sweep
    from tests.helpers import write_sweep

    path = write_sweep(tmp_path, 'design = "grid"', 'path = "joints.pin.friction.coefficient"\nvalues = [0.1, 0.2]')
    with pytest.raises(ClearanceError, match="does not reproduce"):
        plan_groups(*load_sweep(path, ['joints.pin.friction.model="coulomb_tanh"']))


def test_si_values_are_checked_by_the_schema():
    from pipelines.errors import ConfigError

    base = load_mechanism(CONFIGS / "flores_slider_crank.toml")
    with pytest.raises(ConfigError, match="must be smaller than bearing_radius") as caught:
        base.with_si_values({"joints.pin.clearance": 0.02})
    assert caught.value.key == "joints.pin.clearance"
    with pytest.raises(ConfigError, match=r"must be > 0 and <= 1, got 1.5"):
        base.with_si_values({"joints.pin.contact.restitution": 1.5})
    # plain numbers are SI only under the SI check: the file format still needs units
    with pytest.raises(ConfigError, match="missing unit"):
        base.with_values({"joints.pin.clearance": 0.0002})
