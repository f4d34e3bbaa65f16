"""``results.parquet``: one row per parameter point (contract: ``shared/CONTRACT.md``).

Columns: ``point`` (index in the design's order), one column per swept path (SI floats; the
name of the choice for discrete parameters such as ``joints.pin.contact.model``), the
summary metrics of ``summary.json``, ``status`` (``"ok"`` or why the point failed),
``steps``, ``rejected_steps``, and ``group`` / ``solver`` (which compiled group ran it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from model.simulate import result_message
from pipelines.commands.check import BODY_METRICS, JOINT_METRICS
from pipelines.config import MechanismConfig
from pipelines.units import si_unit

from .design import SweepDesign
from .plan import Group
from .run import NOT_RUN, GroupOutcome

# Metrics that exist for every finished run; a NaN or inf in one of them means the run broke.
# (first_impact_time/velocity are NaN by design when a joint never touches.)
ALWAYS_FINITE = ("max_normal_force", "max_penetration", "num_impacts", "contact_fraction", "max_abs_ax", "max_abs_ay")
OK = "ok"


def metric_units(base: MechanismConfig) -> dict[str, str]:
    """Every summary metric of the mechanism, in ``summary_metrics`` order, with its SI unit."""
    units = {
        f"{joint.name}.{metric}": si_unit(dimension)
        for joint in base.clearance_joints
        for metric, dimension in JOINT_METRICS.items()
    }
    units.update({f"{body.name}.{metric}": si_unit(dimension) for body in base.bodies for metric, dimension in BODY_METRICS.items()})
    return units


def point_status(problem: str | None, result: int, metrics: dict[str, float]) -> str:
    """``"ok"``, or why the point has no trustworthy metrics."""
    if problem is not None:
        return problem
    if result == NOT_RUN:
        return "not run"
    if result != 0:
        return f"solver failed: {result_message(result)}"
    broken = [name for name, value in metrics.items() if name.rsplit(".", 1)[-1] in ALWAYS_FINITE and not np.isfinite(value)]
    return f"non-finite {', '.join(broken)}" if broken else OK


def results_frame(
    design: SweepDesign, groups: Sequence[Group], outcomes: Sequence[GroupOutcome], metric_names: Sequence[str]
) -> pd.DataFrame:
    """The rows of ``results.parquet``, ordered by point index."""
    points = design.points()
    rows = []
    for group, outcome in zip(groups, outcomes):
        for n, index in enumerate(group.points):
            metrics = {name: float(outcome.metrics[name][n]) if name in outcome.metrics else np.nan for name in metric_names}
            row = {"point": int(index)}
            row.update({path: level.si for path, level in zip(design.paths, points[index])})
            row.update(metrics)
            row["status"] = point_status(group.problems[n], int(outcome.result[n]), metrics)
            row["steps"] = int(outcome.steps[n])
            row["rejected_steps"] = int(outcome.rejected_steps[n])
            row["group"] = group.index
            row["solver"] = group.settings.solver if group.settings is not None else ""
            rows.append(row)
    frame = pd.DataFrame(rows).sort_values("point", kind="stable").reset_index(drop=True)
    for path in design.paths:
        if all(isinstance(value, float) for value in frame[path]):
            frame[path] = frame[path].astype(np.float64)
        else:
            frame[path] = frame[path].astype(str)
    return frame
