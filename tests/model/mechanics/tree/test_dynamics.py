"""Equations of motion in joint coordinates (model/mechanics/tree/dynamics.py) against an
analytic pendulum and against the absolute engine, evaluated at single states."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics import GROUND, Mechanism, RevoluteJoint, State
from model.mechanics.tree import tree_mechanism
from model.mechanics.dynamics import mass_diagonal
from model.mechanics.tree.dynamics import evaluate, inertia_solve, jacobian_columns, joint_jacobians
from model.mechanics.tree.kinematics import joint_coordinates, tree_motion
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

MASS, INERTIA, ARM, G = 0.7, 2e-3, 0.15, 9.81  # kg, kg m^2, m, m/s^2


def pendulum() -> Mechanism:
    """A bar pinned to the ground at its end, centre of mass ``ARM`` from the pin along its x axis."""
    a = lambda *v: jnp.asarray(v, dtype=jnp.float64)  # noqa: E731
    return Mechanism(masses=a(MASS), inertias=a(INERTIA), gravity=a(0.0, -G), initial_positions=a(ARM, 0.0, 0.0),
                     revolute_joints=(RevoluteJoint(GROUND, 0, a(0.0, 0.0), a(-ARM, 0.0)),), prismatic_joints=(),
                     fixed_joints=(), clearance_joints=(), drivers=(), body_names=("bar",))


@jax.jit
def pendulum_rates(angle, rate):
    """The joint acceleration and the bar's centre-of-mass acceleration at ``(angle, rate)``."""
    tree = tree_mechanism(pendulum())
    flat = tree.flatten(tree.initial_state()._replace(z=angle[None], zd=rate[None]))
    flat_rate = tree.flat_vector_field(0.0, flat)
    return tree.unflatten(flat_rate).zd[0], tree.body_accelerations(flat, flat_rate)[0]


@pytest.mark.parametrize("angle, rate", [(0.0, 0.0), (0.7, 3.0), (-2.0, -11.0)])
def test_pendulum_acceleration_is_the_analytic_one(angle, rate):
    """``(J + m l^2) phi'' = -m g l cos(phi)`` (the bar along x at ``phi = 0``), whatever the rate."""
    acceleration, centre = pendulum_rates(jnp.asarray(angle), jnp.asarray(rate))
    expected = -MASS * G * ARM * np.cos(angle) / (INERTIA + MASS * ARM**2)
    assert float(acceleration) == pytest.approx(expected, rel=1e-13)
    # the centre of mass moves on its circle: tangential and centripetal acceleration
    tangential, radial = np.array([-np.sin(angle), np.cos(angle)]), np.array([np.cos(angle), np.sin(angle)])
    np.testing.assert_allclose(centre, ARM * expected * tangential - ARM * rate**2 * radial, rtol=1e-12, atol=1e-12)


def pushed_state(tree, coordinate: int, depth: float, speed: float):
    """The initial state with free coordinate ``coordinate`` moved by ``depth`` at ``speed``."""
    state = tree.initial_state()
    return state._replace(z=state.z.at[coordinate].add(depth), zd=state.zd.at[coordinate].add(speed))


@functools.lru_cache
def both_engines(name: str, coordinate: int):
    """One compiled evaluation of both engines: the joint engine's start and the absolute
    engine's, and both at the start pushed 2 % of the clearance into the bearing along
    free coordinate ``coordinate``, closing at 0.3 m/s."""
    tree = tree_mechanism(build_mechanism(load_mechanism(CONFIGS / name), "absolute"))

    @jax.jit
    def evaluations(tree):
        start = tree.flatten(tree.initial_state())
        clearance = tree.clearance_joints[0].clearance
        flat = tree.flatten(pushed_state(tree, coordinate, -1.02 * clearance, -0.3))
        rate = tree.flat_vector_field(0.0, flat)
        state = tree.absolute_state(flat)
        torques = evaluate(tree.absolute, tree.topology, tree.unflatten(flat)).driver_torques
        reference = model.evaluate(tree.absolute, 0.0, state)
        violation = jnp.max(jnp.abs(model.mechanics.constraints(tree.absolute, state.q, 0.0)))
        return (start, tree.absolute_state(start), model.initial_state(tree.absolute), tree.unflatten(rate),
                tree.body_accelerations(flat, rate), torques, violation, reference,
                model.vector_field(0.0, state, tree.absolute))

    return tree, evaluations(tree)


