"""The schema of a tolerance-design config (``configs/optimize_example.toml``): every table
validated by pydantic with the mechanism config's one-line errors
(:func:`pipelines.config.config_error`). Checks that need the base mechanism (is a path a
continuous parameter, do its bounds convert, is a metric known) are in
:mod:`pipelines.design.problem`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from model.integrate.life import LIFE_METRICS

from ..config import FieldError, PositiveLength, _quantity, config_error
from ..wear.schema import WearTable
from .cost import COST_MODELS


def _checked(test, describe: str):
    """A field whose value must pass ``test``; ``describe`` completes "must be ...": the
    refusal reads ``must be <describe>, got <value>``."""

    def check(value: Any) -> Any:
        if not test(value):
            raise PydanticCustomError("message", f"must be {describe}, got {value!r}")
        return value

    return BeforeValidator(check)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(minimum: int):
    return Annotated[int, _checked(lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum,
                                   f"an integer >= {minimum}")]


def _positive_number():
    return Annotated[float, _checked(lambda v: _is_number(v) and v > 0, "a number > 0")]


def _pair(value: Any) -> list:
    if not isinstance(value, list) or len(value) != 2:
        raise PydanticCustomError("message", f"expected [lower, upper], got {value!r}")
    return value


Pair = Annotated[list[Any], BeforeValidator(_pair)]


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OptimizerTable(Table):
    """``[optimizer]``: knobs of the design search (:class:`~pipelines.design.problem.DesignSearchOptions`)."""

    samples: _integer(1) = 4
    iterations: _integer(1) = 10
    learning_rate: _positive_number() = 0.08
    momentum: Annotated[float, _checked(lambda v: _is_number(v) and 0.0 <= v < 1.0, "in [0, 1)")] = 0.5
    inner_steps: _integer(1) = 1
    penalty: _positive_number() = 10.0
    time_smoothing: _positive_number() = 0.01
    sample_smoothing: _positive_number() = 0.02
    seed: _integer(0) = 0
    verification_samples: _integer(1) = 8
    verification_points: _integer(1) = 3
    verification_step: Annotated[float, _checked(lambda v: _is_number(v) and 0 < v < 1, "a number > 0 and < 1")] = 0.1
    backoff_steps: _integer(0) = 4
    pareto_points: _integer(0) = 5
    batching: Annotated[str, _checked(lambda v: v in ("vmap", "map"), '"vmap" or "map"')] = "vmap"
    ideal_metrics: Annotated[bool, _checked(lambda v: isinstance(v, bool), "true or false")] = False


class CostTable(Table):
    """``[cost]``: the tolerance cost model (:mod:`pipelines.design.cost`)."""

    model: Annotated[str, _checked(lambda v: v in COST_MODELS, f"one of {list(COST_MODELS)}")] = "reciprocal_power"
    exponent: _positive_number() = 1.0
    scale: _positive_number() = 1.0
    fixed: Annotated[float, _checked(_is_number, "a number")] = 0.0
    reference_band: PositiveLength | None = None
    min_clearance: _quantity("length", ge=0.0) = 0.0


class DesignEntry(Table):
    """A ``[[design]]`` variable; ``path``, ``bounds`` and ``initial`` are judged with the base."""

    path: Any
    bounds: Pair
    initial: Any = None
    scale: Annotated[str, _checked(lambda v: v in ("log", "linear"), '"log" or "linear"')] | None = None
    cost_weight: Annotated[float, _checked(_is_number, "a number")] | None = None


class ConstraintEntry(Table):
    """A ``[[constraints]]`` entry: ``metric <= max`` and/or ``metric >= min``."""

    metric: Any
    max: Any = None
    min: Any = None

    @model_validator(mode="after")
    def _a_bound(self) -> "ConstraintEntry":
        if self.max is None and self.min is None:
            raise FieldError([], "needs max = ... and/or min = ...")
        return self


class UncertainEntry(Table):
    """An ``[[uncertain]]`` parameter, uniform over ``range``."""

    path: Any
    range: Pair


def _wear_source(value: Any) -> Any:
    if isinstance(value, str) or isinstance(value, dict):
        return value
    raise PydanticCustomError("message", f"must be a wear config file name or a table of [wear] keys, got {value!r}")


class LifeTable(Table):
    """``[life]``: a service-life requirement (:mod:`pipelines.design.life`): the worn joint
    must last ``target_cycles`` before ``metric`` exceeds ``limit``."""

    metric: Annotated[str, _checked(lambda v: v in LIFE_METRICS, f"one of {list(LIFE_METRICS)}")] = Field(
        description="the wear metric the limit bounds: max_depth (m, largest wear depth), equivalent_clearance "
                    "(m, clearance plus largest depth), peak_force (N, the worn joint's peak normal force per pass), "
                    "peak_acceleration (m/s^2, a body's largest absolute acceleration along either ground axis per pass)")
    limit: Any = Field(description='the limit on the metric, with its unit (e.g. "0.6 mm", "20 kN", "2e5 m/s^2")',
                       json_schema_extra={"config_type": ("quantity", "m, N or m/s^2")})
    target_cycles: _positive_number() = Field(
        description="operating cycles the design must last before the metric exceeds the limit (cycles); at most "
                    "the wear schedule's `cycles`")
    wear: Annotated[Any, BeforeValidator(_wear_source)] = Field(
        description="the wear law and the life schedule: a wear config file (relative to this config's folder, with "
                    "the same base) or an inline table of the [wear] keys (then on this config's base and "
                    "[simulation])", json_schema_extra={"config_type": ("file name or table", "")})
    body: str | None = Field(
        None, description="the body whose acceleration peak_acceleration limits (default: the worn joint's bearing body)")


class OptimizeConfig(Table):
    """A tolerance-design config file."""

    base: str
    name: str | None = None
    description: str | None = None
    design: Annotated[list[DesignEntry], Field(min_length=1)]
    constraints: list[ConstraintEntry] = Field(
        [], description="performance limits on simulated metrics; may be left out when [life] is given")
    uncertain: list[UncertainEntry] = []
    simulation: dict[str, Any] = {}
    optimizer: OptimizerTable = OptimizerTable()
    cost: CostTable = CostTable()
    life: LifeTable | None = Field(
        None, description="a service life the design must reach under Archard wear (docs/design.md)")

    @model_validator(mode="after")
    def _a_requirement(self) -> "OptimizeConfig":
        if not self.constraints and self.life is None:
            raise FieldError(["constraints"], "give at least one [[constraints]] entry or a [life] table")
        return self


def parse_optimize(raw: dict, source: str) -> OptimizeConfig:
    """Validate a tolerance-design config's raw dict (one-line :class:`ConfigError` otherwise)."""
    try:
        return OptimizeConfig.model_validate(raw)
    except ValidationError as error:
        raise config_error(error, raw, source, OptimizeConfig) from None


class _InlineWear(Table):
    wear: WearTable


class _LifeWearOnly(Table):
    life: _InlineWear


def parse_life_wear(table: dict, source: str) -> WearTable:
    """Validate an inline ``[life.wear]`` table (errors name ``life.wear.KEY``)."""
    raw = {"life": {"wear": table}}
    try:
        return _LifeWearOnly.model_validate(raw).life.wear
    except ValidationError as error:
        raise config_error(error, raw, source, _LifeWearOnly) from None


class _OptimizerOnly(Table):
    optimizer: OptimizerTable


def check_optimizer(values: dict, source: str) -> None:
    """Validate ``[optimizer]`` values (a table, or options changed on the command line)."""
    raw = {"optimizer": values}
    try:
        _OptimizerOnly.model_validate(raw)
    except ValidationError as error:
        raise config_error(error, raw, source, _OptimizerOnly) from None
