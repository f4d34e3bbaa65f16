"""Small dense linear algebra shared by the engines (planar, spatial and joint-coordinate).

- :func:`spd_solve`: a small symmetric positive definite system by a Cholesky factorisation
  unrolled into scalar operations (optionally skipping structural zeros), with the tangent
  of the solve written out;
- :func:`inverse_3x3`: 3 x 3 inverses by the adjugate;
- :func:`schur_solve`: a saddle-point system by the Schur complement of its few rows.
"""

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

# Above this size the unrolled factorisation costs more to compile than LAPACK costs to run.
UNROLLED_CHOLESKY_MAX = 16


Pattern = tuple[tuple[bool, ...], ...]


def spd_solve(matrix: Float[Array, "m m"], rhs: Float[Array, " m"], pattern: Pattern | None = None
              ) -> Float[Array, " m"]:
    """Solve ``matrix x = rhs`` for a small symmetric positive definite ``matrix``.

    Cholesky ``L L^T`` unrolled into scalar operations (the size is static), which
    vectorises across a ``vmap`` batch instead of calling LAPACK once per member. Up to
    ``UNROLLED_CHOLESKY_MAX`` rows; LAPACK above. ``pattern`` (static; True where an entry
    may be nonzero) lets the factorisation skip the structural zeros of a sparse matrix
    and of its factor (the fill-in is found symbolically, George & Liu 1981 ch. 2).
    """
    if matrix.shape[0] > UNROLLED_CHOLESKY_MAX:
        return jnp.linalg.solve(matrix, rhs)
    return _unrolled_spd_solve(pattern, matrix, rhs)


def _factor_pattern(pattern: Pattern | None, size: int) -> list[list[bool]]:
    """Where the Cholesky factor of a matrix with nonzeros ``pattern`` may be nonzero."""
    nonzero = [[pattern is None or bool(pattern[i][j]) for j in range(size)] for i in range(size)]
    for j in range(size):
        for i in range(j + 1, size):
            nonzero[i][j] = nonzero[i][j] or any(nonzero[i][k] and nonzero[j][k] for k in range(j))
    return nonzero


def _cholesky_factor(matrix, pattern: Pattern | None = None) -> list[list]:
    """The lower factor ``L`` of ``matrix = L L^T``, as nested lists of scalars (``None``
    where ``pattern`` makes an entry a structural zero)."""
    size = matrix.shape[0]
    nonzero = _factor_pattern(pattern, size)
    lower = [[None] * size for _ in range(size)]

    def dot(i, j):
        return sum(lower[i][k] * lower[j][k] for k in range(j) if lower[i][k] is not None and lower[j][k] is not None)

    for j in range(size):
        lower[j][j] = jnp.sqrt(matrix[j, j] - dot(j, j))
        for i in range(j + 1, size):
            if nonzero[i][j]:
                lower[i][j] = (matrix[i, j] - dot(i, j)) / lower[j][j]
    return lower


def _cholesky_substitute(lower: list[list], rhs) -> Float[Array, " m"]:
    """``(L L^T)^-1 rhs`` by forward then backward substitution: linear in ``rhs``."""
    size = len(lower)
    forward = []
    for i in range(size):
        forward.append((rhs[i] - sum(lower[i][k] * forward[k] for k in range(i) if lower[i][k] is not None))
                       / lower[i][i])
    solution = [None] * size
    for i in reversed(range(size)):
        solution[i] = (forward[i] - sum(lower[k][i] * solution[k] for k in range(i + 1, size) if lower[k][i] is not None)
                       ) / lower[i][i]
    return jnp.stack(solution)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _unrolled_spd_solve(pattern, matrix, rhs):
    return _cholesky_substitute(_cholesky_factor(matrix, pattern), rhs)


@_unrolled_spd_solve.defjvp
def _unrolled_spd_solve_jvp(pattern, primals, tangents):
    # d x = A^-1 (d b - d A x) with the primal factor: differentiating the unrolled
    # factorisation instead triples its scalar graph, and XLA's compile time grows faster
    # than the graph (forward mode through the spatial slider-crank compiled for 95 s).
    # The tangent is linear in (d A, d b), so reverse mode transposes it.
    matrix, rhs = primals
    matrix_tangent, rhs_tangent = tangents
    lower = _cholesky_factor(matrix, pattern)
    solution = _cholesky_substitute(lower, rhs)
    return solution, _cholesky_substitute(lower, rhs_tangent - matrix_tangent @ solution)


def inverse_3x3(matrices: Float[Array, "... 3 3"]) -> Float[Array, "... 3 3"]:
    """Inverse of invertible 3 x 3 matrices by the adjugate (cofactors over the determinant):
    a few multiplications, where ``jnp.linalg.inv`` calls an LU factorisation per matrix."""
    rows = [matrices[..., i, :] for i in range(3)]
    adjugate_columns = [jnp.cross(rows[1], rows[2]), jnp.cross(rows[2], rows[0]), jnp.cross(rows[0], rows[1])]
    determinant = jnp.sum(rows[0] * adjugate_columns[0], axis=-1)
    return jnp.stack(adjugate_columns, axis=-1) / determinant[..., None, None]


def schur_solve(solve: Callable, rhs: Float[Array, " n"], coupling: Float[Array, "m n"], gamma: Float[Array, " m"]
                ) -> tuple[Float[Array, " n"], Float[Array, " m"]]:
    """``(x, lambda)`` of ``[[H, G^T], [G, 0]] [x; lambda] = [rhs; gamma]`` with ``G`` =
    ``coupling``, by one application of ``solve`` (``B -> H^-1 B``, ``H`` symmetric positive
    definite) to ``[rhs, G^T]`` and the Schur complement ``G H^-1 G^T`` (few rows) by
    :func:`spd_solve` (Golub & Van Loan 2013, §4.2; the cut-joint method, Jalón & Bayo 1994)."""
    solved = solve(jnp.concatenate([rhs[:, None], coupling.T], axis=1))
    unconstrained, spread = solved[:, 0], solved[:, 1:]
    multipliers = spd_solve(coupling @ spread, coupling @ unconstrained - gamma)
    return unconstrained - spread @ multipliers, multipliers
