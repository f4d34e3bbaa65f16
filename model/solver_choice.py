"""``solver = "auto"``: pick an integrator per run from a cheap stiffness estimate."""

from .mechanism import Mechanism
from .timescales import contact_periods


def choose_solver(mechanism: Mechanism, output_interval: float) -> str:
    """Name of the solver ``"auto"`` resolves to for ``mechanism``.

    Placeholder rule until the work-precision study (docs/BENCHMARKS.md) refines it:
    explicit Tsit5 everywhere.
    """
    del output_interval
    if mechanism.clearance_joints:
        contact_periods(mechanism)  # evaluated so that a bad stiffness fails here
    return "tsit5"
