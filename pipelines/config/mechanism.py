"""The mechanism schema: every table of a mechanism file, validated into SI floats."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Discriminator, Field, PrivateAttr, Tag, field_validator, model_validator
from pydantic_core import PydanticCustomError

from model.contact.friction import DEFAULT_FRICTION_VELOCITIES
from model.integrate.rosenbrock_w import DEFAULT_JACOBIAN_REUSE

from ..units import UnitError, quantity_to_si, stiffness_unit
from .fields import (
    AccelerationVector, Angle, BodyPair, BearingModel, ContactModel, Damping, FieldError, FrictionModel,
    HERTZ_EXPONENT, Inertia, Mass, Modulus, Name, NonNegativeNumber, Number, Points, PoissonRatio, PositiveLength,
    PositiveNumber, PositiveTime, NonNegativeTime, PositiveVelocity, Rate, Restitution, Section, SIUnit, SolverName, Torque,
    AngularVelocity, TransitionRatios, Vector, Velocity, Viscosity, ZERO_POINTS, _quantity, in_si, union_tag,
)
from .flexible import Flexible, Load, check_flexible_references
from .paths import OVERRIDE_SOURCE, _split_path, set_by_path
from .references import check_initial, check_metrics, check_references
from .summary import _model_child, _summarise, _summarise_value



class Material(Section):
    """An isotropic elastic material."""

    youngs_modulus: Modulus = Field(description="Young's modulus (Pa)")
    poisson_ratio: PoissonRatio = Field(description="Poisson's ratio, > -1 and < 0.5")


class Body(Section):
    """A body; ``position`` is its centre of mass at t = 0 in the ground frame. With
    ``flexible`` it is a chain of rigid segments (``pipelines/config/flexible.py``)."""

    name: Name = Field(description="the body's name (no dots)")
    mass: Mass = Field(description="mass (kg), > 0")
    inertia: Inertia = Field(description="moment of inertia about the centre of mass (kg*m^2), > 0")
    position: Vector = Field(description="centre of mass at t = 0, ground frame (m)")
    angle: Angle = Field(0.0, description="angle of the body frame at t = 0 (rad)")
    flexible: Flexible | None = Field(None, description="divide the body into beam elements (the `bodies.flexible` table)")


class Contact(Section):
    """Normal contact law of a clearance joint: ``F_n = K delta^exponent (1 + damping term)``."""

    model: ContactModel = Field(description="normal force law (docs/contact_models.md)")
    restitution: Restitution = Field(0.9, description="coefficient of restitution, > 0 and <= 1 (laws with hysteresis damping)")
    exponent: PositiveNumber = Field(HERTZ_EXPONENT, description="exponent n of F = K delta^n; 1.5 for Hertz point or pin contact")
    stiffness: Union[Literal["hertz"], float] = Field("hertz", description="\"hertz\" (from the materials and radii, Johnson 1985) or K as a quantity in N/m^n")
    stiffness_factor: PositiveNumber = Field(1.0, description="multiplies the stiffness (for sweeps and convergence studies)")
    damping: Damping = Field(0.0, description="linear damping coefficient of kelvin_voigt (N*s/m)")
    penetration_max: _quantity("length", gt=0.0) = Field(1e-4, description="adams_impact: penetration of full damping d_max (m)")
    impact_velocity_floor: PositiveVelocity = Field(1e-3, description="lower bound of the impact velocity the hysteresis laws divide by (m/s)")

    # the stiffness names a law of the joint's geometry instead of a value
    STIFFNESS_MARKERS: ClassVar[tuple[str, ...]] = ("hertz",)

    @field_validator("stiffness", mode="before")
    @classmethod
    def _stiffness_in_si(cls, value: Any, info: Any) -> Any:
        """A marker (``"hertz"``) stays a name; anything else is a quantity in ``N/m^exponent``."""
        if value in cls.STIFFNESS_MARKERS or "exponent" not in info.data:
            return value
        if in_si(info) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:
            return quantity_to_si(value, stiffness_unit(info.data["exponent"]))
        except UnitError as error:
            markers = " or ".join(f'"{marker}"' for marker in cls.STIFFNESS_MARKERS)
            raise PydanticCustomError("quantity", f"{error} (or {markers})") from None

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

    model: FrictionModel = Field("none", description="friction law (docs/contact_models.md)")
    coefficient: NonNegativeNumber = Field(0.0, description="dynamic (sliding) friction coefficient")
    static_coefficient: NonNegativeNumber | None = Field(None, description="static friction coefficient (static_dynamic, ambrosio); default: coefficient")
    stiction_velocity: PositiveVelocity | None = Field(None, description="slip speed below which the law regularises stiction (m/s); default: the law's own")
    dynamic_velocity: PositiveVelocity | None = Field(None, description="slip speed above which full dynamic friction applies (m/s); default: the law's own")

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

    model: BearingModel = Field("finite_bearing", description="film model: short or long bearing closed forms, or the tabulated finite-bearing Reynolds solution")
    viscosity: Viscosity = Field(description="dynamic viscosity of the oil (Pa*s)")
    length: PositiveLength = Field(description="bearing length (m)")
    transition: TransitionRatios = Field((0.95, 0.975), description="eccentricity ratio eps_0 where the film hands over to dry contact, or [eps_0, eps_1]")
    supply: Literal["maximum_gap", "none"] = Field(
        "maximum_gap",
        description=(
            "finite_bearing only (no unit): the film's boundary condition. \"maximum_gap\": the film is "
            "held at ambient pressure along the line of largest gap (an axial supply groove there, the "
            "convention of the published finite-bearing tables, Raimondi & Boyd 1958) and ruptures by the "
            "Reynolds (Swift-Stieber) condition; \"none\": the Reynolds condition alone, so the film may "
            "carry pressure past the largest gap"
        ),
    )


class JointBase(Section):
    """The keys every joint has, in both formats."""

    type: str = Field(description="joint kind")
    name: Name = Field(description="the joint's name")
    bodies: BodyPair = Field(description="the two bodies (or `ground`); for a clearance joint [journal or ball body, "
                                         "bearing or socket body]")


class RevoluteJoint(JointBase):
    """An ideal pin; ``points`` are the pin in each body's frame."""

    type: Literal["revolute"] = Field(description="joint kind")
    points: Points = Field(description="the pin in each body's frame (m)")