@pytest.mark.parametrize("name, coordinate", [
    ("flores_slider_crank.toml", 0),
    pytest.param("fourbar_two_clearances.toml", 1, marks=[pytest.mark.slow, pytest.mark.validation]),
])
def test_rates_match_the_absolute_engine_in_contact(name, coordinate):
    """At a state inside the clearance, closing, the joint engine's body accelerations,
    driver torque, impact-memory rate and driver power equal the absolute engine's (an
    independent formulation: Lagrange multipliers on 9 or more coordinates). The four-bar
    (its rocker on a free joint) is a ``validation`` case: a second compile."""
    _, (*_, tree_rate, accelerations, torques, violation, reference, absolute_rate) = both_engines(name, coordinate)
    assert float(violation) < 1e-14
    assert float(np.max(reference.contact.normal_force)) > 1.0  # N: in contact
    scale = np.max(np.abs(reference.acceleration))
    np.testing.assert_allclose(accelerations, np.asarray(reference.acceleration).reshape(-1, 3)[:, :2], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(tree_rate.impact_memory, absolute_rate.impact_memory, rtol=1e-8)
    assert float(tree_rate.driver_work) == pytest.approx(float(absolute_rate.driver_work), rel=1e-8)
    np.testing.assert_allclose(torques, reference.driver_torques, rtol=1e-8)


def test_projection_is_the_identity_and_the_state_round_trips():
    tree, (flat, absolute, start, *_) = both_engines("flores_slider_crank.toml", 0)
    assert flat.shape == (2 * 2 + 1 + 1 + 1,)  # z, zd, one impact memory, driver work, crank angle
    np.testing.assert_array_equal(tree.flatten(tree.unflatten(flat)), flat)
    assert tree.project(0.0, flat) is flat
    # the start is the absolute engine's
    np.testing.assert_allclose(absolute.q, start.q, rtol=0, atol=1e-15)
    np.testing.assert_allclose(absolute.qd, start.qd, rtol=0, atol=1e-12)
    assert isinstance(absolute, State)


def test_a_childless_free_joint_is_divided_out_of_the_inertia_solve():
    """The four-bar's rocker, held by its two clearance joints only, is on a free joint with
    no children: its three columns of ``J`` are not carried, its block ``diag(m, m, I)`` of
    ``H`` is divided out and only the crank-coupler block factorised; ``H^-1`` of two
    columns equals LAPACK's solve of the whole ``H = J^T M J``."""
    tree = build_mechanism(load_mechanism(CONFIGS / "fourbar_two_clearances.toml"), "joint")
    columns = jacobian_columns(tree.absolute, tree.topology)
    assert (columns.free.size, columns.coupled.size, tree.topology.size) == (3, 1, 4)
    z, p = joint_coordinates(tree.absolute, tree.topology, tree.absolute.initial_positions)
    z = z + 0.1 * jnp.sin(1.0 + jnp.arange(z.shape[0]))
    coupled, _ = joint_jacobians(tree.absolute, tree.topology, z, p)
    whole = tree_motion(tree.absolute, tree.topology, z, jnp.zeros_like(z), p, jnp.zeros_like(p)).jacobian
    np.testing.assert_array_equal(coupled, whole[columns.coupled_rows][:, columns.coupled])
    np.testing.assert_array_equal(whole[columns.free_rows][:, columns.free], np.eye(3))
    rhs = jnp.stack([jnp.cos(jnp.arange(4.0)), jnp.sin(2.0 + jnp.arange(4.0))], axis=1)
    inertia = whole.T @ (whole * mass_diagonal(tree.absolute)[:, None])
    np.testing.assert_allclose(inertia_solve(tree.absolute, columns, coupled, rhs), jnp.linalg.solve(inertia, rhs),
                               rtol=1e-13)
