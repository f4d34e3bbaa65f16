"""The results table of a sweep: one row per parameter point.

Columns: ``point`` (index in the design's order), one column per swept path (SI floats,
integer settings included; the name of the choice for discrete parameters such as
``joints.pin.contact.model``), the
summary metrics, ``status`` (``"ok"`` or why the point failed: refused, given up after
its workers kept dying, solver failure, non-finite metrics), ``steps``,
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

FAILURE = "failure"  # stored column: why a point was given up (:mod:`sweep.faults`)

# Metrics that exist for every finished run; a NaN or inf in one of them means the run broke.
# (first_impact_time/velocity are NaN by design when a joint never touches.)
ALWAYS_FINITE = ("max_normal_force", "max_penetration", "num_impacts", "contact_fraction", "max_abs_ax", "max_abs_ay")


def point_status(problem: str | None, result: int, metrics: dict[str, float], failure: str | None = None) -> str:
    """``"ok"``, or why the point has no trustworthy metrics: refused before it ran
    (``problem``), given up after its workers kept dying (``failure``), not run, failed in
    the solver, or non-finite peak metrics."""
    if problem is not None:
        return problem
    if failure is not None:
        return failure
    if result == NOT_RUN:
        return "not run"
    if result != 0:
        return f"solver failed: {result_message(result)}"
    broken = [name for name, value in metrics.items() if name.rsplit(".", 1)[-1] in ALWAYS_FINITE and not np.isfinite(value)]
    return f"non-finite {', '.join(broken)}" if broken else OK


def parameter_column(values: Sequence) -> np.ndarray:
    """A swept path's column: SI floats when every value is a number (an integer setting
    such as ``simulation.max_steps`` too, as its group's ``choices`` hold it), booleans when
    every value is one, and otherwise the choices' names as strings."""
    if all(isinstance(value, bool | np.bool_) for value in values) and len(values):
        return np.asarray(values, dtype=bool)
    if all(isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool | np.bool_)
           for value in values):
        return np.asarray(values, dtype=np.float64)
    return np.asarray(values, dtype=str)


def derivative_columns(metrics: Sequence[str], continuous: Sequence[str]) -> list[str]:
    """``d(<metric>)/d(<path>)`` for every chosen metric and swept continuous path."""
    return [f"d({metric})/d({path})" for metric in metrics for path in continuous]


def results_frame(
    parameters: Mapping[str, Sequence], groups: Sequence[Group], rows: pd.DataFrame, metric_names: Sequence[str],
    derivative_names: Sequence[str] = (), only: np.ndarray | None = None,
) -> pd.DataFrame:
    """The results, ordered by point index: ``parameters[path][point]`` are the swept values
    (SI floats or choice names), ``rows`` the stored chunk rows (one per point that ran:
    ``point``, metrics, ``d(...)/d(...)``, ``steps``, ``rejected_steps``, ``result``, and
    ``failure`` for a point given up); refused points get their reason, NaN metrics and
    ``steps = -1``. Built column by column: a row is never a Python object. ``only``: the
    rows of those points alone (the part of a finished chunk, :class:`sweep.store.PartialResults`),
    the same as those rows of the whole table."""
    points = np.concatenate([np.asarray(group.points, dtype=np.int64) for group in groups] or [np.zeros(0, np.int64)])
    problems = [problem for group in groups for problem in group.problems]
    group_of_point = np.concatenate([np.full(len(group.points), group.index, np.int64) for group in groups]
                                    or [np.zeros(0, np.int64)])
    solver_of_point = np.asarray([group.settings.solver if group.settings is not None else ""
                                  for group in groups for _ in group.points], dtype=str)
    if only is not None:
        kept = np.isin(points, np.asarray(only, dtype=np.int64))
        points, group_of_point, solver_of_point = points[kept], group_of_point[kept], solver_of_point[kept]
        problems = [problem for problem, keep in zip(problems, kept) if keep]
    refused = np.array([problem is not None for problem in problems], dtype=bool)
    stored = (rows.drop_duplicates("point", keep="last").set_index("point") if len(rows)
              else pd.DataFrame(index=pd.Index([], name="point")))
    stored = stored.reindex(points)
    ran = stored.index.isin(rows["point"]) if len(rows) else np.zeros(len(points), bool)
    ran &= ~refused

    def floats(name: str) -> np.ndarray:
        values = stored[name].to_numpy(np.float64, na_value=np.nan) if name in stored.columns else np.full(len(points), np.nan)
        return np.where(ran, values, np.nan)

    def counts(name: str) -> np.ndarray:
        values = stored[name].to_numpy(np.float64, na_value=NOT_RUN) if name in stored.columns else np.full(len(points), NOT_RUN)
        return np.where(ran, values, NOT_RUN).astype(np.int64)

    metrics = {name: floats(name) for name in metric_names}
    result = counts("result")
    failures = stored[FAILURE].to_numpy(object) if FAILURE in stored.columns else np.full(len(points), None, object)
    status = np.full(len(points), OK, dtype=object)
    finite_checked = [name for name in metric_names if name.rsplit(".", 1)[-1] in ALWAYS_FINITE]
    broken = np.zeros(len(points), bool)
    for name in finite_checked:
        broken |= ~np.isfinite(metrics[name])
    for n in np.flatnonzero(refused | ~ran | (result != 0) | broken | pd.notna(failures)):
        failure = failures[n] if ran[n] and isinstance(failures[n], str) else None
        status[n] = point_status(problems[n], int(result[n]), {name: metrics[name][n] for name in finite_checked},
                                 failure)
    columns: dict[str, object] = {"point": points}
    for path, values in parameters.items():
        columns[path] = parameter_column([values[index] for index in points])
    columns.update(metrics)
    columns["status"] = status.astype(str)
    columns["steps"] = counts("steps")
    columns["rejected_steps"] = counts("rejected_steps")
    columns["group"] = group_of_point
    columns["solver"] = solver_of_point
    columns.update({name: floats(name) for name in derivative_names})
    frame = pd.DataFrame(columns)
    return frame.sort_values("point", kind="stable").reset_index(drop=True)
