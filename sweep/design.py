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
varies fastest). ``lhs`` (Latin hypercube, McKay, Beckman & Conover, Technometrics 21, 1979)
and ``sobol`` (scrambled Sobol' sequence, Owen 1998) sample the ``range`` parameters jointly
with ``samples`` points in their box; parameters given by ``values`` are crossed in full with
those samples, so every level sees the same sampled points.

Every value is converted to SI through the base mechanism's own validation, so a value the
mechanism would refuse (restitution 1.5, a clearance in kg) is a :class:`ConfigError` naming
the pipeline file and the ``sweep.parameters.N.*`` key.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from pipelines.config import MechanismConfig, si_value_in_base
from pipelines.errors import ConfigError
from pipelines.units import UnitError, quantity_to_si

DESIGNS = ("grid", "lhs", "sobol")
SCALES = ("linear", "log")
SWEEP_KEYS = ("design", "samples", "seed", "parameters", "sensitivity", "derivatives")
PARAMETER_KEYS = ("path", "values", "range", "num", "scale")
PIPELINE_KEYS = ("base", "sweep", "simulation")


class Level(NamedTuple):
    """One value of a parameter: ``si`` as the model sees it (float, or the choice's name),
    ``raw`` as it is written into the mechanism config for validation (a unit string).

    ``refused`` holds the error of a value the base mechanism refuses on its own but that
    another swept value may make valid (a bearing radius below the base's clearance); the
    sweep refuses it only if no point that uses it is valid (:mod:`sweep.plan`).
    """

    si: Any
    raw: Any
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

    def level(self, si_value: float) -> Level:
        """A generated SI value as a :class:`Level` (its raw form carries the SI unit)."""
        return Level(float(si_value), raw_quantity(float(si_value), self.unit))


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
        return [tuple(p.level(column[n]) for p, column in zip(sampled, columns)) for n in range(len(unit_points))]


def raw_quantity(si_value: float, unit: str) -> Any:
    """An SI float as a config value: ``"0.00025 m"``, or the bare number when dimensionless."""
    return f"{si_value!r} {unit}" if unit else si_value


def unit_samples(kind: str, dimensions: int, samples: int, seed: int) -> np.ndarray:
    """``samples`` points in the unit cube ``[0, 1)^dimensions`` (Latin hypercube or Sobol')."""
    from scipy.stats import qmc  # imported here: scipy.stats costs ~0.5 s, and grids never need it

    engine_type = qmc.LatinHypercube if kind == "lhs" else qmc.Sobol
    try:
        engine = engine_type(dimensions, rng=seed)
    except TypeError:  # scipy < 1.15 names the generator `seed`
        engine = engine_type(dimensions, seed=seed)
    if kind == "sobol" and samples & (samples - 1) == 0:
        return engine.random_base2(int(math.log2(samples)))
    with warnings.catch_warnings():
        # Sobol' balance holds for powers of 2; other counts are still low-discrepancy
        # (docs/sweep.md says so), so scipy's warning is not passed on.
        warnings.simplefilter("ignore", UserWarning)
        return engine.random(samples)


def saltelli_unit_samples(dimensions: int, samples: int, seed: int) -> np.ndarray:
    """SALib's Sobol'-sequence Saltelli design in the unit cube: ``samples * (dimensions + 2)``
    rows (first-order and total indices; Saltelli et al., Comput. Phys. Commun. 181, 2010),
    in the order ``SALib.analyze.sobol`` expects."""
    from SALib.sample import sobol as salib_sobol

    problem = {"num_vars": dimensions, "names": [f"x{i}" for i in range(dimensions)], "bounds": [[0.0, 1.0]] * dimensions}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SALib warns for non-powers of 2, as docs/sweep.md does
        return salib_sobol.sample(problem, samples, calc_second_order=False, scramble=True, seed=seed)


def scale_unit_samples(unit: np.ndarray, bounds: tuple[float, float], scale: str) -> np.ndarray:
    """Map unit-interval samples onto ``bounds``, uniformly or log-uniformly."""
    low, high = bounds
    if scale == "log":
        return np.exp(np.log(low) + unit * (np.log(high) - np.log(low)))
    return low + unit * (high - low)


def grid_values(bounds: tuple[float, float], num: int, scale: str) -> np.ndarray:
    """``num`` points from ``bounds[0]`` to ``bounds[1]`` inclusive, evenly or geometrically spaced."""
    return np.geomspace(*bounds, num) if scale == "log" else np.linspace(*bounds, num)


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def parse_design(pipeline: Mapping[str, Any], base: MechanismConfig, source: str) -> SweepDesign:
    """Validate a sweep pipeline's ``[sweep]`` table against its base mechanism."""
    _refuse_unknown(pipeline, PIPELINE_KEYS, "", source)
    table = pipeline.get("sweep")
    if not isinstance(table, dict):
        raise ConfigError(source, "sweep", "required table is missing (see configs/sweep_example.toml)")
    _refuse_unknown(table, SWEEP_KEYS, "sweep", source)
    kind = table.get("design", "grid")
    if kind not in DESIGNS:
        raise ConfigError(source, "sweep.design", f"unknown design {kind!r}; expected one of {list(DESIGNS)}")
    samples = table.get("samples")
    if kind != "grid":
        if samples is None:
            raise ConfigError(source, "sweep.samples", f"required for design = {kind!r} (the number of points)")
        _check_integer(samples, 1, source, "sweep.samples")
    seed = table.get("seed", 0)
    _check_integer(seed, 0, source, "sweep.seed")
    entries = table.get("parameters")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(source, "sweep.parameters", "expected one or more [[sweep.parameters]] tables")
    paths = [entry.get("path") for entry in entries]
    parameters = tuple(
        _parse_parameter(entry, f"sweep.parameters.{index}", kind, base, source, paths[:index] + paths[index + 1 :])
        for index, entry in enumerate(entries)
    )
    seen: dict[str, str] = {}
    for parameter in parameters:
        if parameter.path in seen:
            raise ConfigError(source, f"{parameter.key}.path", f"{parameter.path!r} is already swept by {seen[parameter.path]}")
        seen[parameter.path] = parameter.key
    sensitivity = table.get("sensitivity", False)
    if not isinstance(sensitivity, bool):
        raise ConfigError(source, "sweep.sensitivity", f"expected true or false, got {sensitivity!r}")
    if sensitivity and (kind != "sobol" or not any(p.sampled for p in parameters)):
        raise ConfigError(source, "sweep.sensitivity",
                          'Sobol\' indices need design = "sobol" and at least one parameter with a `range`')
    derivatives = table.get("derivatives", [])
    if not isinstance(derivatives, list) or not all(isinstance(name, str) for name in derivatives):
        raise ConfigError(source, "sweep.derivatives", f"expected a list of metric names, got {derivatives!r}")
    return SweepDesign(kind, parameters, samples if kind != "grid" else None, seed, source, sensitivity,
                       tuple(dict.fromkeys(derivatives)))


def _parse_parameter(entry: dict, key: str, kind: str, base: MechanismConfig, source: str, others: Sequence[str]) -> Parameter:
    """One ``[[sweep.parameters]]`` entry; ``others`` are the other swept paths."""
    _refuse_unknown(entry, PARAMETER_KEYS, key, source)
    path = entry.get("path")
    if not isinstance(path, str) or not path:
        raise ConfigError(source, f"{key}.path", f"expected a dotted path such as joints.pin.clearance, got {path!r}")
    try:
        base.si_value(path)
    except ConfigError as error:
        raise ConfigError(source, f"{key}.path", f"{path!r} is not a parameter of {base.source}: {error.message}") from None
    given = [field for field in ("values", "range") if field in entry]
    if len(given) != 1:
        raise ConfigError(source, key, "give exactly one of `values` (a list) or `range` ([lower, upper])")
    scale = entry.get("scale", "linear")
    if scale not in SCALES:
        raise ConfigError(source, f"{key}.scale", f"unknown scale {scale!r}; expected one of {list(SCALES)}")
    if "values" in entry:
        values = entry["values"]
        if not isinstance(values, list) or not values:
            raise ConfigError(source, f"{key}.values", f"expected a non-empty list, got {values!r}")
        unit = _unit_of(base, path, values[0])
        defer = len(others) > 0
        levels = tuple(_level(base, path, value, unit, source, f"{key}.values", defer) for value in values)
        return Parameter(path, key, unit, levels=levels, scale=scale)
    bounds = _parse_range(entry["range"], base, path, scale, source, f"{key}.range")
    unit = _unit_of(base, path, entry["range"][0])
    if kind != "grid":
        return Parameter(path, key, unit, bounds=bounds, scale=scale)
    num = entry.get("num")
    if num is None:
        raise ConfigError(source, f"{key}.num", "required with `range` for design = \"grid\" (the number of points)")
    _check_integer(num, 2, source, f"{key}.num")
    parameter = Parameter(path, key, unit, scale=scale)
    return dataclasses.replace(parameter, levels=tuple(parameter.level(v) for v in grid_values(bounds, num, scale)))


def _parse_range(bounds: Any, base: MechanismConfig, path: str, scale: str, source: str, key: str) -> tuple[float, float]:
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise ConfigError(source, key, f"expected [lower, upper], got {bounds!r}")
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
        return Level(si_value_in_base(base, path, value, source, key), value)
    except ConfigError as error:
        if not defer:
            raise
        refused = error
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Level(float(value), value, refused)
    try:
        return Level(quantity_to_si(value, unit or "dimensionless"), value, refused)
    except UnitError:
        if unit:
            raise refused from None
        return Level(value, value, refused)  # a named choice, judged point by point


def _unit_of(base: MechanismConfig, path: str, example: Any) -> str:
    """The SI unit the validated config stores ``path`` in (from its parent's unit labels),
    as it is with ``example`` set (a numeric stiffness has a unit, ``"hertz"`` has none)."""
    parent_path, _, leaf = path.rpartition(".")
    if not parent_path:
        return ""
    try:
        parent = base.with_values({path: example}).si_value(parent_path)
    except ConfigError:
        parent = base.si_value(parent_path)
    if isinstance(parent, dict):
        for label in parent:
            if label.startswith(f"{leaf} [") and label.endswith("]"):
                return label[len(leaf) + 2 : -1]
    return ""


def _refuse_unknown(table: Mapping[str, Any], allowed: Sequence[str], where: str, source: str) -> None:
    for name in table:
        if name not in allowed:
            key = f"{where}.{name}" if where else str(name)
            raise ConfigError(source, key, f"unknown key; allowed keys: {', '.join(allowed)}")


def _check_integer(value: Any, minimum: int, source: str, key: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(source, key, f"expected an integer >= {minimum}, got {value!r}")
