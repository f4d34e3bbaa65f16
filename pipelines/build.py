"""From a validated config to the JAX model: the mechanism pytree, solver settings, and
setters for the dotted parameter paths that sweeps, fits and designs vary.

A discrete choice (a law, a solver, ``stiffness = "hertz"`` against a value) fixes the
static structure and so needs its own build; every continuous parameter is an array leaf
that :class:`ParameterMap` replaces inside ``jit``/``vmap``/``grad``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import model
from model.mechanics.mechanism import (
    ClearanceJoint,
    Driver,
    FixedJoint,
    Mechanism,
    PrismaticJoint,
    RevoluteJoint,
)
from model.integrate.settings import SolverSettings
from model.integrate.solver_choice import auto_solver

from model.mechanics.spatial import SpatialMechanism
from model.mechanics.tree import TreeMechanism, UnsupportedMechanism, tree_mechanism

from .build_common import absolute_fields, build_friction, build_lubrication, contact_law, joint_modulus
from .build_common import leaf as _array
from .build_flexible import BodyLayout, point_loads, velocity_targets
from .build_spatial import build_spatial
from .config import MechanismConfig
from .config.spatial import SpatialConfig
from .errors import ConfigError


def _initial_angle(config: MechanismConfig, pair) -> float:
    angles = {b.name: b.angle for b in config.bodies}
    return angles.get(pair[1], 0.0) - angles.get(pair[0], 0.0)


def _clearance_joint(config: MechanismConfig, joint, layout) -> ClearanceJoint:
    contact = joint.contact
    hertz = contact.stiffness == "hertz"
    (journal_body, journal_point), (bearing_body, bearing_point) = (
        layout.attach(name, point) for name, point in zip(joint.bodies, joint.points)
    )
    return ClearanceJoint(
        journal_body=journal_body,
        bearing_body=bearing_body,
        journal_point=journal_point,
        bearing_point=bearing_point,
        bearing_radius=_array(joint.bearing_radius),
        clearance=_array(joint.clearance),
        contact=contact_law(contact, 0.0),
        friction=build_friction(joint.friction),
        effective_modulus=_array(joint_modulus(config, joint) if hertz else 0.0),
        stiffness_factor=_array(contact.stiffness_factor),
        initial_eccentricity=_array(joint.initial_eccentricity),
        hertz=hertz,
        lubrication=build_lubrication(joint.lubrication),
    )


def build_mechanism(config: MechanismConfig | SpatialConfig, engine: str | None = None
                    ) -> Mechanism | TreeMechanism | SpatialMechanism:
    """The mechanism described by a validated config on the engine ``simulation.engine``
    names (``engine`` overrides it): in the joint coordinates of its kinematic tree
    (:class:`~model.mechanics.tree.TreeMechanism`, for ``dimension = 3``
    :class:`~model.mechanics.tree.SpatialTreeMechanism`) for ``"joint"``, and for
    ``"auto"`` where that engine applies to a planar config; else in absolute coordinates
    (:class:`~model.mechanics.mechanism.Mechanism`,
    :class:`~model.mechanics.spatial.SpatialMechanism` by
    :func:`pipelines.build_spatial.build_spatial`): ``"absolute"``, ``"auto"`` for a spatial
    config (the absolute engine runs the shipped spatial configs faster, docs/engine.md),
    and ``"auto"`` where :func:`~model.mechanics.tree.tree_mechanism` raises
    :class:`~model.mechanics.tree.UnsupportedMechanism`."""
    engine = engine or config.simulation.engine
    spatial = isinstance(config, SpatialConfig)
    mechanism = build_spatial(config) if spatial else _build_absolute(config)
    if engine == "absolute" or (spatial and engine == "auto"):
        return mechanism
    try:
        return tree_mechanism(mechanism)
    except UnsupportedMechanism as reason:
        if engine == "joint":
            raise ConfigError(config.source, "simulation.engine",
                              f"the joint-coordinate engine does not apply: {reason}") from None
        return mechanism


def _build_absolute(config: MechanismConfig) -> Mechanism:
    """The planar mechanism of ``config`` in absolute coordinates."""
    revolute, prismatic, fixed, clearance = [], [], [], []
    revolute_index: dict[str, int] = {}
    layout = BodyLayout(config)
    for joint in config.joints:
        (i, point_i), (j, point_j) = (layout.attach(name, point) for name, point in zip(joint.bodies, joint.points))
        if joint.type == "revolute":
            revolute_index[joint.name] = len(revolute)
            revolute.append(RevoluteJoint(i, j, point_i, point_j))
        elif joint.type == "prismatic":
            axis = np.asarray(joint.axis, float)
            prismatic.append(
                PrismaticJoint(i, j, point_i, point_j,
                               _array(axis / np.linalg.norm(axis)), _array(_initial_angle(config, joint.bodies)))
            )
        elif joint.type == "fixed":
            fixed.append(FixedJoint(i, j, point_i, point_j, _array(_initial_angle(config, joint.bodies))))
        else:
            clearance.append((joint.name, _clearance_joint(config, joint, layout)))
    drivers = []
    for driver in config.drivers:
        if driver.joint not in revolute_index:
            raise ConfigError(config._source, f"drivers.{driver.name}.joint", f"{driver.joint!r} is not an ideal revolute joint")
        joint_config = next(j for j in config.joints if j.name == driver.joint)
        drivers.append(
            Driver(
                joint=revolute_index[driver.joint],
                kind=driver.type,
                speed=_array(getattr(driver, "speed", 0.0)),
                torque=_array(getattr(driver, "torque", 0.0)),
                angle=_array(_initial_angle(config, joint_config.bodies)),
            )
        )
    return Mechanism(
        masses=_array(layout.masses),
        inertias=_array(layout.inertias),
        gravity=_array(config.gravity),
        initial_positions=_array(np.concatenate(layout.positions)),
        revolute_joints=tuple(revolute),
        prismatic_joints=tuple(prismatic),
        fixed_joints=tuple(fixed),
        clearance_joints=tuple(joint for _, joint in clearance),
        drivers=tuple(drivers),
        clearance_names=tuple(name for name, _ in clearance),
        joint_names=tuple(joint.name for kind in ("revolute", "prismatic", "fixed")
                          for joint in config.joints if joint.type == kind),
        loads=point_loads(config, layout),
        **absolute_fields(config, layout,
                          velocity_targets(config, np.stack(layout.positions)[:, :2], 2)),
    )


def solver_settings(config: MechanismConfig | SpatialConfig, **changes) -> SolverSettings:
    """Static integration settings from ``[simulation]`` (planar and spatial configs share
    its keys); ``solver = "auto"`` is resolved with :func:`model.resolve_solver`, or, for a
    mechanism with a flexible body, from the beam elements' fastest rate against the
    contact period at the run's ``rtol`` (:func:`model.integrate.auto_solver`)."""
    simulation = config.simulation
    flexible_choice = None
    if simulation.solver == "auto" and any(body.flexible is not None for body in config.bodies):
        flexible_choice = auto_solver(build_mechanism(config, "absolute"), changes.get("rtol", simulation.rtol))
    settings = dict(
        t_end=simulation.t_end,
        output_interval=simulation.output_interval,
        solver=flexible_choice or model.resolve_solver(simulation.solver),
        rtol=simulation.rtol,
        atol=simulation.atol,
        dtmax=simulation.dtmax,
        max_steps=simulation.max_steps,
        jacobian_reuse=simulation.jacobian_reuse,
    )
    settings.update(changes)
    return SolverSettings(**settings)


