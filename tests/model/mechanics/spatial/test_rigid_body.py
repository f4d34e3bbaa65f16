"""Free rigid body (Euler's equations) and the constraint machinery of the spatial engine."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.integrate.settings import SolverSettings
from model.integrate import simulate
from model.mechanics.spatial import GROUND, SpatialJoint, SpatialMechanism, SpatialState, angular_momentum
from model.mechanics.spatial import kinetic_energy, redundant_joints
from model.mechanics.spatial.constraints import all_constraints, constraint_jacobian, position_rate

INERTIA = jnp.array([1.0, 2.0, 3.0]) * 1e-3  # asymmetric: the y axis is the intermediate one


def free_body(quaternion=(1.0, 0.0, 0.0, 0.0)):
    return SpatialMechanism(
        masses=jnp.array([1.0]), inertias=jnp.diag(INERTIA)[None], gravity=jnp.zeros(3),
        initial_positions=jnp.concatenate([jnp.zeros(3), jnp.asarray(quaternion)]), joints=(),
        cylindrical_joints=(), spherical_joints=(), loads=(), drivers=(), initial_velocities="zero",
        body_names=("body",))


@pytest.mark.slow
def test_intermediate_axis_flip_conserves_momentum_and_energy():
    mechanism = free_body()
    omega0 = jnp.array([1e-3, 10.0, 1e-3])  # spin about the intermediate axis, slightly perturbed
    y0 = SpatialState(mechanism.initial_positions, jnp.concatenate([jnp.array([0.01, 0.0, 0.0]), omega0]),
                      jnp.zeros(0), jnp.zeros(()))
    settings = SolverSettings(t_end=4.0, output_interval=0.01, solver="tsit5", rtol=1e-10, atol=1e-12,
                              dtmax_contact_share=None)
    from model.integrate import solve
    solution = jax.jit(solve, static_argnums=1)(mechanism, settings, y0)
    states = solution.ys
    momentum = jax.vmap(lambda x, v: angular_momentum(mechanism, x, v))(states.x, states.v)
    energy = jax.vmap(lambda x, v: kinetic_energy(mechanism, x, v))(states.x, states.v)
    np.testing.assert_allclose(momentum, np.broadcast_to(momentum[0], momentum.shape), atol=1e-7 * float(jnp.linalg.norm(momentum[0])))
    np.testing.assert_allclose(energy, energy[0], rtol=1e-7)
    # the body-frame spin about the intermediate axis reverses (Dzhanibekov effect)
    from model.geometry.quaternion import rotation_matrix
    body_spin = jax.vmap(lambda x, v: rotation_matrix(x[3:7]).T @ v[3:6])(states.x, states.v)
    assert float(jnp.min(body_spin[:, 1])) < -9.0
    # the quaternion stays on the unit sphere
    np.testing.assert_allclose(jnp.linalg.norm(states.x[:, 3:7], axis=1), 1.0, atol=1e-8)


def _pendulum(kind="revolute", twice=False):
    axis = jnp.array([0.0, 0.0, 1.0])
    joint = SpatialJoint(kind, GROUND, 0, jnp.zeros(3), jnp.array([-0.1, 0.0, 0.0]), axis, axis,
                         jnp.array([1.0, 0.0, 0.0]), jnp.array([1.0, 0.0, 0.0]), jnp.array([1.0, 0.0, 0.0, 0.0]))
    mechanism = free_body()
    import dataclasses
    return dataclasses.replace(mechanism, joints=(joint, joint) if twice else (joint,), gravity=jnp.array([0.0, -9.81, 0.0]),
                               initial_positions=jnp.array([0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
                               joint_names=("a", "b") if twice else ("a",))


@pytest.mark.parametrize("kind", ["revolute", "spherical", "cylindrical", "prismatic", "fixed"])
def test_constraint_rate_matches_jacobian_times_velocity(kind):
    mechanism = _pendulum(kind)
    x = mechanism.initial_positions
    v = jnp.array([0.3, -0.2, 0.1, 0.5, -0.7, 1.1])
    rate = jax.jvp(lambda x_: all_constraints(mechanism, x_, 0.0), (x,), (position_rate(mechanism, x, v),))[1]
    np.testing.assert_allclose(constraint_jacobian(mechanism, x, 0.0) @ v, rate, atol=1e-12)


def test_redundant_joint_pair_is_named():
    mechanism = _pendulum(twice=True)
    assert redundant_joints(mechanism, mechanism.initial_positions) == ["b"]
    assert redundant_joints(_pendulum(), _pendulum().initial_positions) == []
