"""``solve`` and ``simulate`` for spatial mechanisms (:class:`model.mechanics.spatial.SpatialMechanism`).

Same solvers, settings and step-size guard as the planar path (``model/integrate/solve.py``);
the state is the flat vector of :func:`model.mechanics.spatial.flatten_state`.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ..mechanics.spatial import SpatialMechanism, SpatialState, evaluate, flat_vector_field, flatten_state, initial_state
from ..mechanics.spatial import unflatten_state
from .settings import SolverSettings
from .solve import _adjoint, _terms, make_solver
from .step_guard import RejectNonFinite


class SpatialTrajectory(eqx.Module):
    """A solved spatial trajectory at the output times (SI); per-joint arrays have the
    clearance joints (cylindrical, then spherical) on their last axis (``eccentricity``:
    joint, component ``(u, w, axial)``)."""

    t: Float[Array, " times"]
    x: Float[Array, "times coords"]
    v: Float[Array, "times velocities"]
    vdot: Float[Array, "times velocities"]
    impact_memory: Float[Array, "times memory"]
    driver_work: Float[Array, " times"]
    eccentricity: Float[Array, "times joints 3"]
    tilt: Float[Array, "times joints"]
    penetration: Float[Array, "times joints"]
    normal_force: Float[Array, "times joints"]
    normal_force_a: Float[Array, "times joints"]
    normal_force_b: Float[Array, "times joints"]
    tangential_force: Float[Array, "times joints"]
    slip_velocity: Float[Array, "times joints"]
    slice_penetration: Float[Array, "times memory"]
    slice_normal_force: Float[Array, "times memory"]
    driver_torques: Float[Array, "times drivers"]
    constraint_violation: Float[Array, " times"]
    steps: Int[Array, ""]
    rejected_steps: Int[Array, ""]
    result: Int[Array, ""]


def solve_spatial(mechanism: SpatialMechanism, settings: SolverSettings, y0: SpatialState | None = None,
                  rtol=None, atol=None) -> diffrax.Solution:
    """Integrate from ``t = 0`` to the last output time; ``ys`` is a :class:`SpatialState`."""
    y0 = initial_state(mechanism) if y0 is None else y0
    controller = RejectNonFinite(diffrax.PIDController(
        rtol=settings.rtol if rtol is None else rtol, atol=settings.atol if atol is None else atol,
        dtmax=settings.dtmax, pcoeff=settings.pcoeff, icoeff=settings.icoeff))
    solution = diffrax.diffeqsolve(
        _terms(settings.solver, flat_vector_field), make_solver(settings, rtol, atol), t0=0.0,
        t1=(settings.num_outputs - 1) * settings.output_interval, dt0=None, y0=flatten_state(y0), args=mechanism,
        saveat=diffrax.SaveAt(ts=settings.output_times()), stepsize_controller=controller,
        max_steps=settings.max_steps, adjoint=_adjoint(settings.adjoint), throw=False)
    states = unflatten_state(solution.ys, mechanism.num_bodies, mechanism.memory_size)
    return eqx.tree_at(lambda s: s.ys, solution, states)


def spatial_trajectory(mechanism: SpatialMechanism, t, states: SpatialState, steps=0, rejected=0, result=0
                       ) -> SpatialTrajectory:
    """Post-process saved states: accelerations, contact forces, driver torques."""
    out = jax.vmap(lambda t_, y_: evaluate(mechanism, t_, y_))(t, states)
    c = out.contact
    return SpatialTrajectory(
        t, states.x, states.v, out.vdot, states.impact_memory, states.driver_work, c.eccentricity, c.tilt,
        c.penetration, c.normal_force, c.normal_force_a, c.normal_force_b, c.tangential_force, c.slip_velocity,
        c.slice_penetration, c.slice_normal_force, out.driver_torques, out.constraint_violation,
        jnp.asarray(steps), jnp.asarray(rejected), jnp.asarray(result))


def simulate_spatial(mechanism: SpatialMechanism, settings: SolverSettings, rtol=None, atol=None) -> SpatialTrajectory:
    """Solve and post-process; never raises under ``jit`` (``result`` != 0 on failure)."""
    solution = solve_spatial(mechanism, settings, rtol=rtol, atol=atol)
    return spatial_trajectory(mechanism, solution.ts, solution.ys, solution.stats["num_steps"],
                              solution.stats["num_rejected_steps"], solution.result._value)
