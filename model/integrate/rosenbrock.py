"""Rosenbrock (linearly implicit) Runge-Kutta solvers for diffrax: Rodas4 and Rodas5P.

A Rosenbrock step replaces the Newton iterations of an implicit Runge-Kutta method by one
linear solve per stage with the *exact* Jacobian ``J = df/dy`` at the step's start
(Hairer & Wanner, *Solving ODEs II*, 2nd ed., IV.7, formulation (7.25)): with
``M = I / (h gamma) - J`` (inverted once per step),

    M u_i = f(t0 + alpha_i h, y0 + sum_j a_ij u_j) + sum_j (c_ij / h) u_j + h gamma_i df/dt,
    y1 = y0 + sum_i m_i u_i,        error = sum_i (m_i - m_hat_i) u_i.

No iteration means no convergence test, no failed stage and no ``while_loop``: a step is
straight-line code (one ``jax.linearize`` of the field, ``s + 1`` evaluations, one
inverse, ``s`` matrix-vector products), so it vmaps without lanes waiting on each other's
Newton iterations.
Both methods are L-stable and stiffly accurate. The price is the exact Jacobian every
step (a W-method would tolerate an old one, at more stages).

Dense output is cubic Hermite on ``(y0, f(y0), y1, f(y1))``; ``f(y0)`` comes with the
Jacobian's linearisation, ``f(y1)`` costs one evaluation.

Tableaux (published coefficients, same formulation):
- Rodas4: Hairer & Wanner (1996), Section IV.7, the coefficients of their code RODAS;
- Rodas5P: G. Steinebach, "Construction of Rosenbrock-Wanner method Rodas5P and numerical
  benchmarks within the Julia Differential Equations package", BIT 63 (2023) 27.
For both, the solution includes the last stage's increment and the embedded solution is
the last stage's argument; ``tests/model/test_rosenbrock.py`` measures orders 4 and 5
(and 3 and 4 without the last increment).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, NamedTuple

import diffrax
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
from diffrax import RESULTS, AbstractAdaptiveSolver, AbstractTerm, ThirdOrderHermitePolynomialInterpolation

from ._diffrax import WrapTerm


class RosenbrockTableau(NamedTuple):
    """Coefficients of an ``s``-stage Rosenbrock method in the ``u`` formulation.

    ``a``/``c``: rows 2..s of the strictly lower triangles (row ``i`` has ``i - 1``
    entries); ``alpha``: stage times (share of the step); ``gamma``: ``gamma[0]`` is the
    diagonal, ``gamma[i]`` the time-derivative weight of stage ``i``; ``m``/``m_hat``:
    solution and embedded weights (for both Rodas methods the embedded solution is the
    last stage's argument and the error estimate is the last increment).
    """

    a: tuple[tuple[float, ...], ...]
    c: tuple[tuple[float, ...], ...]
    alpha: tuple[float, ...]
    gamma: tuple[float, ...]
    m: tuple[float, ...]
    m_hat: tuple[float, ...]
    order: int


class AbstractRosenbrock(AbstractAdaptiveSolver):
    """A Rosenbrock solver for one ``diffrax.ODETerm``; subclasses set ``tableau``."""

    term_structure: ClassVar = AbstractTerm
    interpolation_cls: ClassVar[Callable[..., ThirdOrderHermitePolynomialInterpolation]] = (
        ThirdOrderHermitePolynomialInterpolation.from_k
    )
    tableau: ClassVar[RosenbrockTableau]

    def order(self, terms):
        return self.tableau.order

    def init(self, terms, t0, t1, y0, args):
        # diffrax wraps the user's term (``WrapTerm``) to handle the direction of time
        inner = terms.term if isinstance(terms, WrapTerm) else terms
        if not isinstance(inner, diffrax.ODETerm):
            raise NotImplementedError(f"{type(self).__name__} takes one diffrax.ODETerm, got {type(inner).__name__}")
        return None

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        del solver_state, made_jump
        tableau = self.tableau
        flat_y0, unflatten = jax.flatten_util.ravel_pytree(y0)
        dtype = flat_y0.dtype
        h = jnp.asarray(t1 - t0, dtype)
        field = flat_field(terms, args, unflatten)
        f0, jacobian, time_derivative = linearisation(field, t0, flat_y0)
        # An explicit inverse: each stage is then one matrix-vector product instead of a
        # permuted pair of triangular solves (measured 8x cheaper for 8 stages at n = 20);
        # its forward error is the same cond(M) eps as the LU solve's.
        size = flat_y0.shape[0]
        inverse = jnp.linalg.inv(jnp.eye(size, dtype=dtype) / (h * tableau.gamma[0]) - jacobian)
        increments = stage_increments(tableau, field, t0, h, flat_y0, f0, time_derivative, lambda rhs: inverse @ rhs)
        y1, error, dense_info, _ = step_result(tableau, field, t1, y0, flat_y0, unflatten, h, increments, f0)
        return y1, error, dense_info, None, RESULTS.successful


def flat_field(terms, args, unflatten) -> Callable:
    """``field(t, flat_y)``: the term's vector field on the flat state (``unflatten`` from
    ``jax.flatten_util.ravel_pytree`` of the state)."""

    def field(t, flat_y):
        return jax.flatten_util.ravel_pytree(terms.vf(t, unflatten(flat_y), args))[0]

    return field


def linearisation(field, t0, flat_y0):
    """``(f(t0, y0), df/dy, df/dt)``: one linearisation and one batched JVP over the
    ``n + 1`` tangents, the first along ``t`` (``df/dt``), the others the Jacobian's columns."""
    dtype = flat_y0.dtype
    f0, linear_field = jax.linearize(field, jnp.asarray(t0, dtype), flat_y0)
    size = flat_y0.shape[0]
    tangent_t = jnp.zeros(size + 1, dtype).at[0].set(1.0)
    tangent_y = jnp.concatenate([jnp.zeros((1, size), dtype), jnp.eye(size, dtype=dtype)])
    directional = jax.vmap(linear_field)(tangent_t, tangent_y)
    return f0, directional[1:].T, directional[0]


