"""A journal pressed by a load into a fixed bushing of a cylindrical clearance joint, spinning
about its axis: the test mechanism of the spatial joint's wear (no config files)."""

import jax.numpy as jnp

import model
from model.contact.friction import FrictionLaw
from model.contact.normal import ContactLaw
from model.mechanics.spatial import GROUND, CylindricalClearanceJoint, Load, SpatialMechanism
from model.mechanics.spatial.dynamics import SpatialState

LOAD = 1000.0  # N, the journal's weight (1 kg)
BEARING_RADIUS, CLEARANCE, LENGTH = 0.01, 1e-4, 0.02  # m
SLICES = 4
SPEED = 100.0  # rad/s, the journal's spin about its axis (no friction: it stays constant)
K_W = 1e-13  # 1/Pa
RESOLUTION = 720  # a multiple of 4: a node sits at the loaded point (-90 deg from u = x)
EXPONENT = 10.0 / 9.0
WEAR = model.ArchardWear(coefficient=jnp.asarray(K_W), length=jnp.asarray(LENGTH), start_time=jnp.asarray(0.0),
                         joint=0, resolution=RESOLUTION)


def journal(wear: model.WornBore | None = None, torque: float = 0.0) -> SpatialMechanism:
    """The journal (1 kg, weight ``LOAD`` along -y) in a fixed bushing along z, with a
    ``torque`` (N m) about +x that tilts its +z end down."""
    joint = CylindricalClearanceJoint(
        journal_body=0, bearing_body=GROUND, slices=SLICES, axial_fixed=True, palmgren=True,
        journal_point=jnp.zeros(3), bearing_point=jnp.zeros(3), journal_axis=jnp.array([0.0, 0.0, 1.0]),
        bearing_axis=jnp.array([0.0, 0.0, 1.0]), bearing_u=jnp.array([1.0, 0.0, 0.0]),
        bearing_w=jnp.array([0.0, 1.0, 0.0]), length=jnp.asarray(LENGTH), bearing_radius=jnp.asarray(BEARING_RADIUS),
        clearance=jnp.asarray(CLEARANCE),
        contact=ContactLaw("lankarani_nikravesh", stiffness=0.0, exponent=EXPONENT, restitution=0.5),
        friction=FrictionLaw("none"), initial_eccentricity=jnp.zeros(2), wear=wear,
        effective_modulus=jnp.asarray(model.effective_modulus(207e9, 0.3, 207e9, 0.3)))
    loads = (Load(0, "torque", jnp.zeros(3), jnp.array([torque, 0.0, 0.0]), jnp.asarray(1.0)),)
    return SpatialMechanism(
        masses=jnp.ones(1), inertias=jnp.diag(jnp.array([2e-4, 2e-4, 1e-4]))[None],
        gravity=jnp.array([0.0, -LOAD, 0.0]), initial_positions=jnp.array([0.0, 0, 0, 1, 0, 0, 0]),
        joints=(), cylindrical_joints=(joint,), spherical_joints=(), loads=loads, drivers=(),
        initial_velocities="zero", body_names=("journal",), clearance_names=("bush",))


def static_penetration(mechanism: SpatialMechanism) -> float:
    """Each slice's penetration under its share of the load, ``F / N = (K / N) delta^n``."""
    return float((LOAD / mechanism.cylindrical_joints[0].stiffness()) ** (1.0 / EXPONENT))


def resting_state(mechanism: SpatialMechanism, depth: float = 0.0) -> SpatialState:
    """The journal level, at rest on its contact (``depth``: a uniformly worn bushing's), spinning."""
    drop = CLEARANCE + depth + static_penetration(mechanism)
    return SpatialState(jnp.array([0.0, -drop, 0.0, 1.0, 0.0, 0.0, 0.0]),
                        jnp.array([0.0, 0.0, 0.0, 0.0, 0.0, SPEED]), jnp.zeros(SLICES), jnp.zeros(()))
