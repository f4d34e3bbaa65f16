"""Mechanism configs: TOML in, validated SI values out.

Quantities are strings with units (``"0.5 mm"``), converted to SI floats once, here. Any value
can be overridden by a dotted path in which array entries are addressed by their ``name``
(``joints.pin.contact.restitution``); a plain integer segment addresses an array entry by its
position (``gravity.1``). Every bad input becomes one :class:`~pipelines.errors.ConfigError`
naming the file and the dotted key.

This module is over 400 lines because field types, the mechanism schema, dotted paths with
``--set`` and the error messages change together; its natural split is a ``pipelines/config/``
package with one module for each of those four.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import tomllib
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from model.contact.friction import DEFAULT_FRICTION_VELOCITIES, FRICTION_LAWS
from model.contact.normal import NORMAL_FORCE_LAWS

from .errors import ConfigError
from .units import UnitError, quantity_to_si, si_unit, stiffness_unit

GROUND = "ground"
OVERRIDE_SOURCE = "--set"
# Top-level keys of a mechanism; a --set on a pipeline config starting with one of them
# addresses the base mechanism.
BASE_SECTIONS = ("bodies", "joints", "drivers", "materials", "gravity", "initial", "simulation", "loads")

# The law names come from the model's registries: a new law class is a new allowed name.
ContactModel = Literal[NORMAL_FORCE_LAWS]
FrictionModel = Literal[FRICTION_LAWS]
BearingModel = Literal["short_bearing", "long_bearing", "finite_bearing"]
SolverName = Literal[
    "auto", "tsit5", "dopri5", "dopri8", "bosh3", "kvaerno3", "kvaerno4", "kvaerno5", "kencarp3", "kencarp4", "kencarp5",
    "rodas4", "rodas5p",
]
HERTZ_EXPONENT = 1.5


# ---------------------------------------------------------------------------------------------
# Field types
# ---------------------------------------------------------------------------------------------


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

    def convert(value: Any) -> float:
        try:
            converted = quantity_to_si(value, dimension, plain_number_unit=plain_number_unit)
        except UnitError as error:
            raise PydanticCustomError("quantity", str(error)) from None
        if not _within_bounds(converted, gt, ge, lt, le):
            shown = f"{value!r} (= {converted:g} {unit})" if isinstance(value, str) and unit else repr(value)
            raise PydanticCustomError("bounds", f"must be {_bounds_text(unit, gt, ge, lt, le)}, got {shown}")
        return converted

    return Annotated[float, BeforeValidator(convert), SIUnit(unit)]


def _check_name(name: str) -> str:
    """Names address array entries in dotted paths, so they may not contain dots or be integers."""
    if not name.strip() or "." in name or name.isdigit():
        raise PydanticCustomError("name", f"a name must be non-empty, without dots and not a number, got {name!r}")
    return name


Name = Annotated[str, AfterValidator(_check_name)]
Length = _quantity("length")
PositiveLength = _quantity("length", gt=0.0)
Angle = _quantity("angle")
Mass = _quantity("mass", gt=0.0)
Inertia = _quantity("inertia", gt=0.0)
PositiveTime = _quantity("time", gt=0.0)
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
BodyPair = tuple[Name, Name]
ZERO_POINTS = ((0.0, 0.0), (0.0, 0.0))


class Section(BaseModel):
    """Base of every config table: unknown keys are refused, values are immutable SI floats."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def unit_of(self, field_name: str) -> str:
        """The SI unit of a field (``""`` for dimensionless or non-numeric fields)."""
        metadata = type(self).model_fields[field_name].metadata
        return next((item.unit for item in metadata if isinstance(item, SIUnit)), "")


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


class Material(Section):
    """An isotropic elastic material."""

    youngs_modulus: Modulus
    poisson_ratio: PoissonRatio


# Flexible bodies and loads (their schema needs the field types above).
from .config_flexible import Flexible, Load, check_flexible_references  # noqa: E402


class Body(Section):
    """A body; ``position`` is its centre of mass at t = 0 in the ground frame. With
    ``flexible`` it is a chain of rigid segments (``pipelines/config_flexible.py``)."""

    name: Name
    mass: Mass
    inertia: Inertia
    position: Vector
    angle: Angle = 0.0
    flexible: Flexible | None = None


