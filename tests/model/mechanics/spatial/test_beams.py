"""Spatial flexible bodies: the beam elements between rigid segments, linearised about the
straight beam, against beam theory and against the planar chain (an independent
formulation), and their forces against the strain energy."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.geometry.quaternion import quaternion_product, rotation_matrix
from model.mechanics.segmentation import (
    linear_chain_matrices, natural_frequencies, segment_centres, segment_inertia_tensors, segment_inertias,
    segment_masses, support_rows,
)
from model.mechanics.spatial import SpatialMechanism
from model.mechanics.spatial.beams import beam_forces, section_loads, spatial_deformation, strain_energy

from ..beam_fixtures import (
    DENSITY, LENGTH, MASS, MODULUS, SECTION, SHEAR_FACTOR, SHEAR_MODULUS, beam_chain, timoshenko_frequencies,
)

ELEMENTS = 20


def spatial_beam(elements: int = ELEMENTS, damping_ratio: float = 0.0) -> SpatialMechanism:
    """A free straight beam along +x from the origin, as segments of a spatial mechanism."""
    count = elements + 1
    centres = segment_centres(LENGTH, elements) + LENGTH / 2.0
    positions = np.concatenate([[x, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0] for x in centres])
    inertias = segment_inertia_tensors(MASS, LENGTH, elements, SECTION["area"], SECTION["iyy"], SECTION["izz"])
    return SpatialMechanism(
        masses=jnp.asarray(segment_masses(MASS, elements)), inertias=jnp.asarray(inertias), gravity=jnp.zeros(3),
        initial_positions=jnp.asarray(positions), joints=(), cylindrical_joints=(), spherical_joints=(), loads=(),
        drivers=(), beam_chains=(dataclasses.replace(beam_chain(elements, damping_ratio=damping_ratio), name="s"),),
        initial_velocities="zero",
        body_names=tuple(f"s{k}" for k in range(count)),
    )


def turned(x, twist):
    """``x`` moved by a twist ``[dr, dtheta]`` per body (first order in the twist, unit quaternions)."""
    blocks, twist = x.reshape(-1, 7), twist.reshape(-1, 6)
    q, w = blocks[:, 3:], 0.5 * twist[:, 3:]
    rate = jnp.concatenate([-(w * q[:, 1:]).sum(1, keepdims=True), q[:, :1] * w + jnp.cross(w, q[:, 1:])], axis=1)
    turned_q = (q + rate) / jnp.linalg.norm(q + rate, axis=1, keepdims=True)  # unit, as the engine keeps them
    return jnp.concatenate([blocks[:, :3] + twist[:, :3], turned_q], axis=1).reshape(-1)


def linearised(mechanism: SpatialMechanism) -> tuple[np.ndarray, np.ndarray]:
    """Stiffness ``-dF/dtwist`` and mass matrix in velocity space about the straight beam."""
    x0 = mechanism.initial_positions
    zero = jnp.zeros(6 * mechanism.num_bodies)
    stiffness = -jax.jit(jax.jacfwd(lambda twist: beam_forces(mechanism, turned(x0, twist), zero)))(zero)
    blocks = [np.diag([m, m, m]) for m in np.asarray(mechanism.masses)]
    mass = np.zeros((len(zero), len(zero)))
    for b, inertia in enumerate(np.asarray(mechanism.inertias)):
        mass[6 * b : 6 * b + 3, 6 * b : 6 * b + 3] = blocks[b]
        mass[6 * b + 3 : 6 * b + 6, 6 * b + 3 : 6 * b + 6] = inertia
    return np.asarray(stiffness), mass


@pytest.fixture(scope="module")
def cantilever():
    """Stiffness and mass of the beam with its first segment's twist removed (clamped at its
    outer end, a quarter element from the centre: the first segment is held entirely)."""
    stiffness, mass = linearised(spatial_beam())
    free = slice(6, None)
    return stiffness[free, free], mass[free, free]


def tip_response(stiffness: np.ndarray, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Static twist of the last segment under a tip load at x = L (its outer end, a quarter
    element from its centre)."""
    quarter = LENGTH / ELEMENTS / 4.0
    load = np.zeros(stiffness.shape[0])
    load[-6:-3] = force
    load[-3:] = np.asarray(torque) + np.cross([quarter, 0.0, 0.0], force)
    return np.linalg.solve(stiffness, load)[-6:]