def step_result(tableau: RosenbrockTableau, field, t1, y0, flat_y0, unflatten, h, increments, f0):
    """``(y1, error, dense_info, f(t1, y1))`` of a step from its stage increments:
    ``y1 = y0 + sum m_i u_i``, the error ``sum (m_i - m_hat_i) u_i``, and diffrax's cubic
    Hermite dense output, which takes the end slopes times ``h`` stacked per leaf."""
    dtype = flat_y0.dtype
    flat_y1 = flat_y0 + jnp.asarray(tableau.m, dtype) @ increments
    flat_error = jnp.asarray(np.subtract(tableau.m, tableau.m_hat), dtype) @ increments
    f1 = field(t1, flat_y1)
    y1 = unflatten(flat_y1)
    slopes = jax.tree_util.tree_map(lambda k0, k1: jnp.stack([k0, k1]), unflatten(h * f0), unflatten(h * f1))
    return y1, unflatten(flat_error), dict(y0=y0, y1=y1, k=slopes), f1


def stage_increments(tableau: RosenbrockTableau, field, t0, h, flat_y0, f0, time_derivative, solve_w):
    """The increments ``u_1..u_s`` of one step (``[s, n]``), formulation (7.25) of Hairer &
    Wanner (1996): stage ``i`` solves ``W u_i = f(t0 + alpha_i h, y0 + sum_j a_ij u_j)
    + sum_j (c_ij / h) u_j + h gamma_i df/dt`` with ``solve_w(rhs) = W^-1 rhs``.

    ``field(t, flat_y)``: the flat vector field; ``f0``: its value at ``(t0, y0)``;
    ``time_derivative``: ``df/dt`` (or, for a W-method, any approximation of it)."""
    dtype = flat_y0.dtype
    stages = len(tableau.m)
    lower_a, lower_c = _lower_triangle(tableau.a, stages), _lower_triangle(tableau.c, stages)
    increments = jnp.zeros((stages, flat_y0.shape[0]), dtype)
    for stage in range(stages):
        rhs = f0
        if stage > 0:
            past = increments[:stage]
            stage_y = flat_y0 + jnp.asarray(lower_a[stage, :stage], dtype) @ past
            rhs = field(t0 + tableau.alpha[stage] * h, stage_y)
            rhs = rhs + (jnp.asarray(lower_c[stage, :stage], dtype) @ past) / h
        if tableau.gamma[stage] != 0.0:
            rhs = rhs + (h * tableau.gamma[stage]) * time_derivative
        increments = increments.at[stage].set(solve_w(rhs))
    return increments


