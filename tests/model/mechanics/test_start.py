"""The pieces of a consistent start (model/mechanics/start.py): the velocity projection and
the quasi-static seat of a clearance joint."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.contact.normal import ContactLaw, normal_force
from model.mechanics.start import project_velocities, seated_eccentricity

CLEARANCE = 0.5e-3


def test_projected_velocities_satisfy_the_rows_with_the_least_change():
    rows = jax.random.normal(jax.random.PRNGKey(0), (3, 6))
    rhs = jnp.array([1.0, -2.0, 0.5])
    target = jnp.arange(6.0)
    velocities = project_velocities(rows, rhs, target)
    np.testing.assert_allclose(rows @ velocities, rhs, atol=1e-12)
    # least change: the change lies in the row space, orthogonal to every solution's freedom
    null = np.linalg.svd(np.asarray(rows))[2][3:]
    np.testing.assert_allclose(null @ np.asarray(velocities - target), 0.0, atol=1e-12)
    np.testing.assert_array_equal(project_velocities(jnp.zeros((0, 6)), jnp.zeros(0), target), target)


@pytest.mark.parametrize(("model", "exponent"), [("hertz", 1.5), ("lankarani_nikravesh", 1.5), ("flores", 10 / 9)])
def test_the_seat_carries_the_load_by_the_contact_law(model, exponent):
    law = ContactLaw(model, stiffness=jnp.asarray(6.6e10), exponent=jnp.asarray(exponent))
    load = jnp.array([120.0, -350.0, 40.0])
    eccentricity = seated_eccentricity(law, jnp.asarray(CLEARANCE), load, jnp.zeros(3))
    size = jnp.linalg.norm(eccentricity)
    np.testing.assert_allclose(np.asarray(eccentricity / size), np.asarray(load / jnp.linalg.norm(load)), atol=1e-14)
    force = normal_force(law, size - CLEARANCE, jnp.zeros(()), jnp.asarray(1.0))  # at rest: the elastic term
    np.testing.assert_allclose(float(force), float(jnp.linalg.norm(load)), rtol=1e-10)


def test_an_unloaded_joint_keeps_its_configured_eccentricity_with_finite_derivatives():
    law = ContactLaw("hertz", stiffness=jnp.asarray(6.6e10))
    configured = jnp.array([1e-4, 0.0])
    seat = lambda load: seated_eccentricity(law, jnp.asarray(CLEARANCE), load, configured)  # noqa: E731
    np.testing.assert_array_equal(seat(jnp.zeros(2)), configured)
    assert np.all(np.isfinite(np.asarray(jax.jacfwd(seat)(jnp.zeros(2)))))
    assert np.all(np.isfinite(np.asarray(jax.grad(lambda load: seat(load)[1])(jnp.zeros(2)))))