class Contact(Section):
    """Normal contact law of a clearance joint: ``F_n = K delta^exponent (1 + damping term)``."""

    model: ContactModel
    restitution: Restitution = 0.9
    exponent: PositiveNumber = HERTZ_EXPONENT
    stiffness: Union[Literal["hertz"], float] = "hertz"
    stiffness_factor: PositiveNumber = 1.0
    damping: Damping = 0.0
    penetration_max: _quantity("length", gt=0.0) = 1e-4
    impact_velocity_floor: PositiveVelocity = 1e-3

    @field_validator("stiffness", mode="before")
    @classmethod
    def _stiffness_in_si(cls, value: Any, info: Any) -> Any:
        """``"hertz"`` stays a marker; anything else is a quantity in ``N/m^exponent``."""
        if value == "hertz" or "exponent" not in info.data:
            return value
        try:
            return quantity_to_si(value, stiffness_unit(info.data["exponent"]))
        except UnitError as error:
            raise PydanticCustomError("quantity", f"{error} (or \"hertz\")") from None

    @model_validator(mode="after")
    def _positive_stiffness(self) -> "Contact":
        if isinstance(self.stiffness, float) and not self.stiffness > 0.0:
            raise FieldError(["stiffness"], f"must be > 0, got {self.stiffness:g} {stiffness_unit(self.exponent)}")
        if self.stiffness == "hertz" and not math.isclose(self.exponent, HERTZ_EXPONENT):
            raise FieldError(
                ["stiffness"],
                f'"hertz" stiffness needs exponent = 1.5, got {self.exponent:g}; '
                f'give the stiffness as a quantity in {stiffness_unit(self.exponent)}',
            )
        return self

    def unit_of(self, field_name: str) -> str:
        if field_name == "stiffness" and isinstance(self.stiffness, float):
            return stiffness_unit(self.exponent)
        return super().unit_of(field_name)


class Friction(Section):
    """Tangential contact law of a clearance joint (see ``docs/contact_models.md``).

    ``stiction_velocity`` and ``dynamic_velocity`` left out take the law's own defaults
    (:data:`model.contact.friction.DEFAULT_FRICTION_VELOCITIES`).
    """

    model: FrictionModel = "none"
    coefficient: NonNegativeNumber = 0.0
    static_coefficient: NonNegativeNumber | None = None
    stiction_velocity: PositiveVelocity | None = None
    dynamic_velocity: PositiveVelocity | None = None

    @property
    def velocities(self) -> tuple[float, float]:
        """``(stiction_velocity, dynamic_velocity)`` in m/s, the law's defaults filled in."""
        default_stiction, default_dynamic = DEFAULT_FRICTION_VELOCITIES[self.model]
        stiction = default_stiction if self.stiction_velocity is None else self.stiction_velocity
        dynamic = default_dynamic if self.dynamic_velocity is None else self.dynamic_velocity
        return stiction, dynamic

    @model_validator(mode="after")
    def _ordered_velocities(self) -> "Friction":
        """The transition laws go from stiction_velocity up to dynamic_velocity."""
        uses_transition = self.model in ("ambrosio", "static_dynamic")
        stiction, dynamic = self.velocities
        if uses_transition and dynamic <= stiction:
            raise FieldError(
                ["dynamic_velocity"],
                f"must be > stiction_velocity ({stiction:g} m/s), got {dynamic:g} m/s",
            )
        return self

    @property
    def effective_static_coefficient(self) -> float:
        """``static_coefficient``, or ``coefficient`` when it is not given."""
        return self.coefficient if self.static_coefficient is None else self.static_coefficient


class Lubrication(Section):
    """Oil film of a revolute clearance joint (docs/lubrication.md).

    ``transition``: the eccentricity ratio ``eps_0`` where the film force starts to level
    off, or ``[eps_0, eps_1]`` with the ratio ``eps_1`` it levels off at (default: halfway
    from ``eps_0`` to the wall); stored as ``(eps_0, eps_1)``.
    """

    model: BearingModel = "finite_bearing"
    viscosity: Viscosity
    length: PositiveLength
    transition: TransitionRatios = (0.95, 0.975)


