"""Explicit Runge-Kutta steps with a lean stage loop, for solves without a reverse pass.

diffrax's Runge-Kutta ``step`` serves explicit, implicit and stochastic tableaux alike: its
stages run in a checkpointed while loop with buffers, a possible first stage, per-stage
root finding and result bookkeeping. For the explicit FSAL tableaux this package uses
(Tsit5, Dopri5, Dopri8, Bosh3) on a small flat state, that machinery is a measurable share
of a step under ``vmap`` that the plain ``fori_loop`` below does without, and the compiled
program is no larger (``benchmarks.overhead --case roofline``; the figures in docs/BENCHMARKS.md
section 1d).

The classes here are diffrax's solvers (same tableau, interpolation, orders and solver
state ``(first_step, f0)``) with ``step`` replaced by :func:`explicit_step`: stage ``i``
is ``y0 + sum_j a_ij k_j`` over all earlier stages, ``k_i = dt f(t0 + c_i dt, y_i)``, the
solution is the last stage's state (SSAL) and the error estimate ``sum_j e_j k_j``
(Butcher 2016, "Numerical Methods for Ordinary Differential Equations", 3rd ed., ch. 3).
Steps, solves and their derivatives equal diffrax's to rounding
(``tests/model/integrate/test_explicit.py``).

Where they are used (:func:`model.integrate.solve.make_solver`): in the refilling lanes
(a ``while_loop``, which has no reverse mode) and in solves with ``adjoint="forward"``.
A solve that may be reverse-differentiated keeps diffrax's loop, whose reverse-mode
gradients were measured to be far less noisy on long stiff runs. Measured on the low-speed
slider-crank with friction (10 ms, derivative of an output norm by the clearance; forward
mode 878 / 883 / 883 at rtol 1e-8 / 1e-9 / 1e-10, central differences 882): reverse mode
gave 882 / 881 / 882 with diffrax's loop and 815 / 873 / 5,732 with this one, and a
change of the parameters by 1e-12 relative moved this one's to 863 / 934 / -865 (diffrax's
by at most 0.06 %). Each run is deterministic, so the likely cause is that reverse mode
recomputes the steps from checkpoints, a recomputed step rounds differently from the
original one, and an accept/reject decision whose error ratio lies within that rounding of
1 flips; with this loop XLA compiles the recomputation less like the original."""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from diffrax import ButcherTableau
from jaxtyping import PyTree

from ._diffrax import unvmap_any

_SUCCESSFUL = diffrax.RESULTS.successful


def _stage_matrix(tableau: ButcherTableau) -> np.ndarray:
    """The strictly lower ``a`` of the tableau as a square matrix (stages x stages)."""
    stages = tableau.num_stages
    matrix = np.zeros((stages, stages))
    for row, coefficients in enumerate(tableau.a_lower, start=1):
        matrix[row, :row] = coefficients
    return matrix


def _weighted_sum(weights, stacked: PyTree) -> PyTree:
    # a broadcast product and a sum rather than a dot: under vmap a dot of one row is a
    # batched matrix-product kernel of its own
    return jax.tree.map(lambda k: jnp.sum(weights.reshape((-1,) + (1,) * (k.ndim - 1)) * k, axis=0), stacked)


def explicit_step(tableau: ButcherTableau, terms: diffrax.AbstractTerm, t0, t1, y0: PyTree, args,
                  solver_state: tuple, made_jump) -> tuple:
    """One step of an explicit, FSAL and SSAL Runge-Kutta tableau; the signature and
    returns of ``diffrax.AbstractSolver.step``. ``solver_state = (first_step, f0)``: ``f0``
    is the field at ``(t0, y0)`` from the previous step, evaluated afresh on a first step
    or after a jump (for every lane of a batch when any needs it, as diffrax does)."""
    if not (tableau.fsal and tableau.ssal) or tableau.a_diagonal is not None:
        raise NotImplementedError("explicit_step needs an explicit tableau whose first stage is the "
                                  "previous step's last (FSAL) and whose solution is its last stage (SSAL)")
    stage_matrix = jnp.asarray(_stage_matrix(tableau))
    nodes = jnp.asarray(np.concatenate([[0.0], tableau.c]))
    control = terms.contr(t0, t1)
    first_step, f0 = solver_state
    f0 = jax.lax.cond(unvmap_any(first_step | made_jump), lambda: terms.vf(t0, y0, args), lambda: f0)
    stacked = jax.tree.map(lambda y, k: jnp.zeros((tableau.num_stages,) + y.shape, y.dtype).at[0].set(k),
                           y0, terms.prod(f0, control))

    def stage(index, carry):
        stacked, _ = carry
        y_stage = jax.tree.map(jnp.add, y0, _weighted_sum(stage_matrix[index], stacked))
        node = nodes[index]
        # a node of 1 is exactly t1, as in diffrax (no rounding of t0 + (t1 - t0))
        f_stage = terms.vf(jnp.where(node == 1, t1, t0 + node * (t1 - t0)), y_stage, args)
        stacked = jax.tree.map(lambda ks, k: ks.at[index].set(k), stacked, terms.prod(f_stage, control))
        return stacked, (y_stage, f_stage)

    stacked, (y1, f1) = jax.lax.fori_loop(1, tableau.num_stages, stage, (stacked, (y0, f0)))
    y_error = _weighted_sum(jnp.asarray(tableau.b_error), stacked)
    return y1, y_error, dict(y0=y0, y1=y1, k=stacked), (jnp.array(False), f1), _SUCCESSFUL


class _ExplicitStep(eqx.Module):
    """Replaces a diffrax explicit solver's ``step`` by :func:`explicit_step`."""

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        return explicit_step(self.tableau, terms, t0, t1, y0, args, solver_state, made_jump)


class Tsit5(_ExplicitStep, diffrax.Tsit5):
    """diffrax's Tsit5 (Tsitouras 2011) with :func:`explicit_step`."""


class Dopri5(_ExplicitStep, diffrax.Dopri5):
    """diffrax's Dopri5 (Dormand & Prince 1980) with :func:`explicit_step`."""


class Dopri8(_ExplicitStep, diffrax.Dopri8):
    """diffrax's Dopri8 (Prince & Dormand 1981) with :func:`explicit_step`."""


class Bosh3(_ExplicitStep, diffrax.Bosh3):
    """diffrax's Bosh3 (Bogacki & Shampine 1989) with :func:`explicit_step`."""


# the solver registry's explicit names (model.integrate.settings.EXPLICIT_SOLVERS)
LEAN_STAGE_SOLVERS = {"tsit5": Tsit5, "dopri5": Dopri5, "dopri8": Dopri8, "bosh3": Bosh3}
