"""Flexible bodies on the joint-coordinate engine: a body's segments are bodies of the tree
(the one an ideal joint places hangs on it, the others get free joints), its beam elements
force elements. A Flores slider-crank whose conrod has five beam elements (17 coordinates, 15
of them the free segments', whose blocks of H are divided out), at one deformed, moving
state, against the absolute engine (one compiled program); the traced field the same size
with twenty elements. Whole runs:
``test_flexible_simulation.py`` (``validation``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.dynamics import mass_diagonal
from model.mechanics.tree.dynamics import TreeState, evaluate, inertia_solve, jacobian_columns, joint_jacobians
from model.mechanics.tree.kinematics import joint_coordinates, tree_motion
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS, write_variant

FLEXIBLE = CONFIGS / "flores_flexible.toml"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """The Flores slider-crank with a conrod of five beam elements, on the joint engine."""
    path = write_variant(tmp_path_factory.mktemp("flexible"), FLEXIBLE, "segments = 10", "segments = 5",
                         "five_elements.toml")
    return build_mechanism(load_mechanism(path), "joint")


def test_segments_not_placed_by_an_ideal_joint_get_free_joints(tree):
    """Five elements, six segments: the first on the crank pin, five free (fifteen
    coordinates, each with only its block diag(m, m, I) in H, their columns not carried in
    J); the slider on its guide."""
    topology = tree.topology
    segments = tree.beam_chains[0].segments
    kinds = {joint.body: joint.kind for joint in topology.joints}
    assert [kinds[body] for body in segments] == ["revolute"] + ["free"] * 5
    columns = jacobian_columns(tree.absolute, topology)
    assert (columns.free.size, columns.coupled.size) == (15, 2)
    assert set(columns.free_bodies.tolist()) == set(segments[1:])
    assert topology.size == 15 + 2 and topology.cuts == ()


@pytest.fixture(scope="module")
def values(tree):
    """The five-element rod: its configured pose in joint coordinates with every free
    coordinate moved (bending and stretching the elements), moving with disturbed rates
    and the crank's speed; the joint engine's evaluation there, the absolute engine's at
    the same absolute state (at the time its driver row holds), and H^-1 of a vector by
    the block-diagonal solve and by a LAPACK solve of the whole H = J^T M J (two columns)."""

    @jax.jit
    def evaluations(tree):
        z, p = joint_coordinates(tree.absolute, tree.topology, tree.absolute.initial_positions)
        wiggle = jnp.sin(1.0 + jnp.arange(tree.topology.size))
        zero = jnp.zeros((), z.dtype)
        state = TreeState(z + 2e-5 * wiggle, 0.05 * wiggle, jnp.zeros(len(tree.clearance_joints)), zero, p)
        absolute = tree.absolute_state(tree.flatten(state))
        t = (p[0] - tree.drivers[0].angle) / tree.drivers[0].speed
        coupled, _ = joint_jacobians(tree.absolute, tree.topology, state.z, state.prescribed)
        whole = tree_motion(tree.absolute, tree.topology, state.z, state.zd, p, jnp.zeros_like(p)).jacobian
        columns = jnp.stack([wiggle, jnp.cos(wiggle)], axis=1)  # as H^-1 [rhs, G^T] of cut joints
        inertia = whole.T @ (whole * mass_diagonal(tree.absolute)[:, None])
        solves = (inertia_solve(tree.absolute, jacobian_columns(tree.absolute, tree.topology), coupled, columns),
                  jnp.linalg.solve(inertia, columns))
        return (evaluate(tree.absolute, tree.topology, state), model.evaluate(tree.absolute, t, absolute), solves,
                model.mechanics.constraints(tree.absolute, absolute.q, t))

    return tree, evaluations(tree)


def test_a_deformed_flexible_rod_moves_as_on_the_absolute_engine(values):
    """Elastic, damping and inertial forces of the bent rod: every body's acceleration and
    the crank's driver torque equal the absolute engine's (multipliers on all coordinates,
    an independent formulation); the block-diagonal solve of H equals LAPACK's of the whole H."""
    _, (joint, absolute, (structured, dense), rows) = values
    assert float(jnp.max(jnp.abs(rows))) < 1e-15  # the ideal joints hold by construction
    scale = float(jnp.max(jnp.abs(absolute.acceleration)))
    assert scale > 1e4  # m/s^2: the elements push hard
    np.testing.assert_allclose(joint.qdd, absolute.acceleration, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(joint.driver_torques, absolute.driver_torques, rtol=1e-8)
    np.testing.assert_allclose(structured, dense, rtol=1e-13)


def _field_equations(mechanism) -> int:
    flat = jax.eval_shape(lambda: mechanism.flatten(mechanism.initial_state()))  # its shape only
    return len(jax.make_jaxpr(lambda y: mechanism.flatten(mechanism.vector_field(0.0, mechanism.unflatten(y))))(
        flat).jaxpr.eqns)


def test_the_traced_field_does_not_grow_with_the_segments(tree, tmp_path):
    """The free segments' rows are slices of the state (``tree_motion``), and the beam
    elements one array operation: the vector field of a rod with twenty elements is traced
    into as many equations as that of a rod with five."""
    path = write_variant(tmp_path, FLEXIBLE, "segments = 10", "segments = 20", "twenty_elements.toml")
    twenty = build_mechanism(load_mechanism(path), "joint")
    assert twenty.topology.size > tree.topology.size + 40
    assert _field_equations(twenty) == _field_equations(tree)