class RevoluteJoint(Section):
    """An ideal pin; ``points`` are the pin in each body's frame."""

    type: Literal["revolute"]
    name: Name
    bodies: BodyPair
    points: Points


class PrismaticJoint(Section):
    """An ideal slider along ``axis`` (unit vector in body i's frame); no relative rotation."""

    type: Literal["prismatic"]
    name: Name
    bodies: BodyPair
    axis: tuple[Number, Number]
    points: Points = ZERO_POINTS

    @field_validator("axis", mode="after")
    @classmethod
    def _unit_axis(cls, axis: tuple[float, float]) -> tuple[float, float]:
        norm = math.hypot(*axis)
        if not norm > 0.0:
            raise PydanticCustomError("axis", f"must be a non-zero vector, got {list(axis)}")
        return (axis[0] / norm, axis[1] / norm)


class FixedJoint(Section):
    """Welds two bodies together at ``points``."""

    type: Literal["fixed"]
    name: Name
    bodies: BodyPair
    points: Points = ZERO_POINTS


class RevoluteClearanceJoint(Section):
    """A pin in an oversized hole: a contact force instead of a constraint.

    ``bodies`` is ``[journal body, bearing body]``; journal radius = bearing_radius - clearance.
    """

    type: Literal["revolute_clearance"]
    name: Name
    bodies: BodyPair
    points: Points
    bearing_radius: PositiveLength
    clearance: PositiveLength
    materials: tuple[str, str] | None = None
    initial_eccentricity: Vector = (0.0, 0.0)
    contact: Contact
    friction: Friction = Friction()
    lubrication: Lubrication | None = None

    @property
    def journal_radius(self) -> float:
        return self.bearing_radius - self.clearance

    @model_validator(mode="after")
    def _fits(self) -> "RevoluteClearanceJoint":
        if self.clearance >= self.bearing_radius:
            raise FieldError(
                ["clearance"],
                f"must be smaller than bearing_radius ({self.bearing_radius:g} m) so the journal radius "
                f"is positive, got {self.clearance:g} m",
            )
        eccentricity = math.hypot(*self.initial_eccentricity)
        if eccentricity > self.clearance * (1.0 + 1e-12):
            raise FieldError(
                ["initial_eccentricity"],
                f"|e0| = {eccentricity:g} m exceeds the clearance {self.clearance:g} m",
            )
        if self.contact.stiffness == "hertz" and self.materials is None:
            raise FieldError(["materials"], 'required when contact.stiffness = "hertz" (give [journal, bearing])')
        return self


Joint = Annotated[
    Union[RevoluteJoint, PrismaticJoint, FixedJoint, RevoluteClearanceJoint], Field(discriminator="type")
]


class ConstantSpeedDriver(Section):
    """Drives a revolute joint at a constant relative angular speed."""

    type: Literal["constant_speed"]
    name: Name
    joint: str
    speed: AngularVelocity


class ConstantTorqueDriver(Section):
    """Applies a constant torque across a revolute joint."""

    type: Literal["constant_torque"]
    name: Name
    joint: str
    torque: Torque


Driver = Annotated[Union[ConstantSpeedDriver, ConstantTorqueDriver], Field(discriminator="type")]


class Initial(Section):
    """Initial velocities: consistent with the drivers through the ideal joints, or zero."""

    velocities: Literal["from_drivers", "zero"] = "from_drivers"


class Simulation(Section):
    """Time span, output grid and solver settings."""

    t_end: PositiveTime
    output_interval: PositiveTime
    solver: SolverName = "auto"
    rtol: PositiveNumber = 1e-6
    atol: PositiveNumber = 1e-9
    dtmax: Annotated[PositiveTime | None, SIUnit("s")] = None
    max_steps: Annotated[int, Field(gt=0)] = 200_000
    baumgarte_alpha: Rate = 5.0
    baumgarte_beta: Rate = 5.0

    @model_validator(mode="after")
    def _interval_fits(self) -> "Simulation":
        if self.output_interval > self.t_end:
            raise FieldError(
                ["output_interval"], f"must be <= t_end ({self.t_end:g} s), got {self.output_interval:g} s"
            )
        return self


