"""Cylindrical clearance joint in motion: energy balance with an elastic law (free flight,
then impacts of a tumbling pin), and convergence to the ideal revolute joint as the clearance
shrinks and the contact stiffens."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.contact.friction import FrictionLaw
from model.contact.normal import ContactLaw
from model.contact.stiffness import palmgren_stiffness
from model.integrate.settings import SolverSettings
from model.integrate.solve import simulate, solve
from model.mechanics.spatial import GROUND, CylindricalClearanceJoint, SpatialMechanism, SpatialState, kinetic_energy
from model.mechanics.spatial.forces import contact_forces

from .cases import GRAVITY, PIN_MASS, bushing

EXPONENT = 10.0 / 9.0


def elastic_pin(slices=5):
    """The load cases' pin in its bushing, elastic Palmgren law, no loads, gravity on."""
    mechanism = bushing(end_force=False, slices=slices, eccentricity=(0.0, 0.0))
    elastic = ContactLaw("hertz", stiffness=0.0, exponent=EXPONENT)
    return eqx.tree_at(lambda m: m.cylindrical_joints[0].contact, mechanism, elastic)


def pin_energy(mechanism, x, v):
    """Kinetic + gravity + contact potential ``sum (K/N) delta_k^(n+1) / (n+1)`` (J)."""
    joint = mechanism.cylindrical_joints[0]
    _, contact = contact_forces(mechanism, x, v, jnp.zeros(mechanism.memory_size))
    delta = jnp.maximum(contact.slice_penetration, 0.0)
    potential = jnp.sum(joint.stiffness() / joint.slices * delta ** (EXPONENT + 1.0) / (EXPONENT + 1.0))
    return kinetic_energy(mechanism, x, v) - PIN_MASS * mechanism.gravity @ x[:3] + potential, jnp.max(delta)


@pytest.mark.slow
def test_elastic_contact_conserves_energy_through_free_flight_and_impacts():
    mechanism = elastic_pin()
    # centred and aligned, flying towards the wall while tumbling about the cross axes: the
    # journal's ends hit first (edge contact), then the contact runs along the length
    velocity = jnp.array([0.2, -0.5, 0.0])
    omega = jnp.array([3.0, -2.0, 5.0])
    y0 = SpatialState(mechanism.initial_positions, jnp.concatenate([velocity, omega]),
                      jnp.zeros(mechanism.memory_size), jnp.zeros(()))
    settings = SolverSettings(t_end=0.005, output_interval=5e-5, solver="tsit5", rtol=1e-10, atol=1e-13,
                              dtmax_contact_share=None)
    solution = jax.jit(solve, static_argnums=1)(mechanism, settings, y0)
    energy, penetration = jax.vmap(lambda x, v: pin_energy(mechanism, x, v))(solution.ys.x, solution.ys.v)
    assert int(solution.result._value) == 0
    assert float(jnp.max(penetration)) > 1e-6  # it did hit the wall
    drift = float(jnp.max(jnp.abs(energy - energy[0])))
    assert drift < 1e-6 * float(kinetic_energy(mechanism, y0.x, y0.v))


ROD_LENGTH, ROD_MASS = 0.2, 0.5


def pendulum(clearance, stiffness_factor):
    """A 200 mm, 0.5 kg rod released horizontal, hung at one end on a cylindrical clearance
    joint (journal 10 mm, length 20 mm, Palmgren stiffness times ``stiffness_factor``),
    resting on the bearing's wall at t = 0."""
    joint = CylindricalClearanceJoint(
        journal_body=0, bearing_body=GROUND, slices=3, axial_fixed=True, palmgren=False,
        journal_point=jnp.array([-ROD_LENGTH / 2, 0.0, 0.0]), bearing_point=jnp.zeros(3),
        journal_axis=jnp.array([0.0, 0.0, 1.0]), bearing_axis=jnp.array([0.0, 0.0, 1.0]),
        bearing_u=jnp.array([1.0, 0.0, 0.0]), bearing_w=jnp.array([0.0, 1.0, 0.0]), length=jnp.asarray(0.02),
        bearing_radius=jnp.asarray(0.01), clearance=jnp.asarray(clearance),
        contact=ContactLaw("flores", stiffness=stiffness_factor * palmgren_stiffness(0.02), exponent=EXPONENT,
                           restitution=0.9),
        friction=FrictionLaw("none"), initial_eccentricity=jnp.array([0.0, -clearance]))
    inertia = ROD_MASS * ROD_LENGTH**2 / 12
    return SpatialMechanism(
        masses=jnp.array([ROD_MASS]), inertias=jnp.diag(jnp.array([1e-5, inertia, inertia]))[None],
        gravity=jnp.array([0.0, -GRAVITY, 0.0]), initial_positions=jnp.array([ROD_LENGTH / 2, 0, 0, 1, 0, 0, 0]),
        joints=(), cylindrical_joints=(joint,), spherical_joints=(), loads=(), drivers=(), initial_velocities="zero",
        body_names=("rod",), clearance_names=("pivot",))


def swing_angle(x):
    """The rod's rotation about z (rad) from its quaternion."""
    return 2.0 * jnp.arctan2(x[..., 6], x[..., 3])


def ideal_swing(times):
    """The rod on an ideal pivot at its end (compound pendulum released horizontal):
    ``theta'' = -(3 g / 2 L) cos(theta)`` with ``I = m L^2 / 3`` about the pivot (scipy)."""
    from scipy.integrate import solve_ivp

    solution = solve_ivp(lambda t, y: [y[1], -1.5 * GRAVITY / ROD_LENGTH * np.cos(y[0])], (0.0, times[-1]),
                         [0.0, 0.0], t_eval=times, rtol=1e-12, atol=1e-14, method="DOP853")
    return solution.y[0]


@pytest.mark.slow
def test_clearance_joint_converges_to_the_ideal_joint():
    clearances = jnp.array([1e-4, 1e-5, 1e-6])
    factors = jnp.array([1.0, 10.0, 100.0])
    variants = [pendulum(c, k) for c, k in zip(clearances, factors)]
    stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *variants)
    settings = SolverSettings(t_end=0.01, output_interval=2.5e-4, solver="tsit5", rtol=1e-7, atol=1e-11,
                              dtmax_contact_share=None)
    runs = jax.jit(jax.vmap(lambda m: simulate(m, settings)))(stacked)
    assert np.all(np.asarray(runs.result) == 0)
    ideal = ideal_swing(np.asarray(runs.t[0]))
    difference = np.max(np.abs(np.asarray(swing_angle(runs.x)) - ideal[None]), axis=1)
    # the journal hangs c below the ideal pivot: the difference is first order in the
    # clearance, so each tenfold smaller clearance must cut it by well over half that
    assert np.all(difference[1:] < difference[:-1] / 5.0)
