"""The pin-in-bushing load cases (Yao, Chen, Wang & Liu) run to steady state.

Hand-derived statics of the pin (weight ``W`` at the centre, load ``P`` along -y, torque ``T``
about +x, contact length ``l``, end forces of the bearing on the pin, +y up):
``F_a + F_b = P_total + W`` and, moments about x, ``(l/2)(F_a - F_b) = sum z_i P_i + T``...
written out per case in ``expected_end_forces`` and in docs/spatial.md.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import fsolve

from model.contact.stiffness import palmgren_stiffness
from model.integrate.settings import SolverSettings
from model.integrate import simulate

from .cases import GRAVITY, LENGTH, LOAD, PIN_MASS, TORQUE, bushing

WEIGHT = PIN_MASS * GRAVITY
# (end_force, centre_force, centre_torque) of the five cases
CASES = [(1, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 1, 1)]


def expected_end_forces(end_force, centre_force, torque):
    """Signed y components (N) of the bearing's end forces on the pin at z = -l/2 (a), +l/2 (b).

    Force balance: ``F_a + F_b = W + P (end_force + centre_force)``. Moment balance about the
    centre, x component of ``r x F`` (``-z F_y``): ``(l/2) F_a - (l/2) F_b - (l/2) P end_force
    + T = 0`` since the end load acts at ``z = -l/2``.
    """
    total = WEIGHT + LOAD * (end_force + centre_force)
    difference = LOAD * end_force - 2.0 * TORQUE * torque / LENGTH  # F_a - F_b
    return 0.5 * (total + difference), 0.5 * (total - difference)


def _steady(slices=20, t_end=0.03):
    """All five cases in one vmapped solve (the switches are array leaves)."""
    flags = jnp.asarray(CASES, dtype=float)
    base = bushing(slices=slices)
    base = eqx.tree_at(lambda m: m.cylindrical_joints[0].contact.impact_velocity_floor, base, 1.0)

    def run(flag):
        m = eqx.tree_at(lambda m: (m.loads[0].enabled, m.loads[1].enabled, m.loads[2].enabled), base,
                        (flag[0], flag[1], flag[2]))
        return simulate(m, SolverSettings(t_end=t_end, output_interval=t_end / 10, solver="tsit5"))

    return jax.jit(jax.vmap(run))(flags)


@pytest.fixture(scope="module")
def steady():
    return _steady()


@pytest.mark.slow
def test_solves_succeed(steady):
    assert np.all(np.asarray(steady.result) == 0)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(5))
def test_end_forces_match_static_equilibrium(steady, case):
    expected_a, expected_b = expected_end_forces(*CASES[case])
    tolerance = 0.005 * LOAD
    assert abs(float(steady.normal_force_a[case, -1, 0]) - abs(expected_a)) < tolerance
    assert abs(float(steady.normal_force_b[case, -1, 0]) - abs(expected_b)) < tolerance


@pytest.mark.slow
def test_torque_shifts_end_forces_equally_and_oppositely(steady):
    # case 4 = case 3 + torque: the resultant is unchanged, the ends move by -+T/l
    resultant_3 = float(steady.normal_force[2, -1, 0])
    resultant_4 = float(steady.normal_force[3, -1, 0])
    assert abs(resultant_4 - resultant_3) < 1e-3 * LOAD
    shift_a = float(steady.normal_force_a[3, -1, 0] - steady.normal_force_a[2, -1, 0])
    shift_b = float(steady.normal_force_b[3, -1, 0] - steady.normal_force_b[2, -1, 0])
    assert abs(shift_a + TORQUE / LENGTH) < 5e-3 * LOAD
    assert abs(shift_b - TORQUE / LENGTH) < 5e-3 * LOAD


@pytest.mark.slow
def test_case_5_free_end_equals_case_4(steady):
    assert abs(float(steady.normal_force_b[4, -1, 0] - steady.normal_force_b[3, -1, 0])) < 5e-3 * LOAD


@pytest.mark.slow
def test_contact_patterns(steady):
    forces = np.asarray(steady.slice_normal_force[:, -1])
    loaded = forces > 1e-6 * LOAD
    # case 1: the load at the end is carried by the end slice; interior slices are free
    assert forces[0, 0] > 0.97 * (LOAD + WEIGHT) and not loaded[0, 1:-1].any()
    # case 2: pure torque, two points at opposite ends (opposite sides: the end forces balance)
    assert loaded[1, 0] and loaded[1, -1] and not loaded[1, 1:-1].any()
    # case 3: line contact, uniform
    assert loaded[2].all() and np.ptp(forces[2]) < 1e-4 * forces[2].mean()
    # case 4: mixed: part of the length loaded, increasing towards the torque's loaded end
    assert loaded[3, -1] and not loaded[3, 0] and np.all(np.diff(forces[3][loaded[3]]) > 0)


@pytest.mark.slow
def test_line_contact_penetration_is_the_inverted_palmgren_law(steady):
    expected = ((LOAD + WEIGHT) / palmgren_stiffness(LENGTH)) ** 0.9
    penetration = np.asarray(steady.slice_penetration[2, -1])
    np.testing.assert_allclose(penetration, expected, rtol=1e-4)


def _static_slice_penetrations(slices=20):
    """Case 4 solved as statics: the pin at height ``y`` (below the bearing axis, clearance
    taken up) tilted by a small ``theta`` about x; slice k penetrates ``-(y + z_k theta) - c``
    (the first-order geometry, tilt ~1e-4 rad) and carries ``(K/N) delta^(10/9)``."""
    stiffness = float(palmgren_stiffness(LENGTH)) / slices
    z = -LENGTH / 2 + (np.arange(slices) + 0.5) * LENGTH / slices
    clearance = 1e-3

    def forces(unknowns):
        y, theta = unknowns
        delta = np.maximum(-(y * 1e-3 + z * theta * 1e-3) - clearance, 0.0)
        return stiffness * delta ** (10 / 9), delta

    def residual(unknowns):
        f, _ = forces(unknowns)
        # sum F = W + P ; sum (-z F) + T = 0 (x moment of upward slice forces at z)
        return [(f.sum() - WEIGHT - LOAD) / LOAD, (-(z * f).sum() + TORQUE) / (LOAD * LENGTH)]

    solution = fsolve(residual, [-1.001, -0.05], xtol=1e-13)
    return forces(solution)[1]


@pytest.mark.slow
def test_tilted_case_penetration_profile_matches_static_solve(steady):
    expected = _static_slice_penetrations()
    measured = np.asarray(steady.slice_penetration[3, -1])
    contact = expected > 0
    np.testing.assert_allclose(measured[contact], expected[contact], rtol=5e-3, atol=2e-3 * expected.max())