class PrismaticJoint(JointBase):
    """An ideal slider along ``axis`` (unit vector in body i's frame); no relative rotation."""

    type: Literal["prismatic"] = Field(description="joint kind")
    axis: tuple[Number, Number] = Field(description="sliding direction in body i's frame (normalised)")
    points: Points = Field(ZERO_POINTS, description="a point on the sliding line in each body's frame (m)")

    @field_validator("axis", mode="after")
    @classmethod
    def _unit_axis(cls, axis: tuple[float, float]) -> tuple[float, float]:
        norm = math.hypot(*axis)
        if not norm > 0.0:
            raise PydanticCustomError("axis", f"must be a non-zero vector, got {list(axis)}")
        return (axis[0] / norm, axis[1] / norm)


class FixedJoint(JointBase):
    """Welds two bodies together at ``points``."""

    type: Literal["fixed"] = Field(description="joint kind")
    points: Points = Field(ZERO_POINTS, description="the weld point in each body's frame (m)")


class RevoluteClearanceJoint(JointBase):
    """A pin in an oversized hole: a contact force instead of a constraint.

    ``bodies`` is ``[journal body, bearing body]``; journal radius = bearing_radius - clearance.
    """

    type: Literal["revolute_clearance"] = Field(description="joint kind")
    points: Points = Field(description="journal and bearing centres in their bodies' frames (m)")
    bearing_radius: PositiveLength = Field(description="bearing (hole) radius (m)")
    clearance: PositiveLength = Field(description="radial clearance (m): bearing radius minus journal radius, > 0")
    materials: tuple[str, str] | None = Field(None, description="material names of [journal, bearing]; required for stiffness = \"hertz\"")
    initial_eccentricity: Vector = Field((0.0, 0.0), description="journal centre minus bearing centre at t = 0, ground frame (m)")
    contact: Contact = Field(description="normal contact law (the `joints.contact` table)")
    friction: Friction = Field(Friction(), description="friction law (the `joints.friction` table)")
    lubrication: Lubrication | None = Field(None, description="oil film (the `joints.lubrication` table); dry without it")

    @property
    def journal_radius(self) -> float:
        return self.bearing_radius - self.clearance

    @model_validator(mode="after")
    def _fits(self) -> "RevoluteClearanceJoint":
        check_clearance_joint(self, "bearing_radius", ("journal", "bearing"))
        return self


