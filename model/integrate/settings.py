"""Solver registry and static integration settings."""

from __future__ import annotations

import math

import diffrax
import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .rosenbrock import Rodas4, Rodas5P
from .rosenbrock_w import DEFAULT_JACOBIAN_REUSE, AbstractRosenbrockW, Ros34PW2

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
# linearly implicit, no Newton iteration: Rodas* form the exact Jacobian every step, the
# W-method (ros34pw2) every ``jacobian_reuse`` accepted steps
ROSENBROCK_SOLVERS = {
    "rodas4": Rodas4,
    "rodas5p": Rodas5P,
    "ros34pw2": Ros34PW2,
}
ROSENBROCK_W_SOLVERS = {name for name, cls in ROSENBROCK_SOLVERS.items() if issubclass(cls, AbstractRosenbrockW)}
STIFF_SOLVERS = {**IMPLICIT_SOLVERS, **ROSENBROCK_SOLVERS}
SOLVERS = {**EXPLICIT_SOLVERS, **STIFF_SOLVERS}
JACOBIAN_MODES = ("chord", "step", "stage", "newton")


class SolverSettings(eqx.Module):
    """Static integration settings (SI units).

    Step-size control (``diffrax.PIDController``): ``rtol``/``atol`` on every state
    component; ``pcoeff``/``icoeff`` are the PI coefficients (defaults: the study in
    ``docs/integration.md``); ``dtmax`` bounds the step (s), and ``dtmax_contact_share``
    bounds a step that starts with a clearance joint open by that share of the shortest
    open joint's contact period ``model.contact_periods`` (the tighter of the two wins;
    :class:`model.integrate.step_bound.OpenJointStepBound`).

    The Rosenbrock solvers (``rodas4``, ``rodas5p``, :mod:`model.integrate.rosenbrock`) solve one
    linear system per stage with the exact Jacobian and have no root finder: the
    ``jacobian`` and ``root_*`` settings do not apply to them. The Rosenbrock-W solver
    ``ros34pw2`` (:mod:`model.integrate.rosenbrock_w`) forms the Jacobian once every
    ``jacobian_reuse`` accepted steps and keeps it in between.

    Implicit solvers only (Kvaerno*, KenCarp*): the Newton-type root finder of every stage
    stops when the scaled update falls below ``root_kappa`` with the scale
    ``root_atol + root_rtol |y|``; ``None`` takes ``atol``/``rtol`` times
    ``root_tolerance_factor``. ``jacobian`` chooses how often the Jacobian is rebuilt:
    ``"step"`` once per step (diffrax's ``VeryChord``), ``"stage"`` once per stage,
    ``"newton"`` at every iteration (``optimistix.Newton``); ``root_max_steps`` caps the
    iterations per stage. A stage that does not converge rejects the step.
    ``"chord"`` (default) also builds the Jacobian once per step but, unlike the other
    three, tests convergence on the *state* increment each iteration makes (scaled like
    the step-size controller's error, RMS norm): :class:`StageChord`, see
    ``docs/integration.md``.

    ``projection_iterations``: after every step the state is projected back onto the
    ideal joints' constraints (:class:`model.integrate.projection.ConstraintProjection`)
    with that many Gauss-Newton steps on the positions and one linear projection of the
    velocities; 0 leaves the constraints to Baumgarte stabilisation alone.
    """

    t_end: float = eqx.field(static=True)  # s
    output_interval: float = eqx.field(static=True)  # s
    solver: str = eqx.field(static=True, default="tsit5")
    rtol: float = eqx.field(static=True, default=1e-6)
    atol: float = eqx.field(static=True, default=1e-9)
    dtmax: float | None = eqx.field(static=True, default=None)  # s; None: unbounded
    max_steps: int = eqx.field(static=True, default=200_000)
    pcoeff: float = eqx.field(static=True, default=0.3)
    icoeff: float = eqx.field(static=True, default=0.4)
    adjoint: str = eqx.field(static=True, default="checkpoint")  # checkpoint (reverse) | forward
    progress: bool = eqx.field(static=True, default=False)  # a tqdm bar over simulated time (diffrax)
    dtmax_contact_share: float | None = eqx.field(static=True, default=0.2)
    jacobian: str = eqx.field(static=True, default="chord")  # chord | step | stage | newton
    root_rtol: float | None = eqx.field(static=True, default=None)
    root_atol: float | None = eqx.field(static=True, default=None)
    root_tolerance_factor: float = eqx.field(static=True, default=1.0)
    root_kappa: float = eqx.field(static=True, default=1e-2)
    root_max_steps: int = eqx.field(static=True, default=10)
    jacobian_reuse: int = eqx.field(static=True, default=DEFAULT_JACOBIAN_REUSE)  # W-methods: steps per Jacobian
    # project each step's end onto the ideal joints' constraints, with this many
    # Gauss-Newton steps on the positions (model/integrate/projection.py); 0: Baumgarte alone
    projection_iterations: int = eqx.field(static=True, default=1)

    @property
    def num_outputs(self) -> int:
        return int(math.floor(self.t_end / self.output_interval + 1e-9)) + 1

    def output_times(self) -> Float[Array, " times"]:
        return jnp.linspace(0.0, (self.num_outputs - 1) * self.output_interval, self.num_outputs)
