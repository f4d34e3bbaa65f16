"""Expansion of the config's bodies into the engine's rigid bodies: a rigid body is one, a
flexible body ``B`` of ``segments = m`` elements is ``m + 1`` rigid bodies named ``B[k]`` joined by a
:class:`~model.mechanics.flexible.BeamChain`; joint and load points go to the segment that
holds them (``model/mechanics/segmentation.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import jax.numpy as jnp
import numpy as np

from model.mechanics.beam import SHEAR_FACTORS, section_properties
from model.mechanics.flexible import BeamChain, PointLoad
from model.mechanics.mechanism import GROUND
from model.mechanics.segmentation import (
    frequency_coefficient, holding_segment, segment_centres, segment_inertias, segment_masses,
)

from .config import MechanismConfig


@dataclass
class BodyLayout:
    """The engine's bodies for a config: per-body arrays and where each config body went."""

    masses: list[float] = field(default_factory=list)
    inertias: list[float] = field(default_factory=list)
    positions: list[float] = field(default_factory=list)  # x, y, theta per engine body
    names: list[str] = field(default_factory=list)
    first_index: dict[str, int] = field(default_factory=dict)
    flexible: dict[str, object] = field(default_factory=dict)  # name -> Flexible config

    def attach(self, name: str, point) -> tuple[int, jnp.ndarray]:
        """Engine body and local point (m) for ``point`` of config body ``name``."""
        if name == "ground":
            return GROUND, jnp.asarray(point, dtype=jnp.float64)
        spec = self.flexible.get(name)
        if spec is None:
            return self.first_index[name], jnp.asarray(point, dtype=jnp.float64)
        segment = holding_segment(point[0], spec.length, spec.segments)
        centre = segment_centres(spec.length, spec.segments)[segment]
        return self.first_index[name] + segment, jnp.asarray([point[0] - centre, point[1]], dtype=jnp.float64)


def body_layout(config: MechanismConfig) -> BodyLayout:
    layout = BodyLayout()
    for body in config.bodies:
        layout.first_index[body.name] = len(layout.names)
        spec = body.flexible
        if spec is None:
            layout.masses.append(body.mass)
            layout.inertias.append(body.inertia)
            layout.positions += [body.position[0], body.position[1], body.angle]
            layout.names.append(body.name)
            continue
        layout.flexible[body.name] = spec
        section = section_properties(spec.section.shape, **spec.section.dimensions())
        masses = segment_masses(body.mass, spec.segments)
        inertias = segment_inertias(body.mass, spec.length, spec.segments, section["area"], section["izz"])
        direction = np.array([np.cos(body.angle), np.sin(body.angle)])
        for k, x in enumerate(segment_centres(spec.length, spec.segments)):
            layout.masses.append(float(masses[k]))
            layout.inertias.append(float(inertias[k]))
            layout.positions += [*(np.asarray(body.position) + x * direction), body.angle]
            layout.names.append(f"{body.name}[{k}]")
    return layout


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
