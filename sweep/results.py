"""The results table of a sweep: one row per parameter point.

Columns: ``point`` (index in the design's order), one column per swept path (SI floats; the
name of the choice for discrete parameters such as ``joints.pin.contact.model``), the
summary metrics, ``status`` (``"ok"`` or why the point failed), ``steps``,
``rejected_steps``, ``group`` / ``solver`` (which compiled group ran it), and with
derivatives ``d(<metric>)/d(<path>)`` per chosen metric and swept continuous path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from model.integrate.trajectory import result_message

from .plan import Group
from .run import NOT_RUN
from .status import OK

# Metrics that exist for every finished run; a NaN or inf in one of them means the run broke.
# (first_impact_time/velocity are NaN by design when a joint never touches.)
ALWAYS_FINITE = ("max_normal_force", "max_penetration", "num_impacts", "contact_fraction", "max_abs_ax", "max_abs_ay")


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


def derivative_columns(metrics: Sequence[str], continuous: Sequence[str]) -> list[str]:
    """``d(<metric>)/d(<path>)`` for every chosen metric and swept continuous path."""
    return [f"d({metric})/d({path})" for metric in metrics for path in continuous]


def results_frame(
    parameters: Mapping[str, Sequence], groups: Sequence[Group], rows: pd.DataFrame, metric_names: Sequence[str],
    derivative_names: Sequence[str] = (),
) -> pd.DataFrame:
    """The results, ordered by point index: ``parameters[path][point]`` are the swept values
    (SI floats or choice names), ``rows`` the stored chunk rows (one per point that ran:
    ``point``, metrics, ``d(...)/d(...)``, ``steps``, ``rejected_steps``, ``result``); refused
    points get their reason, NaN metrics and ``steps = -1``."""
    ran = rows.set_index("point") if len(rows) else None
    records = []
    for group in groups:
        for n, index in enumerate(group.points):
            stored = ran.loc[int(index)] if ran is not None and group.problems[n] is None and int(index) in ran.index else None
            value = (lambda name: float(stored[name]) if stored is not None and name in stored.index else np.nan)
            metrics = {name: value(name) for name in metric_names}
            row = {"point": int(index)}
            row.update({path: values[index] for path, values in parameters.items()})
            row.update(metrics)
            result = int(stored["result"]) if stored is not None else NOT_RUN
            row["status"] = point_status(group.problems[n], result, metrics)
            row["steps"] = int(stored["steps"]) if stored is not None else NOT_RUN
            row["rejected_steps"] = int(stored["rejected_steps"]) if stored is not None else NOT_RUN
            row["group"] = group.index
            row["solver"] = group.settings.solver if group.settings is not None else ""
            row.update({name: value(name) for name in derivative_names})
            records.append(row)
    frame = pd.DataFrame(records).sort_values("point", kind="stable").reset_index(drop=True)
    for path in parameters:
        if all(isinstance(value, float) for value in frame[path]):
            frame[path] = frame[path].astype(np.float64)
        else:
            frame[path] = frame[path].astype(str)
    return frame
