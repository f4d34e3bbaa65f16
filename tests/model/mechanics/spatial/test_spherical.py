"""Spherical clearance joint (ball in socket; Flores, Ambrósio, Claro & Lankarani 2006):
stiffness from the materials, statics under gravity, energy conservation of an elastic
spherical pendulum, friction against the slip, derivatives at zero eccentricity."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.contact.friction import FrictionLaw, friction_coefficient
from model.contact.normal import ContactLaw
from model.geometry.quaternion import axis_angle_quaternion, rotation_matrix
from model.integrate.settings import SolverSettings
from model.integrate.solve import solve
from model.mechanics.spatial import GROUND, SpatialMechanism, SpatialState, SphericalClearanceJoint, kinetic_energy
from model.mechanics.spatial.forces import contact_forces
from pipelines.build_spatial import build_spatial
from pipelines.config import mechanism_from_dict

GRAVITY = 9.81
SOCKET_RADIUS = 10e-3
CLEARANCE = 0.1e-3
STEEL = (207e9, 0.3)
BRONZE = (110e9, 0.34)
ROD_LENGTH = 0.3  # m, ball at one end, centre of mass at the middle
ROD_MASS = 1.0


def flores_stiffness(material_socket, material_ball, socket_radius, ball_radius):
    """Flores, Ambrósio, Claro & Lankarani (2006), sphere in a spherical socket:
    ``K = 4 / (3 (sigma_i + sigma_j)) sqrt(R_i R_j / (R_i - R_j))``, ``sigma = (1 - nu^2)/E``."""
    sigma = sum((1.0 - nu**2) / modulus for modulus, nu in (material_socket, material_ball))
    return 4.0 / (3.0 * sigma) * np.sqrt(socket_radius * ball_radius / (socket_radius - ball_radius))


def _ball_config(socket_radius="10 mm", clearance="0.1 mm"):
    return {
        "name": "ball", "dimension": 3, "gravity": ["0 m/s^2", f"-{GRAVITY} m/s^2", "0 m/s^2"],
        "materials": {"steel": {"youngs_modulus": "207 GPa", "poisson_ratio": 0.3},
                      "bronze": {"youngs_modulus": "110 GPa", "poisson_ratio": 0.34}},
        "bodies": [{"name": "ball", "mass": "2 kg", "inertia": ["1e-4 kg*m^2"] * 3, "position": ["0 m"] * 3}],
        "joints": [{"name": "socket", "type": "spherical_clearance", "bodies": ["ball", "ground"],
                    "points": [["0 m"] * 3, ["0 m"] * 3], "socket_radius": socket_radius, "clearance": clearance,
                    "materials": ["bronze", "steel"], "contact": {"model": "hertz", "exponent": 1.5, "stiffness": "hertz"}}],
        "initial": {"velocities": "zero"},
        "simulation": {"t_end": "1 ms", "output_interval": "0.1 ms"},
    }


@pytest.mark.parametrize(("socket_radius", "clearance"), [("10 mm", "0.1 mm"), ("25 mm", "0.5 mm")])
def test_hertz_stiffness_from_radii_and_materials(socket_radius, clearance):
    config = mechanism_from_dict(_ball_config(socket_radius, clearance), "ball.toml")
    joint = build_spatial(config).spherical_joints[0]
    radius, gap = float(joint.socket_radius), float(joint.clearance)
    expected = flores_stiffness(BRONZE, STEEL, radius, radius - gap)
    np.testing.assert_allclose(float(joint.stiffness()), expected, rtol=1e-12)


def ball_in_socket(mass, contact, friction=None, eccentricity=(0.0, 0.0, 0.0), ball_point=(0.0, 0.0, 0.0),
                   inertia=(1e-4, 1e-4, 1e-4), quaternion=(1.0, 0.0, 0.0, 0.0), position=(0.0, 0.0, 0.0)):
    """One body with a ball at ``ball_point`` (body frame) in a socket fixed at the origin."""
    joint = SphericalClearanceJoint(
        ball_body=0, socket_body=GROUND, ball_point=jnp.asarray(ball_point), socket_point=jnp.zeros(3),
        socket_radius=jnp.asarray(SOCKET_RADIUS), clearance=jnp.asarray(CLEARANCE), contact=contact,
        friction=friction or FrictionLaw("none"), initial_eccentricity=jnp.asarray(eccentricity))
    return SpatialMechanism(
        masses=jnp.array([mass]), inertias=jnp.diag(jnp.asarray(inertia))[None], gravity=jnp.array([0.0, -GRAVITY, 0.0]),
        initial_positions=jnp.concatenate([jnp.asarray(position), jnp.asarray(quaternion)]), joints=(),
        cylindrical_joints=(), spherical_joints=(joint,), loads=(), drivers=(), initial_velocities="zero",
        body_names=("ball",), clearance_names=("socket",))


STIFFNESS = float(flores_stiffness(STEEL, STEEL, SOCKET_RADIUS, SOCKET_RADIUS - CLEARANCE))


@pytest.mark.slow
def test_ball_settles_at_the_inverted_hertz_law():
    # a 2 kg body resting on its ball: K delta^1.5 = m g. It starts touching at rest, so the
    # Flores et al. (2011) damping runs on the 1 mm/s impact-velocity floor (near critical
    # here); the damping only decides how fast it settles, not where
    mass = 2.0
    contact = ContactLaw("flores", stiffness=STIFFNESS, exponent=1.5, restitution=0.5)
    mechanism = ball_in_socket(mass, contact, position=(0.0, -CLEARANCE, 0.0))
    y0 = SpatialState(mechanism.initial_positions, jnp.zeros(6), jnp.zeros(1), jnp.zeros(()))
    settings = SolverSettings(t_end=0.01, output_interval=0.001, solver="tsit5", rtol=1e-8, atol=1e-13,
                              dtmax_contact_share=None)
    states = jax.jit(solve, static_argnums=1)(mechanism, settings, y0).ys
    expected = (mass * GRAVITY / STIFFNESS) ** (1.0 / 1.5)
    final = np.asarray(states.x[-1, :3])
    np.testing.assert_allclose(-final[1] - CLEARANCE, expected, rtol=1e-6)  # atol / delta = 4e-7
    assert abs(final[0]) < 1e-3 * expected and abs(final[2]) < 1e-3 * expected


def pendulum(friction=None):
    """A 300 mm, 1 kg rod hanging on a ball at its upper end, tilted 0.5 rad about z."""
    contact = ContactLaw("hertz", stiffness=STIFFNESS, exponent=1.5)
    tilt = 0.5
    quaternion = axis_angle_quaternion(jnp.array([0.0, 0.0, 1.0]), tilt)
    ball_point = jnp.array([0.0, ROD_LENGTH / 2, 0.0])  # body frame: the rod along its y axis
    position = -rotation_matrix(quaternion) @ ball_point  # the ball at the socket's centre
    inertia = (ROD_MASS * ROD_LENGTH**2 / 12, 1e-4, ROD_MASS * ROD_LENGTH**2 / 12)
    return ball_in_socket(ROD_MASS, contact, friction, ball_point=ball_point, inertia=inertia,
                          quaternion=quaternion, position=position)


def total_energy(mechanism, x, v):
    """Kinetic + gravity + Hertz contact potential ``K delta^2.5 / 2.5`` (J)."""
    ball = x[:3] + rotation_matrix(x[3:7]) @ mechanism.spherical_joints[0].ball_point
    penetration = jnp.linalg.norm(ball) - CLEARANCE
    contact = STIFFNESS * jnp.maximum(penetration, 0.0) ** 2.5 / 2.5
    return kinetic_energy(mechanism, x, v) - ROD_MASS * mechanism.gravity @ x[:3] + contact, penetration


@pytest.mark.slow
def test_elastic_spherical_pendulum_conserves_energy():
    mechanism = pendulum()
    spin = 5.0  # rad/s about the vertical: the rod swings round the socket and hits its wall
    omega = jnp.array([0.0, spin, 0.0])
    x0 = mechanism.initial_positions
    velocity = jnp.cross(omega, x0[:3])  # about the ball (at the origin)
    y0 = SpatialState(x0, jnp.concatenate([velocity, omega]), jnp.zeros(1), jnp.zeros(()))
    settings = SolverSettings(t_end=0.02, output_interval=0.5e-3, solver="tsit5", rtol=1e-10, atol=1e-13,
                              dtmax_contact_share=None)
    solution = jax.jit(solve, static_argnums=1)(mechanism, settings, y0)
    energy, penetration = jax.vmap(lambda x, v: total_energy(mechanism, x, v))(solution.ys.x, solution.ys.v)
    assert int(solution.result._value) == 0
    assert float(jnp.max(penetration)) > 0.0  # the ball reached the socket's wall
    scale = ROD_MASS * GRAVITY * ROD_LENGTH / 2  # the swing's energy scale
    assert float(jnp.max(jnp.abs(energy - energy[0]))) < 1e-6 * scale


def test_friction_opposes_the_slip_at_the_contact_point():
    friction = FrictionLaw("coulomb_tanh", coefficient=0.2, stiction_velocity=1e-4)
    mechanism = pendulum(friction)
    x = mechanism.initial_positions
    ball_point = rotation_matrix(x[3:7]) @ mechanism.spherical_joints[0].ball_point + x[:3]
    # ball pushed 1 um into the wall along n, sliding and spinning (both enter the slip)
    normal = jnp.array([0.6, -0.8, 0.0])
    x = x.at[:3].add((CLEARANCE + 1e-6) * normal - ball_point)
    velocity, omega = jnp.array([0.03, 0.0225, -0.02]), jnp.array([0.4, -1.0, 2.0])
    v = jnp.concatenate([velocity, omega])
    generalised, state = eqx.filter_jit(contact_forces)(mechanism, x, v, jnp.full(1, 0.1))
    contact_point = SOCKET_RADIUS * normal
    slip = velocity + jnp.cross(omega, contact_point - x[:3])
    slip = slip - (slip @ normal) * normal
    force = generalised[:3]
    tangential = force - (force @ normal) * normal
    normal_force = float(STIFFNESS * 1e-6**1.5)
    np.testing.assert_allclose(-(force @ normal), normal_force, rtol=1e-9)
    np.testing.assert_allclose(float(state.normal_force[0]), normal_force, rtol=1e-9)
    expected = -float(friction_coefficient(friction, jnp.linalg.norm(slip))) * normal_force * slip / jnp.linalg.norm(slip)
    np.testing.assert_allclose(tangential, expected, rtol=1e-9, atol=1e-12 * normal_force)
    assert float(tangential @ slip) < 0.0
    # moment about the centre of mass of the force at the contact point
    np.testing.assert_allclose(generalised[3:6], jnp.cross(contact_point - x[:3], force), rtol=1e-9, atol=1e-15)


def test_derivatives_finite_at_zero_eccentricity():
    # the ball centred in its socket: the normal n = e/|e| is undefined; the contact force and
    # its derivatives with respect to the state and the clearance must stay finite
    friction = FrictionLaw("coulomb_tanh", coefficient=0.2, stiction_velocity=1e-4)
    mechanism = pendulum(friction)

    def contact_output(x, v, clearance):
        changed = eqx.tree_at(lambda m: m.spherical_joints[0].clearance, mechanism, clearance)
        generalised, state = contact_forces(changed, x, v, jnp.full(1, 0.1))
        return jnp.sum(generalised) + jnp.sum(state.eccentricity) + jnp.sum(state.slice_normal_rate)

    v = jnp.array([0.0, 0.0, 0.0, 0.1, -0.2, 0.3])
    gradients = jax.jit(jax.grad(contact_output, argnums=(0, 1, 2)))(mechanism.initial_positions, v, jnp.asarray(CLEARANCE))
    assert all(np.all(np.isfinite(np.asarray(g))) for g in gradients)
