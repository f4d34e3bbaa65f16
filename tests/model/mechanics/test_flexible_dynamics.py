"""Free vibration of a flexible arm driven about a pin (the crank of a mechanism): energy
balance, the damping ratio and frequency of the first mode from a run against the
linearised chain, and centrifugal stiffening when it spins.

One compiled solve serves every case: the arm (4 elements, 5 segments) on a revolute joint
at x = 0 whose constant-speed driver holds the first segment's angle (a clamp at rest, a
spinning clamp otherwise); speed, damping ratio and length are leaves of the mechanism.
The arm starts in its first clamped mode shape (tip 1 mm) on a rigid rotation at the
driver's speed.
"""

import dataclasses

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from model.mechanics import flat_vector_field
from model.mechanics.dynamics import kinetic_energy
from model.mechanics.flexible import chain_strain_energy
from model.mechanics.segmentation import linear_chain_matrices, support_rows

from .beam_fixtures import beam

# A compile of the solve and runs of 10^3-10^4 explicit steps: over the 5 s budget of a
# fast test together.
pytestmark = pytest.mark.slow

ELEMENTS = 4
COORDS = 3 * (ELEMENTS + 1)
TIP_AMPLITUDE = 1e-3  # m


def arm(speed: float = 0.0, damping_ratio: float = 0.0, length: float = 0.3):
    mechanism = beam(ELEMENTS, supports="driven", damping_ratio=damping_ratio, length=length)
    driver = dataclasses.replace(mechanism.drivers[0], speed=jnp.asarray(speed))
    return dataclasses.replace(mechanism, drivers=(driver,))


def first_mode(mechanism):
    """First clamped mode: ``omega_1`` (rad/s) and its shape on the segment coordinates,
    scaled to a tip deflection of ``TIP_AMPLITUDE``."""
    chain = mechanism.beam_chains[0]
    stiffness, mass = linear_chain_matrices(chain, np.asarray(mechanism.masses), np.asarray(mechanism.inertias))
    quarter = float(chain.element_length) / 4.0
    basis = scipy.linalg.null_space(support_rows(ELEMENTS + 1, [(0, -quarter, 0.0, True)]))
    eigen, vectors = scipy.linalg.eigh(basis.T @ stiffness @ basis, basis.T @ mass @ basis)
    shape = basis @ vectors[:, 0]
    return float(np.sqrt(eigen[0])), shape * TIP_AMPLITUDE / (shape[-2] + quarter * shape[-1])


def initial_flat_state(mechanism) -> jnp.ndarray:
    """Mode-shaped arm on a rigid rotation about the pin at ``drivers[0].speed``."""
    _, shape = first_mode(mechanism)
    q = np.asarray(mechanism.initial_positions) + shape
    speed = float(mechanism.drivers[0].speed)
    poses = q.reshape(-1, 3)
    qd = np.stack([-speed * poses[:, 1], speed * poses[:, 0], np.full(len(poses), speed)], axis=1).reshape(-1)
    return jnp.concatenate([jnp.asarray(q), jnp.asarray(qd), jnp.zeros(1)])


@eqx.filter_jit
def free_vibration(mechanism, y0, t_end, samples: int):
    """States at ``samples`` equally spaced times in ``[0, t_end]`` (Dopri8, rtol 1e-10)."""
    return diffrax.diffeqsolve(
        diffrax.ODETerm(flat_vector_field), diffrax.Dopri8(), 0.0, t_end, None, y0, args=mechanism,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, t_end, samples)),
        stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-13), max_steps=200_000,
    ).ys


def tip_deflection(mechanism, states: np.ndarray) -> np.ndarray:
    """Tip displacement (m) normal to the first segment's axis: the deflection the driver's
    rotating clamp sees."""
    quarter = float(mechanism.beam_chains[0].element_length) / 4.0
    q = states[:, :COORDS].reshape(len(states), -1, 3)
    root = q[:, 0, :2] + (-quarter) * np.stack([np.cos(q[:, 0, 2]), np.sin(q[:, 0, 2])], axis=1)
    tip = q[:, -1, :2] + quarter * np.stack([np.cos(q[:, -1, 2]), np.sin(q[:, -1, 2])], axis=1)
    normal = np.stack([-np.sin(q[:, 0, 2]), np.cos(q[:, 0, 2])], axis=1)
    return np.sum((tip - root) * normal, axis=1)


def run(mechanism, periods: float = 6.0, per_period: int = 80):
    """Time (s), tip deflection (m) and states over ``periods`` of the rest frequency."""
    omega, _ = first_mode(mechanism)
    t_end = periods * 2 * np.pi / omega
    samples = int(periods * per_period) + 1
    states = np.asarray(free_vibration(mechanism, initial_flat_state(mechanism), t_end, samples))
    return np.linspace(0.0, t_end, samples), tip_deflection(mechanism, states), states


