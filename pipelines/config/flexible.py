"""Config schema of flexible bodies and applied loads.

``flexible = {segments, length, material, section = {shape, ...}, shear_factor, damping_ratio}``
on a body makes it a chain of rigid segments joined by Timoshenko beam elements
(``docs/flexible.md``). ``[[loads]]`` apply constant forces (ground frame) or torques at
points of a body's frame (of the undeformed body for a flexible one).
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, model_validator

from .fields import FieldError, Name, PositiveLength, PositiveNumber, Section, SIUnit, Vector, _quantity

DampingRatio = _quantity("dimensionless", ge=0.0, lt=1.0)
Force = _quantity("force")
TorqueValue = _quantity("torque")
PositiveArea = _quantity("m^2", gt=0.0)
PositiveSecondMoment = _quantity("m^4", gt=0.0)

SECTION_DIMENSIONS = {
    "rectangle": ("width", "height"),
    "circle": ("diameter",),
    "tube": ("outer_diameter", "inner_diameter"),
    "properties": ("area", "iyy", "izz", "ixx"),
}


class BeamSection(Section):
    """Cross-section: ``rectangle`` (``width`` out of the plane, ``height`` in it),
    ``circle`` (``diameter``), ``tube`` (``outer_diameter``, ``inner_diameter``), or
    ``properties``: the ``area`` and the second moments given directly, ``iyy`` (bending
    out of the plane, about the section's y axis), ``izz`` (bending in the plane) and
    ``ixx`` (the torsion constant)."""

    shape: Literal["rectangle", "circle", "tube", "properties"] = Field(description="section shape; each takes its own dimensions")
    width: PositiveLength | None = Field(None, description="rectangle: width out of the plane (m)")
    height: PositiveLength | None = Field(None, description="rectangle: height in the plane (m)")
    diameter: PositiveLength | None = Field(None, description="circle: diameter (m)")
    outer_diameter: PositiveLength | None = Field(None, description="tube: outer diameter (m)")
    inner_diameter: PositiveLength | None = Field(None, description="tube: inner diameter (m)")
    area: PositiveArea | None = Field(None, description="properties: cross-section area (m^2)")
    iyy: PositiveSecondMoment | None = Field(None, description="properties: second moment for bending out of the plane (m^4)")
    izz: PositiveSecondMoment | None = Field(None, description="properties: second moment for bending in the plane (m^4)")
    ixx: PositiveSecondMoment | None = Field(None, description="properties: torsion constant (m^4)")

    @model_validator(mode="after")
    def _dimensions_match_shape(self) -> "BeamSection":
        needed = SECTION_DIMENSIONS[self.shape]
        for key in needed:
            if getattr(self, key) is None:
                raise FieldError([key], f"required for shape {self.shape!r} (give {', '.join(needed)})")
        for key in {k for keys in SECTION_DIMENSIONS.values() for k in keys} - set(needed):
            if getattr(self, key) is not None:
                raise FieldError([key], f"not a dimension of shape {self.shape!r} (give {', '.join(needed)})")
        if self.shape == "tube" and self.inner_diameter >= self.outer_diameter:
            raise FieldError(["inner_diameter"], f"must be < outer_diameter ({self.outer_diameter:g} m)")
        return self

    def dimensions(self) -> dict[str, float]:
        return {key: getattr(self, key) for key in SECTION_DIMENSIONS[self.shape]}


class Flexible(Section):
    """A body divided into ``segments`` beam elements along its ``length`` (x of its frame),
    its mass into ``segments + 1`` rigid segments (half-length ones at the ends)."""

    segments: Annotated[int, Field(ge=1)] = Field(description="number of Timoshenko beam elements, >= 1")
    length: PositiveLength = Field(description="length along the body's x axis (m)")
    material: Name = Field(description="material name (the `materials` table)")
    section: BeamSection = Field(description="cross-section (the `section` table)")
    shear_factor: PositiveNumber | None = Field(None, description="Timoshenko shear factor; default by shape (1.2 rectangle, 10/9 circle, 2 thin tube)")
    damping_ratio: DampingRatio = Field(0.0, description="modal damping ratio of the beam elements")

    @model_validator(mode="after")
    def _shear_factor_of_given_properties(self) -> "Flexible":
        if self.section.shape == "properties" and self.shear_factor is None:
            raise FieldError(["shear_factor"], "required with section shape 'properties' (no shape to take it "
                                               "from: 1.2 for a rectangle, 10/9 for a circle, 2 for a thin tube)")
        return self


class ForceLoad(Section):
    """Constant force (ground frame) at ``point`` (body frame)."""

    name: Name = Field(description="the load's name")
    body: Name = Field(description="the body it acts on")
    type: Literal["force"] = Field(description="load kind")
    point: Vector = Field((0.0, 0.0), description="point of application, body frame (m)")
    value: Annotated[tuple[Force, Force], SIUnit("N")] = Field(description="force, ground frame (N)")
    enabled: bool = Field(True, description="switch the load off without removing it")


class TorqueLoad(Section):
    """Constant torque on a body."""

    name: Name = Field(description="the load's name")
    body: Name = Field(description="the body it acts on")
    type: Literal["torque"] = Field(description="load kind")
    point: Vector = Field((0.0, 0.0), description="unused by a torque (m)")
    value: TorqueValue = Field(description="torque (N*m)")
    enabled: bool = Field(True, description="switch the load off without removing it")


Load = Annotated[Union[ForceLoad, TorqueLoad], Field(discriminator="type")]

# A joint point may sit this far (relative to the length) beyond a flexible body's ends.
END_TOLERANCE = 1e-9


def check_flexible_references(config) -> None:
    """Materials of flexible bodies exist; loads name bodies; joint and load points lie on
    the length of the flexible body that holds them."""
    bodies = {body.name: body for body in config.bodies}
    for body in config.bodies:
        if body.flexible is not None and body.flexible.material not in config.materials:
            raise FieldError(["bodies", body.name, "flexible", "material"],
                             f"unknown material {body.flexible.material!r}")
    for load in config.loads:
        if load.body not in bodies:
            raise FieldError(["loads", load.name, "body"], f"unknown body {load.body!r}")
        check_point_on_body(bodies[load.body], load.point, ["loads", load.name, "point"])
    for joint in config.joints:
        for name, point in zip(joint.bodies, joint.points):
            if name in bodies:
                check_point_on_body(bodies[name], point, ["joints", joint.name, "points"])


def check_point_on_body(body, point, key) -> None:
    """A point (body frame) of a flexible body lies on its length."""
    if body.flexible is None:
        return
    half = body.flexible.length / 2.0
    if abs(point[0]) > half * (1.0 + END_TOLERANCE):
        raise FieldError(key, f"x = {point[0]:g} m is outside the length of flexible body {body.name!r} "
                              f"(-{half:g} m to {half:g} m)")
