"""A straight steel beam of rectangular section built segment by segment, for the tests,
and the exact natural frequencies of a uniform Timoshenko beam to compare it with."""

import functools

import jax.numpy as jnp
import numpy as np
import scipy.linalg
import scipy.optimize

from model.mechanics.beam import section_properties
from model.mechanics.flexible import BeamChain, PointLoad
from model.mechanics.mechanism import GROUND, Driver, FixedJoint, Mechanism, RevoluteJoint
from model.mechanics.segmentation import frequency_coefficient, segment_centres, segment_inertias, segment_masses

LENGTH, WIDTH, HEIGHT = 0.3, 0.01, 0.01
MODULUS, POISSON, DENSITY = 207e9, 0.3, 7850.0
SECTION = section_properties("rectangle", width=WIDTH, height=HEIGHT)
MASS = DENSITY * SECTION["area"] * LENGTH
SHEAR_FACTOR = 1.2
SHEAR_MODULUS = MODULUS / (2.0 * (1.0 + POISSON))
EI, KGA = MODULUS * SECTION["izz"], SHEAR_MODULUS * SECTION["area"] / SHEAR_FACTOR


def beam_chain(elements: int, length: float = LENGTH, damping_ratio: float = 0.0, first: int = 0) -> BeamChain:
    """The chain of a beam of ``elements`` elements on bodies ``first .. first + elements``
    (frequency coefficient 1: set it with :func:`with_supports`)."""
    return BeamChain(
        modulus=jnp.asarray(MODULUS), poisson_ratio=jnp.asarray(POISSON), area=jnp.asarray(SECTION["area"]),
        inertia_y=jnp.asarray(SECTION["iyy"]), inertia_z=jnp.asarray(SECTION["izz"]),
        inertia_x=jnp.asarray(SECTION["ixx"]), shear_factor_y=jnp.asarray(SHEAR_FACTOR),
        shear_factor_z=jnp.asarray(SHEAR_FACTOR), element_length=jnp.asarray(length / elements),
        mass_per_length=jnp.asarray(MASS / LENGTH), damping_ratio=jnp.asarray(damping_ratio),
        frequency_coefficient=jnp.asarray(1.0), segments=tuple(range(first, first + elements + 1)),
    )


def with_supports(chain: BeamChain, masses, inertias, supports) -> BeamChain:
    coefficient = frequency_coefficient(chain, masses, inertias, supports)
    return BeamChain(**{**{f: getattr(chain, f) for f in chain.__dataclass_fields__},
                        "frequency_coefficient": jnp.asarray(coefficient)})


def beam(elements: int, supports: str = "clamped", damping_ratio: float = 0.0, tip_force=(0.0, 0.0),
         length: float = LENGTH) -> Mechanism:
    """``supports``: ``"clamped"`` (fixed joint to ground at x = 0), ``"free"``, ``"pinned"``
    (revolute joint to ground at x = 0) or ``"driven"`` (that revolute joint driven at
    constant speed, 0 rad/s: change ``drivers[0].speed``; a clamp for the damping). Body
    along +x from the origin, ``elements + 1`` segments; ``tip_force`` (N) at x = L."""
    count = elements + 1
    centres = segment_centres(length, elements) + length / 2.0
    mass = MASS * length / LENGTH
    masses = segment_masses(mass, elements)
    inertias = segment_inertias(mass, length, elements, SECTION["area"], SECTION["izz"])
    quarter = length / elements / 4.0
    clamp, pin = [(0, -quarter, 0.0, True)], [(0, -quarter, 0.0, False)]
    support_list = {"clamped": clamp, "driven": clamp, "pinned": pin, "free": []}[supports]
    chain = with_supports(beam_chain(elements, length, damping_ratio), masses, inertias, support_list)
    fixed, revolute = [], []
    if supports == "clamped":
        fixed.append(FixedJoint(GROUND, 0, jnp.zeros(2), jnp.asarray([-quarter, 0.0]), jnp.asarray(0.0)))
    elif supports in ("pinned", "driven"):
        revolute.append(RevoluteJoint(GROUND, 0, jnp.zeros(2), jnp.asarray([-quarter, 0.0])))
    zero = jnp.asarray(0.0)
    drivers = (Driver(0, "constant_speed", zero, zero, zero),) if supports == "driven" else ()
    loads = (PointLoad(count - 1, "force", jnp.asarray([quarter, 0.0]), jnp.asarray(tip_force, float)),)
    positions = np.stack([centres, np.zeros(count), np.zeros(count)], axis=1).reshape(-1)
    return Mechanism(
        masses=jnp.asarray(masses), inertias=jnp.asarray(inertias), gravity=jnp.zeros(2),
        initial_positions=jnp.asarray(positions), revolute_joints=tuple(revolute), prismatic_joints=(),
        fixed_joints=tuple(fixed), clearance_joints=(), drivers=drivers, initial_velocities="zero",
        body_names=tuple(f"s{k}" for k in range(count)), beam_chains=(chain,), loads=loads,
    )


def timoshenko_transfer(omega: float, length: float = LENGTH) -> np.ndarray:
    """Transfer matrix of ``(w, psi, M, V)`` over a uniform Timoshenko beam vibrating at
    ``omega`` (rad/s): ``w' = psi + V/(kGA)``, ``psi' = M/EI``, ``M' = -V - rho I omega^2 psi``,
    ``V' = -rho A omega^2 w`` (Timoshenko 1921; shear and rotary inertia included)."""
    rho_a, rho_i = DENSITY * SECTION["area"], DENSITY * SECTION["izz"]
    system = np.array([[0.0, 1.0, 0.0, 1.0 / KGA], [0.0, 0.0, 1.0 / EI, 0.0],
                       [0.0, -rho_i * omega**2, 0.0, -1.0], [-rho_a * omega**2, 0.0, 0.0, 0.0]])
    scale = np.diag([1.0, 1.0 / length, 1.0 / EI * length, length**2 / EI])  # balance the units
    return scale @ scipy.linalg.expm(system * length) @ np.linalg.inv(scale)


@functools.lru_cache
def timoshenko_frequencies(supports: str, count: int = 3, length: float = LENGTH) -> np.ndarray:
    """The first ``count`` bending frequencies (rad/s) of the exact Timoshenko beam,
    ``"clamped"`` (clamped-free) or ``"free"`` (free-free): roots of the determinant of the
    transfer-matrix block that maps the free end conditions ``M = V = 0``."""
    rows, cols = (slice(2, 4), slice(2, 4)) if supports == "clamped" else (slice(2, 4), slice(0, 2))
    det = lambda omega: np.linalg.det(timoshenko_transfer(omega, length)[rows, cols])  # noqa: E731
    top = ((count + 1.0) * np.pi / length) ** 2 * np.sqrt(EI / (DENSITY * SECTION["area"]))
    grid = np.linspace(1.0, top, 200 * count)
    values = np.array([det(w) for w in grid])
    roots = [scipy.optimize.brentq(det, a, b, xtol=1e-10, rtol=1e-13)
             for a, b, fa, fb in zip(grid[:-1], grid[1:], values[:-1], values[1:]) if fa * fb < 0]
    return np.asarray(roots[:count])
