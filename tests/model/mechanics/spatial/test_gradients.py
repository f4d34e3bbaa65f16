"""Forward- and reverse-mode derivatives of the spatial equations of motion vs central differences."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.spatial import SpatialState
from model.mechanics.spatial import flat_vector_field, flatten_state

from .cases import bushing


def _state(mechanism, eccentricity=(0.3e-3, -1.0005e-3)):
    x = jnp.array([eccentricity[0], eccentricity[1], 0.0, 1.0, 2e-4, -1e-4, 0.0])
    x = x.at[3:7].divide(jnp.linalg.norm(x[3:7]))
    v = jnp.array([0.01, -0.02, 0.0, 0.5, -0.3, 2.0])
    return flatten_state(SpatialState(x, v, jnp.full(mechanism.memory_size, 0.05), jnp.zeros(())))


def _field_of(clearance, stiffness_scale, mechanism, state):
    joint = lambda m: m.cylindrical_joints[0]
    changed = eqx.tree_at(lambda m: (joint(m).clearance, joint(m).length), mechanism,
                          (clearance, mechanism.cylindrical_joints[0].length * stiffness_scale))
    return flat_vector_field(0.0, state, changed)


@pytest.mark.slow
def test_vector_field_derivatives_match_central_differences():
    mechanism = bushing(end_force=False, centre_force=True, centre_torque=True)
    state = _state(mechanism)
    params = jnp.array([1e-3, 1.0])

    def output(p):
        return jnp.sum(_field_of(p[0], p[1], mechanism, state)[7:13] * jnp.arange(1.0, 7.0))

    reverse = jax.grad(output)(params)
    forward = jax.jacfwd(output)(params)
    steps = jnp.array([1e-9, 1e-6])
    central = jnp.array([(output(params.at[i].add(h)) - output(params.at[i].add(-h))) / (2 * h)
                         for i, h in enumerate(steps)])
    np.testing.assert_allclose(reverse, forward, rtol=1e-10)
    np.testing.assert_allclose(reverse, central, rtol=1e-4)


@pytest.mark.slow  # about 20 s of compilation
def test_derivatives_finite_at_centred_aligned_journal():
    mechanism = bushing()
    state = _state(mechanism, eccentricity=(0.0, 0.0)).at[4:6].set(0.0).at[3].set(1.0)
    gradient = jax.grad(lambda s: jnp.sum(flat_vector_field(0.0, s, mechanism)))(state)
    assert np.all(np.isfinite(gradient))
