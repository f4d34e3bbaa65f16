"""The double-link configs load as documented; tracked points and the journals' end orbits
of a spatial run come from the body poses."""

from pathlib import Path
from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np
import pytest

from model.geometry.quaternion import axis_angle_quaternion
from pipelines.build_spatial import build_spatial
from pipelines.config import load_mechanism
from pipelines.simulation_spatial import end_eccentricities, tracked_point_paths

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_double_link_configs_load_as_documented():
    ideal = load_mechanism(CONFIGS / "double_link_ideal.toml")
    dry = load_mechanism(CONFIGS / "double_link_clearance.toml")
    wet = load_mechanism(CONFIGS / "double_link_clearance_friction.toml")
    assert [j["type"] for j in ideal.joints] == ["revolute", "revolute"]
    assert [j["type"] for j in dry.joints] == ["cylindrical_clearance"] * 2
    for a, b in zip(dry.bodies, ideal.bodies):
        assert a == b
    for joint in wet.joints:
        friction = joint["friction"]
        assert friction.model == "static_dynamic"
        assert friction.velocities == pytest.approx((1.0e-3, 1.5e-3))
    assert {j["friction"].model for j in dry.joints} == {"none"}
    assert [point.model_dump() for point in dry.tracked_points] == [
        dict(name="tip", body="link2", point=pytest.approx((0.125, 0.0, 0.0)))]


@pytest.fixture(scope="module")
def double_link():
    config = load_mechanism(CONFIGS / "double_link_clearance.toml")
    return config, build_spatial(config)


def test_tracked_point_and_end_orbits_follow_the_body_poses(double_link):
    config, mechanism = double_link
    x0 = np.asarray(mechanism.initial_positions)
    # link 2 turned by 1 mrad about the ground y axis around its centre of mass: its tip
    # moves to (0.425 + 0.125 cos, 0, -0.125 sin); joint 2's journal tilts in its bearing
    tilt = 1e-3
    turned = x0.copy()
    turned[10:14] = np.asarray(axis_angle_quaternion(jnp.array([0.0, 1.0, 0.0]), tilt))
    trajectory = SimpleNamespace(x=jnp.asarray(np.stack([x0, turned])))
    run = SimpleNamespace(config=config, mechanism=mechanism)
    tip = tracked_point_paths(run, trajectory)["tip"]
    np.testing.assert_allclose(tip[0], [0.55, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(tip[1], [0.425 + 0.125 * np.cos(tilt), 0.0, -0.125 * np.sin(tilt)], atol=1e-15)
    ends = end_eccentricities(mechanism, trajectory)
    assert ends.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(ends[0], 0.0, atol=1e-15)  # centred and aligned at t = 0
    # joint 2's journal axis a = (0, sin 30, cos 30) turns with link 2 about y: its part
    # normal to the (unturned) bearing axis is (cos 30 sin(tilt), O(tilt^2)), so the two end
    # points, l = 20 mm apart along it, differ by l cos 30 sin(tilt) in the cross-section
    ends_joint2 = ends[1, 1]
    assert abs(np.linalg.norm(ends_joint2[1] - ends_joint2[0]) - 0.02 * np.sin(tilt) * np.cos(np.pi / 6)) < 1e-9


def test_spatial_plots_are_written(double_link, tmp_path):
    from pipelines.spatial_plots import plot_all, plot_friction

    config, mechanism = double_link
    times = 6
    x0 = np.asarray(mechanism.initial_positions)
    x = np.repeat(x0[None], times, axis=0)
    x[:, 8] -= np.linspace(0.0, 1e-3, times)  # link 2 drops 1 mm
    joints = np.ones((times, 2))
    trajectory = SimpleNamespace(
        t=jnp.linspace(0.0, 1e-3, times), x=jnp.asarray(x), normal_force=jnp.asarray(joints),
        normal_force_a=jnp.asarray(0.5 * joints), normal_force_b=jnp.asarray(0.5 * joints),
        tangential_force=jnp.asarray(0.1 * joints), slip_velocity=jnp.asarray(1e-3 * joints),
        penetration=jnp.asarray(1e-6 * joints), eccentricity=jnp.zeros((times, 2, 3)))
    run = SimpleNamespace(config=config, mechanism=mechanism, trajectory=trajectory, ideal=trajectory)
    names = plot_all(run, tmp_path)
    assert names == ["tracked_points.png", "end_forces.png", "orbits.png"]  # frictionless joints: no friction.png
    assert all((tmp_path / name).stat().st_size > 0 for name in names)
    rubbing = load_mechanism(CONFIGS / "double_link_clearance_friction.toml")
    run.mechanism = build_spatial(rubbing)
    assert plot_friction(run, tmp_path) == ["friction.png"]
    assert (tmp_path / "friction.png").stat().st_size > 0


def test_spherical_clearance_joint_columns_and_reactions():
    """A spherical clearance joint writes its eccentricity's three components and none of the
    cylindrical joint's axis columns; every named ideal joint writes its reaction."""
    from model.mechanics.spatial import GROUND, SpatialJoint
    from pipelines.config import mechanism_from_dict
    from pipelines.simulation_spatial import SPATIAL_REACTIONS, spatial_timeseries
    from tests.model.mechanics.spatial.test_spherical import _ball_config
    import dataclasses

    mechanism = build_spatial(mechanism_from_dict(_ball_config(), "ball.toml"))
    axis = jnp.array([0.0, 0.0, 1.0])
    hinge = SpatialJoint("revolute", GROUND, 0, jnp.zeros(3), jnp.zeros(3), axis, axis, jnp.array([1.0, 0.0, 0.0]),
                         jnp.array([1.0, 0.0, 0.0]), jnp.array([1.0, 0.0, 0.0, 0.0]))
    mechanism = dataclasses.replace(mechanism, joints=(hinge,), joint_names=("hinge",))
    times = 3
    joint = np.ones((times, 1))
    eccentricity = np.tile([1e-5, 2e-5, 3e-5], (times, 1, 1))
    reactions = np.arange(times * 6, dtype=float).reshape(times, 1, 6)
    trajectory = SimpleNamespace(
        t=np.linspace(0.0, 1e-3, times), x=np.repeat(np.asarray(mechanism.initial_positions)[None], times, 0),
        v=np.zeros((times, 6)), vdot=np.zeros((times, 6)), eccentricity=eccentricity, penetration=-joint,
        normal_force=0 * joint, tangential_force=0 * joint, slip_velocity=0 * joint, tilt=0 * joint,
        normal_force_a=0 * joint, normal_force_b=0 * joint, driver_torques=np.zeros((times, 0)),
        joint_reactions=reactions)
    run = SimpleNamespace(mechanism=mechanism, trajectory=trajectory, flexible_columns={})
    series = spatial_timeseries(run)
    name = mechanism.clearance_names[0]
    for k, component in enumerate(("ex", "ey", "ez")):
        np.testing.assert_array_equal(series[f"{name}.{component}"], eccentricity[:, 0, k])
    assert not {f"{name}.{k}" for k in ("tilt", "normal_force_a", "normal_force_b", "ex_a", "ey_a")} & set(series)
    for k, label in enumerate(SPATIAL_REACTIONS):
        np.testing.assert_array_equal(series[f"hinge.{label}"], reactions[:, 0, k])
