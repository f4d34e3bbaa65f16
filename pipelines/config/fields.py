"""Field types of the config schemas: quantities with units converted to SI once, names,
the base class of every table, and the error a cross-field check raises.

A quantity field takes a string with a unit (``"0.5 mm"``) and stores the SI float. Under the
validation context ``{"si": True}`` a plain number is taken as already in SI (the bounds still
apply): that is how a validated config is re-checked with SI values written in
(:meth:`~pipelines.config.mechanism.MechanismConfig.with_si_values`) without turning them back
into unit strings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationInfo
from pydantic_core import PydanticCustomError

from model.contact.friction import FRICTION_LAWS
from model.contact.normal import NORMAL_FORCE_LAWS

from ..units import UnitError, quantity_to_si, si_unit

# The law names come from the model's registries: a new law class is a new allowed name.
ContactModel = Literal[NORMAL_FORCE_LAWS]
FrictionModel = Literal[FRICTION_LAWS]
BearingModel = Literal["short_bearing", "long_bearing", "finite_bearing"]
SolverName = Literal[
    "auto", "tsit5", "dopri5", "dopri8", "bosh3", "kvaerno3", "kvaerno4", "kvaerno5", "kencarp3", "kencarp4", "kencarp5",
    "rodas4", "rodas5p", "ros34pw2",
]
HERTZ_EXPONENT = 1.5


@dataclasses.dataclass(frozen=True)
class SIUnit:
    """Annotation marker: the SI unit a field's floats are stored in (for summaries)."""

    unit: str


class FieldError(ValueError):
    """A cross-field check failure that names the offending key relative to the model raising it."""

    def __init__(self, key: Sequence[str], message: str):
        super().__init__(message)
        self.key = tuple(str(part) for part in key)


def _bounds_text(unit: str, gt: float | None, ge: float | None, lt: float | None, le: float | None) -> str:
    """``(gt=0, le=1)`` -> ``"> 0 and <= 1"``, with the unit after each bound."""
    suffix = f" {unit}" if unit else ""
    bounds = ((">", gt), (">=", ge), ("<", lt), ("<=", le))
    parts = [f"{symbol} {bound:g}{suffix}" for symbol, bound in bounds if bound is not None]
    return " and ".join(parts)


def _within_bounds(value: float, gt: float | None, ge: float | None, lt: float | None, le: float | None) -> bool:
    return (
        (gt is None or value > gt)
        and (ge is None or value >= ge)
        and (lt is None or value < lt)
        and (le is None or value <= le)
    )



def in_si(info: ValidationInfo | None) -> bool:
    """True when validating with ``context={"si": True}``: plain numbers are SI values."""
    context = getattr(info, "context", None)
    return bool(context and context.get("si"))


def _quantity(
    dimension: str,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
    plain_number_unit: bool = False,
) -> Any:
    """A float field given as a quantity string of ``dimension``, stored in SI, optionally bounded."""
    unit = si_unit(dimension)

    def convert(value: Any, info: ValidationInfo) -> float:
        plain = isinstance(value, (int, float)) and not isinstance(value, bool)
        try:
            converted = quantity_to_si(value, dimension, plain_number_unit=plain_number_unit or (plain and in_si(info)))
        except UnitError as error:
            raise PydanticCustomError("quantity", str(error)) from None
        if not _within_bounds(converted, gt, ge, lt, le):
            shown = f"{value!r} (= {converted:g} {unit})" if isinstance(value, str) and unit else repr(value)
            if plain and unit and in_si(info):
                shown = f"{converted:g} {unit}"
            raise PydanticCustomError("bounds", f"must be {_bounds_text(unit, gt, ge, lt, le)}, got {shown}")
        return converted

    return Annotated[float, BeforeValidator(convert), SIUnit(unit)]


def _check_name(name: str) -> str:
    """Names address array entries in dotted paths, so they may not contain dots or be integers."""
    if not name.strip() or "." in name or name.isdigit():
        raise PydanticCustomError("name", f"a name must be non-empty, without dots and not a number, got {name!r}")
    return name


