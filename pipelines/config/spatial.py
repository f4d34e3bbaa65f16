"""The spatial mechanism format (``dimension = 3``): the pydantic tables, validated into SI.

The planar tables are reused where the format is the same: ``Material``, ``Contact`` (with
``stiffness = "palmgren"`` also allowed: line contact over a cylindrical joint's length),
``Friction``, ``Lubrication``, the drivers, ``Metrics``, ``Simulation``, ``Initial`` (body
velocities as 3-vectors) and a body's ``flexible`` table. Vectors have three components;
axes are in the ground frame at t = 0 and points in each body's frame. An axis within
``AXIS_TOLERANCE`` of norm 1 (rounded input) is normalised; a zero or clearly non-unit one is
refused.

Contact length rule: ``0 < length <= 2 m``, and no longer than a flexible body it sits on.
Rigid bodies carry no geometric extent in this format (mass, inertia and points only), so
the length cannot be checked against their size.
"""

from __future__ import annotations

import math
import typing
from typing import Annotated, Any, ClassVar, Literal, Union

import numpy as np
from pydantic import AfterValidator, Discriminator, Field, Tag, field_validator, model_validator
from pydantic_core import PydanticCustomError

from .fields import (
    AccelerationVector3, Angle, AngularVelocityVector3, FieldError, Inertia, Mass, Name, Number,
    PositiveLength, Section, SIUnit, Vector, Vector3, VelocityVector3, _quantity, union_tag,
)
from .flexible import END_TOLERANCE, Flexible, Force, ForceLoad, TorqueLoad, TorqueValue, check_point_on_body
from .mechanism import (
    VELOCITIES_DESCRIPTION, Contact, Friction, Initial, JointBase, Lubrication, MechanismBase,
    check_clearance_joint, velocities_field,
)

PLANAR_ONLY_TYPES = ("revolute_clearance",)
MAX_CONTACT_LENGTH = 2.0  # m
AXIS_TOLERANCE = 1e-3  # |norm - 1| of an axis that is normalised rather than refused
AXIS_ZERO = 1e-9  # norm below which an axis has no direction

Points3 = Annotated[tuple[Vector3, Vector3], SIUnit("m")]
ZERO_POINTS3 = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
InertiaComponent = _quantity("inertia")
InertiaRow = tuple[InertiaComponent, InertiaComponent, InertiaComponent]


def _unit_axis(axis: tuple[float, float, float]) -> tuple[float, float, float]:
    """A unit vector: one within ``AXIS_TOLERANCE`` of norm 1 (rounded input) is normalised."""
    norm = math.sqrt(sum(a * a for a in axis))
    if not norm > AXIS_ZERO:
        raise PydanticCustomError("axis", f"must be a direction, got the zero vector {list(axis)!r}")
    if not abs(norm - 1.0) < AXIS_TOLERANCE:
        raise PydanticCustomError("axis", f"must be a unit vector (norm within {AXIS_TOLERANCE:g} of 1), "
                                          f"got norm {norm:g}")
    return (axis[0] / norm, axis[1] / norm, axis[2] / norm)


Axis = Annotated[tuple[Number, Number, Number], AfterValidator(_unit_axis)]


def _positive_definite(tensor: tuple) -> tuple:
    """A symmetric positive definite inertia tensor (kg*m^2)."""
    if any(abs(tensor[i][j] - tensor[j][i]) > 1e-9 * max(abs(tensor[i][j]), abs(tensor[j][i]), 1e-300)
           for i in range(3) for j in range(i)):
        raise PydanticCustomError("message", "must be a symmetric tensor")
    lowest = float(np.linalg.eigvalsh(np.asarray(tensor))[0])
    if not lowest > 0.0:
        raise PydanticCustomError("message", f"must be positive definite, got a principal moment of {lowest:g} kg*m^2")
    return tensor


def _inertia_branch(value: Any) -> str:
    rows = isinstance(value, (list, tuple)) and bool(value) and all(isinstance(row, (list, tuple)) for row in value)
    return union_tag("tensor") if rows else union_tag("principal")


def _as_tensor(value: tuple) -> tuple:
    """Three principal moments as the diagonal tensor; a tensor as it is."""
    if isinstance(value[0], tuple):
        return value
    return tuple(tuple(value[i] if i == j else 0.0 for j in range(3)) for i in range(3))