class MechanismConfig(Section):
    """A validated mechanism, every quantity a float in SI units.

    ``source`` is the file it came from and ``raw`` the dict it was validated from (after
    overrides), so pipelines can derive variants with :meth:`with_values`.
    """

    name: str
    gravity: AccelerationVector = (0.0, 0.0)
    materials: dict[Name, Material] = {}
    bodies: Annotated[list[Body], Field(min_length=1)]
    joints: list[Joint] = []
    drivers: list[Driver] = []
    loads: list[Load] = []
    initial: Initial = Initial()
    simulation: Simulation

    _source: str = PrivateAttr(default="")
    _raw: dict = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _cross_references(self) -> "MechanismConfig":
        _check_no_ground_body(self)
        _check_unique_names(self)
        _check_joint_references(self)
        _check_driver_references(self)
        check_flexible_references(self)
        return self

    @property
    def source(self) -> str:
        return self._source

    @property
    def raw(self) -> dict:
        """A copy of the raw (unit-string) dict this config was validated from."""
        return copy.deepcopy(self._raw)

    @property
    def clearance_joints(self) -> list[RevoluteClearanceJoint]:
        return [joint for joint in self.joints if isinstance(joint, RevoluteClearanceJoint)]

    def si_value(self, path: str) -> Any:
        """The validated SI value at a dotted path (``"joints.pin.clearance"`` -> 0.0005)."""
        node: Any = self
        for segment in _split_path(path, self.source):
            node = _model_child(node, segment, path, self.source)
        return _summarise_value(node)

    def with_values(self, values: Mapping[str, Any], source: str = OVERRIDE_SOURCE) -> "MechanismConfig":
        """A new config with raw values (unit strings or numbers) set at dotted paths."""
        raw = self._raw
        for path, value in values.items():
            raw = set_by_path(raw, path, value, source)
        return mechanism_from_dict(raw, self.source)

    def si_summary(self) -> dict:
        """Nested dict of the SI values, each key of a quantity naming its unit (``"mass [kg]"``)."""
        return {"source": self.source, **_summarise(self)}


def _check_no_ground_body(config: MechanismConfig) -> None:
    for body in config.bodies:
        if body.name == GROUND:
            raise FieldError(
                ["bodies", GROUND, "name"], f'"{GROUND}" is the fixed frame and cannot be declared as a body'
            )


def _check_unique_names(config: MechanismConfig) -> None:
    seen: dict[str, str] = {}
    for section in ("bodies", "joints", "drivers"):
        for entry in getattr(config, section):
            if entry.name in seen:
                raise FieldError(
                    [section, entry.name, "name"],
                    f"name {entry.name!r} is already used in {seen[entry.name]}; names must be unique "
                    "across bodies, joints and drivers",
                )
            seen[entry.name] = section


def _check_joint_references(config: MechanismConfig) -> None:
    body_names = [GROUND] + [body.name for body in config.bodies]
    for joint in config.joints:
        for body_name in joint.bodies:
            if body_name not in body_names:
                raise FieldError(
                    ["joints", joint.name, "bodies"],
                    f"unknown body {body_name!r}; bodies are {', '.join(map(repr, body_names))}",
                )
        if joint.bodies[0] == joint.bodies[1]:
            raise FieldError(
                ["joints", joint.name, "bodies"], f"a joint needs two different bodies, got {list(joint.bodies)}"
            )
        if isinstance(joint, RevoluteClearanceJoint) and joint.materials is not None:
            for material in joint.materials:
                if material not in config.materials:
                    known = ", ".join(map(repr, config.materials)) or "none declared"
                    raise FieldError(
                        ["joints", joint.name, "materials"], f"unknown material {material!r}; materials: {known}"
                    )