# Continuous parameters of a clearance joint a path may address: key below ``joints.J`` ->
# getter of the leaf. Contact and friction laws and clearance: every clearance joint.
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
# Journal-bearing geometry and oil film: planar revolute and spatial cylindrical joints
# (the joints with a ``bearing_radius``); a spatial cylindrical joint also has a length.
BEARING_KEYS: dict[str, Callable] = {
    "bearing_radius": lambda j: j.bearing_radius,
    "lubrication.viscosity": lambda j: j.lubrication.viscosity,
    "lubrication.length": lambda j: j.lubrication.length,
}


def parameter_leaf(mechanism: Mechanism | SpatialMechanism, path: str, source: str = "config"
                   ) -> tuple[Callable, Callable]:
    """``(get, set)`` for the array leaf addressed by dotted config ``path``:
    ``get(mechanism) -> value`` and ``set(mechanism, value) -> mechanism``.

    Supported: ``bodies.B.mass`` (a rigid body), ``bodies.B.inertia`` (a planar one),
    ``bodies.B.flexible.damping_ratio``, ``joints.J.<key>`` (a clearance joint's
    ``CONTACT_KEYS``; with a bearing, ``BEARING_KEYS``; a spatial cylindrical joint's
    ``length``), ``drivers.D.speed``, ``drivers.D.torque``,
    ``simulation.baumgarte_alpha``/``baumgarte_beta``. ``slices`` and the laws are discrete
    (one compiled group per value). A :class:`~model.mechanics.tree.TreeMechanism` reads
    its parameters from its absolute description (the same leaves).
    """
    section, _, rest = path.partition(".")
    name, _, key = rest.partition(".")
    chains = [chain.name for chain in mechanism.beam_chains]
    leaf = None
    if section == "bodies" and name in mechanism.body_names and (
            key == "mass" or (key == "inertia" and mechanism.inertias.ndim == 1)):
        index, field = mechanism.body_names.index(name), "masses" if key == "mass" else "inertias"
        leaf = (lambda m: getattr(m, field)[index],
                lambda m, value: eqx.tree_at(lambda m_: getattr(m_, field), m, getattr(m, field).at[index].set(value)))
    elif section == "bodies" and name in chains and key == "flexible.damping_ratio":
        index = chains.index(name)
        leaf = tree_leaf(lambda m: m.beam_chains[index].damping_ratio)
    elif section == "joints" and name in mechanism.clearance_names:
        leaf = _joint_leaf(mechanism, name, key, path, source)
    elif section == "drivers" and name in mechanism.driver_names and key in ("speed", "torque"):
        index = mechanism.driver_names.index(name)
        leaf = tree_leaf(lambda m: getattr(m.drivers[index], key))
    elif section == "simulation" and name in ("baumgarte_alpha", "baumgarte_beta") and not key:
        leaf = tree_leaf(lambda m: getattr(m, name))
    if leaf is None:
        raise ConfigError(source, path, "not a continuous parameter of the mechanism that can be varied")
    return leaf