InertiaTensor = Annotated[
    Union[Annotated[tuple[Inertia, Inertia, Inertia], Tag(union_tag("principal"))],
          Annotated[tuple[InertiaRow, InertiaRow, InertiaRow], AfterValidator(_positive_definite),
                    Tag(union_tag("tensor"))]],
    Discriminator(_inertia_branch), AfterValidator(_as_tensor), SIUnit("kg*m^2"),
]


class Rotation(Section):
    """A body's orientation at t = 0: a rotation by ``angle`` about ``axis``."""

    axis: Axis = Field(description="rotation axis, ground frame (unit vector)")
    angle: Angle = Field(0.0, description="rotation angle, right-handed about the axis (rad)")


class SpatialBody(Section):
    """A body; ``position`` is its centre of mass at t = 0 in the ground frame. With
    ``flexible`` it is a chain of rigid segments along its x axis."""

    name: Name = Field(description="the body's name (no dots)")
    mass: Mass = Field(description="mass (kg), > 0")
    inertia: InertiaTensor = Field(
        description="three principal moments about the body axes, each > 0, or the full tensor in the body frame, "
                    "symmetric positive definite (kg*m^2); stored as the tensor",
        json_schema_extra={"config_type": ("[3 quantities] or 3 x 3 quantities", "kg*m^2")})
    position: Vector3 = Field(description="centre of mass at t = 0, ground frame (m)")
    rotation: Rotation | None = Field(None, description="orientation at t = 0 (the `rotation` table); none: the ground's")
    flexible: Flexible | None = Field(None, description="divide the body into beam elements (the `bodies.flexible` table)")


class SpatialContact(Contact):
    """Normal contact law of a spatial clearance joint: the planar table, and
    ``stiffness = "palmgren"`` (line contact over a cylindrical joint's length, Palmgren 1959)."""

    STIFFNESS_MARKERS: ClassVar[tuple[str, ...]] = ("hertz", "palmgren")

    stiffness: Union[Literal["hertz", "palmgren"], float] = Field(
        "hertz", description="\"hertz\" (spherical joints: from the materials and radii, Johnson 1985), \"palmgren\" "
                             "(cylindrical joints: from the contact length) or K as a quantity in N/m^n")