def _lower_triangle(rows: tuple[tuple[float, ...], ...], stages: int) -> np.ndarray:
    """The ``stages x stages`` strictly lower-triangular matrix of a tableau's rows."""
    matrix = np.zeros((stages, stages))
    for index, row in enumerate(rows, start=1):
        matrix[index, : len(row)] = row
    return matrix


RODAS4 = RosenbrockTableau(
    a=(
        (1.544,),
        (0.9466785280815826, 0.2557011698983284),
        (3.314825187068521, 2.896124015972201, 0.9986419139977817),
        (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950),
        (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950, 1.0),
    ),
    c=(
        (-5.6688,),
        (-2.430093356833875, -0.2063599157091915),
        (-0.1073529058151375, -9.594562251023355, -20.47028614809616),
        (7.496443313967647, -10.24680431464352, -33.99990352819905, 11.70890893206160),
        (8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136, -6.058818238834054),
    ),
    alpha=(0.0, 0.386, 0.21, 0.63, 1.0, 1.0),
    gamma=(0.25, -0.1043, 0.1035, -0.0362, 0.0, 0.0),
    m=(1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950, 1.0, 1.0),
    m_hat=(1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950, 1.0, 0.0),
    order=4,
)

_RODAS5P_SOLUTION = (
    -7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946,
)
RODAS5P = RosenbrockTableau(
    a=(
        (3.0,),
        (2.849394379747939, 0.45842242204463923),
        (-6.954028509809101, 2.489845061869568, -10.358996098473584),
        (2.8029986275628964, 0.5072464736228206, -0.3988312541770524, -0.04721187230404641),
        _RODAS5P_SOLUTION,
        _RODAS5P_SOLUTION + (1.0,),
        _RODAS5P_SOLUTION + (1.0, 1.0),
    ),
    c=(
        (-14.155112264123755,),
        (-17.97296035885952, -2.859693295451294),
        (147.12150275711716, -1.41221402718213, 71.68940251302358),
        (165.43517024871676, -0.4592823456491126, 42.90938336958603, -5.961986721573306),
        (24.854864614690072, -3.0009227002832186, 47.4931110020768, 5.5814197821558125, -0.6610691825249471),
        (30.91273214028599, -3.1208243349937974, 77.79954646070892, 34.28646028294783, -19.097331116725623,
         -28.087943162872662),
        (37.80277123390563, -3.2571969029072276, 112.26918849496327, 66.9347231244047, -40.06618937091002,
         -54.66780262877968, -9.48861652309627),
    ),
    alpha=(0.0, 0.6358126895828704, 0.4095798393397535, 0.9769306725060716, 0.4288403609558664, 1.0, 1.0, 1.0),
    gamma=(0.21193756319429014, -0.42387512638858027, -0.3384627126235924, 1.8046452872882734, 2.325825639765069,
           0.0, 0.0, 0.0),
    m=_RODAS5P_SOLUTION + (1.0, 1.0, 1.0),
    m_hat=_RODAS5P_SOLUTION + (1.0, 1.0, 0.0),
    order=5,
)


class Rodas4(AbstractRosenbrock):
    """Rodas4: 6 stages, order 4 with an embedded order-3 estimate, L-stable, stiffly
    accurate (Hairer & Wanner 1996, IV.7)."""

    tableau: ClassVar[RosenbrockTableau] = RODAS4


class Rodas5P(AbstractRosenbrock):
    """Rodas5P: 8 stages, order 5 with an embedded order-4 estimate, L-stable, stiffly
    accurate (Steinebach 2023, BIT 63:27)."""

    tableau: ClassVar[RosenbrockTableau] = RODAS5P


__all__ = ["AbstractRosenbrock", "RosenbrockTableau", "Rodas4", "Rodas5P", "RODAS4", "RODAS5P"]