def _check_driver_references(config: MechanismConfig) -> None:
    joints = {joint.name: joint for joint in config.joints}
    driven: set[str] = set()
    for driver in config.drivers:
        joint = joints.get(driver.joint)
        if not isinstance(joint, RevoluteJoint):
            revolute = ", ".join(repr(j.name) for j in config.joints if isinstance(j, RevoluteJoint)) or "none"
            found = f"is a {joint.type} joint" if joint is not None else "names no joint"
            raise FieldError(
                ["drivers", driver.name, "joint"],
                f"{driver.joint!r} {found}; a driver needs a revolute joint ({revolute})",
            )
        if driver.joint in driven:
            raise FieldError(["drivers", driver.name, "joint"], f"joint {driver.joint!r} already has a driver")
        driven.add(driver.joint)


# ---------------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------------


def _summarise(model: Section) -> dict:
    """A model as a nested dict of plain values, quantity keys labelled with their SI unit."""
    summary: dict[str, Any] = {}
    for field_name in type(model).model_fields:
        unit = model.unit_of(field_name)
        label = f"{field_name} [{unit}]" if unit else field_name
        summary[label] = _summarise_value(getattr(model, field_name))
    if isinstance(model, RevoluteClearanceJoint):
        summary["journal_radius [m]"] = model.journal_radius
    return summary


def _summarise_value(value: Any) -> Any:
    if isinstance(value, Section):
        return _summarise(value)
    if isinstance(value, list) and all(isinstance(item, Section) and hasattr(item, "name") for item in value):
        return {item.name: _summarise(item) for item in value}
    if isinstance(value, dict):
        return {key: _summarise_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_summarise_value(item) for item in value]
    return value


def _model_child(node: Any, segment: str, path: str, source: str) -> Any:
    """One step of :meth:`MechanismConfig.si_value`."""
    if isinstance(node, BaseModel) and segment in type(node).model_fields:
        return getattr(node, segment)
    if isinstance(node, dict) and segment in node:
        return node[segment]
    if isinstance(node, (list, tuple)):
        if segment.isdigit() and int(segment) < len(node):
            return node[int(segment)]
        for item in node:
            if getattr(item, "name", None) == segment:
                return item
    raise ConfigError(source, path, f"no {segment!r} in the validated config")


# ---------------------------------------------------------------------------------------------
# Loading, paths and overrides
# ---------------------------------------------------------------------------------------------


def si_value_in_base(
    base: "MechanismConfig", path: str, value: Any, file: str, key: str, require_number: bool = False
) -> Any:
    """The SI value ``path`` takes in ``base`` when set to ``value`` (integers as floats).

    A value the mechanism refuses is a :class:`ConfigError` naming ``file: key`` (the
    pipeline's key, not the mechanism's); ``require_number`` also refuses a named choice.
    """
    try:
        converted = base.with_values({path: value}, source=file).si_value(path)
    except ConfigError as error:
        where = "" if error.key == path else f"{error.key}: "
        raise ConfigError(file, key, f"{path} = {value!r} is refused: {where}{error.message}") from None
    if isinstance(converted, int) and not isinstance(converted, bool):
        converted = float(converted)
    if require_number and not isinstance(converted, float):
        raise ConfigError(file, key, f"{path} is not a number in the base (got {converted!r})")
    return converted


