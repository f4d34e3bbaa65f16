from pathlib import Path

import pytest

from model.contact.friction import FRICTION_LAWS, friction_law
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import FLORES

NO_FRICTION = 'model = "none"                         # none | coulomb_tanh | ambrosio | static_dynamic\ncoefficient = 0.0'


def _mechanism_with_friction(tmp_path: Path, friction: str):
    text = FLORES.read_text()
    assert NO_FRICTION in text
    path = tmp_path / "friction.toml"
    path.write_text(text.replace(NO_FRICTION, friction, 1))
    return build_mechanism(load_mechanism(path))


@pytest.mark.parametrize("name", [name for name in FRICTION_LAWS if name != "none"])
def test_friction_velocities_left_out_take_the_laws_defaults(tmp_path, name):
    # The config must not impose its own numbers: coulomb_tanh's documented v0 is 10 mm/s,
    # ambrosio's (v0, v1) = (0.1, 1) mm/s, static_dynamic's (v_s, v_d) = (1, 1.5) mm/s.
    documented = {"coulomb_tanh": 1e-2, "ambrosio": 1e-4, "static_dynamic": 1e-3}
    mechanism = _mechanism_with_friction(tmp_path, f'model = "{name}"\ncoefficient = 0.1')
    friction = mechanism.clearance_joints[0].friction
    assert float(friction.stiction_velocity) == pytest.approx(documented[name], rel=1e-15)
    assert (float(friction.stiction_velocity), float(friction.dynamic_velocity)) == friction_law(name).default_velocities


def test_friction_velocities_given_in_the_config_win(tmp_path):
    mechanism = _mechanism_with_friction(
        tmp_path, 'model = "coulomb_tanh"\ncoefficient = 0.1\nstiction_velocity = "2 mm/s"'
    )
    assert float(mechanism.clearance_joints[0].friction.stiction_velocity) == pytest.approx(2e-3, rel=1e-15)
