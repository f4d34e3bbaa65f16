"""A straight steel beam of rectangular section built segment by segment, for the tests."""

import jax.numpy as jnp
import numpy as np

from model.mechanics.beam import section_properties
from model.mechanics.flexible import BeamChain, PointLoad
from model.mechanics.mechanism import GROUND, FixedJoint, Mechanism, RevoluteJoint
from model.mechanics.segmentation import frequency_coefficient, segment_centres, segment_inertia

LENGTH, WIDTH, HEIGHT = 0.3, 0.01, 0.01
MODULUS, POISSON, DENSITY = 207e9, 0.3, 7850.0
SECTION = section_properties("rectangle", width=WIDTH, height=HEIGHT)
MASS = DENSITY * SECTION["area"] * LENGTH
SHEAR_FACTOR = 1.2


def beam(segments: int, supports: str = "clamped", damping_ratio: float = 0.0, tip_force=(0.0, 0.0),
         length: float = LENGTH) -> Mechanism:
    """``supports``: ``"clamped"`` (fixed joint to ground at x = 0), ``"free"`` or ``"pinned"``
    (revolute joint to ground at x = 0). Body along +x from the origin; ``tip_force`` (N) at x = L."""
    centres = segment_centres(length, segments) + length / 2.0
    masses = np.full(segments, MASS * length / LENGTH / segments)
    inertia = segment_inertia(masses.sum(), length, segments, SECTION["area"], SECTION["izz"])
    inertias = np.full(segments, inertia)
    chain = BeamChain(
        modulus=jnp.asarray(MODULUS), poisson_ratio=jnp.asarray(POISSON), area=jnp.asarray(SECTION["area"]),
        inertia_y=jnp.asarray(SECTION["iyy"]), inertia_z=jnp.asarray(SECTION["izz"]),
        inertia_x=jnp.asarray(SECTION["ixx"]), shear_factor_y=jnp.asarray(SHEAR_FACTOR),
        shear_factor_z=jnp.asarray(SHEAR_FACTOR), element_length=jnp.asarray(length / segments),
        mass_per_length=jnp.asarray(masses.sum() / length), damping_ratio=jnp.asarray(damping_ratio),
        frequency_coefficient=jnp.asarray(1.0), segments=tuple(range(segments)),
    )
    half = length / segments / 2.0
    support_list = {"clamped": [(0, -half, 0.0, True)], "pinned": [(0, -half, 0.0, False)], "free": []}[supports]
    chain = BeamChain(**{**{f: getattr(chain, f) for f in chain.__dataclass_fields__},
                         "frequency_coefficient": jnp.asarray(frequency_coefficient(chain, masses, inertias, support_list))})
    fixed, revolute = [], []
    if supports == "clamped":
        fixed.append(FixedJoint(GROUND, 0, jnp.zeros(2), jnp.asarray([-half, 0.0]), jnp.asarray(0.0)))
    elif supports == "pinned":
        revolute.append(RevoluteJoint(GROUND, 0, jnp.zeros(2), jnp.asarray([-half, 0.0])))
    loads = (PointLoad(segments - 1, "force", jnp.asarray([half, 0.0]), jnp.asarray(tip_force, float)),)
    positions = np.stack([centres, np.zeros(segments), np.zeros(segments)], axis=1).reshape(-1)
    return Mechanism(
        masses=jnp.asarray(masses), inertias=jnp.asarray(inertias), gravity=jnp.zeros(2),
        initial_positions=jnp.asarray(positions), revolute_joints=tuple(revolute), prismatic_joints=(),
        fixed_joints=tuple(fixed), clearance_joints=(), drivers=(), initial_velocities="zero",
        body_names=tuple(f"s{k}" for k in range(segments)), beam_chains=(chain,), loads=loads,
    )
