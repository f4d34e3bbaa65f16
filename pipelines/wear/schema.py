"""The schema of a wear config (``configs/wear_flores.toml``): a pipeline config naming its
mechanism with ``base = ...``, a ``[wear]`` table and optionally ``[simulation]`` keys merged
over the base's. Validated by pydantic with the one-line errors of every config
(:func:`pipelines.config.config_error`); the checks that need the base mechanism (is the
joint a planar revolute or a spatial cylindrical clearance joint, the bearing length, do the
angle bins resolve the contact width, the cycle's period) are in :func:`pipelines.wear.study.load_wear_study`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from ..config import FieldError, PositiveLength, PositiveTime, _quantity, config_error
from ..units import UnitError, quantity_to_si

# The angle bins must resolve the Hertz contact: no bin wider than this share of the
# contact's half-width under the reference force.
MAX_BIN_PER_HALF_WIDTH = 1.0


def _wear_coefficient(value: Any) -> tuple[float, bool]:
    """``(value, dimensionless)``: a quantity in 1/Pa (``k_w``), or a plain number (Archard's
    dimensionless ``k``, to be divided by a hardness). Either must be > 0."""
    if isinstance(value, bool):
        raise PydanticCustomError("quantity", f"expected a wear coefficient, got {value!r}")
    try:
        converted, dimensionless = quantity_to_si(value, "dimensionless"), True
    except UnitError:
        try:
            converted, dimensionless = quantity_to_si(value, "1/Pa"), False
        except UnitError:
            raise PydanticCustomError(
                "quantity", f'expected k_w in 1/Pa (e.g. "8e-14 1/Pa") or a dimensionless Archard coefficient '
                            f'with a hardness, got {value!r}') from None
    if not converted > 0.0:
        raise PydanticCustomError("bounds", f"must be > 0, got {value!r}")
    return converted, dimensionless


def _integer(minimum: int):
    def check(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise PydanticCustomError("message", f"must be an integer >= {minimum}, got {value!r}")
        return value

    return Annotated[int, BeforeValidator(check)]


def _number(minimum: float):
    def check(value: Any) -> Any:
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                or value < minimum):
            raise PydanticCustomError("message", f"must be a number >= {minimum:g}, got {value!r}")
        return float(value)

    return Annotated[float, BeforeValidator(check)]


class WearTable(BaseModel):
    """``[wear]``: Archard wear of one clearance joint's bushing over a service life."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    joint: str = Field(description="name of the worn clearance joint of the base mechanism: a revolute clearance "
                                   "joint (planar) or a cylindrical clearance joint (spatial; worn per slice)")
    coefficient: Annotated[tuple[float, bool], BeforeValidator(_wear_coefficient)] = Field(
        description='Archard wear coefficient: k_w in 1/Pa (e.g. "8e-14 1/Pa"), or a plain number, the '
                    "dimensionless k, with `hardness` (then k_w = k / hardness)",
        json_schema_extra={"config_type": ("quantity or number", "1/Pa")})
    hardness: _quantity("pressure", gt=0.0) | None = Field(
        None, description="hardness H of the softer surface (Pa); only with a dimensionless `coefficient`")
    bearing_length: PositiveLength | None = Field(
        None, description="axial length of the bushing over which the contact force spreads (m); required for a "
                          "planar joint, left out for a cylindrical joint (its contact length `length`)")
    cycles: _number(1.0) = Field(description="operating cycles of the service life to simulate (cycles)")
    cycles_per_update: _integer(1) = Field(
        1, description="cycles simulated per update, after the warm-up, whose wear is extrapolated (cycles)")
    extrapolation: _number(1.0) = Field(
        description="factor on the simulated wear: each update advances the life by extrapolation x "
                    "cycles_per_update operating cycles (dimensionless)")
    warmup_cycles: _integer(0) = Field(
        1, description="cycles simulated before the wear is counted, so that the start-up transient dies out (cycles)")
    resolution: _integer(8) = Field(720, description="number of angle bins of the bushing's wear profile "
                                                     "(of each slice's, for a cylindrical joint)")
    reference_force: _quantity("force", gt=0.0) = Field(
        1000.0, description="normal force (N) whose Hertz contact half-width each angle bin must not exceed: "
                            "the check of `resolution`")
    period: PositiveTime | None = Field(
        None, description="duration of one operating cycle (s); default: one turn of the base's constant-speed driver")

    @model_validator(mode="after")
    def _hardness_with_dimensionless_coefficient(self) -> "WearTable":
        _, dimensionless = self.coefficient
        if dimensionless and self.hardness is None:
            raise FieldError(["hardness"],
                             'a dimensionless coefficient needs a hardness (Pa), e.g. hardness = "2 GPa"')
        if not dimensionless and self.hardness is not None:
            raise FieldError(["hardness"], "give a hardness only with a dimensionless coefficient (k_w in 1/Pa has it)")
        return self

    @property
    def coefficient_per_pascal(self) -> float:
        """``k_w`` (1/Pa)."""
        value, dimensionless = self.coefficient
        return value / self.hardness if dimensionless else value


class WearConfig(BaseModel):
    """A wear config file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base: str = Field(description="the mechanism file, relative to this config's folder")
    name: str | None = Field(None, description="a name for the study")
    description: str | None = Field(None, description="free text")
    wear: WearTable = Field(description="the worn joint, the wear law and the service life")
    simulation: dict[str, Any] = Field(
        {}, description="[simulation] keys merged over the base's (t_end is set by the wear table's cycles)")


def parse_wear(raw: dict, source: str) -> WearConfig:
    """Validate a wear config's raw dict (one-line :class:`ConfigError` otherwise)."""
    try:
        return WearConfig.model_validate(raw)
    except ValidationError as error:
        raise config_error(error, raw, source, WearConfig) from None