Name = Annotated[str, AfterValidator(_check_name)]
Velocity = _quantity("velocity")


def union_tag(name: str) -> str:
    """The tag of one branch of a union told apart by a function (pydantic's callable
    ``Discriminator``); pydantic puts it in error locations, and the messages skip it."""
    return f"({name})"
Length = _quantity("length")
PositiveLength = _quantity("length", gt=0.0)
Angle = _quantity("angle")
Mass = _quantity("mass", gt=0.0)
Inertia = _quantity("inertia", gt=0.0)
PositiveTime = _quantity("time", gt=0.0)
NonNegativeTime = _quantity("time", ge=0.0)
PositiveVelocity = _quantity("velocity", gt=0.0)
Acceleration = _quantity("acceleration")
AngularVelocity = _quantity("angular_velocity")
Torque = _quantity("torque")
Damping = _quantity("damping", ge=0.0)
Modulus = _quantity("pressure", gt=0.0)
Number = _quantity("dimensionless")
PositiveNumber = _quantity("dimensionless", gt=0.0)
NonNegativeNumber = _quantity("dimensionless", ge=0.0)
Restitution = _quantity("dimensionless", gt=0.0, le=1.0)
PoissonRatio = _quantity("dimensionless", gt=-1.0, lt=0.5)
Rate = _quantity("rate", ge=0.0, plain_number_unit=True)
Viscosity = _quantity("viscosity", gt=0.0)


def _transition_ratios(value: Any) -> tuple[float, float]:
    """``eps_0`` or ``[eps_0, eps_1]`` -> ``(eps_0, eps_1)``; ``eps_1`` defaults to ``(1 + eps_0)/2``."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) not in (1, 2):
        raise PydanticCustomError("bounds", f"expected one ratio or two, got {value!r}")
    ratios = []
    for item in values:
        try:
            ratio = quantity_to_si(item, "dimensionless")
        except UnitError as error:
            raise PydanticCustomError("quantity", str(error)) from None
        if not 0.0 < ratio < 1.0:
            raise PydanticCustomError("bounds", f"eccentricity ratios must be > 0 and < 1, got {value!r}")
        ratios.append(ratio)
    if len(ratios) == 1:
        ratios.append(0.5 * (1.0 + ratios[0]))
    if not ratios[0] < ratios[1]:
        raise PydanticCustomError("bounds", f"needs eps_0 < eps_1, got {value!r}")
    return ratios[0], ratios[1]


TransitionRatios = Annotated[tuple[float, float], BeforeValidator(_transition_ratios)]

Vector = Annotated[tuple[Length, Length], SIUnit("m")]
Points = Annotated[tuple[tuple[Length, Length], tuple[Length, Length]], SIUnit("m")]
AccelerationVector = Annotated[tuple[Acceleration, Acceleration], SIUnit("m/s^2")]
Vector3 = Annotated[tuple[Length, Length, Length], SIUnit("m")]
AccelerationVector3 = Annotated[tuple[Acceleration, Acceleration, Acceleration], SIUnit("m/s^2")]
VelocityVector3 = Annotated[tuple[Velocity, Velocity, Velocity], SIUnit("m/s")]
AngularVelocityVector3 = Annotated[tuple[AngularVelocity, AngularVelocity, AngularVelocity], SIUnit("rad/s")]
BodyPair = tuple[Name, Name]
ZERO_POINTS = ((0.0, 0.0), (0.0, 0.0))


class Section(BaseModel):
    """Base of every config table: unknown keys are refused, values are immutable SI floats."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def unit_of(self, field_name: str) -> str:
        """The SI unit of a field (``""`` for dimensionless or non-numeric fields)."""
        metadata = type(self).model_fields[field_name].metadata
        return next((item.unit for item in metadata if isinstance(item, SIUnit)), "")

    def __getitem__(self, key: str) -> Any:
        """A field by name: a table reads as a mapping too (``joint["clearance"]``)."""
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

