"""Spatial test mechanisms built directly (no config files)."""

import jax.numpy as jnp

from model.contact.friction import FrictionLaw
from model.contact.normal import ContactLaw
from model.mechanics.spatial import GROUND, CylindricalClearanceJoint, Load, SpatialMechanism

PIN_MASS = 0.0986
PIN_INERTIA = (1.561e-5, 1.561e-5, 4.93e-6)
LENGTH = 0.040
LOAD = 1000.0
TORQUE = 10.0
GRAVITY = 9.81


def bushing(end_force=True, centre_force=False, centre_torque=False, slices=20, model="flores",
            restitution=0.5, eccentricity=(0.0, -0.999e-3), friction=None, gravity=GRAVITY, torque_axis=(1.0, 0.0, 0.0)):
    """The pin-in-bushing load cases of Yao, Chen, Wang & Liu: a 20 mm steel pin in a fixed
    bushing with 1 mm radial clearance, contact length 40 mm, Palmgren stiffness."""
    joint = CylindricalClearanceJoint(
        journal_body=0, bearing_body=GROUND, slices=slices, axial_fixed=True, palmgren=True,
        journal_point=jnp.zeros(3), bearing_point=jnp.zeros(3), journal_axis=jnp.array([0.0, 0.0, 1.0]),
        bearing_axis=jnp.array([0.0, 0.0, 1.0]), bearing_u=jnp.array([1.0, 0.0, 0.0]),
        bearing_w=jnp.array([0.0, 1.0, 0.0]), length=jnp.asarray(LENGTH), bearing_radius=jnp.asarray(0.011),
        clearance=jnp.asarray(1e-3), contact=ContactLaw(model, stiffness=0.0, exponent=10.0 / 9.0, restitution=restitution),
        friction=friction or FrictionLaw("none"), initial_eccentricity=jnp.asarray(eccentricity))
    loads = (
        Load(0, "force", jnp.array([0.0, 0.0, -LENGTH / 2]), jnp.array([0.0, -LOAD, 0.0]), jnp.asarray(float(end_force))),
        Load(0, "force", jnp.zeros(3), jnp.array([0.0, -LOAD, 0.0]), jnp.asarray(float(centre_force))),
        Load(0, "torque", jnp.zeros(3), TORQUE * jnp.asarray(torque_axis), jnp.asarray(float(centre_torque))),
    )
    return SpatialMechanism(
        masses=jnp.array([PIN_MASS]), inertias=jnp.diag(jnp.array(PIN_INERTIA))[None],
        gravity=jnp.array([0.0, -gravity, 0.0]), initial_positions=jnp.array([0.0, 0, 0, 1, 0, 0, 0]),
        joints=(), cylindrical_joints=(joint,), spherical_joints=(), loads=loads, drivers=(),
        initial_velocities="zero", body_names=("pin",), clearance_names=("bush",))
