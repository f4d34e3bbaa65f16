"""``clearance check CONFIG``: validate a config and print its resolved SI values as JSON.

A mechanism config is validated as is. A pipeline config (one with ``base = ...``) has its base
mechanism validated with the pipeline's ``[simulation]`` merged in, and every parameter it
refers to (entries with a ``path``) is tried with each of its values (``values``, ``range``,
``bounds``, ``initial``); metric names (``metric``) and recorded signals (``data.signals``) must
name outputs the mechanism will produce.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from typing import Any

from model.metrics import BODY_METRICS, JOINT_METRICS  # noqa: F401  (the contract's; re-exported)

from ..config import (
    MechanismConfig,
    load_mechanism,
    load_pipeline_mechanism,
    load_toml,
    si_value_in_base,
)
from ..errors import ConfigError
from ..units import UnitError, quantity_to_si, si_unit

# timeseries.parquet columns of the output contract, per body / clearance joint / driver.
BODY_SIGNALS = ("x", "y", "theta", "vx", "vy", "omega", "ax", "ay", "alpha")
JOINT_SIGNALS = ("ex", "ey", "penetration", "normal_force", "tangential_force", "slip_velocity")
DRIVER_SIGNALS = ("torque",)
VALUE_FIELDS = ("values", "range", "bounds", "initial")
ORDERED_FIELDS = ("range", "bounds")
METRIC_BOUND_FIELDS = ("max", "min")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``check`` needs only the shared ``config`` and ``--set`` arguments."""


def run(args: argparse.Namespace) -> int:
    """Validate ``args.config`` and print its SI values; a bad config raises :class:`ConfigError`."""
    raw = load_toml(args.config)
    if "base" in raw:
        report = check_pipeline(args.config, args.overrides)
    else:
        report = load_mechanism(args.config, args.overrides).si_summary()
    print(json.dumps(report, indent=2))
    return 0


def check_pipeline(path: str, overrides: list[str]) -> dict:
    """Validate a pipeline config and its base; return a report of the resolved SI values."""
    pipeline, mechanism = load_pipeline_mechanism(path, overrides)
    return {
        "config": str(path),
        "base": mechanism.source,
        "mechanism": mechanism.si_summary(),
        "parameters": {
            location: _check_parameter(mechanism, entry, location, str(path))
            for location, entry in _entries_with(pipeline, "path")
        },
        "metrics": {
            location: _check_metric(mechanism, entry, location, str(path))
            for location, entry in _entries_with(pipeline, "metric")
        },
        "signals": _check_signals(mechanism, pipeline, str(path)),
    }


def _entries_with(raw: Mapping[str, Any], key: str, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, dict]]:
    """Array-of-table entries holding ``key``, at any depth, with their dotted location."""
    for name, value in raw.items():
        here = (*prefix, str(name))
        if isinstance(value, dict):
            yield from _entries_with(value, key, here)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    if key in item:
                        yield ".".join((*here, str(index))), item
                    yield from _entries_with(item, key, (*here, str(index)))


def _check_parameter(mechanism: MechanismConfig, entry: dict, location: str, file: str) -> dict:
    """Try each value of one parameter entry in the base; return them in SI."""
    parameter = entry["path"]
    if not isinstance(parameter, str):
        raise ConfigError(file, f"{location}.path", f"expected a dotted path string, got {parameter!r}")
    try:
        current = mechanism.si_value(parameter)
    except ConfigError as error:
        message = f"{parameter!r} is not a parameter of {mechanism.source}: {error.message}"
        raise ConfigError(file, f"{location}.path", message) from None
    report: dict[str, Any] = {"path": parameter, "base_value": current}
    for field in VALUE_FIELDS:
        if field not in entry:
            continue
        raw_values = entry[field] if isinstance(entry[field], list) and field != "initial" else [entry[field]]
        converted = [si_value_in_base(mechanism, parameter, value, file, f"{location}.{field}") for value in raw_values]
        if field in ORDERED_FIELDS:
            _check_interval(converted, file, f"{location}.{field}")
        report[field] = converted if field != "initial" else converted[0]
    return report


def _check_interval(bounds: list[Any], file: str, key: str) -> None:
    """A ``range`` or ``bounds`` must be two numbers, lower first."""
    numeric = all(isinstance(bound, float) for bound in bounds)
    if len(bounds) != 2 or not numeric or not bounds[0] < bounds[1]:
        raise ConfigError(file, key, f"expected [lower, upper] with lower < upper, got {bounds} (SI)")


def _metric_dimensions(mechanism: MechanismConfig) -> dict[str, str]:
    """Every metric a constraint may name (the contract's and the design pipeline's), with
    its dimension."""
    from ..design.performance import DESIGN_BODY_METRICS, DESIGN_JOINT_METRICS

    metrics = {
        f"{joint.name}.{metric}": dimension
        for joint in mechanism.clearance_joints
        for metric, dimension in DESIGN_JOINT_METRICS.items()
    }
    metrics.update(
        {f"{body.name}.{metric}": dimension for body in mechanism.bodies for metric, dimension in DESIGN_BODY_METRICS.items()}
    )
    return metrics


def _check_metric(mechanism: MechanismConfig, entry: dict, location: str, file: str) -> dict:
    """A constraint's metric must exist; its ``max``/``min`` convert with the metric's dimension."""
    metric = entry["metric"]
    dimensions = _metric_dimensions(mechanism)
    if metric not in dimensions:
        raise ConfigError(file, f"{location}.metric", f"unknown metric {metric!r}; metrics: {', '.join(dimensions)}")
    report: dict[str, Any] = {"metric": metric}
    unit = si_unit(dimensions[metric])
    for field in METRIC_BOUND_FIELDS:
        if field in entry:
            try:
                report[f"{field} [{unit}]" if unit else field] = quantity_to_si(entry[field], dimensions[metric])
            except UnitError as error:
                raise ConfigError(file, f"{location}.{field}", str(error)) from None
    return report


def _timeseries_columns(mechanism: MechanismConfig) -> list[str]:
    """The columns of the mechanism's timeseries.parquet."""
    return (
        ["t"]
        + [f"{body.name}.{signal}" for body in mechanism.bodies for signal in BODY_SIGNALS]
        + [f"{joint.name}.{signal}" for joint in mechanism.clearance_joints for signal in JOINT_SIGNALS]
        + [f"{driver.name}.{signal}" for driver in mechanism.drivers for signal in DRIVER_SIGNALS]
    )


def _check_signals(mechanism: MechanismConfig, pipeline: Mapping[str, Any], file: str) -> list[str]:
    """Recorded signals (``data.signals``) must be timeseries columns of the mechanism."""
    data = pipeline.get("data")
    signals = data.get("signals", []) if isinstance(data, dict) else []
    if not isinstance(signals, list):
        raise ConfigError(file, "data.signals", f"expected a list of column names, got {signals!r}")
    columns = _timeseries_columns(mechanism)
    for signal in signals:
        if signal not in columns:
            raise ConfigError(file, "data.signals", f"unknown signal {signal!r}; columns: {', '.join(columns)}")
    return list(signals)
