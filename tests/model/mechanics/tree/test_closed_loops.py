"""Closed loops on the joint-coordinate engine: the ideal-joint twin of the Flores
slider-crank (its pin made ideal closes the loop, and is cut) against the absolute engine,
at single states (one compiled program). Whole runs: ``test_closed_loop_simulation.py``
(``validation``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.constraints import constraints
from model.mechanics.tree import TreeMechanism
from model.mechanics.tree.dynamics import TreeState, cut_constraints, evaluate
from model.mechanics.tree.kinematics import joint_coordinates
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import FLORES

CRANK_TURN = 0.1  # rad: the crank moved away from the start before projecting


@pytest.fixture(scope="module")
def twin_and_values():
    """The twin, and: the rows and rates of its cut joint after projecting a state (the
    configured pose in joint coordinates, the crank turned by ``CRANK_TURN``, rates of 10
    rad/s or m/s that the joints do not allow); the joint engine's evaluation there; the
    absolute engine's at the same absolute state."""
    twin = build_mechanism(load_mechanism(FLORES), "joint").idealised()

    @jax.jit
    def values(twin):
        z, p = joint_coordinates(twin.absolute, twin.topology, twin.absolute.initial_positions)
        zero = jnp.zeros((), z.dtype)
        moved = TreeState(z, jnp.full_like(z, 10.0), jnp.zeros(0), zero, p + CRANK_TURN)
        # the Jacobian is taken once per call: the second call's, at the projected
        # positions, makes the velocity step exact
        state = twin.project_state(0.0, twin.project_state(0.0, moved, iterations=6))
        absolute = twin.absolute_state(twin.flatten(state))
        rows = lambda q: cut_constraints(twin.absolute, twin.topology, q)  # noqa: E731
        rate = jax.jvp(rows, (absolute.q,), (absolute.qd,))[1]
        t = (state.prescribed[0] - twin.drivers[0].angle) / twin.drivers[0].speed  # the driver's time there
        all_rows = constraints(twin.absolute, absolute.q, t)
        return (rows(absolute.q), rate, all_rows, evaluate(twin.absolute, twin.topology, state),
                model.evaluate(twin.absolute, t, absolute))

    return twin, values(twin)


def test_the_ideal_twin_of_a_tree_runs_on_the_joint_engine(twin_and_values):
    twin, _ = twin_and_values
    assert isinstance(twin, TreeMechanism) and twin.constrained
    assert twin.topology.cuts == (("revolute", len(twin.absolute.revolute_joints) - 1),)
    assert not twin.clearance_joints


def test_projection_puts_the_state_on_the_cut_joint(twin_and_values):
    """Gauss-Newton with the Jacobian taken once converges from a crank turned by 0.1 rad
    away from the configured pose;
    a second projection (Jacobian at the projected positions) puts the velocities on the
    cut joint to roundoff; the tree's own joints hold by construction."""
    _, (rows, rate, all_rows, *_) = twin_and_values
    assert float(jnp.max(jnp.abs(rows))) < 1e-14  # m
    assert float(jnp.max(jnp.abs(rate))) < 1e-11  # m/s
    assert float(jnp.max(jnp.abs(all_rows))) < 1e-14


def test_cut_joint_multipliers_and_driver_torque_are_the_absolute_engines(twin_and_values):
    """At a state on the joints (Baumgarte's terms vanish) the multipliers of the cut pin's
    two rows, the crank's driver torque and every body's acceleration equal the absolute
    engine's (Lagrange multipliers on all nine coordinates: an independent formulation)."""
    twin, (_, _, _, tree, absolute) = twin_and_values
    pin = 2 * (len(twin.absolute.revolute_joints) - 1)  # the pin's rows: after the other revolute joints'
    reference = absolute.multipliers[pin : pin + 2]
    np.testing.assert_allclose(tree.multipliers, reference, rtol=0, atol=1e-9 * float(jnp.max(jnp.abs(reference))))
    assert float(jnp.max(jnp.abs(reference))) > 100.0  # N: the pin carries the slider's inertia
    np.testing.assert_allclose(tree.driver_torques, absolute.driver_torques, rtol=1e-9)
    scale = float(jnp.max(jnp.abs(absolute.acceleration)))
    np.testing.assert_allclose(tree.qdd, absolute.acceleration, rtol=0, atol=1e-10 * scale)