class SpatialJointBase(JointBase):
    """The keys of every spatial joint. A key of another joint kind is let through unused (an
    override may change ``type`` and leave it)."""

    KINDS: ClassVar[dict[str, Any]] = {}  # every kind's class, by its type

    points: Points3 = Field(ZERO_POINTS3, description="the joint point in each body's frame (m); default: both at "
                                                      "the centres of mass")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Register a kind (a class whose ``type`` is one literal)."""
        super().__pydantic_init_subclass__(**kwargs)
        kind = typing.get_args(cls.model_fields["type"].annotation)
        if len(kind) == 1:
            cls.KINDS[kind[0]] = cls

    @model_validator(mode="before")
    @classmethod
    def _keys_of_other_kinds(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        foreign = {key for kind in cls.KINDS.values() for key in kind.model_fields} - set(cls.model_fields)
        return {key: value for key, value in raw.items() if key not in foreign - {"lubrication"}}


class AxisJoint(SpatialJointBase):
    """A joint with an axis."""

    axis: Axis = Field(description="unit joint axis at t = 0, ground frame")


class SpatialRevoluteJoint(AxisJoint):
    """An ideal hinge: the points coincide, the body axes stay aligned with ``axis``."""

    type: Literal["revolute"] = Field(description="joint kind")


class SpatialCylindricalJoint(AxisJoint):
    """An ideal cylinder: rotation about and sliding along ``axis``."""

    type: Literal["cylindrical"] = Field(description="joint kind")


class SpatialPrismaticJoint(AxisJoint):
    """An ideal slider along ``axis``; no relative rotation."""

    type: Literal["prismatic"] = Field(description="joint kind")


class SpatialFixedJoint(AxisJoint):
    """Welds two bodies together at ``points``."""

    type: Literal["fixed"] = Field(description="joint kind")


class SpatialSphericalJoint(SpatialJointBase):
    """An ideal ball joint: the points coincide."""

    type: Literal["spherical"] = Field(description="joint kind")
    axis: Axis | None = Field(None, description="unused by the constraint (unit vector, ground frame)")


class ClearanceJointBase(SpatialJointBase):
    """The keys of both spatial clearance joints."""

    clearance: PositiveLength = Field(description="radial clearance (m): socket (bearing) radius minus ball (journal) "
                                                  "radius, > 0")
    materials: tuple[Name, Name] | None = Field(None, description="material names of [journal or ball, bearing or "
                                                                  "socket]; required for stiffness = \"hertz\"")
    contact: SpatialContact = Field(description="normal contact law (the `joints.contact` table)")
    friction: Friction = Field(Friction(), description="friction law (the `joints.friction` table)")


class CylindricalClearanceJoint(ClearanceJointBase, AxisJoint):
    """A journal in a bearing over a contact ``length``, cut into ``slices`` discs, each with
    its own penetration, contact force and friction (docs/spatial.md)."""

    type: Literal["cylindrical_clearance"] = Field(description="joint kind")
    axis: Axis = Field(description="unit bearing axis at t = 0, ground frame")
    bearing_radius: PositiveLength = Field(description="bearing radius (m)")
    length: PositiveLength = Field(description=f"contact length along the axis (m), <= {MAX_CONTACT_LENGTH:g} m")
    slices: Annotated[int, Field(ge=1)] = Field(10, description="number of slices along the contact length, >= 1")
    axial: Literal["fixed", "free"] = Field("fixed", description="whether the journal is held axially in the bearing")
    initial_eccentricity: Vector = Field((0.0, 0.0), description="journal centre in the bearing's cross-section axes "
                                                                 "at t = 0 (m)")
    lubrication: Lubrication | None = Field(None, description="oil film (the `joints.lubrication` table; `length` "
                                                              "defaults to the contact length); dry without it")

    @model_validator(mode="before")
    @classmethod
    def _film_length(cls, raw: Any) -> Any:
        """The film's ``length`` defaults to the contact length."""
        film = raw.get("lubrication") if isinstance(raw, dict) else None
        if isinstance(film, dict) and "length" not in film and "length" in raw:
            return {**raw, "lubrication": {"length": raw["length"], **film}}
        return raw

    @model_validator(mode="after")
    def _fits(self) -> "CylindricalClearanceJoint":
        if self.contact.stiffness == "hertz":
            raise FieldError(["contact", "stiffness"], 'use "palmgren" or a value for a cylindrical clearance joint')
        if not self.length <= MAX_CONTACT_LENGTH:
            raise FieldError(["length"], f"must be > 0 and <= {MAX_CONTACT_LENGTH:g} m, got {self.length:g} m")
        check_clearance_joint(self, "bearing_radius", ("journal", "bearing"))
        return self


class SphericalClearanceJoint(ClearanceJointBase):
    """A ball in a spherical socket: one point contact, Hertz stiffness from the radii and
    materials with ``stiffness = "hertz"`` (Flores, Ambrosio, Claro & Lankarani 2006)."""

    type: Literal["spherical_clearance"] = Field(description="joint kind")
    axis: Axis | None = Field(None, description="unused by the contact (unit vector, ground frame)")
    socket_radius: PositiveLength = Field(description="socket radius (m); the ball's is socket_radius - clearance")
    initial_eccentricity: Vector3 = Field((0.0, 0.0, 0.0), description="ball centre relative to the socket's at t = 0, "
                                                                       "ground frame (m)")

    @model_validator(mode="after")
    def _fits(self) -> "SphericalClearanceJoint":
        if self.contact.stiffness == "palmgren":
            raise FieldError(["contact", "stiffness"], 'use "hertz" or a value for a spherical clearance joint '
                                                       '(Palmgren is a line contact)')
        check_clearance_joint(self, "socket_radius", ("ball", "socket"))
        return self


SpatialJoint = Annotated[Union[tuple(SpatialJointBase.KINDS.values())], Field(discriminator="type")]
SPATIAL_JOINT_TYPES = tuple(SpatialJointBase.KINDS)