def measured_frequency(t: np.ndarray, signal: np.ndarray) -> float:
    """Angular frequency (rad/s) from the first and last upward zero crossings (linear interpolation)."""
    index = np.nonzero((signal[:-1] < 0.0) & (signal[1:] >= 0.0))[0]
    crossings = t[index] - signal[index] * (t[index + 1] - t[index]) / (signal[index + 1] - signal[index])
    return 2 * np.pi * (len(crossings) - 1) / (crossings[-1] - crossings[0])


def peak_values(signal: np.ndarray) -> np.ndarray:
    """Local maxima refined by a parabola through each sample maximum and its neighbours."""
    index = np.nonzero((signal[1:-1] > signal[:-2]) & (signal[1:-1] >= signal[2:]))[0] + 1
    left, middle, right = signal[index - 1], signal[index], signal[index + 1]
    return middle + (left - right) ** 2 / (8.0 * (2.0 * middle - left - right))


@eqx.filter_jit
def energies(mechanism, states):
    """Kinetic and strain energy (J) at every sample."""
    chain = mechanism.beam_chains[0]
    kinetic = jax.vmap(lambda qd: kinetic_energy(mechanism, qd))(states[:, COORDS : 2 * COORDS])
    return kinetic, jax.vmap(lambda q: chain_strain_energy(chain, q))(states[:, :COORDS])


def energy_balance(mechanism, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kinetic + strain energy minus the driver's work (J), and the strain energy, per sample."""
    kinetic, strain = (np.asarray(e) for e in energies(mechanism, jnp.asarray(states)))
    return kinetic + strain - states[:, -1], strain


@pytest.fixture(scope="module")
def at_rest():
    mechanism = arm()
    return mechanism, run(mechanism)


@pytest.fixture(scope="module")
def spinning():
    """The arm spinning at half its rest frequency."""
    omega_0, _ = first_mode(arm())
    mechanism = arm(speed=0.5 * omega_0)
    return mechanism, run(mechanism)


def test_undamped_free_vibration_conserves_energy(at_rest):
    mechanism, (_, _, states) = at_rest
    energy, strain = energy_balance(mechanism, states)
    assert np.max(np.abs(energy - energy[0])) < 1e-6 * strain[0]


def test_spinning_arm_balances_energy_with_the_driver_work(spinning):
    """Objectivity under large rotation: the elements store no energy in the rigid spin
    (3 turns here), and what the driver puts in is kinetic or strain energy."""
    mechanism, (_, _, states) = spinning
    energy, strain = energy_balance(mechanism, states)
    assert abs(states[-1, 2]) > 4 * np.pi
    assert np.max(np.abs(energy - energy[0])) < 1e-5 * strain[0]


def test_free_vibration_frequency_is_the_linearised_one(at_rest):
    mechanism, (t, tip, _) = at_rest
    omega, _ = first_mode(mechanism)
    assert measured_frequency(t, tip) == pytest.approx(omega, rel=2e-3)


def test_damped_free_vibration_decays_at_the_damping_ratio():
    """Logarithmic decrement of the tip's maxima, ``delta = 2 pi zeta / sqrt(1 - zeta^2)``
    (Chopra 2012, §2.2); damped frequency ``omega_1 sqrt(1 - zeta^2)``. A short arm keeps
    the explicit step, bounded by ``beta omega_max^2`` of the stiffest element mode, cheap."""
    zeta = 0.05
    mechanism = arm(damping_ratio=zeta, length=0.1)
    t, tip, _ = run(mechanism, periods=4.0)
    peaks = peak_values(tip)
    decrement = np.log(peaks[0] / peaks[-1]) / (len(peaks) - 1)
    assert decrement / np.sqrt(4 * np.pi**2 + decrement**2) == pytest.approx(zeta, rel=0.02)
    omega, _ = first_mode(mechanism)
    assert measured_frequency(t, tip) == pytest.approx(omega * np.sqrt(1 - zeta**2), rel=3e-3)


def test_spinning_arm_stiffens(at_rest, spinning):
    """In-plane bending of a cantilever spinning at ``Omega`` about its clamp, in the rotating
    frame: ``omega^2 = omega_0^2 + (a - 1) Omega^2`` with the Southwell coefficient of the
    first mode ``a = 1.193`` (hub radius 0) less 1 for in-plane motion (Yoo & Shin 1998).
    The chain approaches ``a - 1`` from below as elements are added (0.046, 0.154, 0.178 at
    4, 8, 16 elements, docs/flexible.md): the frequency rises, by less than the continuum's."""
    (rest, (t_0, tip_0, _)), (mechanism, (t, tip, _)) = at_rest, spinning
    omega_0, omega = measured_frequency(t_0, tip_0), measured_frequency(t, tip)
    speed = float(mechanism.drivers[0].speed)
    coefficient = (omega**2 - omega_0**2) / speed**2
    assert 0.02 < coefficient < 0.193
