"""Stage root finders for diffrax's implicit Runge-Kutta solvers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import diffrax
import equinox as eqx
import jax
import jax.flatten_util
import jax.numpy as jnp
import jax.tree_util as jtu
import optimistix as optx
from jaxtyping import Array, Float, Int

from .settings import SolverSettings


class _ChordState(eqx.Module):
    lu: tuple[Array, Array]  # LU factors and pivots of the flattened stage Jacobian
    diffsize: Float[Array, ""]
    diffsize_prev: Float[Array, ""]
    step: Int[Array, ""]


def _state_increment(diff, args, value):
    """State-space increment and stage state of an f- or k-space stage iterate.

    diffrax solves a stage in f-space (``f_i = vf(t_i, y_partial + a_ii prod(f_i, dt))``,
    FSAL ESDIRKs: Kvaerno*) with the arguments ``(stage_index, a_ii, vf, prod, t_i,
    y_partial, args, control)``, or in k-space (``k_i = vf_prod(..., y_partial + a_ii
    k_i)``: KenCarp*) with ``(stage_index, a_ii, vf_prod, t_i, y_partial, args,
    control)`` (``diffrax/_solver/runge_kutta.py``, ``_implicit_relation_f``/``_k``).
    """
    if len(args) == 8:
        _, diagonal, _, prod, _, y_partial, _, control = args
        increment, state_part = prod(diff, control), prod(value, control)
    elif len(args) == 7:
        _, diagonal, _, _, y_partial, _, _ = args
        increment, state_part = diff, value
    else:  # pragma: no cover - a diffrax change would land here
        raise TypeError(f"unexpected implicit-stage arguments ({len(args)} items); diffrax layout changed?")
    increment = jtu.tree_map(lambda d: diagonal * d, increment)
    stage_state = jtu.tree_map(lambda a, b: a + diagonal * b, y_partial, state_part)
    return increment, stage_state


class StageChord(optx.AbstractRootFinder):
    """Chord iteration for the stages of diffrax's implicit Runge-Kutta solvers, with the
    convergence test on the state increment (Hairer & Wanner, *Solving ODEs II*, IV.8).

    diffrax builds the Jacobian through :meth:`init` once per step (second stage,
    ``CalculateJacobian.second_stage``) and hands it to every later stage. Each iteration
    costs one vector-field evaluation and one LU back-substitution. The iteration stops
    when the estimated remaining error ``rate / (1 - rate) ||dy||`` (or, after the first
    iteration, ``||dy||`` itself) is below ``kappa``, ``dy`` being the change of the stage
    *state* scaled by ``atol + rtol |y|`` in the RMS norm, the scale the step-size
    controller uses. diffrax's ``VeryChord`` and optimistix's ``Newton`` measure the
    change of the stage *derivative* ``f`` against ``atol + rtol |f|`` instead: ``atol``
    in state units applied to accelerations (and, for ``Newton``, a residual below
    ``atol`` in absolute terms) cannot be met at contact onsets, which made the chord
    iteration "diverge" and full Newton rebuild the Jacobian 3-4 times per stage.
    A diverging (rate > 2) or non-converging stage fails, and diffrax rejects the step.
    """

    rtol: Any
    atol: Any
    kappa: float = 1e-2
    norm: Callable = optx.rms_norm

    def _factorise(self, fn, y, args):
        flat, unravel = jax.flatten_util.ravel_pytree(y)

        def jacobian():
            return jax.jacfwd(lambda v: jax.flatten_util.ravel_pytree(fn(unravel(v), args)[0])[0])(flat)

        # diffrax opens every step with a placeholder Jacobian at a zero diagonal (the
        # relation is then ``vf(y0) - f``, Jacobian ``-I``) that ESDIRKs overwrite before
        # their first implicit stage: skip its ``jacfwd`` (one Jacobian of two per step)
        identity = -jnp.eye(flat.size, dtype=flat.dtype)
        matrix = jax.lax.cond(args[1] == 0, lambda: identity, jacobian)
        return jax.lax.stop_gradient(jax.scipy.linalg.lu_factor(matrix))

    def init(self, fn, y, args, options, f_struct, aux_struct, tags):
        del f_struct, aux_struct, tags
        if "init_state" in options:  # the Jacobian diffrax built for this step
            return options["init_state"]
        dtype = jnp.result_type(*jtu.tree_leaves(y))
        return _ChordState(self._factorise(fn, y, args), jnp.array(jnp.inf, dtype), jnp.array(1.0, dtype), jnp.array(0))

    def step(self, fn, y, args, options, state, tags):
        del options, tags
        residual, aux = fn(y, args)
        flat_residual, unravel = jax.flatten_util.ravel_pytree(residual)
        diff = unravel(jax.scipy.linalg.lu_solve(state.lu, flat_residual))
        new_y = jtu.tree_map(lambda a, b: a - b, y, diff)
        increment, stage_state = _state_increment(diff, args, new_y)
        scaled = jtu.tree_map(lambda d, v: d / (self.atol + self.rtol * jnp.abs(v)), increment, stage_state)
        diffsize = jnp.asarray(self.norm(scaled), state.diffsize.dtype)
        return new_y, _ChordState(state.lu, diffsize, state.diffsize, state.step + 1), aux

    def terminate(self, fn, y, args, options, state, tags):
        del fn, y, args, options, tags
        rate = state.diffsize / state.diffsize_prev
        later = state.step >= 2
        small = state.diffsize < 1e-12
        converged_first = (state.step == 1) & (state.diffsize < self.kappa)
        converged = later & (rate < 1) & (state.diffsize * rate / (1 - rate) < self.kappa)
        diverged = later & (~jnp.isfinite(rate) | (rate > 2))
        done = (state.step >= 1) & (small | converged_first | converged | diverged)
        failed = diverged & ~small & ~converged
        return done, optx.RESULTS.where(failed, optx.RESULTS.nonlinear_divergence, optx.RESULTS.successful)

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        return y, aux, {}


def root_finder(settings: SolverSettings, rtol, atol) -> optx.AbstractRootFinder:
    root_rtol = settings.root_tolerance_factor * rtol if settings.root_rtol is None else settings.root_rtol
    root_atol = settings.root_tolerance_factor * atol if settings.root_atol is None else settings.root_atol
    if settings.jacobian == "chord":
        return StageChord(rtol=root_rtol, atol=root_atol, kappa=settings.root_kappa)
    if settings.jacobian == "newton":
        return optx.Newton(rtol=root_rtol, atol=root_atol, kappa=settings.root_kappa)
    return diffrax.VeryChord(rtol=root_rtol, atol=root_atol, kappa=settings.root_kappa)