@pytest.mark.slow  # 6 CPU s, most of it compiling
def test_forces_are_the_gradient_of_the_strain_energy():
    mechanism = spatial_beam(4)
    x0 = mechanism.initial_positions
    twist = jnp.asarray(np.random.default_rng(0).normal(scale=1e-3, size=6 * mechanism.num_bodies))
    x = turned(x0, twist)
    zero = jnp.zeros(6 * mechanism.num_bodies)
    energy_rate = jax.grad(lambda s: strain_energy(mechanism, turned(x, s)))(zero)
    np.testing.assert_allclose(beam_forces(mechanism, x, zero), -energy_rate, rtol=1e-8, atol=1e-8 * float(jnp.max(jnp.abs(energy_rate))))
    assert float(strain_energy(mechanism, x0)) < 1e-20  # round-off of the segment centres


def test_rigid_motion_is_free_of_strain():
    """A rigid rotation of the whole beam about an oblique axis deforms no element."""
    mechanism = spatial_beam(4)
    axis = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    angle = 0.7
    turn = np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis]
    blocks = np.asarray(mechanism.initial_positions).reshape(-1, 7)
    moved = np.concatenate([np.r_[np.asarray(rotation_matrix(turn)) @ b[:3] + [0.1, -0.2, 0.3],
                                  np.asarray(quaternion_product(turn, b[3:]))] for b in blocks])
    assert float(jnp.max(jnp.abs(spatial_deformation(mechanism.beam_chains[0], jnp.asarray(moved))))) < 1e-15


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_in_plane_stiffness_equals_the_planar_chain(cantilever):
    """The (x, y, theta_z) block of the spatial chain is the planar chain's matrix."""
    stiffness, _ = linearised(spatial_beam(6))
    chain = beam_chain(6)
    planar, _ = linear_chain_matrices(chain, segment_masses(MASS, 6), segment_inertias(MASS, LENGTH, 6, SECTION["area"], SECTION["izz"]))
    in_plane = np.concatenate([[6 * b, 6 * b + 1, 6 * b + 5] for b in range(7)])
    np.testing.assert_allclose(stiffness[np.ix_(in_plane, in_plane)], planar, rtol=1e-10, atol=1e-6 * np.abs(planar).max())


@pytest.mark.parametrize("direction, inertia", [(1, "izz"), (2, "iyy")])
def test_cantilever_tip_deflection_is_timoshenko(cantilever, direction, inertia):
    """Tip load P along y (bending about z) and along z (bending about y):
    ``P L^3 / (3 E I) + P L / (kappa G A)``, exact for the chain of exact elements between
    the clamp and the load (both at segment ends, a quarter element from the centres)."""
    stiffness, _ = cantilever
    force = np.zeros(3)
    force[direction] = 10.0
    twist = tip_response(stiffness, force=force)
    quarter = LENGTH / ELEMENTS / 4.0
    beam_length = LENGTH  # clamp (outer end of the first segment) to the load (outer end of the last)
    expected = 10.0 * beam_length**3 / (3 * MODULUS * SECTION[inertia]) + 10.0 * beam_length / (SHEAR_MODULUS * SECTION["area"] / SHEAR_FACTOR)
    slope = 10.0 * beam_length**2 / (2 * MODULUS * SECTION[inertia])
    rotation = twist[3 + (2 if direction == 1 else 1)]
    tip = twist[direction] + (quarter * rotation if direction == 1 else -quarter * rotation)
    assert tip == pytest.approx(expected, rel=1e-9)
    assert abs(rotation) == pytest.approx(slope, rel=1e-9)


def test_cantilever_twist_and_stretch(cantilever):
    """A tip torque twists by ``T L / (G Ixx)``; a tip force along x stretches by ``P L / (E A)``."""
    stiffness, _ = cantilever
    twist = tip_response(stiffness, torque=(1.0, 0.0, 0.0))
    assert twist[3] == pytest.approx(1.0 * LENGTH / (SHEAR_MODULUS * SECTION["ixx"]), rel=1e-9)
    stretch = tip_response(stiffness, force=(100.0, 0.0, 0.0))
    assert stretch[0] == pytest.approx(100.0 * LENGTH / (MODULUS * SECTION["area"]), rel=1e-9)