def load_toml(path: str | Path) -> dict:
    """Read a TOML file; a missing file or a syntax error is a :class:`ConfigError`."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(str(path), "", "file not found") from None
    except OSError as error:
        raise ConfigError(str(path), "", f"cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(str(path), "", f"TOML syntax error: {error}") from None


def parse_override(expr: str) -> tuple[str, Any]:
    """``"joints.pin.clearance=0.25 mm"`` -> ``("joints.pin.clearance", "0.25 mm")``.

    The value is read as a TOML value when it is one (``0.5``, ``[1, 2]``, ``"x"``,
    ``{model = "flores"}``), else kept as the raw string (``0.25 mm``, ``flores``).
    """
    path, separator, text = expr.partition("=")
    path, text = path.strip(), text.strip()
    if not separator:
        raise ConfigError(OVERRIDE_SOURCE, expr, 'expected PATH=VALUE, e.g. --set joints.pin.clearance="0.25 mm"')
    if not path or any(not segment.strip() for segment in path.split(".")):
        raise ConfigError(OVERRIDE_SOURCE, expr, "the path before '=' must be dotted keys such as joints.pin.clearance")
    try:
        return path, tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return path, text


def _split_path(path: str, source: str) -> list[str]:
    segments = path.split(".")
    if not path or any(not segment for segment in segments):
        raise ConfigError(source, path, "malformed path: expected dotted keys such as joints.pin.clearance")
    return segments


def _raw_child(node: Any, segment: str, walked: str, path: str, source: str) -> tuple[Any, Any]:
    """Find ``segment`` under ``node``: returns ``(container, key)`` with ``container[key]`` existing."""
    if isinstance(node, dict):
        if segment in node:
            return node, segment
        known = ", ".join(map(str, node)) or "none"
        raise ConfigError(source, path, f"no key {segment!r} in {walked or 'the top level'} (keys: {known})")
    if isinstance(node, list):
        if segment.isdigit():
            if int(segment) < len(node):
                return node, int(segment)
            raise ConfigError(source, path, f"{walked} has {len(node)} entries, no entry {segment}")
        matches = [i for i, entry in enumerate(node) if isinstance(entry, dict) and entry.get("name") == segment]
        if len(matches) == 1:
            return node, matches[0]
        names = ", ".join(str(entry.get("name")) for entry in node if isinstance(entry, dict)) or "none"
        problem = "several entries are" if matches else "no entry is"
        raise ConfigError(source, path, f"{problem} named {segment!r} in {walked} (names: {names})")
    raise ConfigError(source, path, f"{walked} is a value ({node!r}), not a table or an array")


def _walk(raw: dict, segments: Sequence[str], path: str, source: str) -> Any:
    """The raw value at ``segments`` (a prefix of ``path``, which errors name)."""
    node: Any = raw
    for depth, segment in enumerate(segments):
        container, key = _raw_child(node, segment, ".".join(segments[:depth]), path, source)
        node = container[key]
    return node


def get_by_path(raw: dict, path: str, source: str) -> Any:
    """The raw value at a dotted path; :class:`ConfigError` naming the path if it does not exist."""
    return _walk(raw, _split_path(path, source), path, source)


def set_by_path(raw: dict, path: str, value: Any, source: str, create_tables: bool = False) -> dict:
    """A deep copy of ``raw`` with ``value`` at the dotted path.

    Every segment but the last must exist; the last may be a new key of an existing table
    (validation then judges it). With ``create_tables``, missing tables on the way are
    created too (a pipeline's optional sections, e.g. ``loss.windows`` in a file without
    ``[loss]``); the pipeline's schema then judges the new keys.
    """
    segments = _split_path(path, source)
    result = copy.deepcopy(raw)
    parent: Any = result
    for depth, segment in enumerate(segments[:-1]):
        if create_tables and isinstance(parent, dict) and segment not in parent:
            parent[segment] = {}
        container, key = _raw_child(parent, segment, ".".join(segments[:depth]), path, source)
        parent = container[key]
    leaf = segments[-1]
    if isinstance(parent, dict):
        parent[leaf] = copy.deepcopy(value)
    else:
        container, key = _raw_child(parent, leaf, ".".join(segments[:-1]), path, source)
        container[key] = copy.deepcopy(value)
    return result


def _apply_overrides(raw: dict, overrides: Sequence[str]) -> tuple[dict, list[str]]:
    """Apply ``--set`` expressions; returns the new dict and the overridden paths."""
    paths = []
    for expr in overrides:
        path, value = parse_override(expr)
        raw = set_by_path(raw, path, value, OVERRIDE_SOURCE)
        paths.append(path)
    return raw, paths


# ---------------------------------------------------------------------------------------------
# Validation errors -> one ConfigError
# ---------------------------------------------------------------------------------------------


def _dotted_key(raw: Any, loc: Sequence[Any]) -> list[str]:
    """A pydantic error location as dotted-key segments, array entries named by their ``name``."""
    parts: list[str] = []
    node = raw
    for item in loc:
        if isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            entry = node[item]
            name = entry.get("name") if isinstance(entry, dict) else None
            parts.append(name if isinstance(name, str) and name else str(item))
            node = entry
        elif isinstance(node, dict) and item in node:
            parts.append(str(item))
            node = node[item]
        elif isinstance(node, dict) and item == node.get("type"):
            continue  # the tag pydantic inserts for a discriminated union
        else:
            parts.append(str(item))
            node = None
    return parts


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The config models an annotation may hold (through Annotated, unions, lists, dicts)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in typing.get_args(annotation) for model in _models_in(argument)]


def _model_at(loc: Sequence[Any]) -> type[BaseModel] | None:
    """The model class that holds the key at ``loc`` (used to list the allowed keys)."""
    candidates: list[type[BaseModel]] = [MechanismConfig]
    for item in loc:
        owners = [model for model in candidates if item in model.model_fields]
        tagged = [model for model in candidates if _type_tag(model) == item]
        if owners:
            candidates = _models_in(owners[0].model_fields[item].annotation)
        elif tagged:
            candidates = tagged
        # else: an array index or a dict key (a material name): the candidates stay
    return candidates[0] if len(candidates) == 1 else None


def _type_tag(model: type[BaseModel]) -> str | None:
    field = model.model_fields.get("type")
    arguments = typing.get_args(field.annotation) if field is not None else ()
    return arguments[0] if len(arguments) == 1 else None


def _unknown_key_message(loc: Sequence[Any]) -> str:
    model = _model_at(loc[:-1])
    if model is None:
        return "unknown key"
    allowed = list(model.model_fields)
    guess = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    hint = f"did you mean {guess[0]!r}? " if guess else ""
    return f"unknown key; {hint}allowed keys: {', '.join(allowed)}"


def _error_message(error: Mapping[str, Any]) -> tuple[str, list[str]]:
    """A readable message for one pydantic error, and key segments to append to its location."""
    kind, context, value = error["type"], error.get("ctx") or {}, error.get("input")
    cause = context.get("error")
    if isinstance(cause, FieldError):
        return str(cause), list(cause.key)
    if kind == "extra_forbidden" and error["loc"][-1] == "lubrication":
        return "only a revolute_clearance joint takes a lubrication table", []
    if kind == "extra_forbidden":
        return _unknown_key_message(error["loc"]), []
    if kind == "missing":
        return "required value is missing" if isinstance(error["loc"][-1], int) else "required key is missing", []
    if kind == "literal_error":
        return f"unknown value {value!r}; expected one of {context.get('expected')}", []
    if kind == "union_tag_invalid":
        return f"unknown type {context.get('tag')!r}; expected one of {context.get('expected_tags')}", ["type"]
    if kind == "union_tag_not_found":
        return "required key is missing (it says which kind of entry this is)", ["type"]
    if kind in ("quantity", "bounds", "name", "axis"):
        return error["msg"], []
    message = error["msg"].removeprefix("Value error, ")
    return f"{message}, got {value!r}", []


def _config_error(error: ValidationError, raw: dict, source: str) -> ConfigError:
    """The first validation error as one :class:`ConfigError` line."""
    first = error.errors(include_url=False)[0]
    message, extra_key = _error_message(first)
    key = ".".join(_dotted_key(raw, first["loc"]) + extra_key)
    return ConfigError(source, key, message)


def _attributed(error: ConfigError, origins: Mapping[str, tuple[str, str]]) -> ConfigError:
    """Re-address an error whose key came from elsewhere (``--set``, a pipeline's [simulation])."""
    for path, (file, note) in reversed(list(origins.items())):
        if error.key == path or error.key.startswith(path + "."):
            return ConfigError(file, error.key, error.message + note)
    return error


def _validate(raw: dict, source: str, origins: Mapping[str, tuple[str, str]] | None = None) -> MechanismConfig:
    """Validate ``raw``; ``origins`` maps dotted paths that came from elsewhere to (file, note)."""
    if raw.get("dimension", 2) == 3:
        from .config_spatial import spatial_from_dict  # the spatial format lives in its own module

        try:
            return spatial_from_dict(raw, str(source))
        except ConfigError as error:
            raise _attributed(error, origins or {}) from None
    try:
        config = MechanismConfig.model_validate(raw)
    except ValidationError as error:
        raise _attributed(_config_error(error, raw, source), origins or {}) from None
    config._source = str(source)
    config._raw = copy.deepcopy(raw)
    return config


# ---------------------------------------------------------------------------------------------
# Public loaders
# ---------------------------------------------------------------------------------------------


def mechanism_from_dict(raw: dict, source: str) -> MechanismConfig:
    """Validate a raw mechanism dict and convert it to SI; errors name ``source``. A
    ``dimension = 3`` dict gives a :class:`~pipelines.config_spatial.SpatialConfig`."""
    return _validate(raw, str(source))


def load_mechanism(path: str | Path, overrides: Sequence[str] = ()) -> MechanismConfig:
    """Load a mechanism TOML file, apply ``--set`` overrides, validate."""
    raw = load_toml(path)
    if "base" in raw:
        raise ConfigError(str(path), "base", "this is a pipeline config (sweep, calibrate, optimize), not a mechanism")
    raw, override_paths = _apply_overrides(raw, overrides)
    if raw.get("dimension", 2) == 3:
        from .config_spatial import spatial_from_dict  # the spatial format lives in its own module

        return spatial_from_dict(raw, str(path))
    if raw.get("dimension", 2) != 2:
        raise ConfigError(str(path), "dimension", f"must be 2 (planar) or 3 (spatial), got {raw['dimension']!r}")
    raw.pop("dimension", None)
    origins = {override: (str(path), " (value from --set)") for override in override_paths}
    return _validate(raw, str(path), origins)


def base_path(pipeline_path: str | Path, pipeline_raw: Mapping[str, Any]) -> Path:
    """The mechanism file a pipeline config names with ``base``, relative to its folder."""
    base = pipeline_raw.get("base")
    if not isinstance(base, str) or not base:
        example = 'base = "flores_slider_crank.toml"'
        raise ConfigError(str(pipeline_path), "base", f"expected the mechanism file name, e.g. {example}, got {base!r}")
    return Path(pipeline_path).parent / base


def _routes_to_base(path: str) -> bool:
    return path.split(".", 1)[0] in BASE_SECTIONS


def load_with_base(path: str | Path, overrides: Sequence[str] = ()) -> tuple[dict, dict]:
    """Load a pipeline config and its base mechanism as raw dicts.

    The pipeline's ``[simulation]`` keys are merged over the base's. ``--set`` paths starting
    with a mechanism section (``joints``, ``simulation``, ...) change the base, others the
    pipeline.
    """
    pipeline, base, _ = _load_pipeline_raw(path, overrides)
    return pipeline, base


def _load_pipeline_raw(path: str | Path, overrides: Sequence[str]) -> tuple[dict, dict, dict[str, tuple[str, str]]]:
    """:func:`load_with_base`, also returning which base keys came from elsewhere."""
    pipeline = load_toml(path)
    base = load_toml(base_path(path, pipeline))
    pipeline_simulation = pipeline.get("simulation", {})
    if not isinstance(pipeline_simulation, dict):
        raise ConfigError(str(path), "simulation", "expected a table of simulation keys")
    base = {**base, "simulation": {**base.get("simulation", {}), **pipeline_simulation}}
    origins = {f"simulation.{key}": (str(path), "") for key in pipeline_simulation}
    for expr in overrides:
        override, value = parse_override(expr)
        if _routes_to_base(override):
            base = set_by_path(base, override, value, OVERRIDE_SOURCE)
            origins[override] = (str(path), " (value from --set)")
        else:
            pipeline = set_by_path(pipeline, override, value, OVERRIDE_SOURCE, create_tables=True)
    return pipeline, base, origins


def load_pipeline_mechanism(path: str | Path, overrides: Sequence[str] = ()) -> tuple[dict, MechanismConfig]:
    """:func:`load_with_base`, then validate the base mechanism (with the merged [simulation]).

    Errors in keys that came from the pipeline file or from ``--set`` name the pipeline file.
    """
    pipeline, base, origins = _load_pipeline_raw(path, overrides)
    return pipeline, _validate(base, str(base_path(path, pipeline)), origins)

