"""What a trajectory reports on the joint engine, from the tree's own evaluation
(``TreeMechanism.outputs``, model/mechanics/tree/outputs.py): a pendulum's pin reaction and
driver torque against the analytic ones, and at random states of the shipped configs'
trees against the absolute engine's evaluation at the same absolute state (an independent
formulation: Lagrange multipliers of every ideal-joint row, Schur complement), where its
Baumgarte terms vanish (states on the joints and on the driver's rows)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pipelines
from model.integrate.solve import solve
from model.integrate.trajectory import trajectory_from_states
from model.mechanics import GROUND, Mechanism, RevoluteJoint
from model.mechanics.joints import Driver
from model.mechanics.tree import tree_mechanism
from model.mechanics.tree.dynamics import TreeState
from pipelines.build import build_mechanism
from pipelines.columns import as_arrays, column_units, output_columns
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS, FLORES

MASS, INERTIA, ARM, G = 0.7, 2e-3, 0.15, 9.81  # kg, kg m^2, m, m/s^2
ANGLES = jnp.array([0.0, 0.7, -2.0, 2.9])  # rad
RATES = jnp.array([0.0, 3.0, -11.0, 25.0])  # rad/s


def pendulum(driven: bool) -> Mechanism:
    """A bar pinned to the ground at its end, centre of mass ``ARM`` from the pin along its
    x axis; with ``driven`` turned by a speed driver at 4 rad/s from 0.3 rad."""
    a = lambda *v: jnp.asarray(v, dtype=jnp.float64)  # noqa: E731
    drivers = (Driver(0, "constant_speed", a(4.0)[0], a(0.0)[0], a(0.3)[0]),) if driven else ()
    return Mechanism(masses=a(MASS), inertias=a(INERTIA), gravity=a(0.0, -G), initial_positions=a(ARM, 0.0, 0.0),
                     revolute_joints=(RevoluteJoint(GROUND, 0, a(0.0, 0.0), a(-ARM, 0.0)),), prismatic_joints=(),
                     fixed_joints=(), clearance_joints=(), drivers=drivers, body_names=("bar",),
                     joint_names=("pin",))


@pytest.mark.parametrize("driven", [False, True])
def test_pendulum_pin_reaction_and_driver_torque_are_the_analytic_ones(driven):
    """The pin's force on the bar is ``m (a_c - g)`` with the centre's tangential and
    centripetal acceleration, its moment about the pin zero; a speed driver holds the
    angular acceleration at zero with the torque ``m g l cos(phi)``."""
    tree = tree_mechanism(pendulum(driven))
    zero = jnp.zeros((ANGLES.size, 0))
    if driven:
        driver = tree.drivers[0]
        states = TreeState(zero, zero, zero, jnp.zeros(ANGLES.size), ANGLES[:, None])
        t, rates = (ANGLES - driver.angle) / driver.speed, jnp.full(ANGLES.size, driver.speed)
    else:
        states = TreeState(ANGLES[:, None], RATES[:, None], zero, jnp.zeros(ANGLES.size), zero[:, :0])
        t, rates = jnp.zeros(ANGLES.size), RATES
    trajectory = jax.jit(trajectory_from_states)(tree, t, states)
    angles, rates = np.asarray(ANGLES), np.asarray(rates)
    alpha = np.zeros_like(angles) if driven else -MASS * G * ARM * np.cos(angles) / (INERTIA + MASS * ARM**2)
    tangential = np.stack([-np.sin(angles), np.cos(angles)], axis=1)
    radial = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    centre = ARM * alpha[:, None] * tangential - ARM * rates[:, None] ** 2 * radial
    force = MASS * (centre - np.array([0.0, -G]))
    reactions = np.asarray(trajectory.joint_reactions)
    assert reactions.shape == (ANGLES.size, 1, 3)
    np.testing.assert_allclose(reactions[:, 0, :2], force, rtol=0, atol=1e-12 * np.max(np.abs(force)))
    np.testing.assert_allclose(reactions[:, 0, 2], 0.0, atol=1e-13)  # N m
    np.testing.assert_allclose(trajectory.body_accelerations[:, 0], centre, rtol=0, atol=1e-12 * np.max(np.abs(centre)))
    assert float(jnp.max(trajectory.constraint_violation)) < 1e-15
    if driven:
        np.testing.assert_allclose(trajectory.driver_torques[:, 0], MASS * G * ARM * np.cos(angles), rtol=1e-12,
                                   atol=1e-14)


def _random_state(tree, key):
    """The tree's start with its coordinates moved by 1e-3 (rad, m; normalised quaternions
    follow), its rates by unit normal numbers and its prescribed angles by up to 3 mrad;
    projected onto the cut joints where there are any (twice: the second Jacobian at the
    projected positions makes the velocity step exact)."""
    start = tree.initial_state()
    positions, rates, angles = jax.random.split(key, 3)
    state = start._replace(z=start.z + 1e-3 * jax.random.normal(positions, start.z.shape),
                           zd=start.zd + jax.random.normal(rates, start.zd.shape),
                           prescribed=start.prescribed + jax.random.uniform(angles, start.prescribed.shape,
                                                                            minval=-3e-3, maxval=3e-3))
    if tree.constrained:
        state = tree.project_state(0.0, tree.project_state(0.0, state, iterations=6))
    return state


def _driver_time(tree, state):
    """The time at which the speed drivers' rows hold at ``state`` (the first driver's;
    zero without speed drivers)."""
    for k, number in enumerate(tree.topology.speed_drivers):
        driver = tree.drivers[number]
        return (state.prescribed[k] - driver.angle) / driver.speed
    return jnp.zeros((), state.zd.dtype)


@eqx.filter_jit
def _both_engines(tree, keys):
    """At each key's random state: the tree's outputs and the absolute engine's
    evaluation, with both sets of multipliers' joint reactions."""
    def one(key):
        state = _random_state(tree, key)
        t = _driver_time(tree, state)
        absolute, out = tree.outputs(t, state)
        reference = tree.absolute.evaluate(t, absolute)
        reactions = lambda multipliers: tree.absolute.joint_reactions(t, absolute[0], multipliers)  # noqa: E731
        return out, reference, reactions(out.multipliers), reactions(reference.multipliers)

    return jax.vmap(one)(keys)


