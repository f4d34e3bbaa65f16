"""``solver = "auto"``: the integrator the work-precision study found fastest.

The study (``docs/integration.md``) measured every solver at matched error on four
cases (Flores, Flores with 100x Hertz stiffness, the low-speed slider-crank in
mostly continuous contact, the two-clearance four-bar) and on six stiff persistent-contact
variants of the low-speed slider-crank (``benchmarks.overhead --case stiff``: Hertz stiffness x1e4 and x1e6 or a
linear 1e12 N/m law, restitution 0.9 or 0.05; output interval / contact period 37-550):

- the step is set by the contact dynamics (impacts, and the micro-impacts of persistent
  contact), which every solver has to follow, and not by the output interval: step counts
  are identical at 0.1 and 1 ms output;
- each stiff step forms a Jacobian of the field (~1.4 Tsit5 steps) before its stages, so
  wherever both reached an error level Tsit5 was faster: 2.6-4.6x in the study cases,
  1.2-7.6x in the stiff variants (a few cells that Tsit5 did not reach by rtol 1e-9 are
  undecided).

No cheap estimate predicted a win of the stiff path: an earlier rule (output
interval >= 4 contact periods -> Rodas5P) grew with the output interval while the work did
not change, and would have sent every stiff variant to Rodas5P. ``auto`` therefore means
Tsit5 for rigid mechanisms; the stiff solvers stay available by name (their error at a
given rtol is smaller in chattering stiff contact).

Flexible bodies are different: their beam elements add modes far faster than the contact
(:func:`structural_rate`), which bound an explicit step whatever the contact does.
:func:`auto_solver` compares that rate with the time scale the run resolves
(:func:`resolved_period`): the Rosenbrock-W solver ROS34PW2 (its Jacobian kept over
``jacobian_reuse`` steps, :mod:`model.integrate.rosenbrock_w`) when the explicit steps that
bound forces cost more than its steps (the flexible study in ``docs/integration.md``).
"""

import numpy as np

from ..mechanics.mechanism import Mechanism
from ..mechanics.segmentation import highest_frequency
from .timescales import contact_periods

AUTO_SOLVER = "tsit5"

# Flexible bodies (beam elements) bring time scales of their own: the highest element
# mode, and the Rayleigh damping of that mode, bound an explicit step to about
# ``EXPLICIT_STABILITY / rate`` whatever the contact does, while a Rosenbrock-W step is free
# of that bound; it costs ``W_STEP_BASE + W_STEP_PER_COORDINATE x coordinates`` explicit
# steps (its Jacobian, formed every ``jacobian_reuse`` steps, included) and it takes
# ~``STIFF_STEPS_PER_PERIOD`` steps per resolved period. Measured on the flexible Flores
# slider-crank at m = 5, 10, 20 elements (24, 39, 69 coordinates), pinned to one core, from
# the step attempts (accepted and rejected) and run times of Tsit5 and ROS34PW2 at rtol 1e-3
# in ``benchmarks.work_precision --case flexible`` (docs/integration.md, "Flexible bodies"):
# a ROS34PW2 attempt cost 1.46, 1.87, 2.93 Tsit5 attempts (least-squares line: 0.63 +
# 0.033 per coordinate) and took 11.8, 11.3, 10.0 attempts per contact period.
STIFF_AUTO_SOLVER = "ros34pw2"
# Tsit5 on its stability bound: rate x (window / step attempts, rejected ones included),
# 3.16, 3.01, 2.98 at m = 5, 10, 20 (accepted steps alone: 3.2-3.3)
EXPLICIT_STABILITY = 3.0
STIFF_STEPS_PER_PERIOD = 11.0  # ROS34PW2 step attempts per contact period at rtol STUDY_RTOL
STUDY_RTOL = 1e-3
# ROS34PW2's attempts grew 1.7-1.9x per decade of rtol from 1e-3 to 1e-5 (rtol^-0.25, the
# same runs), while Tsit5's stayed on its stability bound
STEPS_RTOL_EXPONENT = 0.25
W_STEP_BASE = 0.63  # ROS34PW2 attempt / Tsit5 attempt, the part that does not grow with the coordinates
W_STEP_PER_COORDINATE = 0.033  # ... and its growth per coordinate (Jacobian, LU, field)


