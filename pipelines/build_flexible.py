"""Expansion of a planar or spatial config's bodies into the engine's rigid bodies: a rigid
body is one, a flexible body ``B`` of ``segments = m`` elements is ``m + 1`` rigid bodies
named ``B[k]`` joined by a :class:`~model.mechanics.flexible.BeamChain`; joint and load
points go to the segment that holds them (``model/mechanics/segmentation.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import jax.numpy as jnp
import numpy as np

from model.geometry.quaternion import axis_angle_quaternion, rotation_matrix
from model.mechanics.beam import SHEAR_FACTORS, section_properties
from model.mechanics.flexible import BeamChain, PointLoad
from model.mechanics.mechanism import GROUND
from model.mechanics.segmentation import (
    frequency_coefficient, holding_segment, segment_centres, segment_inertia_tensors, segment_inertias, segment_masses,
)

from .config import MechanismConfig
from .config.spatial import Rotation, SpatialConfig


@dataclass
class BodyLayout:
    """The engine's bodies for a planar or spatial config (see the module docstring): a
    flexible body's segments lie along its x axis, each with its piece's mass and inertia."""

    config: MechanismConfig | SpatialConfig
    first_index: dict[str, int] = field(default_factory=dict)  # config body -> its first engine body
    masses: list[float] = field(default_factory=list)
    inertias: list = field(default_factory=list)  # planar: about z (kg m^2); spatial: 3x3 tensor, body axes
    positions: list[np.ndarray] = field(default_factory=list)  # per engine body: (x, y, theta) or (r, quaternion)
    names: list[str] = field(default_factory=list)
    quaternions: dict[str, np.ndarray] = field(default_factory=dict)  # spatial: per config body

    def __post_init__(self):
        spatial = getattr(self.config, "dimension", 2) == 3
        for body in self.config.bodies:
            self.first_index[body.name] = len(self.names)
            if spatial:
                rotation = body.rotation or Rotation(axis=(0.0, 0.0, 1.0))
                orientation = np.asarray(axis_angle_quaternion(rotation.axis, rotation.angle))
                self.quaternions[body.name] = orientation
                direction = np.asarray(rotation_matrix(orientation))[:, 0]
            else:
                orientation, direction = np.array([body.angle]), np.array([np.cos(body.angle), np.sin(body.angle)])
            spec = body.flexible
            if spec is None:
                inertia = np.asarray(body.inertia) if spatial else body.inertia
                self._add(body.name, body.mass, inertia, np.asarray(body.position), orientation)
                continue
            section = section_properties(spec.section.shape, **spec.section.dimensions())
            inertias = (segment_inertia_tensors(body.mass, spec.length, spec.segments, section["area"], section["iyy"],
                                                section["izz"]) if spatial else
                        [float(inertia) for inertia in segment_inertias(body.mass, spec.length, spec.segments,
                                                                         section["area"], section["izz"])])
            for k, (mass, x) in enumerate(zip(segment_masses(body.mass, spec.segments),
                                              segment_centres(spec.length, spec.segments))):
                self._add(f"{body.name}[{k}]", float(mass), inertias[k], np.asarray(body.position) + x * direction,
                          orientation)

    def _add(self, name, mass, inertia, position, orientation):
        self.names.append(name)
        self.masses.append(mass)
        self.inertias.append(inertia)
        self.positions.append(np.concatenate([position, orientation]))

    def flexible(self, name: str):
        """The ``[bodies.flexible]`` table of config body ``name``, or None."""
        return next((body.flexible for body in self.config.bodies if body.name == name), None)

    def attach(self, name: str, point) -> tuple[int, jnp.ndarray]:
        """Engine body and its local point (m) for ``point`` of config body ``name``."""
        point = np.asarray(point, dtype=float)
        spec = None if name == "ground" else self.flexible(name)
        if spec is None:
            return GROUND if name == "ground" else self.first_index[name], jnp.asarray(point, dtype=jnp.float64)
        segment = holding_segment(point[0], spec.length, spec.segments)
        shift = np.zeros_like(point)
        shift[0] = segment_centres(spec.length, spec.segments)[segment]
        return self.first_index[name] + segment, jnp.asarray(point - shift, dtype=jnp.float64)

    def frame(self, name: str) -> np.ndarray:
        """Body-from-ground rotation of spatial config body ``name`` at t = 0."""
        return np.eye(3) if name == "ground" else np.asarray(rotation_matrix(self.quaternions[name])).T

    def quaternion(self, name: str) -> np.ndarray:
        """The initial quaternion of spatial config body ``name``."""
        return np.array([1.0, 0, 0, 0]) if name == "ground" else self.quaternions[name]


def beam_chains(config, layout) -> tuple[BeamChain, ...]:
    """One chain per flexible body (planar or spatial config and its layout), its Rayleigh
    damping tuned on the body's in-plane (about its z axis) first bending mode on its
    supports: its joints, a ``fixed`` one or one driven at constant speed clamping, any other
    pinning (docs/flexible.md)."""
    driven = {driver.joint for driver in config.drivers if driver.type == "constant_speed"}
    chains = []
    for body in config.bodies:
        spec = body.flexible
        if spec is None:
            continue
        material = config.materials[spec.material]
        section = section_properties(spec.section.shape, **spec.section.dimensions())
        shear = SHEAR_FACTORS[spec.section.shape] if spec.shear_factor is None else spec.shear_factor
        first = layout.first_index[body.name]
        leaf = lambda v: jnp.asarray(v, dtype=jnp.float64)  # noqa: E731
        chain = BeamChain(
            modulus=leaf(material.youngs_modulus), poisson_ratio=leaf(material.poisson_ratio),
            area=leaf(section["area"]), inertia_y=leaf(section["iyy"]), inertia_z=leaf(section["izz"]),
            inertia_x=leaf(section["ixx"]), shear_factor_y=leaf(shear), shear_factor_z=leaf(shear),
            element_length=leaf(spec.length / spec.segments), mass_per_length=leaf(body.mass / spec.length),
            damping_ratio=leaf(spec.damping_ratio), frequency_coefficient=leaf(1.0),
            segments=tuple(range(first, first + spec.segments + 1)), name=body.name,
        )
        supports = []
        for joint in config.joints:
            clamps = joint.type == "fixed" or joint.name in driven
            for name, point in zip(joint.bodies, joint.points):
                if name == body.name:
                    index, local = layout.attach(name, point)
                    supports.append((index - first, float(local[0]), float(local[1]), clamps))
        masses = layout.masses[first : first + spec.segments + 1]
        # the moment about z: a planar segment's, or the zz entry of a spatial one's tensor
        inertias = [float(np.atleast_2d(inertia)[-1, -1]) for inertia in layout.inertias[first : first + spec.segments + 1]]
        coefficient = frequency_coefficient(chain, masses, inertias, supports)
        chains.append(BeamChain(**{**{f: getattr(chain, f) for f in chain.__dataclass_fields__},
                                   "frequency_coefficient": leaf(coefficient)}))
    return tuple(chains)


def point_loads(config: MechanismConfig, layout: BodyLayout) -> tuple[PointLoad, ...]:
    """The enabled ``[[loads]]``, on the engine body that holds each point."""
    loads = []
    for load in config.loads:
        if not load.enabled:
            continue
        index, local = layout.attach(load.body, load.point)
        value = load.value if load.type == "force" else (load.value, 0.0)
        loads.append(PointLoad(index, load.type, local, jnp.asarray(value, dtype=jnp.float64)))
    return tuple(loads)


def velocity_targets(config, engine_positions: np.ndarray, dimension: int) -> jnp.ndarray | None:
    """Requested velocities of ``[initial.velocities]`` per engine body (planar ``vx, vy,
    omega``; spatial ``v, w``), or None when none are requested. A flexible body's request is
    its frame's (at the body's configured centre), spread over its segments as the rigid-body
    field ``v_k = v + w x (r_k - r)``; bodies not named are asked to be at rest.
    ``engine_positions``: each engine body's position (m), one row per body."""
    requested = config.initial.requested_velocities()
    if not requested:
        return None
    rows = []
    for body in config.bodies:
        count = 1 if body.flexible is None else body.flexible.segments + 1
        request = requested.get(body.name)
        for _ in range(count):
            position = engine_positions[len(rows)]
            if request is None:
                rows.append(np.zeros(3 if dimension == 2 else 6))
                continue
            arm = position - np.asarray(body.position, dtype=float)
            if dimension == 2:
                rows.append(np.array([request.vx - request.omega * arm[1], request.vy + request.omega * arm[0],
                                      request.omega]))
            else:
                velocity, omega = np.asarray(request.v, dtype=float), np.asarray(request.w, dtype=float)
                rows.append(np.concatenate([velocity + np.cross(omega, arm), omega]))
    return jnp.asarray(np.concatenate(rows), dtype=jnp.float64)
