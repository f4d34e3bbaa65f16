"""``results.parquet`` of a sweep config: the rows of :func:`sweep.results.results_frame`,
labelled with the config's swept paths and the mechanism's summary metrics (those of
``summary.json``, :mod:`model.metrics`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from model.metrics import BODY_METRICS, JOINT_METRICS
from model.metrics import SPATIAL_BODY_METRICS
from sweep.plan import Group
from sweep.results import derivative_columns, results_frame

from ..config import MechanismBase
from ..units import si_unit
from .design import SweepDesign


def metric_units(base: MechanismBase) -> dict[str, str]:
    """Every summary metric of the mechanism, in ``summary_metrics`` order, with its SI unit."""
    body_metrics = SPATIAL_BODY_METRICS if base.dimension == 3 else BODY_METRICS
    units = {
        f"{joint.name}.{metric}": si_unit(dimension)
        for joint in base.clearance_joints
        for metric, dimension in JOINT_METRICS.items()
    }
    units.update({f"{body.name}.{metric}": si_unit(dimension) for body in base.bodies
                  for metric, dimension in body_metrics.items()})
    return units


def swept_values(design: SweepDesign) -> dict[str, list]:
    """Every point's value of every swept path (SI, or the choice's name), by path."""
    points = design.points()
    return {path: [point[k].si for point in points] for k, path in enumerate(design.paths)}


def sweep_results(design: SweepDesign, groups: Sequence[Group], rows: pd.DataFrame, metric_names: Sequence[str],
                  continuous: Sequence[str]) -> pd.DataFrame:
    """The rows of ``results.parquet`` from the stored chunk ``rows`` (see :mod:`sweep.results`)."""
    return results_frame(swept_values(design), groups, rows, metric_names,
                         derivative_columns(design.derivatives, continuous))


def chunk_labels(design: SweepDesign, groups: Sequence[Group], metric_names: Sequence[str],
                 continuous: Sequence[str]) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """``rows -> `` the rows of ``results.parquet`` of the points of a chunk's stored
    ``rows`` (:class:`sweep.store.PartialResults`), the swept values listed once."""
    parameters = swept_values(design)
    derivatives = derivative_columns(design.derivatives, continuous)
    return lambda rows: results_frame(parameters, groups, rows, metric_names, derivatives,
                                      only=rows["point"].to_numpy())
