"""Split a sweep's points into compiled groups, and check each point before it runs.

A *continuous* parameter is an array leaf of the :class:`~model.mechanics.mechanism.Mechanism`
(:func:`pipelines.build.parameter_leaf`): its values are written into one compiled mechanism
with :class:`~pipelines.build.ParameterMap`, so they batch under ``jax.vmap``. Every other
parameter (a contact or friction law, a solver, a tolerance, ``t_end``) changes the static
structure or the solver settings; each combination of their values is a *group* with its own
mechanism, settings and compilation.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from model.mechanics.mechanism import Mechanism
from model.integrate.settings import SolverSettings
from pipelines.build import ParameterMap, build_mechanism, parameter_leaf, solver_settings
from pipelines.config import MechanismConfig, mechanism_from_dict, set_by_path
from pipelines.errors import ClearanceError, ConfigError

from .design import Level, Parameter, SweepDesign, raw_quantity

# Above this many corners the box shortcut of `_point_problems` costs more than it saves.
MAX_CORNERS = 1024


@dataclasses.dataclass
class Group:
    """Points of a sweep that share one compiled simulation.

    ``values[n]`` holds the SI values of ``paths`` (the continuous parameters) at global point
    ``points[n]``; ``problems[n]`` is why that point cannot run (``None`` when it can).
    ``mechanism`` and ``settings`` are ``None`` when no point of the group is valid.
    """

    index: int
    choices: dict[str, Any]  # discrete path -> SI value shared by the group
    paths: tuple[str, ...]
    points: np.ndarray  # int, global point indices
    values: np.ndarray  # float64 [points, paths]
    problems: list[str | None]
    mechanism: Mechanism | None = None
    settings: SolverSettings | None = None

    @property
    def runnable(self) -> np.ndarray:
        """Positions (within the group) of the points that can run."""
        return np.array([n for n, problem in enumerate(self.problems) if problem is None], dtype=int)

    def label(self) -> str:
        """``"contact.model=flores"``-style name of the group (``"all"`` without choices)."""
        return ", ".join(f"{path.split('.', 2)[-1]}={value}" for path, value in self.choices.items()) or "all"


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
    members: dict[tuple[int, ...], list[int]] = {}
    points = design.points()
    for index, point in enumerate(points):
        key = tuple(p.levels.index(level) for p, level, is_leaf in zip(design.parameters, point, continuous) if not is_leaf)
        members.setdefault(key, []).append(index)
    groups = []
    for number, (key, indices) in enumerate(members.items()):
        discrete = [p for p, is_leaf in zip(design.parameters, continuous) if not is_leaf]
        choices = {p.path: p.levels[i] for p, i in zip(discrete, key)}
        group_points = [[level for level, is_leaf in zip(points[i], continuous) if is_leaf] for i in indices]
        groups.append(_build_group(base, design, choices, paths, indices, group_points))
    for number, group in enumerate(groups):
        group.index = number
    _refuse_levels_without_valid_points(design, points, groups)
    return groups


def _refuse_levels_without_valid_points(design: SweepDesign, points: Sequence[tuple[Level, ...]], groups: Sequence[Group]) -> None:
    """A value the base refused on its own stays only if some point that uses it is valid."""
    valid = [points[group.points[n]] for group in groups for n in group.runnable]
    for position, parameter in enumerate(design.parameters):
        for level in parameter.levels:
            if level.refused is not None and not any(point[position] is level for point in valid):
                raise level.refused


def _build_group(
    base: MechanismConfig,
    design: SweepDesign,
    choices: dict[str, Level],
    paths: tuple[str, ...],
    indices: list[int],
    points: list[list[Level]],
) -> Group:
    raw = base.raw
    for path, level in choices.items():
        raw = set_by_path(raw, path, level.raw, design.source)
    units = {p.path: p.unit for p in design.parameters}
    values = np.array([[level.si for level in point] for point in points], dtype=np.float64).reshape(len(points), len(paths))
    problems = _point_problems(raw, base.source, paths, [units[path] for path in paths], values)
    group = Group(
        index=0,
        choices={path: level.si for path, level in choices.items()},
        paths=paths,
        points=np.asarray(indices, dtype=int),
        values=values,
        problems=problems,
    )
    runnable = group.runnable
    if runnable.size:
        template = _validated(raw, base.source, paths, [units[path] for path in paths], values[runnable[0]])
        group.mechanism = build_mechanism(template)
        group.settings = solver_settings(template)
        _check_leaves_carry_the_parameters(group, raw, base.source, [units[path] for path in paths])
    return group


def _validated(raw: dict, source: str, paths: Sequence[str], units: Sequence[str], values: np.ndarray) -> MechanismConfig:
    for path, unit, value in zip(paths, units, values):
        raw = set_by_path(raw, path, raw_quantity(float(value), unit), source)
    return mechanism_from_dict(raw, source)


def _problem(raw: dict, source: str, paths: Sequence[str], units: Sequence[str], values: np.ndarray) -> str | None:
    try:
        _validated(raw, source, paths, units, values)
    except ConfigError as error:
        return f"invalid: {error.key}: {error.message}" if error.key else f"invalid: {error.message}"
    return None


def _point_problems(raw: dict, source: str, paths: Sequence[str], units: Sequence[str], values: np.ndarray) -> list[str | None]:
    """Why each point would be refused by the mechanism's validation (``None``: it is valid).

    Validation costs ~20 ms a point (unit parsing), so a box of points is first tried at its
    corners: every check of the config on a continuous parameter is a bound or an order
    between two values (clearance < bearing radius, stiction < dynamic velocity), so the
    valid set is convex and valid corners make every point inside valid.
    """
    count = len(values)
    if paths:
        corners = list(itertools.product(*zip(values.min(axis=0), values.max(axis=0))))
        if len(corners) < min(count, MAX_CORNERS) and all(
            _problem(raw, source, paths, units, np.asarray(corner)) is None for corner in corners
        ):
            return [None] * count
        return [_problem(raw, source, paths, units, row) for row in values]
    return [_problem(raw, source, paths, units, np.zeros(0))] * count


def _check_leaves_carry_the_parameters(group: Group, raw: dict, source: str, units: Sequence[str]) -> None:
    """The batched path (one mechanism, leaves replaced) must equal building each point afresh.

    Checked on the group's last valid point; a parameter whose config value feeds anything
    but its own leaf would fail here instead of giving silently wrong results.
    """
    if not group.paths:
        return
    last = group.values[group.runnable[-1]]
    built = build_mechanism(_validated(raw, source, group.paths, units, last))
    batched = ParameterMap(group.mechanism, group.paths).apply(group.mechanism, last)
    same_structure = jax.tree_util.tree_structure(built) == jax.tree_util.tree_structure(batched)
    if not same_structure or not all(
        np.allclose(a, b, rtol=1e-12, atol=0.0)
        for a, b in zip(jax.tree_util.tree_leaves(built), jax.tree_util.tree_leaves(batched))
    ):
        raise ClearanceError(
            f"internal error: writing {', '.join(group.paths)} into the compiled mechanism does not reproduce "
            "the mechanism built from the config; this parameter cannot be swept in a batch (please report)"
        )
