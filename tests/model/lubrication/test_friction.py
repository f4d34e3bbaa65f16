"""The film's viscous torques: Petroff at the centre, Raimondi & Boyd's friction variable in
steady rotation, the moment balance of the massless film, and dissipation for any motion."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model  # noqa: F401  (float64)
from model.geometry import cross2
from model.lubrication import BEARING_MODELS, Lubrication, SUPPLY_CONDITIONS

RADIUS, CLEARANCE, LENGTH, VISCOSITY = 0.01, 5e-5, 0.02, 0.05  # L/D = 1

# Raimondi & Boyd, ASLE Trans. 1 (1958), full journal bearing, L/D = 1: eccentricity ratio ->
# (Sommerfeld number S = (R/c)^2 mu N / P, attitude angle phi in degrees, friction variable (R/c) f).
RAIMONDI_BOYD_L_OVER_D_1 = {
    0.1: (1.33, 79.5, 26.4),
    0.2: (0.631, 74.02, 12.8),
    0.4: (0.264, 63.10, 5.79),
    0.6: (0.121, 50.58, 3.22),
    0.8: (0.0446, 36.24, 1.70),
    0.9: (0.0188, 26.45, 1.05),
    0.97: (0.00474, 15.47, 0.514),
}


def film(supply="maximum_gap", bearing="finite_bearing", onset=0.95):
    return Lubrication(bearing, viscosity=VISCOSITY, length=LENGTH, transition_onset=onset,
                       transition_cap=0.5 * (1 + onset), supply=supply)


def test_petroff_torque_of_a_centred_journal():
    omega_j, omega_b = 300.0, -40.0
    action = film().action(jnp.zeros(2), jnp.zeros(2), omega_j, omega_b, RADIUS, CLEARANCE)
    petroff = 2 * np.pi * VISCOSITY * RADIUS**3 * LENGTH * (omega_j - omega_b) / CLEARANCE
    assert float(action.journal_torque) == pytest.approx(-petroff, rel=1e-12)
    assert float(action.bearing_torque) == pytest.approx(petroff, rel=1e-12)


def test_steady_rotation_gives_the_raimondi_boyd_friction_variable():
    """A journal turning at omega in a fixed bearing: the load W is minus the film force, and
    the torque the film exerts on the journal is -W R f (it brakes the journal)."""
    lubrication, omega = film(onset=0.99), 300.0
    for eps, (_, _, friction_variable) in RAIMONDI_BOYD_L_OVER_D_1.items():
        action = lubrication.action(jnp.array([eps * CLEARANCE, 0.0]), jnp.zeros(2), omega, 0.0, RADIUS, CLEARANCE)
        load = float(jnp.linalg.norm(action.force))
        ours = -float(action.journal_torque) / (load * CLEARANCE)  # (R/c) f = T / (W c)
        assert ours == pytest.approx(friction_variable, rel=0.03), eps


@pytest.mark.slow  # 5 CPU s, most of it compiling
@pytest.mark.parametrize("bearing", tuple(BEARING_MODELS))
def test_torques_balance_the_couple_and_the_film_dissipates(bearing):
    """For random motions, inside and beyond the transition: the film transmits no net moment
    (``T_j + T_b + e x F = 0``) and the power of its action on journal and bearing,
    ``F . de/dt + T_j omega_j + T_b omega_b``, is never positive."""
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    count = 400
    eccentricity = jax.random.uniform(keys[0], (count, 1), maxval=0.999 * CLEARANCE) * jnp.stack(
        [jnp.cos(angle := jax.random.uniform(keys[1], (count,), maxval=2 * np.pi)), jnp.sin(angle)], axis=1)
    rate = jax.random.normal(keys[2], (count, 2)) * 300.0 * CLEARANCE
    spins = jax.random.normal(keys[3], (count, 2)) * 300.0
    for supply in SUPPLY_CONDITIONS if bearing == "finite_bearing" else ("maximum_gap",):
        lubrication = film(supply, bearing)
        action = jax.vmap(lambda e, r, s: lubrication.action(e, r, s[0], s[1], RADIUS, CLEARANCE))(
            eccentricity, rate, spins)
        couple = jax.vmap(cross2)(eccentricity, action.force)
        scale = jnp.abs(action.journal_torque) + jnp.abs(couple)
        np.testing.assert_array_less(np.abs(action.journal_torque + action.bearing_torque + couple), 1e-12 * scale)
        power = (jnp.sum(action.force * rate, axis=1) + action.journal_torque * spins[:, 0]
                 + action.bearing_torque * spins[:, 1])
        bound = jnp.linalg.norm(action.force, axis=1) * jnp.linalg.norm(rate, axis=1) + jnp.abs(
            action.journal_torque * spins[:, 0]) + jnp.abs(action.bearing_torque * spins[:, 1])
        assert float(jnp.max(power / bound)) <= 1e-12, supply
