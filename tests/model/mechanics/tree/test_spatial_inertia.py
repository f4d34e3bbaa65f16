"""The spatial tree's joint-space inertia matrix by the composite-rigid-body algorithm
(``model/mechanics/tree/spatial_dynamics.py``, ``composite_inertia``) against the dense
``J_c^T M_c J_c`` of the recursion's Jacobian, at a random state of every shipped spatial
config's tree with coupled velocities (and of the chain of every joint kind of
``test_spatial.py``), under ``jit`` and ``vmap``, and its derivative under ``grad``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.spatial.dynamics import world_inertias
from model.mechanics.tree import tree_mechanism
from model.mechanics.tree.columns import coupled_block, tree_columns
from model.mechanics.tree.spatial_dynamics import _mass_apply, composite_inertia
from model.mechanics.tree.spatial_kinematics import joint_coordinates, tree_motion
from model.mechanics.tree.topology import SPATIAL_SIZES
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS
from tests.model.mechanics.tree.test_spatial import chain

# every shipped spatial mechanism whose tree has coupled velocities, one per tree (the
# spherical and conical pendulums and the 3-D cantilever have only childless free joints:
# no H_c; double_link_clearance_friction has double_link_clearance's tree); the default run
# takes two, a driven chain and the double link's axial joints, the rest are `validation`
VALIDATION = [pytest.mark.validation]
SPATIAL = ("flores_slider_crank_3d", "double_link_clearance",
           pytest.param("double_link_ideal", marks=VALIDATION),
           pytest.param("double_link_flexible", marks=VALIDATION),
           pytest.param("cylindrical_joint_loads", marks=VALIDATION))


def _state(tree, key):
    """The configured pose in joint coordinates, every coordinate moved by up to 0.1 (a
    quaternion then normalised by the kinematics), random velocities."""
    z, p = joint_coordinates(tree.absolute, tree.topology, tree.absolute.initial_positions)
    moved, rates = jax.random.split(key)
    z = z + 0.1 * jax.random.uniform(moved, z.shape, minval=-1.0, maxval=1.0)
    return z, jax.random.normal(rates, (tree.topology.rate_size,)), p


def _both(tree, z, zd, p):
    """``(H_c by the composite-rigid-body algorithm, J_c^T M_c J_c)``."""
    mechanism, topology = tree.absolute, tree.topology
    columns = tree_columns(topology, mechanism.num_bodies, SPATIAL_SIZES)
    motion = tree_motion(mechanism, topology, z, zd, p, jnp.zeros_like(p), carried=tuple(columns.coupled.tolist()))
    inertias = world_inertias(mechanism, motion.x)
    jacobian = coupled_block(columns, motion.jacobian)
    bodies = columns.coupled_bodies
    dense = jacobian.T @ _mass_apply(mechanism.masses[bodies], inertias[bodies], jacobian.T).T
    return composite_inertia(mechanism, topology, motion.x, jacobian, inertias), dense


def _agree(crba, dense):
    scale = float(jnp.max(jnp.abs(dense)))
    np.testing.assert_allclose(crba, dense, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(crba, jnp.swapaxes(crba, -1, -2), rtol=0, atol=1e-13 * scale)


def test_the_chain_of_every_joint_kind():
    """Revolute (driven), cylindrical, prismatic, fixed and spherical joints, three of them
    placing their ``body_i``, full inertia tensors: ``H_c`` equals the dense product at a
    random state to 1e-13 of its largest entry, under ``jit`` and under ``vmap`` over four
    states, and is symmetric."""
    tree = tree_mechanism(chain())
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    states = jax.vmap(lambda key: _state(tree, key))(keys)
    crba, dense = jax.jit(jax.vmap(lambda z, zd, p: _both(tree, z, zd, p)))(*states)
    assert crba.shape == (4, 6, 6)
    _agree(crba, dense)


@pytest.mark.slow  # 2-5 CPU s per tree (three compiles each)
@pytest.mark.parametrize("name", SPATIAL)
def test_every_shipped_spatial_tree(name):
    """Each shipped spatial config's tree at a random state: ``H_c`` by the algorithm equals
    the dense product to 1e-13 of its largest entry (``jit``), and the derivative of a
    scalar of it with respect to the coordinates (``grad``) equals the dense product's."""
    tree = build_mechanism(load_mechanism(CONFIGS / f"{name}.toml"), "joint")
    z, zd, p = _state(tree, jax.random.PRNGKey(1))
    crba, dense = jax.jit(lambda z: _both(tree, z, zd, p))(z)
    assert crba.shape[0] > 0
    _agree(crba, dense)
    weights = jnp.cos(jnp.arange(crba.size, dtype=crba.dtype)).reshape(crba.shape)
    gradients = jax.jit(jax.grad(lambda z: [jnp.sum(weights * h) for h in _both(tree, z, zd, p)][0]))(z)
    reference = jax.jit(jax.grad(lambda z: [jnp.sum(weights * h) for h in _both(tree, z, zd, p)][1]))(z)
    np.testing.assert_allclose(gradients, reference, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(reference))))
