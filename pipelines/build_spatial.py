"""From a validated spatial config to :class:`model.mechanics.spatial.SpatialMechanism`.

Ground-frame joint axes at t = 0 become body-frame axes through each body's initial
rotation; the user's constraint set is checked for redundancy at the initial pose.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from model.geometry.quaternion import perpendicular_pair, quaternion_product
from model.mechanics.spatial import (GROUND, CylindricalClearanceJoint, Load, SpatialDriver, SpatialJoint,
                                     SpatialMechanism, SphericalClearanceJoint, redundant_joints)
from model.mechanics.spatial import without_redundant_rows

from .build_common import absolute_fields, build_friction, build_lubrication, contact_law, joint_modulus
from .build_common import leaf as _array
from .build_flexible import BodyLayout, velocity_targets
from .config.spatial import SpatialConfig
from .errors import ConfigError


def build_spatial(config: SpatialConfig) -> SpatialMechanism:
    """The mechanism pytree of ``config`` (errors name the file and the key)."""
    layout = BodyLayout(config)
    frame, quaternion = layout.frame, layout.quaternion

    joints, cylinders, spheres, joint_names, clearance_names = [], [], [], [], []
    for joint in config.joints:
        body_i, body_j = joint.bodies
        (index_i, point_i), (index_j, point_j) = (layout.attach(b, p) for b, p in zip(joint.bodies, joint.points))
        axis = np.asarray(joint.axis if joint.axis is not None else (0.0, 0.0, 1.0))
        u, w = (np.asarray(v) for v in perpendicular_pair(axis))
        if joint.type == "cylindrical_clearance":
            journal, bearing = body_i, body_j
            cylinders.append(CylindricalClearanceJoint(
                index_i, index_j, joint.slices, joint.axial == "fixed",
                joint.contact.stiffness == "palmgren", _array(point_i), _array(point_j),
                _array(frame(journal) @ axis), _array(frame(bearing) @ axis), _array(frame(bearing) @ u),
                _array(frame(bearing) @ w), _array(joint.length), _array(joint.bearing_radius),
                _array(joint.clearance), contact_law(joint.contact, 1.0),
                build_friction(joint.friction), _array(joint.initial_eccentricity),
                build_lubrication(joint.lubrication), _array(joint.contact.stiffness_factor)))
            clearance_names.append(joint.name)
        elif joint.type == "spherical_clearance":
            hertz = joint.contact.stiffness == "hertz"
            spheres.append(SphericalClearanceJoint(
                index_i, index_j, _array(point_i), _array(point_j),
                _array(joint.socket_radius), _array(joint.clearance), contact_law(joint.contact, 0.0),
                build_friction(joint.friction), _array(joint.initial_eccentricity),
                _array(joint.contact.stiffness_factor), hertz, _array(joint_modulus(config, joint) if hertz else 0.0)))
            clearance_names.append(joint.name)
        else:
            q_i, q_j = quaternion(body_i), quaternion(body_j)
            relative = np.asarray(quaternion_product(q_i * np.array([1.0, -1, -1, -1]), q_j))
            joints.append(SpatialJoint(
                joint.type, index_i, index_j, _array(point_i), _array(point_j),
                _array(frame(body_i) @ axis), _array(frame(body_j) @ axis), _array(frame(body_i) @ u),
                _array(frame(body_j) @ u), _array(relative)))
            joint_names.append(joint.name)
    # clearance joints come after the ideal joints in the idealised twin, so ideal joint
    # indices (drivers) are unchanged
    ideal_index = {name: i for i, name in enumerate(joint_names)}
    drivers = tuple(SpatialDriver(ideal_index[d.joint], d.type, _array(getattr(d, "speed", 0.0)),
                                  _array(getattr(d, "torque", 0.0)), _array(0.0)) for d in config.drivers)
    loads = []
    for load in config.loads:  # a torque acts on the body (at its centre of mass, for the segment that holds it)
        index, point = layout.attach(load.body, load.point if load.type == "force" else (0.0, 0.0, 0.0))
        loads.append(Load(index, load.type, _array(point), _array(load.value), _array(float(load.enabled))))
    mechanism = SpatialMechanism(
        masses=_array(layout.masses), inertias=_array(np.stack(layout.inertias)), gravity=_array(config.gravity),
        initial_positions=_array(np.concatenate(layout.positions)), joints=tuple(joints), cylindrical_joints=tuple(cylinders),
        spherical_joints=tuple(spheres), loads=tuple(loads), drivers=drivers, joint_names=tuple(joint_names),
        clearance_names=tuple(clearance_names),
        **absolute_fields(config, layout, velocity_targets(config, np.stack(layout.positions)[:, :3], 3)))
    return _with_ideal_rows(_check_redundancy(config, _check_seats(config, mechanism)))


@jax.jit
def _start(mechanism: SpatialMechanism):
    # compiled once per mechanism structure: a sweep builds and checks every point's mechanism.
    # The checks need the joints' pose and seats, not the flexible bodies' static shape (shaped
    # after the seat, and a compile of minutes): the bodies are checked undeformed.
    state, seats = dataclasses.replace(mechanism, initial_deformation="undeformed").start()
    return state.x, seats


def _initial_positions(mechanism: SpatialMechanism):
    return _start(mechanism)[0]


def _check_seats(config: SpatialConfig, mechanism: SpatialMechanism) -> SpatialMechanism:
    """Refuse a static start (``initial.clearance = "static"``) of a cylindrical clearance
    joint that has no quasi-static seat within its clearance."""
    if mechanism.initial_clearance != "static" or not mechanism.cylindrical_joints:
        return mechanism
    names = [joint.name for joint in config.joints if joint.type == "cylindrical_clearance"]
    for name, seat in zip(names, _start(mechanism)[1]):
        if not bool(seat.exists):
            raise ConfigError(
                config.source, "initial.clearance",
                f"joint {name!r} has no quasi-static seat within its clearance (the closest the solve came leaves "
                f"{float(seat.residual):.2g} of the ideal joint's load unbalanced, the journal {float(seat.depth):.3g} "
                "clearances into the bearing): a moment about the cross axes near the force times half the contact "
                'length or above tilts the journal across the bearing; use "configured"')
    return mechanism


def _check_redundancy(config: SpatialConfig, mechanism: SpatialMechanism) -> SpatialMechanism:
    """Refuse dependent rows among the user's joints and drivers; drop the generated axial
    rows of clearance joints that the other joints already imply (e.g. a planar loop)."""
    user = dataclasses.replace(mechanism, cylindrical_joints=(), spherical_joints=())
    if not user.joints:
        return mechanism
    x0 = np.asarray(_initial_positions(mechanism))
    redundant = redundant_joints(user, x0)
    if redundant:
        raise ConfigError(config.source, "joints",
                          f"redundant constraints at the initial pose (rows of {', '.join(redundant)} repeat others); "
                          "replace a revolute joint by a spherical or cylindrical one where the loop is closed")
    if redundant_joints(mechanism, x0):
        return without_redundant_rows(mechanism, x0)
    return mechanism


def _with_ideal_rows(mechanism: SpatialMechanism) -> SpatialMechanism:
    """Record which rows of the ideal twin are independent at its initial pose: a clearance
    joint made ideal often closes a loop redundantly (a planar loop of spatial revolute
    joints), and every user of ``idealised()`` (the simulate command's ideal run, the design
    metrics against the ideal mechanism) then solves a regular system."""
    twin = mechanism.idealised()
    if not twin.joints:
        return mechanism
    x0 = np.asarray(_initial_positions(twin))
    if not redundant_joints(twin, x0):
        return mechanism
    return dataclasses.replace(mechanism, ideal_kept_rows=without_redundant_rows(twin, x0).kept_rows)
