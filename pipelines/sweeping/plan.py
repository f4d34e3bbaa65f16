"""Split a sweep's points into compiled groups (:class:`sweep.plan.Group`), and check each
point before it runs.

A *continuous* parameter is an array leaf of the :class:`~model.mechanics.mechanism.Mechanism`
(:func:`pipelines.build.parameter_leaf`): its values are written into one compiled mechanism
by :class:`~pipelines.build.ParameterMap`, the one representation of a swept parameter, so
they batch under ``jax.vmap``. Every other parameter (a contact or friction law, a solver, a
tolerance, ``t_end``) changes the static structure or the solver settings; each combination
of their values is a group with its own mechanism, settings and compilation, built once from
the config with the group's choices and a valid point's values, all in SI
(:meth:`~pipelines.config.MechanismConfig.with_si_values`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np

from model.mechanics.mechanism import Mechanism
from sweep.plan import Group

from ..build import ParameterMap, build_mechanism, parameter_leaf, solver_settings
from ..config import MechanismConfig
from ..errors import ClearanceError, ConfigError
from .design import Level, Parameter, SweepDesign

# Above this many corners the box shortcut of `_point_problems` costs more than it saves.
MAX_CORNERS = 1024


def is_continuous(parameter: Parameter, mechanism: Mechanism) -> bool:
    """True when ``parameter`` is an array leaf of ``mechanism`` and all its values are numbers."""
    try:
        parameter_leaf(mechanism, parameter.path)
    except ConfigError:
        return False
    return parameter.sampled or all(isinstance(level.si, float) for level in parameter.levels)


def plan_groups(design: SweepDesign, base: MechanismConfig) -> list[Group]:
    """Group ``design.points()`` by their discrete values, and validate and build each group."""
    base_mechanism = build_mechanism(base)
    continuous = [is_continuous(p, base_mechanism) for p in design.parameters]
    for parameter, is_leaf in zip(design.parameters, continuous):
        if parameter.sampled and not is_leaf:
            raise ConfigError(
                design.source, f"{parameter.key}.range",
                f"{parameter.path} is not a continuous parameter of the mechanism, so it cannot be sampled; "
                "give its `values` instead",
            )
    paths = tuple(p.path for p, is_leaf in zip(design.parameters, continuous) if is_leaf)
    discrete = [p for p, is_leaf in zip(design.parameters, continuous) if not is_leaf]
    members: dict[tuple[int, ...], list[int]] = {}
    points = design.points()
    for index, point in enumerate(points):
        key = tuple(p.levels.index(level) for p, level, is_leaf in zip(design.parameters, point, continuous) if not is_leaf)
        members.setdefault(key, []).append(index)
    groups = []
    for number, (key, indices) in enumerate(members.items()):
        choices = {p.path: p.levels[i].si for p, i in zip(discrete, key)}
        values = np.array([[level.si for level, is_leaf in zip(points[i], continuous) if is_leaf] for i in indices],
                          dtype=np.float64).reshape(len(indices), len(paths))
        groups.append(_build_group(number, base, design.source, choices, paths, indices, values))
    _refuse_levels_without_valid_points(design, points, groups)
    return groups


def _refuse_levels_without_valid_points(design: SweepDesign, points: Sequence[tuple[Level, ...]], groups: Sequence[Group]) -> None:
    """A value the base refused on its own stays only if some point that uses it is valid."""
    valid = [points[group.points[n]] for group in groups for n in group.runnable]
    for position, parameter in enumerate(design.parameters):
        for level in parameter.levels:
            if level.refused is not None and not any(point[position] is level for point in valid):
                raise level.refused


def _build_group(number: int, base: MechanismConfig, source: str, choices: dict[str, Any], paths: tuple[str, ...],
                 indices: list[int], values: np.ndarray) -> Group:
    problems = _point_problems(base, choices, paths, values)
    group = Group(index=number, choices=choices, paths=paths, points=np.asarray(indices, dtype=int), values=values,
                  problems=problems, resolver=ParameterMap)
    runnable = group.runnable
    if runnable.size:
        template = _validated(base, choices, paths, values[runnable[0]])
        group.mechanism = build_mechanism(template)
        group.settings = solver_settings(template)
        _check_setters_reproduce_the_build(group, base, choices)
    return group


def _check_setters_reproduce_the_build(group: Group, base: MechanismConfig, choices: Mapping[str, Any]) -> None:
    """Writing the group's last valid point through the setters must give the mechanism the
    config builds with that point: a path whose value the build also uses elsewhere (a
    friction coefficient standing in for an unset static coefficient) is refused here
    instead of giving silently wrong results."""
    if not group.paths:
        return
    last = group.values[group.runnable[-1]]
    built = build_mechanism(_validated(base, choices, group.paths, last))
    written = group.resolver(group.mechanism, group.paths).apply(group.mechanism, last)
    same = jax.tree_util.tree_structure(built) == jax.tree_util.tree_structure(written) and all(
        np.allclose(a, b, rtol=1e-12, atol=0.0)
        for a, b in zip(jax.tree_util.tree_leaves(built), jax.tree_util.tree_leaves(written))
    )
    if not same:
        raise ClearanceError(
            f"writing {', '.join(group.paths)} into the compiled mechanism does not reproduce the mechanism built "
            "from the config (a swept value that the build also uses elsewhere); give the dependent values "
            "explicitly in the base mechanism, or sweep the path with `values` of a discrete choice"
        )


def _validated(base: MechanismConfig, choices: Mapping[str, Any], paths: Sequence[str], values: np.ndarray) -> MechanismConfig:
    """``base`` with the group's choices and one point's values (SI) set, checked by the schema."""
    return base.with_si_values({**choices, **{path: float(value) for path, value in zip(paths, values)}})


def _problem(base: MechanismConfig, choices: Mapping[str, Any], paths: Sequence[str], values: np.ndarray) -> str | None:
    try:
        _validated(base, choices, paths, values)
    except ConfigError as error:
        return f"invalid: {error.key}: {error.message}" if error.key else f"invalid: {error.message}"
    return None


def _point_problems(base: MechanismConfig, choices: Mapping[str, Any], paths: Sequence[str],
                    values: np.ndarray) -> list[str | None]:
    """Why each point would be refused by the mechanism's schema (``None``: it is valid).

    A box of points is first tried at its corners: every check of the schema on a continuous
    parameter is a bound or an order between two values (clearance < bearing radius,
    stiction < dynamic velocity), so the valid set is convex and valid corners make every
    point inside valid.
    """
    count = len(values)
    if paths:
        corners = list(itertools.product(*zip(values.min(axis=0), values.max(axis=0))))
        if len(corners) < min(count, MAX_CORNERS) and all(
            _problem(base, choices, paths, np.asarray(corner)) is None for corner in corners
        ):
            return [None] * count
        return [_problem(base, choices, paths, row) for row in values]
    return [_problem(base, choices, paths, np.zeros(0))] * count
