"""Applied-force kinematics (model/mechanics/forces.py) against forward-mode derivatives."""

import jax
import jax.numpy as jnp
import numpy as np

from model.mechanics.forces import contact_normal_rates
from model.mechanics.forces import normal_accelerations
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS


def test_normal_acceleration_is_the_rate_of_the_normal_rate():
    """``d(delta_dot)/dt`` of both clearance joints of the four-bar (the rocker's joints:
    journal and bearing on moving bodies) equals the derivative of the normal rate along
    ``(qd, qdd)`` taken by ``jax.jvp``, at random velocities and accelerations."""
    mechanism = build_mechanism(load_mechanism(CONFIGS / "fourbar_two_clearances.toml"), "absolute")
    q = mechanism.initial_positions
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    qd, qdd = (jax.random.normal(key, q.shape, q.dtype) * scale for key, scale in zip(keys, (3.0, 400.0)))
    reference = jax.jvp(lambda q, qd: contact_normal_rates(mechanism, q, qd), (q, qd), (qd, qdd))[1]
    ours = normal_accelerations(mechanism, q, qd, qdd)
    assert ours.shape == (2,)
    np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(reference))))
