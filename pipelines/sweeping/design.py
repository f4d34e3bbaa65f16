"""The ``[sweep]`` table of a pipeline config, and the parameter points it describes.

Format (``configs/sweep_example.toml``)::

    [sweep]
    design = "grid"            # grid | lhs | sobol
    samples = 256              # lhs and sobol: number of sampled points
    seed = 0                   # lhs and sobol: generator seed
    sensitivity = false        # extension, sobol only: SALib Saltelli samples, samples * (D + 2) points, Sobol' indices
    derivatives = []           # extension: metrics to differentiate w.r.t. the continuous paths (forward mode)

    [[sweep.parameters]]
    path = "joints.pin.clearance"
    values = ["0.1 mm", "0.25 mm"]   # explicit levels, or ...
    range = ["0.1 mm", "0.5 mm"]     # ... an interval: `num` points (grid) or sampled bounds (lhs, sobol)
    num = 4                          # grid only (ignored by lhs and sobol)
    scale = "linear"                 # extension: "log" spaces/samples the range logarithmically

Design rules: ``grid`` is the full product of every parameter's levels (the last parameter
varies fastest). ``lhs`` (Latin hypercube) and ``sobol`` (scrambled Sobol' sequence) sample
the ``range`` parameters jointly with ``samples`` points in their box (:mod:`sweep.design`);
parameters given by ``values`` are crossed in full with those samples, so every level sees
the same sampled points.

Every written value is converted to SI once, here, through the base mechanism's own
validation, so a value the mechanism would refuse (restitution 1.5, a clearance in kg) is a
:class:`ConfigError` naming the pipeline file and the ``sweep.parameters.N.*`` key. From then
on a level is its SI value only.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sweep.design import grid_values, saltelli_unit_samples, scale_unit_samples, unit_samples

from ..config import MechanismConfig, si_value_in_base
from ..errors import ConfigError
from ..units import UnitError, quantity_to_si
from .section import SectionSpec
from .table import ParameterTable, parse_sweep_table


class Level(NamedTuple):
    """One value of a parameter, ``si`` as the model sees it (a float, or the choice's name).

    ``refused`` holds the error of a value the base mechanism refuses on its own but that
    another swept value may make valid (a bearing radius below the base's clearance); the
    sweep refuses it only if no point that uses it is valid (:mod:`pipelines.sweeping.plan`).
    """

    si: Any
    refused: ConfigError | None = None


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One swept path with its levels (``values``, or ``range`` + ``num`` on a grid) or, for
    a sampled ``range``, its SI ``bounds``."""

    path: str
    key: str  # where it is in the pipeline file: "sweep.parameters.N"
    unit: str  # SI unit of the path's values ("" when dimensionless or not a quantity)
    levels: tuple[Level, ...] = ()
    bounds: tuple[float, float] | None = None
    scale: str = "linear"

    @property
    def sampled(self) -> bool:
        return self.bounds is not None


@dataclasses.dataclass(frozen=True)
class SweepDesign:
    """A validated ``[sweep]`` table: design kind, sampling settings and the parameters."""

    kind: str
    parameters: tuple[Parameter, ...]
    samples: int | None = None
    seed: int = 0
    source: str = ""
    sensitivity: bool = False  # sobol only: Saltelli samples (SALib) and Sobol' indices
    derivatives: tuple[str, ...] = ()  # metrics whose derivatives w.r.t. the continuous paths are wanted
    section: SectionSpec | None = None  # the section metrics ([sweep.section])

    @property
    def sampled_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.sampled)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(parameter.path for parameter in self.parameters)

    def points(self) -> list[tuple[Level, ...]]:
        """Every parameter point, one :class:`Level` per parameter, in a fixed order."""
        crossed = [p for p in self.parameters if not p.sampled]
        sampled = [p for p in self.parameters if p.sampled]
        sampled_rows = self._sampled_rows(sampled)
        points = []
        for combination in itertools.product(*(p.levels for p in crossed)):
            chosen = dict(zip((p.path for p in crossed), combination))
            for row in sampled_rows:
                chosen.update(zip((p.path for p in sampled), row))
                points.append(tuple(chosen[p.path] for p in self.parameters))
        return points

    def _sampled_rows(self, sampled: Sequence[Parameter]) -> list[tuple[Level, ...]]:
        """``samples`` rows of the sampled parameters (one empty row when there are none)."""
        if not sampled:
            return [()]
        if self.sensitivity:
            unit_points = saltelli_unit_samples(len(sampled), self.samples, self.seed)
        else:
            unit_points = unit_samples(self.kind, len(sampled), self.samples, self.seed)
        columns = [scale_unit_samples(unit_points[:, i], p.bounds, p.scale) for i, p in enumerate(sampled)]
        return [tuple(Level(float(column[n])) for column in columns) for n in range(len(unit_points))]


def parse_design(pipeline: Mapping[str, Any], base: MechanismConfig, source: str) -> SweepDesign:
    """Validate a sweep pipeline's ``[sweep]`` table against its base mechanism."""
    table = parse_sweep_table(dict(pipeline), source)
    paths = [entry.path for entry in table.parameters]
    parameters = tuple(
        _parameter(entry, f"sweep.parameters.{index}", table.design, base, source, len(paths) > 1)
        for index, entry in enumerate(table.parameters)
    )
    samples = table.samples if table.design != "grid" else None
    section = None
    if table.section is not None:
        if not any(driver.type == "constant_speed" for driver in getattr(base, "drivers", ())):
            raise ConfigError(source, "sweep.section", "the section needs a constant-speed driver (its period); "
                                                       f"{base.source} has none")
        from model.integrate.settings import EXPLICIT_SOLVERS

        from ..build import solver_settings

        if table.section.lyapunov and solver_settings(base).solver not in EXPLICIT_SOLVERS:
            raise ConfigError(source, "sweep.section.lyapunov", "lyapunov_max integrates the tangents with an "
                                                                f"explicit solver ({', '.join(sorted(EXPLICIT_SOLVERS))}); "
                                                                "set simulation.solver")
        from .section import HyperplaneSpec

        hyperplane = HyperplaneSpec.of(table.section.hyperplane)
        if hyperplane is not None:
            from ..build import build_mechanism

            try:
                hyperplane.hyperplane(build_mechanism(base))
            except ValueError as error:
                raise ConfigError(source, "sweep.section.hyperplane.quantity", str(error)) from None
        section = SectionSpec(table.section.transient_periods, table.section.periods, table.section.max_period,
                              table.section.lyapunov, hyperplane)
    return SweepDesign(table.design, parameters, samples, table.seed, source, table.sensitivity,
                       tuple(dict.fromkeys(table.derivatives)), section)


def _parameter(entry: ParameterTable, key: str, kind: str, base: MechanismConfig, source: str, defer: bool) -> Parameter:
    """One ``[[sweep.parameters]]`` entry in SI; with ``defer`` (other paths are swept too) a
    value the base refuses on its own is kept with its error."""
    path = entry.path
    try:
        base.si_value(path)
    except ConfigError as error:
        raise ConfigError(source, f"{key}.path", f"{path!r} is not a parameter of {base.source}: {error.message}") from None
    if entry.values is not None:
        unit = _unit(base, path, entry.values[0])
        levels = tuple(_level(base, path, value, unit, source, f"{key}.values", defer) for value in entry.values)
        return Parameter(path, key, unit, levels=levels, scale=entry.scale)
    bounds = _parse_range(entry.range, base, path, entry.scale, source, f"{key}.range")
    unit = _unit(base, path, entry.range[0])
    if kind != "grid":
        return Parameter(path, key, unit, bounds=bounds, scale=entry.scale)
    levels = tuple(Level(float(value)) for value in grid_values(bounds, entry.num, entry.scale))
    return Parameter(path, key, unit, levels=levels, scale=entry.scale)


def _unit(base: MechanismConfig, path: str, written: Any) -> str:
    """The SI unit ``path`` is stored in with the ``written`` value set (a numeric stiffness
    has a unit, ``"hertz"`` none), from the schema's field."""
    try:
        return base.with_values({path: written}).unit_of_path(path)
    except ConfigError:
        return base.unit_of_path(path)


def _parse_range(bounds: list, base: MechanismConfig, path: str, scale: str, source: str, key: str) -> tuple[float, float]:
    low, high = (si_value_in_base(base, path, bound, source, key) for bound in bounds)
    if not all(isinstance(v, float) for v in (low, high)) or not low < high:
        raise ConfigError(source, key, f"expected [lower, upper] with numbers and lower < upper, got {[low, high]} (SI)")
    if scale == "log" and not low > 0.0:
        raise ConfigError(source, key, f"scale = \"log\" needs a positive range, got {[low, high]} (SI)")
    return low, high


def _level(base: MechanismConfig, path: str, value: Any, unit: str, source: str, key: str, defer: bool) -> Level:
    """``value`` as a :class:`Level`; with ``defer``, a value the base refuses is kept (with
    its error) when it at least converts to the path's unit."""
    try:
        return Level(si_value_in_base(base, path, value, source, key))
    except ConfigError as error:
        if not defer:
            raise
        refused = error
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Level(float(value), refused)
    try:
        return Level(quantity_to_si(value, unit or "dimensionless"), refused)
    except UnitError:
        if unit:
            raise refused from None
        return Level(value, refused)  # a named choice, judged point by point