def check_clearance_joint(joint: Section, outer: str, parts: tuple[str, str]) -> None:
    """A clearance joint's own checks, both formats: ``clearance`` smaller than the ``outer``
    radius (m; the inner part's radius is their difference), the initial eccentricity (m)
    within the clearance, and two materials (``parts``: what they are) for a Hertz stiffness."""
    radius = getattr(joint, outer)
    if joint.clearance >= radius:
        raise FieldError(["clearance"], f"must be smaller than {outer} ({radius:g} m) so the {parts[0]} radius "
                                        f"is positive, got {joint.clearance:g} m")
    eccentricity = math.sqrt(sum(e * e for e in joint.initial_eccentricity))
    if eccentricity > joint.clearance * (1.0 + 1e-12):
        raise FieldError(["initial_eccentricity"],
                         f"|e0| = {eccentricity:g} m exceeds the clearance {joint.clearance:g} m")
    if joint.contact.stiffness == "hertz" and joint.materials is None:
        raise FieldError(["materials"], f'required when contact.stiffness = "hertz" (give [{parts[0]}, {parts[1]}])')


Joint = Annotated[
    Union[RevoluteJoint, PrismaticJoint, FixedJoint, RevoluteClearanceJoint], Field(discriminator="type")
]


class DriverBase(Section):
    """The keys every driver has (both formats; a spatial driver acts about the joint's axis)."""

    type: str = Field(description="driver kind")
    name: Name = Field(description="the driver's name")
    joint: str = Field(description="the ideal revolute joint it drives")


class ConstantSpeedDriver(DriverBase):
    """Drives a revolute joint at a constant relative angular speed."""

    type: Literal["constant_speed"] = Field(description="driver kind")
    speed: AngularVelocity = Field(description="relative angular speed of the joint (rad/s)")


class ConstantTorqueDriver(DriverBase):
    """Applies a constant torque across a revolute joint."""

    type: Literal["constant_torque"] = Field(description="driver kind")
    torque: Torque = Field(description="torque applied across the joint (N*m)")


Driver = Annotated[Union[ConstantSpeedDriver, ConstantTorqueDriver], Field(discriminator="type")]


class BodyVelocity(Section):
    """Requested velocity of one body at t = 0 (planar): of its centre of mass, or for a
    flexible body of its frame's origin (the body's centre), the segments following as one
    rigid body."""

    vx: Velocity = Field(0.0, description="x velocity of the body's centre in the ground frame (m/s)")
    vy: Velocity = Field(0.0, description="y velocity of the body's centre in the ground frame (m/s)")
    omega: AngularVelocity = Field(0.0, description="angular velocity, counter-clockwise positive (rad/s)")


VELOCITY_MODES = ("from_drivers", "zero")
VELOCITIES_DESCRIPTION = (
    '"from_drivers": the velocities the drivers impose through the ideal joints (clearance joints held ideal at '
    'their initial eccentricity; every flexible body moving as a rigid body, zero deformation rates); "zero": at '
    "rest; or a table of requested body velocities, one sub-table per body name (`[initial.velocities.crank]`), "
    "bodies not named at rest: the velocities closest to them (least change) that satisfy the ideal joints and "
    "the drivers, flexible bodies moving rigidly"
)
CLEARANCE_DESCRIPTION = (
    '"configured": each clearance joint starts at its `initial_eccentricity`; "static": each starts at its '
    "quasi-static eccentricity, the journal pressed against the bearing along the force the ideal joint carries at "
    "t = 0 (gravity, loads, drivers and the inertia of the initial motion) until the elastic contact force carries it "
    "(a spatial cylindrical joint: eccentric and tilted, its slices carrying the force and the moment); dry joints only"
)

DEFORMATION_DESCRIPTION = (
    '"undeformed": every flexible body starts straight (its configured shape); "static": in its static deflected '
    "shape at t = 0, the elastic forces balancing gravity, the applied loads and the inertia of the initial motion "
    "(no element deformation accelerating); planar and spatial mechanisms"
)


def _velocity_branch(value: Any) -> str:
    return union_tag("mode") if isinstance(value, str) else union_tag("bodies")


