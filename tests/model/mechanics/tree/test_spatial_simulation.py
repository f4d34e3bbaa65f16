"""Spatial mechanisms solved on the joint-coordinate engine against the absolute engine:
the Flores slider-crank, the double link and the spherical pendulum over their first
impacts, the conical pendulum on its seated ball (and its analytic steady state), the
joint engine's rates in contact, a spinning spherical pendulum's conservation laws, and
jit, vmap (refilling lanes) and reverse-mode derivatives through a solve.

Compiles several programs of the full integrator (minutes of CPU at the suite's
optimisation level), so the module is ``validation``; the default run checks the same
equations at single states (``test_spatial.py``). Results: docs/engine.md."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.geometry.quaternion import axis_angle_quaternion, rotation_matrix
from model.integrate import SolverSettings
from model.mechanics.spatial import GROUND, SpatialMechanism
from model.mechanics.spatial.dynamics import angular_momentum, kinetic_energy
from model.mechanics.spatial.joints import SpatialJoint
from model.mechanics.tree import SpatialTreeMechanism, tree_mechanism, tree_topology
from model.mechanics.tree.spatial_dynamics import evaluate
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS, check_lanes_and_clearance_gradient

pytestmark = [pytest.mark.slow, pytest.mark.validation]

FLORES_3D, DOUBLE_LINK = "flores_slider_crank_3d.toml", "double_link_clearance.toml"
SPHERICAL, CONICAL = "spherical_pendulum.toml", "conical_pendulum.toml"  # a free joint under the ball
# s: past the first impact (0.23 ms; 6.4 ms; 4.5 ms); the conical pendulum starts seated, 0.1 s is 0.12 turns
WINDOWS = {FLORES_3D: 0.4e-3, DOUBLE_LINK: 0.03, SPHERICAL: 0.02, CONICAL: 0.1}
# a contact of the double link begins at a sample (21.75 ms), where 3 N of a 709 N peak
# move by 1 % with the compiler's rounding at rtol 1e-8 on either engine (the positions by
# 1e-10 m): it is solved tighter (at the default level the two then differ by 5.5e-7 of the peak)
TOLERANCES = {DOUBLE_LINK: (1e-10, 1e-13)}
MASS, LENGTH, G = 1.0, 0.3, 9.81  # kg, m, m/s^2: a rod hanging on a ball joint at its upper end
INERTIA = (MASS * LENGTH**2 / 12, 1e-4, MASS * LENGTH**2 / 12)  # kg m^2, the rod along its y axis
Z, X = jnp.array([0.0, 0.0, 1.0]), jnp.array([1.0, 0.0, 0.0])


@functools.lru_cache
def config(name: str):
    return load_mechanism(CONFIGS / name)


@functools.lru_cache
def absolute(name: str):
    return build_mechanism(config(name), "absolute")


def test_flores_tree():
    """Crank driven, conrod on the crank, slider on its guide; the pin's axial row is
    implied by the planar loop (dropped as redundant), so the pin cuts the loop; the ideal
    twin (the pin made a revolute joint) closes it: the pin is cut."""
    topology = tree_topology(absolute(FLORES_3D))
    assert {j.body: (j.kind, j.parent) for j in topology.joints} == {0: ("revolute", -1), 1: ("revolute", 0),
                                                                      2: ("prismatic", -1)}
    assert (topology.size, topology.rate_size, topology.speed_drivers) == (2, 2, (0,))
    assert len(tree_topology(absolute(FLORES_3D).idealised()).cuts) == 1
    assert isinstance(build_mechanism(load_mechanism(CONFIGS / FLORES_3D, ["simulation.engine=joint"])),
                      SpatialTreeMechanism)


@functools.lru_cache
def both_engines(name: str):
    """One compiled evaluation of both engines at a state in contact: the joint engine's
    start with its first free coordinate moved by 1.02 clearances (the first clearance
    joint's journal centred at the start: 2 % of the clearance deep), every free velocity
    raised by a share of 0.3 m/s or rad/s."""
    tree = tree_mechanism(absolute(name))

    @jax.jit
    def evaluations(tree):
        start = tree.initial_state()
        clearance = tree.clearance_joints[0].clearance
        moving = 0.3 * jnp.ones_like(start.zd) / jnp.sqrt(start.zd.shape[0])  # m/s, rad/s
        state = start._replace(z=start.z.at[0].add(1.02 * clearance), zd=start.zd + moving)
        rate = tree.vector_field(0.0, state)
        absolute_state = tree.state_absolute(state)
        out = evaluate(tree.absolute, tree.topology, state)
        reference = tree.absolute.evaluate(0.0, absolute_state)
        absolute_rate = tree.absolute.vector_field(0.0, absolute_state)
        violation = jnp.max(jnp.abs(tree.absolute.constraint_values(absolute_state.x, 0.0)))
        return rate, out, reference, absolute_rate, violation, tree.state_absolute(start)

    return tree, evaluations(tree)


@pytest.mark.parametrize("name", [FLORES_3D, DOUBLE_LINK])
def test_rates_match_the_absolute_engine_in_contact(name):
    """At a state inside the clearance, moving: the twists' rates, the speed driver's
    torque, the impact memory's rate and the drivers' power equal the absolute engine's; the
    absolute coordinates satisfy every ideal joint to rounding; the start is the absolute
    engine's."""
    tree, (rate, out, reference, absolute_rate, violation, start) = both_engines(name)
    assert float(violation) < 1e-14
    assert float(np.max(reference.contact.normal_force)) > 1.0  # N: in contact
    scale = float(np.max(np.abs(reference.acceleration)))
    np.testing.assert_allclose(out.vdot, reference.acceleration, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(rate.impact_memory, absolute_rate.impact_memory, rtol=1e-8, atol=1e-12)
    assert float(rate.driver_work) == pytest.approx(float(absolute_rate.driver_work), rel=1e-8, abs=1e-9)
    torque_scale = float(np.max(reference.contact.normal_force)) * 0.05  # N m: the force on a 50 mm arm
    np.testing.assert_allclose(out.driver_torques, reference.driver_torques, rtol=1e-8, atol=1e-10 * torque_scale)
    initial = tree.absolute.initial_state()
    np.testing.assert_allclose(start.x, initial.x, rtol=0, atol=1e-15)
    np.testing.assert_allclose(start.v, initial.v, rtol=0, atol=1e-12 * max(1.0, float(jnp.max(jnp.abs(initial.v)))))


@functools.lru_cache
def runs(name: str):
    rtol, atol = TOLERANCES.get(name, (1e-8, 1e-11))
    settings = solver_settings(config(name), t_end=WINDOWS[name], output_interval=WINDOWS[name] / 40, rtol=rtol,
                               atol=atol)
    simulate = jax.jit(model.simulate, static_argnums=1)
    return {engine: simulate(build_mechanism(config(name), engine), settings) for engine in ("joint", "absolute")}


@pytest.mark.parametrize("name", [FLORES_3D, DOUBLE_LINK, SPHERICAL, CONICAL])
def test_peaks_match_the_absolute_engine(name):
    """Peak contact force, peak penetration, first impact time and velocity, the bodies'
    peak accelerations, the sampled positions, normal forces and ideal joints' reactions
    agree with the absolute engine's to 1e-5 at rtol 1e-8 (the double link at 1e-10); the joint engine's trajectory satisfies the absolute joint rows to
    rounding (no drift), where the absolute engine's drift is held by projection."""
    joint, absolute_run = runs(name)["joint"], runs(name)["absolute"]
    assert int(joint.result) == 0 and int(absolute_run.result) == 0
    assert float(absolute_run.peaks.num_impacts[0]) >= 1.0
    for field in ("max_normal_force", "max_penetration", "first_impact_time", "first_impact_velocity"):
        np.testing.assert_allclose(getattr(joint.peaks, field), getattr(absolute_run.peaks, field), rtol=1e-5,
                                   err_msg=field)
    np.testing.assert_allclose(joint.peaks.max_abs_acceleration, absolute_run.peaks.max_abs_acceleration, rtol=1e-5,
                               atol=1e-5 * float(jnp.max(absolute_run.peaks.max_abs_acceleration)))
    np.testing.assert_allclose(joint.body_positions, absolute_run.body_positions, rtol=0,
                               atol=1e-5 * float(jnp.max(jnp.abs(absolute_run.body_positions))))
    # the sampled forces on the scale of the peak force (the samples miss the impacts' peaks)
    np.testing.assert_allclose(joint.normal_force, absolute_run.normal_force, rtol=0,
                               atol=1e-5 * float(jnp.max(absolute_run.peaks.max_normal_force)))
    if absolute_run.joint_reactions.size:  # the ideal joints' reactions (none in the double link)
        np.testing.assert_allclose(joint.joint_reactions, absolute_run.joint_reactions, rtol=0,
                                   atol=1e-5 * float(jnp.max(jnp.abs(absolute_run.joint_reactions))))
    assert float(jnp.max(joint.constraint_violation)) < 1e-13


def test_conical_pendulum_turns_steadily_on_its_seated_ball():
    """A uniform rod (0.5 kg, 300 mm) hung by its end on a ball seated in its socket (0.1 mm
    clearance), inclined 30 deg and turning at ``Omega^2 = 3 g / (2 L cos 30 deg)``: on the
    joint engine (a free joint under the ball) its centre keeps the steady cone, ``(r cos
    Omega t, -L/2 cos 30 deg, -r sin Omega t)`` with ``r = L/2 sin 30 deg``, to two clearances
    over 0.12 turns, and the socket carries the ideal joint's force ``m sqrt(g^2 + (Omega^2
    r)^2)`` (5.345 N) to 0.3 % at every sample: no impact after the seated start."""
    joint = runs(CONICAL)["joint"]
    mass, length, g, tilt, clearance = 0.5, 0.3, 9.81, np.pi / 6, 1e-4
    omega, radius = np.sqrt(3 * g / (2 * length * np.cos(tilt))), length / 2 * np.sin(tilt)
    t = np.asarray(joint.t)
    cone = np.stack([radius * np.cos(omega * t), np.full_like(t, -length / 2 * np.cos(tilt)),
                     -radius * np.sin(omega * t)], axis=-1)
    assert int(joint.result) == 0 and omega * t[-1] > 0.7
    np.testing.assert_allclose(np.asarray(joint.body_positions[:, 0]), cone, rtol=0, atol=2 * clearance)
    ideal_force = mass * np.hypot(g, omega**2 * radius)
    np.testing.assert_allclose(np.asarray(joint.normal_force[:, 0]), ideal_force, rtol=3e-3)
    assert float(joint.peaks.num_impacts[0]) == 1.0  # the contact at t = 0, never left


def pendulum(spin: float) -> SpatialMechanism:
    """The rod tilted 0.5 rad about z, on a ball joint at the origin, started with the
    angular velocity ``spin`` (rad/s) about the vertical y axis."""
    quaternion = axis_angle_quaternion(Z, 0.5)
    ball = jnp.array([0.0, LENGTH / 2, 0.0])
    position = -rotation_matrix(quaternion) @ ball
    omega = jnp.array([0.0, spin, 0.0])
    joint = SpatialJoint("spherical", GROUND, 0, jnp.zeros(3), ball, Z, Z, X, X, jnp.array([1.0, 0.0, 0.0, 0.0]))
    return SpatialMechanism(
        masses=jnp.array([MASS]), inertias=jnp.diag(jnp.asarray(INERTIA))[None], gravity=jnp.array([0.0, -G, 0.0]),
        initial_positions=jnp.concatenate([position, quaternion]), joints=(joint,), cylindrical_joints=(),
        spherical_joints=(), loads=(), drivers=(), body_names=("rod",), joint_names=("ball",),
        initial_velocity_targets=jnp.concatenate([jnp.cross(omega, position), omega]))


T_PENDULUM = 0.3  # s: about half a swing


@pytest.fixture(scope="module")
def swings():
    """The spinning spherical pendulum solved on both engines (the joint engine integrates
    its relative quaternion with the norm-restoring rate); energy and vertical angular
    momentum about the pivot at each output."""
    settings = SolverSettings(t_end=T_PENDULUM, output_interval=T_PENDULUM / 30, solver="tsit5", rtol=1e-10,
                              atol=1e-12, dtmax_contact_share=None)

    @jax.jit
    def run(mechanism):
        trajectory = model.simulate(mechanism, settings)
        physical = mechanism.absolute if isinstance(mechanism, SpatialTreeMechanism) else mechanism
        energy = jax.vmap(lambda x, v: kinetic_energy(physical, x, v) + MASS * G * x[1])(trajectory.x, trajectory.v)
        momentum = jax.vmap(lambda x, v: angular_momentum(physical, x, v)[1])(trajectory.x, trajectory.v)
        return trajectory, energy, momentum

    return {engine: run(mechanism) for engine, mechanism in
            (("joint", tree_mechanism(pendulum(4.0))), ("absolute", pendulum(4.0)))}


def test_spherical_pendulum_conserves_energy_and_vertical_momentum(swings):
    """Gravity does no work along the motion and has no moment about the vertical through
    the pivot: on the joint engine the energy and the vertical angular momentum stay at
    their start to the solver's tolerance while the rod's height changes by 4 % of its
    length; the centre's path is the absolute engine's."""
    (joint, energy, momentum), (absolute_run, *_) = swings["joint"], swings["absolute"]
    assert int(joint.result) == 0 and int(absolute_run.result) == 0
    swing_scale = MASS * G * LENGTH / 2
    assert float(jnp.max(jnp.abs(energy - energy[0]))) < 1e-8 * swing_scale
    assert float(jnp.max(jnp.abs(momentum - momentum[0]))) < 1e-8 * abs(float(momentum[0]))
    assert float(jnp.ptp(joint.x[:, 1])) > 0.04 * LENGTH
    assert float(jnp.max(joint.constraint_violation)) < 1e-14
    np.testing.assert_allclose(joint.body_positions, absolute_run.body_positions, rtol=0, atol=1e-8 * LENGTH)


def test_lanes_and_derivatives_through_the_joint_engine():
    """Refilling lanes and reverse-mode derivatives through the spatial joint engine
    (:func:`tests.helpers.check_lanes_and_clearance_gradient`)."""
    settings = solver_settings(config(FLORES_3D), t_end=WINDOWS[FLORES_3D], output_interval=WINDOWS[FLORES_3D],
                               rtol=1e-8, atol=1e-11)
    check_lanes_and_clearance_gradient(build_mechanism(config(FLORES_3D), "joint"), settings)
