"""The worn bushing of a cylindrical clearance joint, one profile row per slice
(model/mechanics/spatial/forces.py, worn_slices), and Archard's law per slice
(model/integrate/wear_tracking.py), at given states of a journal pressed into a fixed bushing."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.contact.wear import hertz_half_width_squared
from model.integrate.wear_tracking import wear_rates
from model.mechanics.spatial.dynamics import SpatialState
from model.mechanics.spatial.forces import cylinder_kinematics

from .journal import (BEARING_RADIUS, CLEARANCE, K_W, LENGTH, LOAD, RESOLUTION, SLICES, SPEED, WEAR, journal,
                      resting_state, static_penetration)

LOADED = 3 * RESOLUTION // 4  # the node at -90 deg from the bearing's u axis (x): straight down


def _states() -> SpatialState:
    """Resting, lifted, tilted both ways, sliding sideways, off-centre: slices in and out of contact."""
    rest = resting_state(journal())
    rows = []
    for dx, dy, tilt, vy, wx in ((0, 0, 0, 0, 0), (0, 2e-5, 0, -0.1, 0), (0, 0, 2e-3, 0, 0.5),
                                 (3e-5, -1e-5, -1e-3, 0.05, -0.3), (0, 1.5e-4, 0, 0, 0)):
        x = rest.x.at[0].add(dx).at[1].add(dy).at[3:7].set(jnp.array([jnp.cos(tilt / 2), jnp.sin(tilt / 2), 0, 0]))
        v = rest.v.at[1].set(vy).at[3].set(wx)
        rows.append(SpatialState(x, v, jnp.full(SLICES, 0.2), jnp.zeros(())))
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *rows)


@pytest.fixture(scope="module")
def evaluations():
    """Vector field and wear rates of the plain joint and of a new (zero) profile at every state."""
    states = _states()

    def evaluate(mechanism):
        flats = jax.vmap(mechanism.flatten)(states)
        return jax.jit(jax.vmap(lambda flat: (mechanism.flat_vector_field(0.0, flat),
                                              *wear_rates(WEAR, mechanism, 0.0, flat))))(flats)

    return evaluate(journal()), evaluate(journal(model.WornBore(jnp.zeros((SLICES, RESOLUTION)))))


def test_new_profile_reproduces_the_joint_without_one(evaluations):
    """A profile of zeros gives the bit-identical equations of motion and wear rates as no profile."""
    plain, zeros = evaluations
    assert plain[1].shape == (5, SLICES, RESOLUTION)
    assert np.any(np.asarray(plain[2]) > 0.0)
    for plain_value, zeros_value in zip(plain, zeros):
        np.testing.assert_array_equal(zeros_value, plain_value)


def test_each_slice_wears_its_share_by_archard(evaluations):
    """At rest under the uniform load each slice carries F / N and slides at
    ``Omega (R_j - delta)``: its row's volume rate is ``k_w (F / N) v``, the whole bushing's
    ``k_w F v`` (the bins carry each slice's force exactly), and the loaded node's depth rate is
    ``k_w p_0 v`` under the Hertz peak pressure of the slice (nearly; a bin's average)."""
    rates, power = np.asarray(evaluations[0][1][0]), float(evaluations[0][2][0])
    delta = static_penetration(journal())
    speed = SPEED * (BEARING_RADIUS - CLEARANCE - delta)
    bin_area = BEARING_RADIUS * 2.0 * np.pi / RESOLUTION * LENGTH / SLICES
    np.testing.assert_allclose(rates.sum(axis=1) * bin_area, K_W * LOAD / SLICES * speed, rtol=1e-9)
    np.testing.assert_allclose(power, LOAD * speed, rtol=1e-9)
    joint = journal().cylindrical_joints[0]
    b = float(jnp.sqrt(hertz_half_width_squared(LOAD, LENGTH, joint.effective_modulus, BEARING_RADIUS, CLEARANCE)))
    assert np.all(np.argmax(rates, axis=1) == LOADED)
    np.testing.assert_allclose(rates[:, LOADED], K_W * 2.0 * LOAD / (np.pi * b * LENGTH) * speed, rtol=2e-3)


def test_tilted_journal_wears_its_low_end_most(evaluations):
    """Tilted about +x, the journal's +z end dips into the bushing: the slices' wear rates grow
    towards it (state 2), and the raised end may leave the contact."""
    per_slice = np.asarray(evaluations[0][1][2]).sum(axis=1)
    assert np.all(np.diff(per_slice) >= 0.0) and np.argmax(per_slice) == SLICES - 1 and per_slice[0] < per_slice[-1]


def test_each_slice_reads_its_own_row():
    """A groove under one slice only lowers that slice's penetration, by the groove's depth."""
    depth = np.zeros((SLICES, RESOLUTION))
    depth[2] = 3e-6
    plain, worn = journal(), journal(model.WornBore(jnp.asarray(depth)))
    state = resting_state(plain)
    kinematics = jax.jit(lambda joint: cylinder_kinematics(joint, state.x, state.v)[0])
    nominal, grooved = kinematics(plain.cylindrical_joints[0]), kinematics(worn.cylindrical_joints[0])
    change = np.asarray(nominal.penetration - grooved.penetration)
    np.testing.assert_allclose(change, [0.0, 0.0, 3e-6, 0.0], rtol=1e-9, atol=1e-15)
    moved = np.asarray(grooved.contact_point - nominal.contact_point)
    np.testing.assert_allclose(moved[2], [0.0, -3e-6, 0.0], atol=1e-15)


def test_wear_rates_differentiate_through_the_profile_and_batch():
    """The slices' contact depends on the four nodes of their own row around the contact
    (Catmull-Rom), smoothly; the rates map over a batch of profiles (one compile: the
    gradient mapped over two profiles, a deeper one carrying the same load)."""
    mechanism = journal(model.WornBore(jnp.zeros((SLICES, RESOLUTION))))
    flat = mechanism.flatten(resting_state(mechanism))

    def power(depth):
        return wear_rates(WEAR, journal(model.WornBore(depth)), 0.0, flat)[1]

    profiles = jnp.stack([jnp.full((SLICES, RESOLUTION), 1e-7), jnp.full((SLICES, RESOLUTION), 2e-7)])
    powers, gradients = jax.jit(jax.vmap(jax.value_and_grad(power)))(profiles)
    gradient = np.asarray(gradients[0])
    assert np.all(np.isfinite(gradient))
    rows, columns = np.nonzero(gradient)
    assert set(columns) <= {LOADED + k for k in (-1, 0, 1, 2)} and set(rows) == set(range(SLICES))
    assert np.all(gradient[:, LOADED] < 0.0)  # a deeper bushing under a slice carries less of its load
    assert powers[1] < powers[0]  # the journal held at rest sinks less into the deeper bushing
    np.testing.assert_allclose(np.asarray(gradients[1])[:, LOADED], gradient[:, LOADED], rtol=0.2)