def velocities_field(body_velocity: type[Section]) -> Any:
    """The ``initial.velocities`` value: a mode name or a table of body velocities."""
    return Annotated[
        Union[Annotated[Literal[VELOCITY_MODES], Tag(union_tag("mode"))],
              Annotated[dict[Name, body_velocity], Tag(union_tag("bodies"))]],
        Discriminator(_velocity_branch),
    ]


class Initial(Section):
    """The state at t = 0: velocities (from the drivers, zero or requested per body), the
    clearance joints' eccentricities (configured or quasi-static) and the flexible bodies'
    shape (undeformed or static)."""

    velocities: velocities_field(BodyVelocity) = Field("from_drivers", description=VELOCITIES_DESCRIPTION)
    clearance: Literal["configured", "static"] = Field("configured", description=CLEARANCE_DESCRIPTION)
    deformation: Literal["undeformed", "static"] = Field("undeformed", description=DEFORMATION_DESCRIPTION)

    def requested_velocities(self) -> dict:
        """The table of requested body velocities (empty for a mode name)."""
        return {} if isinstance(self.velocities, str) else dict(self.velocities)


class Metrics(Section):
    """The time window of the summary metrics: every peak, impact count and contact fraction
    over ``t >= skip + skip_revolutions * 2 pi / |omega|`` (``omega``: the first
    constant-speed driver's speed), so that a start transient can be left out; the first
    impact is the run's first and the regime shares cover the whole run (docs/metrics.md)."""

    skip: NonNegativeTime = Field(0.0, description="the metrics leave out t < skip (s); 0: the whole run")
    skip_revolutions: NonNegativeNumber = Field(
        0.0, description="and also the first turns of the first constant-speed driver (revolutions), added to skip")


class Simulation(Section):
    """Time span, output grid and solver settings."""

    t_end: PositiveTime = Field(description="simulated time (s)")
    output_interval: PositiveTime = Field(description="spacing of the output samples (s)")
    solver: SolverName = Field("auto", description="integrator; auto chooses from the mechanism (docs/integration.md)")
    rtol: PositiveNumber = Field(1e-6, description="relative tolerance of the step-size controller")
    atol: PositiveNumber = Field(1e-9, description="absolute tolerance of the step-size controller (SI units of each state)")
    dtmax: Annotated[PositiveTime | None, SIUnit("s")] = Field(None, description="largest step (s); none: unbounded")
    max_steps: Annotated[int, Field(gt=0)] = Field(200_000, description="step limit; the solve fails beyond it")
    jacobian_reuse: Annotated[int, Field(ge=1)] = Field(DEFAULT_JACOBIAN_REUSE, description="ros34pw2: accepted steps per Jacobian")
    baumgarte_alpha: Rate = Field(5.0, description="Baumgarte stabilisation alpha (1/s)")
    baumgarte_beta: Rate = Field(5.0, description="Baumgarte stabilisation beta (1/s)")
    engine: Literal["auto", "joint", "absolute"] = Field(
        "auto", description="equations of motion: joint = the joint coordinates of the kinematic tree (a planar "
        "mechanism, its clearance joints cut; constraint rows only for the ideal joints that close loops; flexible "
        "bodies' segments on free joints; or a spatial mechanism, rigid or flexible, its clearance joints cut, "
        "constraint rows only for the ideal joints that close loops), absolute = absolute body coordinates with "
        "constraint rows (every mechanism), auto = joint where it applies to a planar mechanism, absolute otherwise "
        "(every spatial mechanism: faster there today) (docs/engine.md)")

    @model_validator(mode="after")
    def _interval_fits(self) -> "Simulation":
        if self.output_interval > self.t_end:
            raise FieldError(
                ["output_interval"], f"must be <= t_end ({self.t_end:g} s), got {self.output_interval:g} s"
            )
        return self


