"""Archard wear accumulated over the accepted steps (model/integrate/wear_tracking.py) and
the worn bushing in the dynamics (model/geometry/worn.py): a journal pressed by a constant
load into a fixed bushing while it spins at a constant speed, against Archard's closed forms."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.contact.wear import hertz_half_width_squared
from model.integrate.wear_tracking import wear_rates
from model.mechanics.dynamics import State
from model.mechanics.mechanism import GROUND, ClearanceJoint, Mechanism

LOAD = 1000.0  # N, on a 1 kg journal
BEARING_RADIUS, CLEARANCE, LENGTH = 0.01, 1e-4, 0.02  # m
SPEED = 100.0  # rad/s, the journal's spin (no friction: it stays constant)
K_W = 1e-13  # 1/Pa
RESOLUTION = 720  # a multiple of 4: a node sits at the loaded point (-90 deg)
T_END = 0.01  # s
SETTINGS = model.SolverSettings(t_end=T_END, output_interval=1e-3, solver="tsit5")
WEAR = model.ArchardWear(coefficient=jnp.asarray(K_W), length=jnp.asarray(LENGTH), start_time=jnp.asarray(0.0),
                         joint=0, resolution=RESOLUTION)


def journal(wear: model.WornBore | None = None) -> Mechanism:
    joint = ClearanceJoint(
        journal_body=0, bearing_body=GROUND, journal_point=jnp.zeros(2), bearing_point=jnp.zeros(2),
        bearing_radius=jnp.asarray(BEARING_RADIUS), clearance=jnp.asarray(CLEARANCE),
        contact=model.ContactLaw(model="lankarani_nikravesh", stiffness=jnp.asarray(0.0), exponent=jnp.asarray(1.5),
                                 restitution=jnp.asarray(0.9)),
        friction=model.FrictionLaw(model="none"),
        effective_modulus=jnp.asarray(model.effective_modulus(207e9, 0.3, 207e9, 0.3)),
        stiffness_factor=jnp.asarray(1.0), initial_eccentricity=jnp.zeros(2), wear=wear)
    return Mechanism(masses=jnp.ones(1), inertias=jnp.asarray([1e-4]), gravity=jnp.asarray([0.0, -LOAD]),
                     initial_positions=jnp.zeros(3), revolute_joints=(), prismatic_joints=(), fixed_joints=(),
                     clearance_joints=(joint,), drivers=(), initial_velocities="zero", body_names=("journal",),
                     clearance_names=("pin",))


def resting_state(mechanism: Mechanism, depth: float = 0.0) -> State:
    """The journal at rest on its contact (static penetration under the load), spinning."""
    penetration = (LOAD / mechanism.clearance_joints[0].stiffness()) ** (1.0 / 1.5)
    return State(jnp.stack([0.0, -(CLEARANCE + depth + penetration), 0.0]), jnp.asarray([0.0, 0.0, SPEED]),
                 jnp.zeros(1), jnp.zeros(()))


_simulate = jax.jit(model.simulate_with_wear, static_argnums=1)


@pytest.fixture(scope="module")
def runs():
    """One compiled program: a new bushing (a profile of zeros) and a uniformly worn one."""
    new = journal(model.WornBore(jnp.zeros(RESOLUTION)))
    uniform = journal(model.WornBore(jnp.full(RESOLUTION, 5e-6)))
    return {"new": _simulate(new, SETTINGS, WEAR, resting_state(new)),
            "uniform": _simulate(uniform, SETTINGS, WEAR, resting_state(uniform, 5e-6))}


@pytest.mark.slow  # the module's two 10 ms runs of the spinning journal
def test_new_profile_reproduces_the_joint_without_one(runs):
    """A profile of zeros gives the bit-identical equations of motion and wear rates as no
    profile, at every saved state of a run (so the solves are identical too: the
    validation-tier test below compares two of them)."""
    trajectory, _ = runs["new"]
    plain, zeros = journal(), journal(model.WornBore(jnp.zeros(RESOLUTION)))
    states = jax.vmap(plain.flatten)(
        State(trajectory.q, trajectory.qd, trajectory.impact_memory, trajectory.driver_work))

    def fields(mechanism):
        return jax.jit(jax.vmap(lambda flat: (mechanism.flat_vector_field(0.0, flat),
                                              *wear_rates(WEAR, mechanism, 0.0, flat))))(states)

    for plain_value, zeros_value in zip(fields(plain), fields(zeros)):
        np.testing.assert_array_equal(zeros_value, plain_value)


@pytest.mark.slow
@pytest.mark.validation
def test_new_profile_reproduces_the_solve_without_one(runs):
    plain = journal()
    trajectory, wear = _simulate(plain, SETTINGS, WEAR, resting_state(plain))
    new, new_wear = runs["new"]
    for name in ("q", "qd", "qdd", "penetration", "normal_force", "slip_velocity"):
        np.testing.assert_array_equal(getattr(new, name), getattr(trajectory, name), err_msg=name)
    np.testing.assert_array_equal(new_wear.depth, wear.depth)
    assert int(new.steps) == int(trajectory.steps)


@pytest.mark.slow  # the module's two 10 ms runs of the spinning journal
def test_worn_volume_is_archard(runs):
    """V = k_w F s with s = omega R_j t, and the profile's volume is the accumulated k_w int F |v| dt."""
    trajectory, wear = runs["new"]
    assert int(trajectory.result) == 0
    sliding = SPEED * (BEARING_RADIUS - CLEARANCE) * T_END
    np.testing.assert_allclose(wear.load_distance, LOAD * sliding, rtol=1e-6)
    volume = model.WornBore(wear.depth).volume(BEARING_RADIUS, LENGTH)
    np.testing.assert_allclose(volume, K_W * wear.load_distance, rtol=1e-12)
    np.testing.assert_allclose(volume, K_W * LOAD * sliding, rtol=1e-2)