class SpatialForceLoad(ForceLoad):
    """Constant force (ground frame) at ``point`` (body frame)."""

    point: Vector3 = Field((0.0, 0.0, 0.0), description="point of application, body frame (m)")
    value: Annotated[tuple[Force, Force, Force], SIUnit("N")] = Field(description="force, ground frame (N)")


class SpatialTorqueLoad(TorqueLoad):
    """Constant torque on a body (ground frame)."""

    point: Vector3 = Field((0.0, 0.0, 0.0), description="unused by a torque (m)")
    value: Annotated[tuple[TorqueValue, TorqueValue, TorqueValue], SIUnit("N*m")] = Field(
        description="torque, ground frame (N*m)")


SpatialLoad = Annotated[Union[SpatialForceLoad, SpatialTorqueLoad], Field(discriminator="type")]


class TrackedPoint(Section):
    """A body point whose ground-frame path ``simulate`` writes (``P.x P.y P.z``) and plots."""

    name: Name = Field(description="the point's name (its column prefix)")
    body: Name = Field(description="the body it is fixed to")
    point: Vector3 = Field(description="the point in the body's frame (m)")


class SpatialBodyVelocity(Section):
    """Requested velocity of one body at t = 0 (spatial), ground frame: of its centre of mass,
    or for a flexible body of its frame's origin (the body's centre), the segments following
    as one rigid body."""

    v: VelocityVector3 = Field((0.0, 0.0, 0.0), description="velocity of the body's centre, ground frame (m/s)")
    w: AngularVelocityVector3 = Field((0.0, 0.0, 0.0), description="angular velocity, ground frame (rad/s)")


class SpatialInitial(Initial):
    """The state at t = 0 of a ``dimension = 3`` mechanism (as the planar ``[initial]``; body
    velocities as 3-vectors ``v`` and ``w``)."""

    velocities: velocities_field(SpatialBodyVelocity) = Field("from_drivers", description=VELOCITIES_DESCRIPTION)


class SpatialConfig(MechanismBase):
    """A validated spatial mechanism, every quantity a float in SI units."""

    dimension: Literal[3] = Field(description="3 for this format")
    name: str = Field("mechanism", description="the mechanism's name")
    gravity: AccelerationVector3 = Field((0.0, 0.0, 0.0), description="gravitational acceleration, ground frame (m/s^2)")
    bodies: list[SpatialBody] = Field([], description="rigid or flexible bodies")
    joints: list[SpatialJoint] = Field([], description="ideal and clearance joints")
    loads: list[SpatialLoad] = Field([], description="constant forces and torques on bodies")
    initial: SpatialInitial = Field(SpatialInitial(), description="the state at t = 0 (the `initial` table)")
    tracked_points: list[TrackedPoint] = Field([], description="body points whose paths `simulate` writes and plots")

    @field_validator("joints", mode="before")
    @classmethod
    def _no_planar_kinds(cls, joints: Any) -> Any:
        for index, joint in enumerate(joints if isinstance(joints, list) else []):
            if isinstance(joint, dict) and joint.get("type") in PLANAR_ONLY_TYPES:
                raise FieldError([str(joint.get("name", index)), "type"],
                                 f"{joint['type']!r} is a planar joint; a dimension = 3 file uses "
                                 "cylindrical_clearance or spherical_clearance")
        return joints

    @model_validator(mode="after")
    def _spatial_references(self) -> "SpatialConfig":
        """Tracked points lie on their bodies; a cylindrical clearance joint is no longer
        than a flexible body it sits on."""
        bodies = {body.name: body for body in self.bodies}
        for point in self.tracked_points:
            if point.body not in bodies:
                raise FieldError(["tracked_points", point.name, "body"], f"no body named {point.body!r}")
            check_point_on_body(bodies[point.body], point.point, ["tracked_points", point.name, "point"])
        for joint in self.joints:
            lengths = [bodies[name].flexible.length for name in joint.bodies
                       if name in bodies and bodies[name].flexible is not None]
            if joint.type == "cylindrical_clearance" and lengths and joint.length > min(lengths) * (1.0 + END_TOLERANCE):
                raise FieldError(["joints", joint.name, "length"], f"{joint.length:g} m is longer than the flexible "
                                                                   f"body it sits on ({min(lengths):g} m)")
        return self
