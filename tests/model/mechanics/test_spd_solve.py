"""The unrolled Cholesky solve of the Schur complement: values and derivatives (forward,
reverse, second order, under ``vmap``) against LAPACK's ``jnp.linalg.solve``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.linalg import UNROLLED_CHOLESKY_MAX, _cholesky_factor, _cholesky_substitute, spd_solve


@pytest.fixture(scope="module")
def systems():
    key_matrix, key_rhs = jax.random.split(jax.random.PRNGKey(0))
    factors = jax.random.normal(key_matrix, (4, 7, 7))
    matrices = factors @ jnp.swapaxes(factors, 1, 2) + 7.0 * jnp.eye(7)
    return matrices, jax.random.normal(key_rhs, (4, 7))


def unrolled(matrix, rhs):
    return jnp.sum(jnp.sin(spd_solve(matrix, rhs)))


def lapack(matrix, rhs):
    return jnp.sum(jnp.sin(jnp.linalg.solve(matrix, rhs)))


def test_solution_matches_lapack(systems):
    matrices, rhs = systems
    np.testing.assert_allclose(jax.vmap(spd_solve)(matrices, rhs), jnp.linalg.solve(matrices, rhs[..., None])[..., 0],
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("derivative", [jax.grad, jax.jacfwd])
@pytest.mark.parametrize("argnum", [0, 1])  # the matrix, the right-hand side
def test_derivatives_match_lapack(systems, derivative, argnum):
    matrices, rhs = systems
    got = jax.vmap(derivative(unrolled, argnum))(matrices, rhs)
    expected = jax.vmap(derivative(lapack, argnum))(matrices, rhs)
    assert float(jnp.max(jnp.abs(expected))) > 1e-3
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)


def test_second_derivative_matches_lapack(systems):
    matrices, rhs = systems
    np.testing.assert_allclose(jax.hessian(unrolled, 1)(matrices[0], rhs[0]), jax.hessian(lapack, 1)(matrices[0], rhs[0]),
                               rtol=1e-10, atol=1e-14)


def _operations(jaxpr) -> int:
    """Equations of ``jaxpr``, counting those inside called sub-programs."""
    count = 0
    for eqn in jaxpr.eqns:
        inner = [v for v in eqn.params.values() if hasattr(v, "jaxpr") or hasattr(v, "eqns")]
        count += sum(_operations(getattr(v, "jaxpr", v)) for v in inner) if inner else 1
    return count


def test_tangent_reuses_the_primal_factor(systems):
    # differentiating the unrolled factorisation itself would triple its scalar program (and
    # XLA's compile time grows faster than the program); the rule adds two substitutions
    matrix, rhs = systems[0][0], systems[1][0]
    assert matrix.shape[0] <= UNROLLED_CHOLESKY_MAX

    def differentiated_factorisation(a, b):
        return _cholesky_substitute(_cholesky_factor(a), b)

    def tangent_size(solve):
        return _operations(jax.make_jaxpr(lambda a, b: jax.jvp(solve, (a, b), (a, b)))(matrix, rhs).jaxpr)

    assert tangent_size(spd_solve) < 0.7 * tangent_size(differentiated_factorisation)


def block_sparse_system():
    """An SPD matrix with the slider-crank's pattern: blocks of 3, 2 and 2 rows, the first two
    coupled, the last alone; the factor fills nothing outside those blocks."""
    sizes, coupled = [3, 2, 2], {(0, 1), (1, 0)}
    pattern = tuple(tuple(g == h or (g, h) in coupled for h, width in enumerate(sizes) for _ in range(width))
                    for g, height in enumerate(sizes) for _ in range(height))
    mask = jnp.asarray(pattern, dtype=float)
    factors = jax.random.normal(jax.random.PRNGKey(1), (7, 7)) * mask
    return (factors @ factors.T) * mask + 7.0 * jnp.eye(7), jax.random.normal(jax.random.PRNGKey(2), (7,)), pattern


def test_sparse_pattern_skips_zeros_and_matches_the_dense_solve():
    matrix, rhs, pattern = block_sparse_system()
    lower = _cholesky_factor(matrix, pattern)
    assert lower[5][0] is None and lower[6][4] is None and lower[4][0] is not None  # no fill across uncoupled blocks
    np.testing.assert_allclose(spd_solve(matrix, rhs, pattern), jnp.linalg.solve(matrix, rhs), rtol=1e-12)
    tangent = jax.random.normal(jax.random.PRNGKey(3), (7, 7)) * jnp.asarray(pattern, dtype=float)
    np.testing.assert_allclose(jax.jvp(lambda m: spd_solve(m, rhs, pattern), (matrix,), (tangent,))[1],
                               jax.jvp(lambda m: jnp.linalg.solve(m, rhs), (matrix,), (tangent,))[1], rtol=1e-10)
    np.testing.assert_allclose(jax.grad(lambda b: jnp.sum(jnp.sin(spd_solve(matrix, b, pattern))))(rhs),
                               jax.grad(lambda b: jnp.sum(jnp.sin(jnp.linalg.solve(matrix, b))))(rhs), rtol=1e-10)