def test_cantilever_frequencies_within_two_percent(cantilever):
    """At m = 20: the first three bending modes in each plane (square section: the same
    values) against the exact Timoshenko beam, the first torsional mode
    ``pi/(2L) sqrt(G Ixx / (rho Ip))`` and the first axial mode ``pi/(2L) sqrt(E / rho)``."""
    stiffness, mass = cantilever
    omega = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(mass, stiffness)).real))
    bending = timoshenko_frequencies("clamped", 3)
    for mode in bending:
        nearest = omega[np.argsort(np.abs(omega - mode))[:2]]  # one per bending plane
        np.testing.assert_allclose(nearest, mode, rtol=0.02)
    polar = SECTION["iyy"] + SECTION["izz"]
    torsion = np.pi / (2 * LENGTH) * np.sqrt(SHEAR_MODULUS * SECTION["ixx"] / (DENSITY * polar))
    axial = np.pi / (2 * LENGTH) * np.sqrt(MODULUS / DENSITY)
    for expected in (torsion, axial):
        assert np.min(np.abs(omega / expected - 1.0)) < 0.02


def test_in_plane_frequencies_equal_the_planar_chain():
    """Free-free: the spatial chain's in-plane frequencies are the planar chain's."""
    stiffness, mass = linearised(spatial_beam(8))
    chain = beam_chain(8)
    planar_k, planar_m = linear_chain_matrices(chain, segment_masses(MASS, 8), segment_inertias(MASS, LENGTH, 8, SECTION["area"], SECTION["izz"]))
    planar = natural_frequencies(planar_k, planar_m, support_rows(9, []))
    in_plane = np.concatenate([[6 * b, 6 * b + 1, 6 * b + 5] for b in range(9)])
    spatial = natural_frequencies(stiffness[np.ix_(in_plane, in_plane)], mass[np.ix_(in_plane, in_plane)], support_rows(9, []))
    np.testing.assert_allclose(spatial, planar, rtol=1e-9)


def test_section_loads_of_a_tip_loaded_cantilever(cantilever):
    """Static equilibrium: the bending moment at each cut is the tip force times the arm."""
    stiffness, _ = cantilever
    mechanism = spatial_beam()
    full = np.zeros(6 * mechanism.num_bodies)
    full[6:] = np.linalg.solve(stiffness, tip_load(stiffness.shape[0], (0.0, 10.0, 0.0)))
    x = turned(mechanism.initial_positions, jnp.asarray(full))
    loads = section_loads(mechanism.beam_chains[0], x, jnp.zeros_like(jnp.asarray(full)))
    cuts = (np.arange(ELEMENTS) + 0.5) * LENGTH / ELEMENTS  # element middles, from the clamp
    # the twist is linear, the deformation exact: they agree to the second order in the deflection
    np.testing.assert_allclose(np.abs(np.asarray(loads["bending_moment_z"])), 10.0 * (LENGTH - cuts), rtol=1e-5)
    assert np.max(np.abs(np.asarray(loads["bending_moment_y"]))) < 1e-9


def tip_load(size: int, force) -> np.ndarray:
    quarter = LENGTH / ELEMENTS / 4.0
    load = np.zeros(size)
    load[-6:-3] = force
    load[-3:] = np.cross([quarter, 0.0, 0.0], force)
    return load


@pytest.mark.slow  # one compiled solve of a 5-segment spatial beam
def test_free_vibration_conserves_energy():
    """A free beam released bent in both planes and twisted, undamped and spinning about an
    oblique axis: kinetic plus strain energy stays at its initial value to the solver's
    tolerance (gyroscopic coupling, quaternion integration and the elements together)."""
    import model
    from model.integrate.settings import SolverSettings
    from model.mechanics.spatial import kinetic_energy

    free = spatial_beam(4)
    rng = np.random.default_rng(1)
    x0 = turned(free.initial_positions, jnp.asarray(rng.normal(scale=2e-4, size=6 * free.num_bodies)))
    mechanism = dataclasses.replace(free, initial_positions=x0)
    settings = SolverSettings(t_end=2e-3, output_interval=2e-5, solver="tsit5", rtol=1e-10, atol=1e-13)
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    assert int(trajectory.result) == 0
    energy = np.asarray(jax.vmap(lambda x, v: kinetic_energy(mechanism, x, v) + strain_energy(mechanism, x))(trajectory.x, trajectory.v))
    strain = np.asarray(jax.vmap(lambda x: strain_energy(mechanism, x))(trajectory.x))
    assert strain[0] > 1e-4 and np.min(strain) < 0.5 * strain[0]  # it does vibrate
    np.testing.assert_allclose(energy, energy[0], rtol=1e-6)
