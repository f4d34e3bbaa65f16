"""The service life as a differentiable function (model/integrate/life.py).

The interpolation of the crossing is checked on series with known crossings (default run).
The life loop itself runs on a journal loaded by a constant force in a bushing that a
driver spins at a constant speed (validation tier: the scan and its tangent compile for
about a minute). The load turns round the bushing once per cycle, so over whole cycles every
angle bin wears alike: Archard's law gives the uniform depth ``k_w F (omega R_b T) / (2 pi
R_b L) = k_w F / L`` per cycle (``omega T = 2 pi``), the equivalent clearance grows
linearly and the life at a limit ``L_c`` is ``(L_c - c) L / (k_w F)``, whose derivative
with respect to the clearance is ``-L / (k_w F)``.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.joints import Driver, RevoluteJoint
from model.mechanics.mechanism import GROUND, ClearanceJoint, Mechanism


# one compile each, shared by the tests of the interpolation
service_life = jax.jit(model.service_life)
life_gradient = jax.jit(jax.grad(lambda cycles, values, limit: model.service_life(cycles, values, limit)[0],
                                 argnums=(1, 2)))


def test_life_interpolates_between_the_passes_that_bracket_the_crossing():
    cycles = jnp.asarray([0.0, 100.0, 200.0, 300.0])
    values = jnp.asarray([1.0, 2.0, 4.0, 8.0])
    life, crossed = service_life(cycles, values, 3.0)
    assert bool(crossed)
    np.testing.assert_allclose(life, 150.0, rtol=1e-15)
    # d life / d m_1 = (N_2 - N_1) (L - m_2) / (m_2 - m_1)^2, d life / d m_2 = -(N_2 - N_1) (L - m_1) / (m_2 - m_1)^2
    by_values, by_limit = life_gradient(cycles, values, 3.0)
    np.testing.assert_allclose(by_values, [0.0, -25.0, -25.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(by_limit, 50.0, rtol=1e-15)  # (N_2 - N_1) / (m_2 - m_1)


def test_life_never_crossed_is_the_whole_run_and_flagged():
    life, crossed = service_life(jnp.asarray([0.0, 10.0, 20.0, 30.0]), jnp.asarray([1.0, 2.0, 3.0, 4.0]), 5.0)
    assert not bool(crossed)
    assert float(life) == 30.0


def test_life_crossed_before_the_first_update_is_its_cycles():
    life, crossed = service_life(jnp.asarray([0.0, 10.0, 20.0, 30.0]), jnp.asarray([6.0, 7.0, 8.0, 9.0]), 5.0)
    assert bool(crossed)
    assert float(life) == 0.0


def test_schedule_covers_the_life():
    schedule = model.LifeSchedule.covering(2500.0, 1000.0, 2.0)
    assert schedule.updates == 3
    assert model.LifeSchedule.covering(3000.0, 1000.0).updates == 3


LOAD, BEARING_RADIUS, CLEARANCE, LENGTH, K_W = 1000.0, 0.01, 1e-4, 0.02, 1e-13  # N, m, m, m, 1/Pa
SPEED = 1000.0  # rad/s of the bushing
PERIOD = 2.0 * np.pi / SPEED  # s, one cycle: a turn of the bushing
RESOLUTION = 90  # 4 deg bins: the journal (c = 0.1 mm) recedes 0.24 um from the bore one bin off its contact, so
# the contact stays on the line of centres in the uniformly worn bore
UPDATE = 100.0  # operating cycles per update
RATE = K_W * LOAD / LENGTH  # m per cycle, the uniform depth of Archard's law
LIMIT_RISE = 1.5 * UPDATE * RATE  # m, the limit above c: crossed halfway between updates 1 and 2


def rotating_bushing(clearance) -> Mechanism:
    """Body 0: a bushing pinned to the ground at its centre and driven at ``SPEED``; body 1: a
    journal (1 kg, no spin) in it under the load ``LOAD`` (gravity); no friction."""
    a = jnp.asarray
    joint = ClearanceJoint(
        journal_body=1, bearing_body=0, journal_point=jnp.zeros(2), bearing_point=jnp.zeros(2),
        bearing_radius=a(BEARING_RADIUS), clearance=clearance,
        contact=model.ContactLaw(model="lankarani_nikravesh", stiffness=a(0.0), exponent=a(1.5), restitution=a(0.9)),
        friction=model.FrictionLaw(model="none"),
        effective_modulus=a(model.effective_modulus(207e9, 0.3, 207e9, 0.3)),
        stiffness_factor=a(1.0), initial_eccentricity=jnp.zeros(2))
    return Mechanism(masses=jnp.ones(2), inertias=a([1e-3, 1e-4]), gravity=a([0.0, -LOAD]), initial_positions=jnp.zeros(6),
                     revolute_joints=(RevoluteJoint(GROUND, 0, jnp.zeros(2), jnp.zeros(2)),), prismatic_joints=(),
                     fixed_joints=(), clearance_joints=(joint,), drivers=(Driver(0, "constant_speed", a(SPEED), a(0.0),
                                                                                 a(0.0)),),
                     initial_velocities="zero", body_names=("bushing", "journal"), clearance_names=("pin",))


def resting(mechanism: Mechanism) -> model.State:
    """The journal resting under the load on the bottom of the bushing, worn uniformly (by
    the mean of its profile), the bushing spinning."""
    joint = mechanism.clearance_joints[0]
    sink = joint.clearance + jnp.mean(joint.wear.depth) + (LOAD / joint.stiffness()) ** (1.0 / 1.5)
    return model.State(jnp.stack([0.0, 0.0, 0.0, 0.0, -sink, 0.0]), jnp.asarray([0.0, 0.0, SPEED, 0.0, 0.0, 0.0]),
                       jnp.zeros(1), jnp.zeros(()))


# a quarter turn of warm-up, one counted turn per pass; steps short enough for the moving
# contact (the Hertz half-width, 0.75 mm, passes in 75 us) to be integrated evenly into every bin
START = PERIOD / 4
SETTINGS = model.SolverSettings(t_end=START + PERIOD, output_interval=PERIOD / 4, solver="tsit5", adjoint="forward",
                                dtmax=PERIOD / 400)
WEAR = model.ArchardWear(coefficient=jnp.asarray(K_W), length=jnp.asarray(LENGTH), start_time=jnp.asarray(START),
                         joint=0, resolution=RESOLUTION)
# two updates: over more, the slight unevenness of the profile (the step-wise quadrature of the
# moving contact) excites the journal on the spinning bore, and the wear grows uneven
SCHEDULE = model.LifeSchedule.covering(2 * UPDATE, UPDATE, 1.0)


def life_of(clearance):
    mechanism = rotating_bushing(clearance)
    history = model.simulate_life(mechanism, SETTINGS, WEAR, SCHEDULE, resting)
    life, _ = model.service_life(history.cycles, history.equivalent_clearance, CLEARANCE + LIMIT_RISE)
    return life, history


@pytest.fixture(scope="module")
def lives():
    """The life and its forward-mode derivative at c, and the lives at c +- 1e-8 m (one compile each)."""
    primal = jax.jit(life_of)
    tangent = jax.jit(lambda c: jax.jvp(lambda x: life_of(x)[0], (c,), (jnp.ones(()),)))
    life, derivative = tangent(jnp.asarray(CLEARANCE))
    step = 1e-8
    return {"history": primal(jnp.asarray(CLEARANCE))[1], "life": life, "derivative": derivative,
            "difference": (primal(jnp.asarray(CLEARANCE + step))[0] - primal(jnp.asarray(CLEARANCE - step))[0])
            / (2 * step)}


@pytest.mark.slow
@pytest.mark.validation
def test_life_of_a_uniformly_wearing_journal_is_archards(lives):
    history = lives["history"]
    assert np.all(np.asarray(history.result) == 0)
    np.testing.assert_array_equal(history.cycles, [0.0, UPDATE, 2 * UPDATE])
    # linear growth of the equivalent clearance by the uniform Archard depth per update
    np.testing.assert_allclose(np.diff(history.equivalent_clearance), UPDATE * RATE, rtol=1e-3)
    depth = np.asarray(history.depth)
    assert np.ptp(depth) < 1e-2 * np.mean(depth)  # uniform round the bushing
    np.testing.assert_allclose(lives["life"], LIMIT_RISE / RATE, rtol=1e-3)


@pytest.mark.slow
@pytest.mark.validation
def test_life_derivative_matches_finite_differences_and_the_closed_form(lives):
    np.testing.assert_allclose(lives["derivative"], lives["difference"], rtol=1e-6)
    np.testing.assert_allclose(lives["derivative"], -1.0 / RATE, rtol=1e-3)
