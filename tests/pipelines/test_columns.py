"""The output columns (pipelines/columns.py): the double-link configs load as documented;
tracked points and the journals' end orbits come from the body poses; each joint kind writes
its columns; the calibration's signals are the timeseries columns."""

from pathlib import Path
from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np
import pytest

from model.geometry.quaternion import axis_angle_quaternion
from pipelines.build import build_mechanism
from pipelines.build_spatial import build_spatial
from pipelines.calibration.signals import signal_units, trajectory_signals
from pipelines.config import load_mechanism
from pipelines.columns import END_ORBIT_COLUMNS, end_eccentricities, output_columns
from pipelines.simulation import tracked_point_paths

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


def test_spherical_clearance_joint_columns_and_reactions():
    """A spherical clearance joint writes its eccentricity's three components and none of the
    cylindrical joint's axis columns; every named ideal joint writes its reaction."""
    from model.mechanics.spatial import GROUND, SpatialJoint
    from pipelines.config import mechanism_from_dict
    from pipelines.columns import REACTION_COLUMNS, output_columns
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
    series = output_columns(mechanism, trajectory)
    name = mechanism.clearance_names[0]
    for k, component in enumerate(("ex", "ey", "ez")):
        np.testing.assert_array_equal(series[f"{name}.{component}"], eccentricity[:, 0, k])
    assert not {f"{name}.{k}" for k in ("tilt", "normal_force_a", "normal_force_b", "ex_a", "ey_a")} & set(series)
    for k, label in enumerate(REACTION_COLUMNS[3]):
        np.testing.assert_array_equal(series[f"hinge.{label}"], reactions[:, 0, k])


def _random(shape, rng):
    return rng.normal(size=shape)


def test_planar_columns_read_the_coordinates_in_the_contract_order():
    """A planar body's nine columns and the revolute clearance joint's six, in the contract's
    order, read from the coordinates they name; the calibration's signals are these columns."""
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank.toml"))
    rng, times = np.random.default_rng(1), 4
    coordinates = 3 * len(mechanism.body_names)
    joints, ideal = len(mechanism.clearance_names), len(mechanism.joint_names)
    trajectory = SimpleNamespace(
        t=np.linspace(0.0, 1e-3, times), q=_random((times, coordinates), rng), qd=_random((times, coordinates), rng),
        qdd=_random((times, coordinates), rng), eccentricity=_random((times, joints, 2), rng),
        **{field: _random((times, joints), rng) for field in ("penetration", "normal_force", "tangential_force",
                                                               "slip_velocity")},
        driver_torques=_random((times, len(mechanism.driver_names)), rng),
        joint_reactions=_random((times, ideal, 3), rng))
    columns = output_columns(mechanism, trajectory)
    body, pin = mechanism.body_names[1], mechanism.clearance_names[0]
    assert [name for name in columns if name.startswith(f"{body}.")] == [
        f"{body}.{kind}" for kind in ("x", "vx", "ax", "y", "vy", "ay", "theta", "omega", "alpha")]
    assert [name for name in columns if name.startswith(f"{pin}.")] == [
        f"{pin}.{kind}" for kind in ("ex", "ey", "penetration", "normal_force", "tangential_force", "slip_velocity")]
    np.testing.assert_array_equal(columns[f"{body}.omega"], trajectory.qd[:, 5])
    np.testing.assert_array_equal(columns[f"{body}.ay"], trajectory.qdd[:, 4])
    np.testing.assert_array_equal(columns[f"{pin}.ey"], trajectory.eccentricity[:, 0, 1])
    np.testing.assert_array_equal(columns[f"{mechanism.joint_names[-1]}.reaction_moment"], trajectory.joint_reactions[:, -1, 2])
    assert list(signal_units(mechanism)) == list(columns)
    np.testing.assert_array_equal(trajectory_signals(mechanism, trajectory, list(columns)),
                                  np.stack(list(columns.values()), axis=1))


def test_spatial_signals_are_the_timeseries_columns(double_link):
    """A cylindrical joint's columns in the contract's order, its end orbits after the joints;
    the calibration's signal of every column is that column."""
    _, mechanism = double_link
    rng, times = np.random.default_rng(2), 3
    x = np.repeat(np.asarray(mechanism.initial_positions)[None], times, 0) + 1e-3 * _random((times, 14), rng)
    joints = len(mechanism.clearance_names)
    trajectory = SimpleNamespace(
        t=np.linspace(0.0, 1e-3, times), x=x, v=_random((times, 12), rng), vdot=_random((times, 12), rng),
        eccentricity=_random((times, joints, 3), rng),
        **{field: _random((times, joints), rng) for field in ("tilt", "penetration", "normal_force", "normal_force_a",
                                                               "normal_force_b", "tangential_force", "slip_velocity")},
        driver_torques=np.zeros((times, 0)), joint_reactions=np.zeros((times, 0, 6)))
    columns = output_columns(mechanism, trajectory)
    name = mechanism.clearance_names[0]
    assert [column for column in columns if column.startswith(f"{name}.")] == [
        f"{name}.{kind}" for kind in ("ex", "ey", "tilt", "penetration", "normal_force", "normal_force_a",
                                      "normal_force_b", "tangential_force", "slip_velocity",
                                      "ex_a", "ey_a", "ex_b", "ey_b")]
    quaternion = x[:, 3:7] / np.linalg.norm(x[:, 3:7], axis=1, keepdims=True)
    np.testing.assert_allclose(columns["link1.q2"], quaternion[:, 2], rtol=1e-15)
    np.testing.assert_array_equal(columns["link2.wy"], trajectory.v[:, 10])
    np.testing.assert_array_equal(columns[f"{name}.tilt"], trajectory.tilt[:, 0])
    assert list(signal_units(mechanism)) == list(columns)
    # one end-orbit column stands for the four (each signal evaluates its group)
    names = [column for column in columns if column.rpartition(".")[2] not in END_ORBIT_COLUMNS] + [f"{name}.ey_b"]
    np.testing.assert_array_equal(trajectory_signals(mechanism, trajectory, names),
                                  np.stack([columns[column] for column in names], axis=1))
