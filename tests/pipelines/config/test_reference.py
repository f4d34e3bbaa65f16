"""docs/config.md is the page the schemas generate (``python -m pipelines.config.reference``),
and the spatial format's key tables are the keys its validator accepts."""

from pathlib import Path

import pytest

from pipelines.config.reference import reference_markdown
from pipelines.config import mechanism_from_dict
from pipelines.config.spatial import SPATIAL_JOINT_TYPES
from pipelines.errors import ConfigError

PAGE = Path(__file__).resolve().parents[3] / "docs" / "config.md"


def test_the_page_is_the_generated_one():
    assert PAGE.read_text() == reference_markdown(), (
        "docs/config.md differs from the schemas: run python -m pipelines.config.reference > docs/config.md")


def test_every_joint_type_has_a_section():
    page = PAGE.read_text()
    for kind in ("revolute", "prismatic", "fixed", "revolute_clearance"):
        assert f'`joints` with `type = "{kind}"`' in page
    spatial = page[page.index("## Spatial mechanism files"):]
    for kind in SPATIAL_JOINT_TYPES:
        assert f'`joints` with `type = "{kind}"`' in spatial, kind


def test_every_spatial_key_is_documented():
    """Each table of the spatial format has its section after the planar ones, with every key."""
    from pipelines.config.reference import schema_markdown
    from pipelines.config.spatial import SpatialBody, SpatialConfig, SpatialJointBase, TrackedPoint

    spatial = PAGE.read_text()[PAGE.read_text().index("## Spatial mechanism files"):]
    assert schema_markdown(SpatialConfig) in spatial
    for table in (SpatialConfig, SpatialBody, TrackedPoint, *SpatialJointBase.KINDS.values()):
        for key in table.model_fields:
            assert f"| `{key}` |" in spatial, (table.__name__, key)


def test_every_pipeline_config_has_its_keys_documented():
    """Each command's config schema has its section, with every key of its tables."""
    from pipelines.bifurcation.schema import BifurcationConfig, BifurcationTable
    from pipelines.wear.schema import WearConfig, WearTable

    page = PAGE.read_text()
    for command in ("sweep", "calibrate", "optimize", "wear", "bifurcation"):
        assert f"`clearance {command} CONFIG`" in page
    for table in (WearConfig, WearTable, BifurcationConfig, BifurcationTable):
        for key in table.model_fields:
            assert f"| `{key}` |" in page, key
    assert "`wear`" in page and "`bifurcation.values`" in page


def _pendulum(**joint_extra) -> dict:
    return {
        "dimension": 3, "materials": {"steel": {"youngs_modulus": "207 GPa", "poisson_ratio": 0.3}},
        "bodies": [{"name": "rod", "mass": "1 kg", "inertia": ["1e-4 kg*m^2"] * 3, "position": ["0 m"] * 3}],
        "joints": [{"name": "socket", "type": "spherical_clearance", "bodies": ["rod", "ground"],
                    "socket_radius": "10 mm", "clearance": "0.1 mm", "materials": ["steel", "steel"],
                    "contact": {"model": "hertz", "stiffness": "hertz"}, **joint_extra}],
        "simulation": {"t_end": "1 ms", "output_interval": "0.1 ms"},
    }


def test_a_documented_spatial_key_is_accepted_and_an_undocumented_one_refused():
    joint = mechanism_from_dict(_pendulum(initial_eccentricity=["0 m", "-0.05 mm", "0 m"]), "p.toml").joints[0]
    assert joint["initial_eccentricity"] == pytest.approx((0.0, -0.05e-3, 0.0))
    with pytest.raises(ConfigError, match=r"p.toml: joints.socket.lenght: unknown key"):
        mechanism_from_dict(_pendulum(lenght="20 mm"), "p.toml")
