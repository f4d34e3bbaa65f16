"""The small-matrix products written as a broadcast and a sum agree with ``@`` under
``jit``, ``vmap`` and both modes of differentiation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model  # noqa: F401  (float64)
from model.geometry.vectors import dot, matmul, times_transpose


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def test_dot_matrix_and_stack(rng):
    a, b = rng.normal(size=(4, 5, 3)), rng.normal(size=3)
    np.testing.assert_allclose(dot(a, b), a @ b, rtol=1e-14)


@pytest.mark.parametrize("shape_a, shape_b", [((5, 6), (4, 6)), ((3, 3), (3, 3)), ((7, 2, 3), (7, 4, 3))])
def test_times_transpose_and_matmul_equal_matmul(rng, shape_a, shape_b):
    a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
    np.testing.assert_allclose(times_transpose(a, b), a @ np.swapaxes(b, -1, -2), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(matmul(a, np.swapaxes(b, -1, -2)), a @ np.swapaxes(b, -1, -2), rtol=1e-13, atol=1e-14)


def test_transformations(rng):
    a, b = jnp.asarray(rng.normal(size=(8, 5, 6))), jnp.asarray(rng.normal(size=(8, 4, 6)))
    batched = jax.jit(jax.vmap(times_transpose))(a, b)
    np.testing.assert_allclose(batched, a @ jnp.swapaxes(b, -1, -2), rtol=1e-13, atol=1e-14)

    def loss(product):
        return lambda a, b: jnp.sum(jnp.sin(product(a, b)))

    reference = jax.grad(loss(lambda a, b: a @ b.T), argnums=(0, 1))(a[0], b[0])
    reverse = jax.grad(loss(times_transpose), argnums=(0, 1))(a[0], b[0])
    forward = jax.jacfwd(loss(times_transpose), argnums=(0, 1))(a[0], b[0])
    for expected, got_reverse, got_forward in zip(reference, reverse, forward):
        np.testing.assert_allclose(got_reverse, expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got_forward, expected, rtol=1e-12, atol=1e-14)