@pytest.mark.slow  # the module's two 10 ms runs of the spinning journal
def test_depth_at_the_loaded_point_is_archard(runs):
    """h = k_w p0 v t at the loaded point, p0 = 2 F / (pi b L) the Hertz peak pressure, and
    nothing is worn outside the contact width."""
    _, wear = runs["new"]
    joint = journal().clearance_joints[0]
    b = float(jnp.sqrt(hertz_half_width_squared(LOAD, LENGTH, joint.effective_modulus, BEARING_RADIUS, CLEARANCE)))
    peak_pressure = 2.0 * LOAD / (np.pi * b * LENGTH)
    sliding = SPEED * (BEARING_RADIUS - CLEARANCE) * T_END
    depth = np.asarray(wear.depth)
    loaded = 3 * RESOLUTION // 4
    assert int(np.argmax(depth)) == loaded
    np.testing.assert_allclose(depth[loaded], K_W * peak_pressure * sliding, rtol=1e-2)
    angles = np.asarray(model.geometry.bin_angles(RESOLUTION))
    away = np.abs(angles - 1.5 * np.pi) * BEARING_RADIUS > b + 2 * np.pi * BEARING_RADIUS / RESOLUTION
    assert np.all(depth[away] == 0.0)


@pytest.mark.slow  # the module's two 10 ms runs of the spinning journal
def test_worn_bushing_lets_the_journal_sink_by_the_depth(runs):
    """A bushing worn uniformly by h is a clearance c + h: the journal resting at
    c + h + delta carries the load unchanged."""
    trajectory, _ = runs["uniform"]
    np.testing.assert_allclose(trajectory.normal_force[:, 0], LOAD, rtol=1e-3)
    np.testing.assert_allclose(trajectory.eccentricity[:, 0, 1], trajectory.eccentricity[0, 0, 1], rtol=1e-6)


def test_wear_rates_differentiate_through_the_profile_and_batch():
    """The contact of a worn joint depends on the four profile nodes around the contact
    (Catmull-Rom), smoothly; the rates map over lanes."""
    mechanism = journal(model.WornBore(jnp.zeros(RESOLUTION)))
    flat = mechanism.flatten(resting_state(mechanism))

    def loaded_rate(depth):
        worn = journal(model.WornBore(depth))
        return wear_rates(WEAR, worn, 0.0, flat)[1]

    gradient = np.asarray(jax.jit(jax.grad(loaded_rate))(jnp.full(RESOLUTION, 1e-7)))
    assert np.all(np.isfinite(gradient))
    assert set(np.flatnonzero(gradient)) <= {3 * RESOLUTION // 4 + k for k in (-1, 0, 1, 2)}
    assert gradient[3 * RESOLUTION // 4] < 0.0  # a deeper bushing at the contact carries less load
    with_coefficient = lambda k: eqx.tree_at(lambda w: w.coefficient, WEAR, k)  # noqa: E731
    lanes = jax.jit(jax.vmap(lambda k: wear_rates(with_coefficient(k), mechanism, 0.0, flat)[0]))(
        jnp.asarray([K_W, 2 * K_W]))
    np.testing.assert_allclose(lanes[1], 2 * lanes[0], rtol=1e-14)