class MechanismBase(Section):
    """What a validated mechanism of either format does: its cross-references checked, values
    read and units named by dotted path, variants with values set, the SI summary.

    ``source`` is the file it came from and ``raw`` the dict it was validated from (after
    overrides), so pipelines can derive variants with :meth:`with_values`.
    """

    # the fields of both formats, in the order of the file; each format narrows the types
    dimension: int = Field(description="2 for the planar format, 3 for the spatial one")
    name: str = Field(description="the mechanism's name")
    gravity: tuple[float, ...] = Field(description="gravitational acceleration, ground frame (m/s^2)")
    materials: dict[Name, Material] = Field({}, description="materials by name (the `materials` table)")
    bodies: list = Field(description="the moving bodies")
    joints: list = Field([], description="ideal and clearance joints")
    drivers: list[Driver] = Field([], description="drives on ideal revolute joints (spatial: about the joint's axis)")
    loads: list = Field([], description="constant forces and torques on bodies")
    initial: Initial = Field(Initial(), description="the state at t = 0 (the `initial` table)")
    metrics: Metrics = Field(Metrics(), description="the time window of the summary metrics (the `metrics` table)")
    simulation: Simulation = Field(description="time span, output and solver (the `simulation` table)")

    _source: str = PrivateAttr(default="")
    _raw: dict = PrivateAttr(default_factory=dict)
    _raw_in_si: bool = PrivateAttr(default=False)  # _raw is a model_dump() (plain numbers in SI)

    @model_validator(mode="after")
    def _cross_references(self) -> "MechanismBase":
        check_references(self)
        check_flexible_references(self)
        check_initial(self.initial, [body.name for body in self.bodies],
                      [joint.name for joint in self.joints if getattr(joint, "lubrication", None) is not None])
        check_metrics(self.metrics, self.simulation.t_end,
                      [driver.speed for driver in self.drivers if driver.type == "constant_speed"])
        return self

    @property
    def source(self) -> str:
        return self._source

    @property
    def raw(self) -> dict:
        """A copy of the raw (unit-string) dict this config was validated from."""
        return copy.deepcopy(self._raw)

    @property
    def clearance_joints(self) -> list[Section]:
        """The joints with a clearance (contact forces instead of constraint rows)."""
        return [joint for joint in self.joints if "clearance" in type(joint).model_fields]

    def si_value(self, path: str) -> Any:
        """The validated SI value at a dotted path (``"joints.pin.clearance"`` -> 0.0005)."""
        node: Any = self
        for segment in _split_path(path, self.source):
            node = _model_child(node, segment, path, self.source)
        return _summarise_value(node)

    def with_values(self, values: Mapping[str, Any], source: str = OVERRIDE_SOURCE) -> "MechanismBase":
        """A new config with raw values (unit strings or numbers) set at dotted paths."""
        raw = self._raw
        for path, value in values.items():
            raw = set_by_path(raw, path, value, source)
        from .loading import mechanism_from_dict, validate_si  # loading validates into this class

        return (validate_si if self._raw_in_si else mechanism_from_dict)(raw, self.source)

    def with_si_values(self, values: Mapping[str, Any], source: str | None = None) -> "MechanismBase":
        """A new config with SI values (floats, or a choice's name) set at dotted paths and
        every check of the schema run again; a refused value is a :class:`ConfigError` naming
        the mechanism's key. The values are never turned back into unit strings: the config's
        own SI values are validated with plain numbers read as SI."""
        raw = self.model_dump()
        for path, value in values.items():
            raw = set_by_path(raw, path, value, source or self.source)
        from .loading import validate_si  # loading validates into this class

        return validate_si(raw, self.source)

    def unit_of_path(self, path: str) -> str:
        """The SI unit the value at a dotted path is stored in (``""``: dimensionless or a choice)."""
        parent_path, _, leaf = path.rpartition(".")
        parent: Any = self
        for segment in _split_path(parent_path, self.source) if parent_path else ():
            parent = _model_child(parent, segment, path, self.source)
        if isinstance(parent, Section) and leaf in type(parent).model_fields:
            return parent.unit_of(leaf)
        return ""

    def si_summary(self) -> dict:
        """Nested dict of the SI values, each key of a quantity naming its unit (``"mass [kg]"``)."""
        return {"source": self.source, **_summarise(self)}


class MechanismConfig(MechanismBase):
    """A validated planar mechanism, every quantity a float in SI units."""

    dimension: Literal[2] = Field(2, description="2 for this format (the default); 3 for a spatial mechanism")
    gravity: AccelerationVector = Field((0.0, 0.0), description="gravitational acceleration, ground frame (m/s^2)")
    bodies: Annotated[list[Body], Field(min_length=1)] = Field(description="the moving bodies (at least one)")
    joints: list[Joint] = Field([], description="ideal and clearance joints")
    loads: list[Load] = Field([], description="constant forces and torques on bodies")
