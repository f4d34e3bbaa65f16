"""The planar tree's recursion (model/mechanics/tree/kinematics.py ``tree_motion``) against
forward-mode derivatives of its forward kinematics, an independent computation of the same
quantities: positions, velocities, Jacobians and accelerations to round-off."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics import GROUND, FixedJoint, Mechanism, PrismaticJoint, RevoluteJoint
from model.mechanics.tree import tree_topology
from model.mechanics.tree.kinematics import forward_kinematics, tree_motion


def a(*values):
    return jnp.asarray(values, dtype=jnp.float64)


def chain() -> Mechanism:
    """Five bodies, every joint kind placing its child both as ``body_j`` and as ``body_i``:
    ground -rev(j)- 0 -pri(i)- 1 -rev(i, offset)- 2 -fix(j)- 3 -pri(j)- 4."""
    n = 5
    revolute = (RevoluteJoint(GROUND, 0, a(0.1, -0.05), a(-0.2, 0.03)),
                RevoluteJoint(2, 1, a(0.07, 0.02), a(0.15, -0.04), offset=a(1e-3, -2e-3)))
    prismatic = (PrismaticJoint(1, 0, a(0.05, 0.01), a(0.2, 0.02), a(0.6, 0.8), jnp.asarray(0.3)),
                 PrismaticJoint(3, 4, a(-0.04, 0.06), a(0.01, -0.03), a(1.0, 0.0), jnp.asarray(-0.2)))
    fixed = (FixedJoint(2, 3, a(0.03, 0.09), a(-0.05, 0.02), jnp.asarray(0.7)),)
    return Mechanism(masses=jnp.ones(n), inertias=jnp.full(n, 1e-2), gravity=a(0.0, -9.81),
                     initial_positions=jnp.zeros(3 * n), revolute_joints=revolute, prismatic_joints=prismatic,
                     fixed_joints=fixed, clearance_joints=(), drivers=(), body_names=tuple("abcde"))


@pytest.fixture(scope="module")
def both():
    """The recursion and the derivatives of the forward kinematics at one random state."""
    mechanism = chain()
    topology = tree_topology(mechanism)
    assert {(j.kind, j.child_is_j) for j in topology.joints} == {
        ("revolute", True), ("revolute", False), ("prismatic", True), ("prismatic", False), ("fixed", True)}
    rng = np.random.default_rng(1)
    z, zd, zdd = (jnp.asarray(rng.standard_normal(topology.size) * s) for s in (0.8, 4.0, 30.0))
    p = pd = jnp.zeros(0)

    @jax.jit
    def compute(z, zd, zdd):
        position = lambda z_: forward_kinematics(mechanism, topology, z_, p)  # noqa: E731
        velocity = lambda z_, zd_: jax.jvp(position, (z_,), (zd_,))[1]  # noqa: E731
        q, qd = jax.jvp(position, (z,), (zd,))
        _, qdd = jax.jvp(velocity, (z, zd), (zd, zdd))
        _, convective = jax.jvp(velocity, (z, zd), (zd, jnp.zeros_like(zd)))
        reference = (q, qd, jax.jacfwd(position)(z), convective, qdd)
        motion = tree_motion(mechanism, topology, z, zd, p, pd)
        accelerated = tree_motion(mechanism, topology, z, zd, p, pd, zdd=zdd, order=1)
        return reference, (motion.x, motion.v, motion.jacobian, motion.convective, accelerated.convective)

    return compute(z, zd, zdd)


@pytest.mark.parametrize("k, name", list(enumerate(["q", "qd", "J", "c", "qdd"])))
def test_recursion_matches_derivatives_of_forward_kinematics(both, k, name):
    reference, recursion = both
    np.testing.assert_allclose(recursion[k], reference[k], rtol=1e-13, atol=1e-13 * float(np.max(np.abs(reference[k]))),
                               err_msg=name)
