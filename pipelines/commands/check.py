"""``clearance check CONFIG``: validate a config and print its resolved SI values as JSON.

A mechanism config is validated as is. A pipeline config (one with ``base = ...``) is
validated by its own pipeline's loader, the code its command runs, stopping short of what
needs a solve or a data file: a sweep (``[sweep]``) by :func:`load_sweep` (and, when a value
is valid only together with other swept values, by planning its points), a calibration
(``[data]`` / ``[[fit]]``) by :func:`check_calibration`, a tolerance design (``[[design]]``) by
:func:`load_design_problem`, a bifurcation study (``[bifurcation]``) by :func:`load_bifurcation`,
a wear study (``[wear]``) by :func:`load_wear_study`. The report lists the base, its values and every parameter,
constraint and recorded signal of the pipeline in SI.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from ..calibration.setup import check_calibration
from ..config import MechanismConfig, load_mechanism, load_pipeline_mechanism, load_toml
from ..design.problem import load_design_problem
from ..errors import ConfigError
from ..sweeping.plan import plan_groups
from ..sweeping.study import load_sweep
from ..units import si_unit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``check`` needs only the shared ``config`` and ``--set`` arguments."""


def run(args: argparse.Namespace) -> int:
    """Validate ``args.config`` and print its SI values; a bad config raises :class:`ConfigError`."""
    raw = load_toml(args.config)
    if "base" in raw:
        report = check_pipeline(args.config, args.overrides, raw)
    else:
        report = load_mechanism(args.config, args.overrides).si_summary()
    print(json.dumps(report, indent=2))
    return 0


def check_pipeline(path: str, overrides: list[str], raw: dict[str, Any]) -> dict:
    """Validate a pipeline config and its base with the pipeline's loader; report its SI values."""
    checks: dict[str, Callable[[str, list[str]], tuple[MechanismConfig, dict, dict, list[str]]]] = {
        "sweep": _check_sweep, "fit": _check_calibration, "data": _check_calibration, "design": _check_design,
        "bifurcation": _check_bifurcation, "wear": _check_wear,
    }
    table = next((name for name in checks if name in raw), None)
    if table is None:
        # The base is still checked, so that its errors name the base file.
        load_pipeline_mechanism(path, overrides)
        raise ConfigError(str(path), "", "a pipeline config (with `base`) needs a [sweep], [[fit]], [[design]], [bifurcation] or "
                                          "[wear] table")
    mechanism, parameters, metrics, signals = checks[table](path, overrides)
    return {
        "config": str(path),
        "base": mechanism.source,
        "mechanism": mechanism.si_summary(),
        "parameters": parameters,
        "metrics": metrics,
        "signals": signals,
    }


def _check_sweep(path: str, overrides: list[str]) -> tuple[MechanismConfig, dict, dict, list[str]]:
    design, base = load_sweep(path, overrides)
    if any(level.refused is not None for parameter in design.parameters for level in parameter.levels):
        plan_groups(design, base)  # raises for a value that no swept combination makes valid
    parameters = {}
    for parameter in design.parameters:
        entry: dict[str, Any] = {"path": parameter.path, "base_value": base.si_value(parameter.path)}
        if parameter.bounds is not None:
            entry["range"] = list(parameter.bounds)
        if parameter.levels:
            entry["values"] = [level.si for level in parameter.levels]
        parameters[parameter.key] = entry
    return base, parameters, {}, []


def _check_calibration(path: str, overrides: list[str]) -> tuple[MechanismConfig, dict, dict, list[str]]:
    checked = check_calibration(path, overrides)
    base = checked.base
    parameters = {}
    for index, parameter in enumerate(checked.parameters):
        entry: dict[str, Any] = {"path": parameter.path, "initial": parameter.initial, "scale": parameter.scale}
        if parameter.path not in checked.offset_paths:
            entry["base_value"] = base.si_value(parameter.path)
        if parameter.bounded:
            entry["bounds"] = [parameter.lower, parameter.upper]
        parameters[f"fit.{index}"] = entry
    signals = list(dict.fromkeys(signal for record in checked.table.records for signal in record.signals))
    return base, parameters, {}, signals


def _check_design(path: str, overrides: list[str]) -> tuple[MechanismConfig, dict, dict, list[str]]:
    problem = load_design_problem(path, overrides)
    base = problem.config
    parameters = {}
    for index, variable in enumerate(problem.design):
        parameters[f"design.{index}"] = {"path": variable.path, "base_value": base.si_value(variable.path),
                                         "range": [variable.lower, variable.upper], "initial": variable.initial}
    for index, uncertain in enumerate(problem.uncertain):
        parameters[f"uncertain.{index}"] = {"path": uncertain.path, "base_value": base.si_value(uncertain.path),
                                            "range": [uncertain.lower, uncertain.upper]}
    metrics = {}
    for index, constraint in enumerate(problem.constraints):
        unit = si_unit(constraint.dimension)
        metrics[f"constraints.{index}"] = {"metric": constraint.metric,
                                           f"{constraint.bound} [{unit}]" if unit else constraint.bound: constraint.limit}
    return base, parameters, metrics, []


def _check_bifurcation(path: str, overrides: list[str]) -> tuple[MechanismConfig, dict, dict, list[str]]:
    from ..bifurcation.study import load_bifurcation

    study = load_bifurcation(path, overrides)
    parameter = {"path": study.table.parameter, "base_value": study.base.si_value(study.table.parameter),
                 "values": study.values.tolist()}
    return study.base, {"bifurcation.parameter": parameter}, {}, []


def _check_wear(path: str, overrides: list[str]) -> tuple[MechanismConfig, dict, dict, list[str]]:
    from ..wear.study import load_wear_study

    study = load_wear_study(path, overrides)
    return study.config, {"wear.joint": {"name": study.joint_name, "cycle_period": study.period}}, {}, []