def resolve_solver(name: str) -> str:
    """The solver ``name`` stands for: ``AUTO_SOLVER`` for ``"auto"``, else ``name``."""
    return AUTO_SOLVER if name == "auto" else name


def structural_rate(mechanism: Mechanism) -> float:
    """Fastest rate (1/s) of the beam elements: ``max(omega_max, beta omega_max^2)`` over the
    flexible bodies, ``omega_max`` the highest natural frequency of the free chain and
    ``beta`` its Rayleigh coefficient (an underdamped mode has eigenvalues of modulus
    ``omega``, an overdamped one up to ``2 zeta omega = beta omega^2``). 0 without flexible
    bodies. Host-side (NumPy), on a concrete mechanism."""
    rate = 0.0
    masses, inertias = np.asarray(mechanism.masses), np.asarray(mechanism.inertias)
    if inertias.ndim == 3:  # spatial: the in-plane chain (about the segments' z axes) carries the axial modes
        inertias = inertias[:, 2, 2]
    for chain in mechanism.beam_chains:
        index = np.asarray(chain.segments)
        omega = highest_frequency(chain, masses[index], inertias[index])
        rate = max(rate, omega, float(chain.rayleigh_beta()) * omega**2)
    return rate


def resolved_period(mechanism: Mechanism) -> float:
    """The time scale (s) the solution has to resolve: the shortest contact period of the
    clearance joints (:func:`model.integrate.timescales.contact_periods`), or without
    clearance joints the period of the slowest first bending mode of the flexible bodies."""
    periods = np.asarray(contact_periods(mechanism))
    if periods.size:
        return float(periods.min())
    bending = [float(chain.first_bending_frequency()) for chain in mechanism.beam_chains]
    return 2.0 * np.pi / min(bending) if bending else float("inf")


def choose_solver(structural_rate: float, resolved_period: float, coordinates: int,
                  rtol: float = STUDY_RTOL) -> str:
    """``STIFF_AUTO_SOLVER`` when the explicit steps per resolved period,
    ``rate T / EXPLICIT_STABILITY``, cost more than the stiff ones,
    :func:`stiff_cost_per_period`; else ``AUTO_SOLVER``."""
    if not np.isfinite(resolved_period):
        return AUTO_SOLVER
    explicit = structural_rate * resolved_period / EXPLICIT_STABILITY
    return STIFF_AUTO_SOLVER if explicit > stiff_cost_per_period(coordinates, rtol) else AUTO_SOLVER


def stiff_cost_per_period(coordinates: int, rtol: float = STUDY_RTOL) -> float:
    """The stiff solver's work per resolved period, in explicit (Tsit5) steps:
    ``STIFF_STEPS_PER_PERIOD (STUDY_RTOL / rtol)^STEPS_RTOL_EXPONENT`` attempts of
    ``W_STEP_BASE + W_STEP_PER_COORDINATE x coordinates`` each."""
    steps = STIFF_STEPS_PER_PERIOD * (STUDY_RTOL / rtol) ** STEPS_RTOL_EXPONENT
    return steps * (W_STEP_BASE + W_STEP_PER_COORDINATE * coordinates)


def auto_solver(mechanism: Mechanism, rtol: float = STUDY_RTOL) -> str:
    """What ``solver = "auto"`` means for ``mechanism`` solved at ``rtol``."""
    return choose_solver(structural_rate(mechanism), resolved_period(mechanism), mechanism.initial_positions.size,
                         rtol)


__all__ = ["AUTO_SOLVER", "STIFF_AUTO_SOLVER", "auto_solver", "choose_solver",
           "resolve_solver", "resolved_period", "stiff_cost_per_period", "structural_rate"]
