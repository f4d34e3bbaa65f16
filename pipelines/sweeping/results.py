"""``results.parquet`` of a sweep config: the rows of :func:`sweep.results.results_frame`,
labelled with the config's swept paths and the mechanism's summary metrics (those of
``summary.json``, :mod:`model.metrics`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from model.metrics import BODY_METRICS, JOINT_METRICS
from sweep.plan import Group
from sweep.results import derivative_columns, results_frame

from ..config import MechanismConfig
from ..units import si_unit
from .design import SweepDesign


def metric_units(base: MechanismConfig) -> dict[str, str]:
    """Every summary metric of the mechanism, in ``summary_metrics`` order, with its SI unit."""
    if getattr(base, "dimension", 2) == 3:
        return base.metric_units()
    units = {
        f"{joint.name}.{metric}": si_unit(dimension)
        for joint in base.clearance_joints
        for metric, dimension in JOINT_METRICS.items()
    }
    units.update({f"{body.name}.{metric}": si_unit(dimension) for body in base.bodies for metric, dimension in BODY_METRICS.items()})
    return units


def sweep_results(design: SweepDesign, groups: Sequence[Group], rows: pd.DataFrame, metric_names: Sequence[str],
                  continuous: Sequence[str], only: Sequence[int] | None = None) -> pd.DataFrame:
    """The rows of ``results.parquet`` from the stored chunk ``rows`` (see :mod:`sweep.results`);
    ``only``: those of these points alone."""
    points = design.points()
    parameters = {path: [point[k].si for point in points] for k, path in enumerate(design.paths)}
    return results_frame(parameters, groups, rows, metric_names, derivative_columns(design.derivatives, continuous),
                         only=None if only is None else np.asarray(only))
