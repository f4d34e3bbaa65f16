"""Time integration with diffrax, and the trajectory a simulation returns.

:func:`simulate` is a pure function of the :class:`~model.mechanism.Mechanism` pytree, so
``jax.jit``, ``jax.vmap`` (parameter sweeps) and ``jax.grad``/``jax.jvp`` (calibration,
design) go straight through it. The solver settings are static.
"""

from __future__ import annotations

import math

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from .dynamics import State, evaluate, initial_state, vector_field
from .mechanism import Mechanism

EXPLICIT_SOLVERS = {
    "tsit5": diffrax.Tsit5,
    "dopri5": diffrax.Dopri5,
    "dopri8": diffrax.Dopri8,
    "bosh3": diffrax.Bosh3,
}
IMPLICIT_SOLVERS = {
    "kvaerno3": diffrax.Kvaerno3,
    "kvaerno4": diffrax.Kvaerno4,
    "kvaerno5": diffrax.Kvaerno5,
    "kencarp3": diffrax.KenCarp3,
    "kencarp4": diffrax.KenCarp4,
    "kencarp5": diffrax.KenCarp5,
}
SOLVERS = {**EXPLICIT_SOLVERS, **IMPLICIT_SOLVERS}


class SolverSettings(eqx.Module):
    """Static integration settings (SI units)."""

    t_end: float = eqx.field(static=True)  # s
    output_interval: float = eqx.field(static=True)  # s
    solver: str = eqx.field(static=True, default="tsit5")
    rtol: float = eqx.field(static=True, default=1e-6)
    atol: float = eqx.field(static=True, default=1e-9)
    dtmax: float | None = eqx.field(static=True, default=None)  # s; None: unbounded
    max_steps: int = eqx.field(static=True, default=200_000)
    pcoeff: float = eqx.field(static=True, default=0.0)
    icoeff: float = eqx.field(static=True, default=1.0)
    adjoint: str = eqx.field(static=True, default="checkpoint")  # checkpoint (reverse) | forward

    @property
    def num_outputs(self) -> int:
        return int(math.floor(self.t_end / self.output_interval + 1e-9)) + 1

    def output_times(self) -> Float[Array, " times"]:
        return jnp.linspace(0.0, (self.num_outputs - 1) * self.output_interval, self.num_outputs)


class Trajectory(eqx.Module):
    """A solved trajectory sampled at the output times (SI units).

    Per-joint arrays have the clearance joints on their last axis (``eccentricity``: the
    last two axes are joint, component).
    """

    t: Float[Array, " times"]
    q: Float[Array, "times coords"]
    qd: Float[Array, "times coords"]
    qdd: Float[Array, "times coords"]
    impact_memory: Float[Array, "times joints"]
    driver_work: Float[Array, " times"]
    eccentricity: Float[Array, "times joints 2"]
    penetration: Float[Array, "times joints"]
    normal_rate: Float[Array, "times joints"]
    slip_velocity: Float[Array, "times joints"]
    normal_force: Float[Array, "times joints"]
    tangential_force: Float[Array, "times joints"]
    driver_torques: Float[Array, "times drivers"]
    constraint_violation: Float[Array, " times"]
    steps: Int[Array, ""]
    rejected_steps: Int[Array, ""]
    result: Int[Array, ""]  # diffrax.RESULTS index; 0 = successful


def _terms(solver_name: str, field):
    if solver_name.startswith("kencarp"):
        # IMEX solvers take (explicit, implicit) parts; treating the whole field
        # implicitly keeps the contact stiffness in the Newton iteration.
        zero = diffrax.ODETerm(lambda t, y, args: jax.tree_util.tree_map(jnp.zeros_like, y))
        return diffrax.MultiTerm(zero, diffrax.ODETerm(field))
    return diffrax.ODETerm(field)


def _adjoint(name: str):
    if name == "forward":
        return diffrax.ForwardMode()
    if name == "checkpoint":
        return diffrax.RecursiveCheckpointAdjoint()
    raise ValueError(f"unknown adjoint {name!r} (checkpoint | forward)")


def solve(mechanism: Mechanism, settings: SolverSettings, y0: State | None = None) -> diffrax.Solution:
    """Integrate the equations of motion from ``t = 0`` to ``settings.t_end``."""
    if settings.solver not in SOLVERS:
        raise ValueError(f"unknown solver {settings.solver!r}; choose from {sorted(SOLVERS)}")
    y0 = initial_state(mechanism) if y0 is None else y0
    controller = diffrax.PIDController(
        rtol=settings.rtol,
        atol=settings.atol,
        dtmax=settings.dtmax,
        pcoeff=settings.pcoeff,
        icoeff=settings.icoeff,
    )
    return diffrax.diffeqsolve(
        _terms(settings.solver, vector_field),
        SOLVERS[settings.solver](),
        t0=0.0,
        t1=(settings.num_outputs - 1) * settings.output_interval,
        dt0=None,
        y0=y0,
        args=mechanism,
        saveat=diffrax.SaveAt(ts=settings.output_times()),
        stepsize_controller=controller,
        max_steps=settings.max_steps,
        adjoint=_adjoint(settings.adjoint),
        throw=False,
    )


def simulate(mechanism: Mechanism, settings: SolverSettings) -> Trajectory:
    """Solve and post-process: accelerations, contact forces and driver torques at every
    output time, from the saved states (no extra integration)."""
    solution = solve(mechanism, settings)
    states: State = solution.ys
    outputs = jax.vmap(lambda t, y: evaluate(mechanism, t, y))(solution.ts, states)
    return Trajectory(
        t=solution.ts,
        q=states.q,
        qd=states.qd,
        qdd=outputs.qdd,
        impact_memory=states.impact_memory,
        driver_work=states.driver_work,
        eccentricity=outputs.contact.eccentricity,
        penetration=outputs.contact.penetration,
        normal_rate=outputs.contact.normal_rate,
        slip_velocity=outputs.contact.slip_velocity,
        normal_force=outputs.contact.normal_force,
        tangential_force=outputs.contact.tangential_force,
        driver_torques=outputs.driver_torques,
        constraint_violation=outputs.constraint_violation,
        steps=solution.stats["num_steps"],
        rejected_steps=solution.stats["num_rejected_steps"],
        result=solution.result._value,
    )


def result_message(code: int) -> str:
    """Human-readable diffrax outcome for :attr:`Trajectory.result`."""
    if int(code) == 0:
        return "ok"
    return diffrax.RESULTS._index_to_message[int(code)].strip() or f"solver failure {int(code)}"
