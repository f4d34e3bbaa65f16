"""The schema of a sweep config: ``base``, ``[sweep]``, ``[[sweep.parameters]]`` and a
``[simulation]`` merged over the base's, validated by pydantic with the mechanism config's
one-line errors (:func:`pipelines.config.config_error`).

The checks here need no mechanism; those that do (is the path a parameter, do its values
convert) are in :mod:`pipelines.sweeping.design`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from ..config import FieldError, config_error


def _integer(minimum: int):
    """An integer field ``>= minimum``; booleans and floats are refused."""

    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise PydanticCustomError("message", f"expected an integer >= {minimum}, got {value!r}")
        return value

    return Annotated[int, BeforeValidator(check)]


def _choice(kind: str, allowed: tuple[str, ...]):
    """A string field with one of ``allowed``; anything else is an "unknown ``kind``"."""

    def check(value: Any) -> str:
        if value not in allowed:
            raise PydanticCustomError("message", f"unknown {kind} {value!r}; expected one of {list(allowed)}")
        return value

    return Annotated[str, BeforeValidator(check)]


def _non_empty_list(value: Any) -> list:
    if not isinstance(value, list) or not value:
        raise PydanticCustomError("message", f"expected a non-empty list, got {value!r}")
    return value


def _pair(value: Any) -> list:
    if not isinstance(value, list) or len(value) != 2:
        raise PydanticCustomError("message", f"expected [lower, upper], got {value!r}")
    return value


def _dotted_path(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise PydanticCustomError("message", f"expected a dotted path such as joints.pin.clearance, got {value!r}")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise PydanticCustomError("message", f"expected true or false, got {value!r}")
    return value


def _metric_names(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise PydanticCustomError("message", f"expected a list of metric names, got {value!r}")
    return value


DESIGNS = ("grid", "lhs", "sobol")
SCALES = ("linear", "log")
DottedPath = Annotated[str, BeforeValidator(_dotted_path)]
Boolean = Annotated[bool, BeforeValidator(_boolean)]


class ParameterTable(BaseModel):
    """One ``[[sweep.parameters]]`` entry, values still as written (unit strings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: DottedPath
    values: Annotated[list[Any], BeforeValidator(_non_empty_list)] | None = None
    range: Annotated[list[Any], BeforeValidator(_pair)] | None = None
    num: _integer(2) | None = None
    scale: _choice("scale", SCALES) = "linear"

    @model_validator(mode="after")
    def _values_or_range(self) -> "ParameterTable":
        if (self.values is None) == (self.range is None):
            raise FieldError([], "give exactly one of `values` (a list) or `range` ([lower, upper])")
        return self


# section-coordinate suffixes a hyperplane section may cross, with their dimensions: the
# columns of sections.parquet / poincare.parquet (body centre position and velocity, a
# clearance joint's eccentricity); angles, which grow by whole turns, are not among them
HYPERPLANE_SUFFIXES = {"x": "length", "y": "length", "z": "length", "vx": "velocity", "vy": "velocity",
                       "vz": "velocity", "ex": "length", "ey": "length", "ez": "length"}
DIRECTIONS = ("up", "down", "both")


def _section_column(value: Any) -> str:
    if not isinstance(value, str) or "." not in value or value.rsplit(".", 1)[1] not in HYPERPLANE_SUFFIXES:
        raise PydanticCustomError("message", f"expected a section column \"<body>.<x|y|z|vx|vy|vz>\" or "
                                             f"\"<joint>.<ex|ey|ez>\", got {value!r}")
    return value


class HyperplaneTable(BaseModel):
    """``[bifurcation.hyperplane]`` / ``[sweep.section.hyperplane]``: a Poincaré section on
    crossing a hyperplane of the state, one of the section's columns crossing a value
    (docs/nonlinear.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    quantity: Annotated[str, BeforeValidator(_section_column)] = Field(
        description="the section column that crosses `value`: a body's centre <body>.x, .y, .z (m) or .vx, .vy, .vz "
                    "(m/s), or a clearance joint's eccentricity <joint>.ex, .ey, .ez (m)")
    value: Any = Field(description="the level crossed, in the quantity's units (e.g. \"120 mm\", \"0 m/s\")")
    direction: _choice("direction", DIRECTIONS) = Field(
        "up", description="which crossings count: `up` (quantity increasing through `value`), `down` or `both`")
    capacity: _integer(2) = Field(64, description="the most crossings kept per run (count); more are counted, "
                                                  "not stored")
    transient: Any = Field(None, description="time from the start before crossings count (s; e.g. \"0.1 s\"); "
                                             "default: the `transient_periods` (and the section phase)")

    @model_validator(mode="after")
    def _units(self) -> "HyperplaneTable":
        from ..units import UnitError, quantity_to_si

        dimension = HYPERPLANE_SUFFIXES[self.quantity.rsplit(".", 1)[1]]
        for key, value, kind in (("value", self.value, dimension), ("transient", self.transient, "time")):
            if value is None:
                continue
            try:
                si = quantity_to_si(value, kind)
            except UnitError as error:
                raise FieldError([key], str(error)) from None
            if key == "transient" and si < 0.0:
                raise FieldError([key], f"expected a time >= 0, got {value!r}")
        return self

    def si(self, key: str) -> float | None:
        """``value`` (m or m/s) or ``transient`` (s) in SI; ``None`` for an unset ``transient``."""
        from ..units import quantity_to_si

        value = getattr(self, key)
        if value is None:
            return None
        dimension = "time" if key == "transient" else HYPERPLANE_SUFFIXES[self.quantity.rsplit(".", 1)[1]]
        return quantity_to_si(value, dimension)


class SectionTable(BaseModel):
    """``[sweep.section]``: ask for every point's Poincaré section (``poincare.parquet``) and
    the metrics ``period``, ``motion`` and ``lyapunov_max`` (docs/nonlinear.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    transient_periods: _integer(0) = Field(10, description="driver periods discarded before the section is "
                                                            "sampled (count)")
    periods: _integer(2) = Field(20, description="driver periods sampled, once per period: the section's "
                                                 "samples and the span the exponent is averaged over (count)")
    max_period: _integer(1) = Field(8, description="the longest period, in driver periods, the metric period "
                                                   "looks for (count; period 0: none up to it)")
    lyapunov: Boolean = Field(True, description="also compute the metric lyapunov_max, the largest Lyapunov "
                                                "exponent (1/s)")
    hyperplane: HyperplaneTable | None = Field(
        None, description="also a section on crossing a hyperplane (crossings.parquet); period and motion are then "
                          "the crossings' (docs/nonlinear.md)")

    @model_validator(mode="after")
    def _enough_periods(self) -> "SectionTable":
        if self.periods < 2 * self.max_period:
            raise FieldError(["periods"], f"at least 2 x max_period = {2 * self.max_period} samples are needed to "
                                          f"find a period up to {self.max_period}; got {self.periods}")
        check_hyperplane_capacity(self.hyperplane, self.max_period)
        return self


def check_hyperplane_capacity(hyperplane: HyperplaneTable | None, max_period: int) -> None:
    """A hyperplane section must hold two repetitions of a period up to ``max_period``
    with at least one crossing per driver period (``FieldError`` on
    ``hyperplane.capacity`` otherwise)."""
    if hyperplane is not None and hyperplane.capacity < 2 * max_period:
        raise FieldError(["hyperplane", "capacity"], f"at least 2 x max_period = {2 * max_period} crossings are "
                                                     f"needed to find a period up to {max_period}; got "
                                                     f"{hyperplane.capacity}")


class SweepTable(BaseModel):
    """The ``[sweep]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    design: _choice("design", DESIGNS) = "grid"
    samples: _integer(1) | None = None
    seed: _integer(0) = 0
    sensitivity: Boolean = False
    derivatives: Annotated[list[str], BeforeValidator(_metric_names)] = []
    section: SectionTable | None = Field(None, description="adds each point's Poincaré section "
                                                           "(poincare.parquet) and the metrics period, motion and "
                                                           "lyapunov_max (docs/nonlinear.md)")
    parameters: Annotated[list[ParameterTable], Field(min_length=1)]

    @model_validator(mode="after")
    def _consistent(self) -> "SweepTable":
        if self.design != "grid" and self.samples is None:
            raise FieldError(["samples"], f"required for design = {self.design!r} (the number of points)")
        seen: dict[str, int] = {}
        for index, parameter in enumerate(self.parameters):
            if parameter.path in seen:
                raise FieldError(["parameters", index, "path"],
                                 f"{parameter.path!r} is already swept by sweep.parameters.{seen[parameter.path]}")
            seen[parameter.path] = index
            if self.design == "grid" and parameter.range is not None and parameter.num is None:
                raise FieldError(["parameters", index, "num"],
                                 'required with `range` for design = "grid" (the number of points)')
        if self.sensitivity and (self.design != "sobol" or all(p.range is None for p in self.parameters)):
            raise FieldError(["sensitivity"],
                             'Sobol\' indices need design = "sobol" and at least one parameter with a `range`')
        return self


class SweepConfig(BaseModel):
    """A sweep config file: its ``base`` mechanism, the ``[sweep]`` table and the
    ``[simulation]`` keys merged over the base's (validated with the base)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base: str
    sweep: SweepTable
    simulation: dict[str, Any] = {}


def parse_sweep_table(pipeline: dict, source: str) -> SweepTable:
    """Validate a sweep config's raw dict; a :class:`~pipelines.errors.ConfigError` naming
    ``source`` and the key otherwise."""
    try:
        return SweepConfig.model_validate(pipeline).sweep
    except ValidationError as error:
        raise config_error(error, pipeline, source, SweepConfig) from None
