"""The life of a ``clearance wear`` run at a limit (``--life METRIC=LIMIT``): the operating
cycles at which a metric of ``life.parquet`` first exceeds the limit, interpolated linearly
between the two passes that bracket the crossing (:func:`model.service_life`, the rule of
the tolerance design's ``[life]``). The run's metrics are those of ``life.parquet``: its peak
force and accelerations come from the output samples, where ``model.simulate_life`` takes
the exact peaks over the accepted steps."""

from __future__ import annotations

import numpy as np
import pandas as pd

import model

from ..errors import ConfigError
from ..units import UnitError, quantity_to_si

# the dimension of each life metric's limit (pipelines.units names), as model.LIFE_METRICS
LIMIT_DIMENSIONS = {"max_depth": "length", "equivalent_clearance": "length", "peak_force": "force",
                    "peak_acceleration": "acceleration"}


def parse_life_limit(text: str) -> tuple[str, float]:
    """``(metric, limit in SI)`` of ``"METRIC=LIMIT"`` (e.g. ``equivalent_clearance=0.6 mm``)."""
    metric, _, limit = text.partition("=")
    metric = metric.strip()
    if metric not in LIMIT_DIMENSIONS:
        raise ConfigError("--life", "", f"expected METRIC=LIMIT with METRIC one of {list(LIMIT_DIMENSIONS)}, "
                                        f"got {text!r}")
    try:
        return metric, quantity_to_si(limit.strip(), LIMIT_DIMENSIONS[metric])
    except UnitError as error:
        raise ConfigError("--life", metric, str(error)) from None


def metric_series(life: pd.DataFrame, metric: str, joint: str, body: str) -> np.ndarray:
    """The per-pass series of ``metric`` in a ``life.parquet`` table: the worn ``joint``'s
    peak force, the bearing ``body``'s larger peak absolute acceleration of its two axes."""
    if metric == "peak_force":
        return life[f"{joint}.max_normal_force"].to_numpy()
    if metric == "peak_acceleration":
        return np.maximum(life[f"{body}.max_abs_ax"].to_numpy(), life[f"{body}.max_abs_ay"].to_numpy())
    return life[metric].to_numpy()


def life_at_limit(life: pd.DataFrame, metric: str, limit: float, joint: str, body: str) -> dict:
    """``{"metric", "limit" (SI), "life" (cycles), "crossed"}`` of a ``life.parquet`` table;
    ``life`` is the last pass's cycles and ``crossed`` false when the limit is never exceeded."""
    values = metric_series(life, metric, joint, body)
    cycles, crossed = model.service_life(np.asarray(life["cycles"].to_numpy(), float), np.asarray(values, float), limit)
    return {"metric": metric, "limit": limit, "life": float(cycles), "crossed": bool(crossed)}