def _joint_leaf(mechanism, name: str, key: str, path: str, source: str) -> tuple[Callable, Callable] | None:
    index = mechanism.clearance_names.index(name)
    joint = mechanism.clearance_joints[index]
    keys = {**CONTACT_KEYS, **(BEARING_KEYS if hasattr(joint, "bearing_radius") else {}),
            **({"length": lambda j: j.length} if hasattr(joint, "length") else {})}
    if key not in keys:
        return None
    getter = keys[key]
    if key.startswith("lubrication.") and joint.lubrication is None:
        raise ConfigError(source, path, f"joint {name!r} has no [lubrication] table")
    if getattr(joint, "palmgren", False) and key == "contact.stiffness":
        raise ConfigError(source, path, 'the joint\'s stiffness is "palmgren" (from its length); vary the length')
    if not isinstance(getattr(mechanism, "absolute", mechanism), SpatialMechanism):  # the joint engine wraps it
        return tree_leaf(lambda m: getter(m.clearance_joints[index]))
    # through the fields themselves: a spatial ``clearance_joints`` is a derived tuple tree_at cannot write
    cylinders = len(mechanism.cylindrical_joints)
    if index < cylinders:
        return tree_leaf(lambda m: getter(m.cylindrical_joints[index]))
    return tree_leaf(lambda m: getter(m.spherical_joints[index - cylinders]))


def tree_leaf(getter: Callable) -> tuple[Callable, Callable]:
    """``(getter, setter)`` of the array leaf ``getter`` reads (``eqx.tree_at``)."""
    return getter, lambda m, value: eqx.tree_at(getter, m, value)


class ParameterMap(eqx.Module):
    """Writes values (SI) for a fixed list of dotted paths into a mechanism.

    ``apply(mechanism, values)`` with ``values`` of shape ``(len(paths),)`` is pure JAX,
    so ``vmap`` over ``values`` batches a sweep and ``grad``/``jvp`` differentiates
    through the whole simulation with respect to them.
    """

    paths: tuple[str, ...] = eqx.field(static=True)
    leaves: tuple[tuple[Callable, Callable], ...] = eqx.field(static=True)

    def __init__(self, mechanism: Mechanism | SpatialMechanism, paths: Sequence[str], source: str = "config"):
        self.paths = tuple(paths)
        self.leaves = tuple(parameter_leaf(mechanism, path, source) for path in self.paths)

    def apply(self, mechanism, values):
        values = jnp.asarray(values, dtype=jnp.float64)
        for index, (_, set_) in enumerate(self.leaves):
            mechanism = set_(mechanism, values[index])
        return mechanism

    def read(self, mechanism) -> jnp.ndarray:
        return jnp.stack([get(mechanism) for get, _ in self.leaves])

    def as_dict(self, values: Mapping | Sequence) -> dict[str, float]:
        return {path: float(value) for path, value in zip(self.paths, values)}
