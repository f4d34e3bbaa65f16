"""The written-out normal accelerations of the contact slots (what the impact memory
tracks) against forward-mode automatic differentiation of the normal rates along the
motion, for the sliced cylindrical joint and the spherical joint, and their finiteness at
zero eccentricity."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.contact.normal import ContactLaw
from model.mechanics.spatial.constraints import position_rate
from model.mechanics.spatial.forces import contact_normal_accelerations, contact_normal_rates
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS
from tests.model.mechanics.spatial.test_spherical import STIFFNESS, ball_in_socket


def differentiated(mechanism, x, v, vdot):
    return jax.jvp(lambda x, v: contact_normal_rates(mechanism, x, v), (x, v),
                   (position_rate(mechanism, x, v), vdot))[1]


def random_motion(mechanism, x, scale, seed=0):
    rng = np.random.default_rng(seed)
    x = x + scale * jnp.asarray(rng.normal(size=x.shape))
    v = jnp.asarray(rng.normal(size=6 * mechanism.num_bodies))
    return x, v, 100.0 * jnp.asarray(rng.normal(size=v.shape))


@pytest.mark.slow  # 9 CPU s, most of it compiling
@pytest.mark.parametrize("config", ["flores_slider_crank_3d.toml", "double_link_clearance.toml"])
def test_sliced_joint_matches_automatic_differentiation(config):
    mechanism = build_mechanism(load_mechanism(CONFIGS / config), "absolute")
    x, v, vdot = random_motion(mechanism, mechanism.initial_state().x, 1e-4)  # tilted, moving bearing
    written = contact_normal_accelerations(mechanism, x, v, vdot)
    assert written.shape == (mechanism.memory_size,)
    np.testing.assert_allclose(written, differentiated(mechanism, x, v, vdot), rtol=1e-11,
                               atol=1e-11 * float(jnp.max(jnp.abs(written))))


def test_ball_matches_automatic_differentiation():
    mechanism = ball_in_socket(1.0, ContactLaw("hertz", stiffness=STIFFNESS, exponent=1.5), ball_point=(0.0, 0.1, 0.0),
                               eccentricity=(1e-5, 0.0, 0.0))
    x, v, vdot = random_motion(mechanism, mechanism.initial_positions + jnp.asarray([3e-5, 1e-5, 0, 0, 0, 0, 0]), 1e-3)
    np.testing.assert_allclose(contact_normal_accelerations(mechanism, x, v, vdot),
                               differentiated(mechanism, x, v, vdot), rtol=1e-11)


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_finite_with_finite_derivatives_at_zero_eccentricity():
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank_3d.toml"), "absolute")
    joint = mechanism.cylindrical_joints[0]
    x = mechanism.idealised().initial_state().x  # pin centred in the bushing: e = 0 on every slice
    v = jnp.zeros(6 * mechanism.num_bodies)
    values, tangent = jax.jvp(lambda x: contact_normal_accelerations(mechanism, x, v, v), (x,), (jnp.ones_like(x),))
    assert joint.slices == values.shape[0]
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(tangent))
    gradient = jax.grad(lambda x: jnp.sum(contact_normal_accelerations(mechanism, x, v + 1.0, v)))(x)
    assert np.all(np.isfinite(gradient))
