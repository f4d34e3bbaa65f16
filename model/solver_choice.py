"""``solver = "auto"``: pick an integrator per run from a cheap stiffness estimate.

The estimate is the ratio of the output interval (the time scale the user asks to
resolve) to the shortest contact period ``T_c`` (``model.contact_periods``), both known
before any integration. The work-precision study (``docs/integration.md``, issue 7) found:

- in all four benchmark cases (Flores, Flores with 100x Hertz stiffness, seed 000's
  low-speed slider-crank in mostly continuous contact, the two-clearance four-bar; ratios
  0.008-0.08) accuracy, not stability, bounds the step: every stiff solver takes about the
  number of steps Tsit5 takes, each step costs 3-4 Tsit5 steps (one Jacobian of the field
  per step), so at matched error the best explicit solver is 2.6-4.6x faster than the
  best stiff one (the Rosenbrock solvers; 3.5-7.8x than the ESDIRKs); ``auto`` picks Tsit5
  there;
- an explicit step is stable only below ``~3.5 / omega_c = 0.55 T_c`` (Tsit5), so once the
  output interval exceeds a few contact periods (very stiff contact, persistent contact
  whose vibrations the user does not sample) explicit solvers pay for stability with
  steps the output does not need, and the L-stable Rosenbrock solver Rodas5P takes over
  (the best stiff solver at error <= 1e-5 in three of the four cases, the level the
  default rtol 1e-6 reaches; Rodas4 wins at <= 1e-4). No measured case exercises this
  branch: the threshold is a judgement, not a measured crossover.
"""

import numpy as np

from .mechanism import Mechanism
from .timescales import contact_periods

EXPLICIT_CHOICE = "tsit5"
IMPLICIT_CHOICE = "rodas5p"
# Output intervals longer than this many contact periods count as stiff.
STIFF_OUTPUT_PERIODS = 4.0


def stiffness_ratio(mechanism: Mechanism, output_interval: float) -> float:
    """``output_interval / min(contact period)``: 0 for a mechanism without clearance
    joints; large when the contact is much stiffer than what the output resolves."""
    if not mechanism.clearance_joints:
        return 0.0
    periods = np.asarray(contact_periods(mechanism))
    if not np.all(np.isfinite(periods)) or np.any(periods <= 0):
        raise ValueError(f"contact periods must be finite and positive, got {periods}")
    return float(output_interval / periods.min())


def choose_solver(mechanism: Mechanism, output_interval: float) -> str:
    """Name of the solver ``"auto"`` resolves to for ``mechanism`` (concrete values:
    call it outside ``jit``, as ``pipelines.build.solver_settings`` does)."""
    ratio = stiffness_ratio(mechanism, output_interval)
    return IMPLICIT_CHOICE if ratio >= STIFF_OUTPUT_PERIODS else EXPLICIT_CHOICE


__all__ = ["choose_solver", "stiffness_ratio", "STIFF_OUTPUT_PERIODS"]
