"""The continuous parameters of a clearance joint that a dotted config path may address,
shared by the planar and the spatial builders: ``key`` (the path below ``joints.J``) ->
getter of the joint's array leaf."""

from __future__ import annotations

from collections.abc import Callable

# contact and friction laws, clearance: every clearance joint, planar or spatial
CONTACT_KEYS: dict[str, Callable] = {
    "clearance": lambda j: j.clearance,
    "contact.stiffness": lambda j: j.contact.stiffness,
    "contact.stiffness_factor": lambda j: j.stiffness_factor,
    "contact.exponent": lambda j: j.contact.exponent,
    "contact.restitution": lambda j: j.contact.restitution,
    "contact.damping": lambda j: j.contact.damping,
    "contact.penetration_max": lambda j: j.contact.penetration_max,
    "contact.impact_velocity_floor": lambda j: j.contact.impact_velocity_floor,
    "friction.coefficient": lambda j: j.friction.coefficient,
    "friction.static_coefficient": lambda j: j.friction.static_coefficient,
    "friction.stiction_velocity": lambda j: j.friction.stiction_velocity,
    "friction.dynamic_velocity": lambda j: j.friction.dynamic_velocity,
}

# journal-bearing geometry and oil film: planar revolute and spatial cylindrical joints
BEARING_KEYS: dict[str, Callable] = {
    "bearing_radius": lambda j: j.bearing_radius,
    "lubrication.viscosity": lambda j: j.lubrication.viscosity,
    "lubrication.length": lambda j: j.lubrication.length,
}