def _close(actual, expected, relative=1e-9):
    """``actual`` equals ``expected`` to ``relative`` of the largest ``|expected|``."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    if expected.size:
        np.testing.assert_allclose(actual, expected, rtol=0, atol=relative * np.max(np.abs(expected)))


slow = [pytest.mark.slow]
validation = [pytest.mark.validation]  # the costliest compiles (15-28 CPU s each)


@pytest.mark.parametrize("name, twin", [
    ("flores_slider_crank", False),
    pytest.param("flores_slider_crank", True, marks=slow),  # the pin made ideal: a cut loop
    pytest.param("fourbar_two_clearances", False, marks=slow),  # the rocker on a free joint
    pytest.param("flores_flexible", False, marks=slow),
    pytest.param("flores_slider_crank_3d", False, marks=validation),
    pytest.param("flores_slider_crank_3d", True, marks=validation),  # cut, redundant rows removed
    pytest.param("double_link_clearance", False, marks=slow),  # axial holds only
    pytest.param("spherical_pendulum", False, marks=slow),  # no ideal joint
    pytest.param("double_link_flexible", False, marks=validation),
])
def test_outputs_are_the_absolute_engines_at_random_states(name, twin):
    """Accelerations, the multipliers of every row (joints, drivers, axial holds), the
    joint reactions and the driver torques equal the absolute engine's to 1e-9 of their
    largest, the constraint violation is the same number."""
    tree = tree_mechanism(build_mechanism(load_mechanism(CONFIGS / f"{name}.toml"), "absolute"))
    tree = tree.idealised() if twin else tree
    out, reference, reactions, reference_reactions = _both_engines(tree, jax.random.split(jax.random.PRNGKey(7), 4))
    _close(out.acceleration, reference.acceleration)
    _close(out.multipliers, reference.multipliers)
    _close(reactions, reference_reactions)
    _close(out.driver_torques, reference.driver_torques)
    np.testing.assert_allclose(out.constraint_violation, reference.constraint_violation, rtol=0, atol=1e-15)
    assert float(jnp.max(reference.constraint_violation)) < 1e-12  # on the joints: no Baumgarte terms
    if tree.clearance_joints:
        assert float(jnp.max(reference.contact.normal_force)) > 1.0  # N: a state in contact


@pytest.mark.slow
def test_simulated_columns_are_those_of_the_absolute_engine_at_the_absolute_states():
    """``clearance simulate``'s timeseries columns of the Flores slider-crank over 3 ms
    (8 impacts), reactions included, from the tree's outputs equal those of the absolute
    engine's evaluation at the mapped absolute states, each to 1e-9 of the largest value
    of its unit."""
    crank = pipelines.load(FLORES, ["simulation.t_end=3 ms"])
    tree = crank.mechanism
    solution = eqx.filter_jit(solve)(tree, crank.settings)

    @eqx.filter_jit
    def both(tree, t, states):
        reference = trajectory_from_states(tree.absolute, t, jax.vmap(tree.state_absolute)(states))
        return output_columns(tree, trajectory_from_states(tree, t, states)), output_columns(tree, reference)

    columns, reference = map(as_arrays, both(tree, solution.ts, solution.ys))
    units = column_units(tree)
    assert columns.keys() == reference.keys()
    assert {"main.reaction_x", "crankpin.reaction_y", "guide.reaction_moment", "motor.torque"} <= set(columns)
    scale = {unit: max(np.max(np.abs(reference[name])) for name in reference if units[name] == unit)
             for unit in set(units.values())}
    for name in columns:
        np.testing.assert_allclose(columns[name], reference[name], rtol=0, atol=1e-9 * scale[units[name]],
                                   err_msg=name)
    assert float(np.max(reference["pin.normal_force"])) > 1e4  # N: the impacts
