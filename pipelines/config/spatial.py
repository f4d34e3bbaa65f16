"""The spatial mechanism format (``dimension = 3``): validation to SI.

Bodies: ``mass``, ``inertia`` (three principal moments about the body axes, or a 3x3
tensor), ``position`` (3-vector), optional ``rotation = {axis, angle}``. Joints: ``revolute``,
``spherical``, ``cylindrical``, ``prismatic``, ``fixed`` with ``bodies``, ``points`` (body
frames) and ``axis`` (unit, ground frame: an axis within ``AXIS_TOLERANCE`` of norm 1,
as rounded input gives, is normalised; a zero or clearly non-unit one is refused); ``cylindrical_clearance`` (``length``, ``slices``,
``axial = fixed | free``, ``bearing_radius``, ``clearance``, ``materials``,
``initial_eccentricity``, ``[contact]`` with ``stiffness = "palmgren"`` allowed, ``[friction]``,
optional ``[lubrication]`` as in the planar format, ``length`` defaulting to the contact length)
and ``spherical_clearance`` (``socket_radius``, ``clearance``, ``materials``,
``initial_eccentricity`` 3-vector, ``stiffness = "hertz"`` allowed). ``[[loads]]``: ``name``,
``body``, ``type = force | torque``, ``point`` (force only), ``value``, ``enabled``.
``[[tracked_points]]`` (optional): ``name``, ``body``, ``point`` (body frame); ``simulate``
writes their ground-frame positions ``P.x P.y P.z`` and plots their paths against the ideal
twin (``pipelines/spatial_plots.py``).

As in the planar format, an unknown key in a joint, load, driver, tracked point or rotation
table is refused (a misspelt ``slice`` would otherwise leave ``slices`` at its default), and
so are a non-positive principal moment of inertia (or a tensor that is not symmetric positive
definite), an initial eccentricity outside the clearance, and a spherical clearance not
smaller than the socket radius.

Contact length rule: ``0 < length <= 2 m``, and no longer than a flexible body it sits on.
Rigid bodies carry no geometric extent in this format (mass, inertia and points only), so
the length cannot be checked against their size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
from pydantic import ValidationError

from ..errors import ConfigError
from ..units import si_unit, to_si
from .loading import load_toml
from pydantic import Field

from .mechanism import (VELOCITIES_DESCRIPTION, Contact, Friction, Initial, Lubrication, Material, Metrics, Simulation,
                        velocities_field)
from .fields import AngularVelocityVector3, FieldError, Section, VelocityVector3
from .references import check_initial, check_metrics
from .flexible import END_TOLERANCE, Flexible, check_flexible_references, check_point_on_body
from .paths import OVERRIDE_SOURCE, _apply_overrides, set_by_path
from .summary import _summarise_value

JOINT_ENGINE_IS_PLANAR = "the joint-coordinate engine takes planar mechanisms only (dimension = 2)"

SPATIAL_JOINT_TYPES = ("revolute", "spherical", "cylindrical", "prismatic", "fixed",
                       "cylindrical_clearance", "spherical_clearance")
PLANAR_ONLY_TYPES = ("revolute_clearance",)
MAX_CONTACT_LENGTH = 2.0  # m
AXIS_TOLERANCE = 1e-3  # |norm - 1| of an axis that is normalised rather than refused
AXIS_ZERO = 1e-9  # norm below which an axis has no direction
ROTATION_KEYS = ("axis", "angle")


class Entry(dict):
    """A validated body, joint, driver or load: a dict of SI values whose keys also read as
    attributes (``joint.name``), as the planar config's entries do."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


# Dimension of the plain SI values of the entries (for unit labels, as the planar config).
ENTRY_DIMENSIONS = {"mass": "mass", "clearance": "length", "bearing_radius": "length", "length": "length",
                    "socket_radius": "length", "speed": "angular_velocity", "torque": "torque"}


def _labelled(value: Any) -> Any:
    """SI values with unit labels on their keys (``"clearance [m]"``), as ``si_value`` returns."""
    if isinstance(value, dict) and not hasattr(value, "model_dump"):
        return {(f"{key} [{si_unit(ENTRY_DIMENSIONS[key])}]" if key in ENTRY_DIMENSIONS else key): _labelled(item)
                for key, item in value.items()}
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, Entry) for item in value):
        return {item["name"]: _labelled(item) for item in value}
    return _summarise_value(value)


@dataclass
class SpatialConfig:
    """A validated spatial mechanism, SI values; ``raw`` keeps the input for overrides."""

    name: str
    source: str
    raw: dict
    gravity: tuple
    materials: dict
    bodies: list = field(default_factory=list)
    joints: list = field(default_factory=list)
    drivers: list = field(default_factory=list)
    loads: list = field(default_factory=list)
    tracked_points: list = field(default_factory=list)
    initial: Any = None
    metrics: Any = None
    simulation: Any = None

    dimension = 3

    def si_summary(self) -> dict:
        """The validated values in SI, for ``clearance check``."""
        def plain(value):
            if hasattr(value, "model_dump"):
                return value.model_dump()
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value

        return {"name": self.name, "dimension": 3, "gravity": list(self.gravity), "bodies": plain(self.bodies),
                "joints": plain(self.joints), "drivers": plain(self.drivers), "loads": plain(self.loads),
                "tracked_points": plain(self.tracked_points),
                "initial": plain(self.initial), "metrics": plain(self.metrics), "simulation": plain(self.simulation)}

    @property
    def clearance_joints(self) -> list[Entry]:
        return [joint for joint in self.joints if joint["type"] in ("cylindrical_clearance", "spherical_clearance")]

    def _node(self, path: str) -> Any:
        """The validated SI node at a dotted path (a value, an entry or a section)."""
        node: Any = {"bodies": self.bodies, "joints": self.joints, "drivers": self.drivers, "loads": self.loads,
                     "initial": self.initial, "metrics": self.metrics, "simulation": self.simulation,
                     "gravity": self.gravity}
        for segment in path.split(".") if path else ():
            if isinstance(node, dict) and segment in node:
                node = node[segment]
            elif isinstance(node, list) and any(isinstance(item, Entry) and item["name"] == segment for item in node):
                node = next(item for item in node if item["name"] == segment)
            elif segment in getattr(type(node), "model_fields", {}):
                node = getattr(node, segment)
            else:
                raise ConfigError(self.source, path, f"no {segment!r} in the validated config")
        return node

    def si_value(self, path: str) -> Any:
        """The validated SI value at a dotted path (``"joints.pin.clearance"`` -> 0.0005);
        tables come back with unit-labelled keys, as the planar config's."""
        return _labelled(self._node(path))

    def unit_of_path(self, path: str) -> str:
        """The SI unit the value at a dotted path is stored in (``""``: dimensionless or a choice)."""
        parent_path, _, leaf = path.rpartition(".")
        parent = self._node(parent_path)
        if isinstance(parent, dict) and not hasattr(parent, "model_dump"):
            return si_unit(ENTRY_DIMENSIONS[leaf]) if leaf in ENTRY_DIMENSIONS else ""
        if leaf in getattr(type(parent), "model_fields", {}) and hasattr(parent, "unit_of"):
            return parent.unit_of(leaf)
        return ""

    def with_si_values(self, values: dict[str, Any], source: str | None = None) -> "SpatialConfig":
        """A new config with SI values (floats, or a choice's name) set at dotted paths and
        every check run again. The spatial format reads quantities with their unit, so each
        float is written with its SI unit (a factor of one: the value is unchanged)."""
        written = {}
        for path, value in values.items():
            unit = self.unit_of_path(path) if isinstance(value, float) else ""
            written[path] = f"{value!r} {unit}" if unit else value
        return self.with_values(written, source or self.source)

    def with_values(self, values: dict[str, Any], source: str = OVERRIDE_SOURCE) -> "SpatialConfig":
        """A new config with raw values (unit strings or numbers) set at dotted paths."""
        raw = self.raw
        for path, value in values.items():
            raw = set_by_path(raw, path, value, source)
        return spatial_from_dict(raw, self.source)

    def metric_units(self) -> dict[str, str]:
        """Every summary metric, in ``model.summary_metrics`` order, with its SI unit."""
        from model.metrics import JOINT_METRICS
        from model.metrics_spatial import SPATIAL_BODY_METRICS

        units = {f"{joint.name}.{metric}": si_unit(dimension) for joint in self.clearance_joints
                 for metric, dimension in JOINT_METRICS.items()}
        units.update({f"{body.name}.{metric}": si_unit(dimension) for body in self.bodies
                      for metric, dimension in SPATIAL_BODY_METRICS.items()})
        return units


class _Reader:
    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, message: str):
        raise ConfigError(self.source, key, message)

    def vector(self, value, dimension: str, key: str, size: int = 3) -> tuple:
        if not isinstance(value, list) or len(value) != size:
            self.fail(key, f"expected a {size}-vector (a list of {size} quantities), got {value!r}")
        return tuple(to_si(v, dimension, self.source, f"{key}[{i}]") for i, v in enumerate(value))

    def axis(self, value, key: str) -> tuple:
        """A unit vector: one within ``AXIS_TOLERANCE`` of norm 1 (rounded input) is normalised."""
        axis = self.vector(value, "dimensionless", key)
        norm = math.sqrt(sum(a * a for a in axis))
        if not norm > AXIS_ZERO:
            self.fail(key, f"must be a direction, got the zero vector {list(axis)!r}")
        if not abs(norm - 1.0) < AXIS_TOLERANCE:
            self.fail(key, f"must be a unit vector (norm within {AXIS_TOLERANCE:g} of 1), got norm {norm:g}")
        return tuple(a / norm for a in axis)

    def keys(self, raw: dict, allowed: tuple[str, ...], key: str, what: str) -> None:
        """Refuse the first key of ``raw`` not in ``allowed`` (a misspelt key would be ignored)."""
        for unknown in raw:
            if unknown not in allowed:
                self.fail(f"{key}.{unknown}" if key else unknown, f"unknown key; {what} has {', '.join(allowed)}")

    def section(self, cls, raw, key: str):
        try:
            return cls.model_validate(raw if raw is not None else {})
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"] if not str(part).startswith("("))  # union tags
            self.fail(f"{key}.{where}" if where else key, first["msg"])


@dataclass(frozen=True)
class Key:
    """One key of a spatial table, as the validator reads it and docs/config.md shows it."""

    name: str
    kind: str
    unit: str
    default: str
    meaning: str


_JOINT_KINDS = ", ".join(f"`{kind}`" for kind in SPATIAL_JOINT_TYPES)
_CLEARANCE_COMMON = (
    Key("clearance", "quantity", "m", "required", "radial clearance: socket (bearing) radius minus ball (journal) radius"),
    Key("materials", "[string, string]", "", "empty", "material names of [journal or ball body, bearing or socket body]; "
        'required for `stiffness = "hertz"`'),
    Key("contact", "table", "", "required", "normal contact law: the planar `joints.contact` table; `stiffness` may "
        'also be `"palmgren"` (line contact, cylindrical joints)'),
    Key("friction", "table", "", "no friction", "friction law: the planar `joints.friction` table"),
)
# Every key each table of the format accepts (the validator refuses any other).
SPATIAL_TABLES: dict[str, tuple[str, tuple[Key, ...]]] = {
    "top level": ("A spatial mechanism file.", (
        Key("dimension", "integer", "", "`2`", "`3` for this format"),
        Key("name", "string", "", '`"mechanism"`', "the mechanism's name"),
        Key("gravity", "[quantity, quantity, quantity]", "m/s^2", "zero", "gravitational acceleration, ground frame"),
        Key("materials", "tables by name", "", "empty", "`youngs_modulus` (Pa) and `poisson_ratio`, as planar"),
        Key("bodies", "array of tables", "", "empty", "rigid or flexible bodies"),
        Key("joints", "array of tables", "", "empty", "ideal and clearance joints"),
        Key("drivers", "array of tables", "", "empty", "drives on revolute joints"),
        Key("loads", "array of tables", "", "empty", "constant forces and torques on bodies"),
        Key("tracked_points", "array of tables", "", "empty", "body points whose paths `simulate` writes and plots"),
        Key("initial", "table", "", "(table defaults)", "as planar: `velocities = \"from_drivers\"` or `\"zero\"`"),
        Key("metrics", "table", "", "(table defaults)", "as planar: the metrics' window, `skip` (s) and `skip_revolutions`"),
        Key("simulation", "table", "", "required", "as planar: `t_end`, `output_interval`, solver and tolerances"),
    )),
    "`bodies`": ("A body; ``position`` is its centre of mass at t = 0 in the ground frame.", (
        Key("name", "string", "", "required", "the body's name"),
        Key("mass", "quantity", "kg", "required", "mass, > 0"),
        Key("inertia", "[3 quantities] or 3 x 3 quantities", "kg*m^2", "required",
            "principal moments about the body axes, or the full tensor in the body frame"),
        Key("position", "[quantity, quantity, quantity]", "m", "required", "centre of mass at t = 0, ground frame"),
        Key("rotation", "table `{axis, angle}`", "rad", "none", "orientation at t = 0: a unit axis (ground frame) and an angle"),
        Key("flexible", "table", "", "none", "beam elements along the body's x axis: the planar `bodies.flexible` table"),
    )),
    "`joints`, every type": (f"A joint between two bodies (or a body and `ground`); `type` is one of {_JOINT_KINDS}.", (
        Key("name", "string", "", "required", "the joint's name"),
        Key("type", "string", "", "required", f"one of {_JOINT_KINDS}"),
        Key("bodies", "[string, string]", "", "required", "the two bodies; for a clearance joint [journal or ball body, "
            "bearing or socket body]"),
        Key("points", "[[3 quantities], [3 quantities]]", "m", "both at the centres of mass",
            "the joint point in each body's frame"),
        Key("axis", "[number, number, number]", "", "required but for spherical joints",
            "unit joint axis at t = 0, ground frame (cylindrical clearance: the bearing axis)"),
    )),
    '`joints` with `type = "cylindrical_clearance"`': (
        "A journal in a bearing over a contact `length`, cut into `slices` discs, each with its own penetration, "
        "contact force and friction (docs/spatial.md).", (
            Key("bearing_radius", "quantity", "m", "required", "bearing radius; must exceed the clearance"),
            *_CLEARANCE_COMMON,
            Key("length", "quantity", "m", "required", "contact length along the axis, > 0 and <= 2 m"),
            Key("slices", "integer", "", "`10`", "number of slices along the contact length"),
            Key("axial", "one of `fixed`, `free`", "", '`"fixed"`', "whether the journal is held axially in the bearing"),
            Key("initial_eccentricity", "[quantity, quantity]", "m", "centred",
                "journal centre in the bearing's cross-section axes at t = 0"),
            Key("lubrication", "table", "", "none", "oil film, the planar `joints.lubrication` table "
                "(`length` defaults to the contact length)"),
        )),
    '`joints` with `type = "spherical_clearance"`': (
        'A ball in a spherical socket: one point contact, Hertz stiffness from the radii and materials with '
        '`stiffness = "hertz"` (Flores, Ambrosio, Claro & Lankarani 2006).', (
            Key("socket_radius", "quantity", "m", "required", "socket radius; the ball's is socket_radius - clearance"),
            *_CLEARANCE_COMMON,
            Key("initial_eccentricity", "[quantity, quantity, quantity]", "m", "centred",
                "ball centre relative to the socket's at t = 0, ground frame"),
        )),
    "`drivers`": ("A drive on an ideal revolute joint.", (
        Key("name", "string", "", "required", "the driver's name"),
        Key("joint", "string", "", "required", "the revolute joint it drives"),
        Key("type", "one of `constant_speed`, `constant_torque`", "", "required", "what it imposes"),
        Key("speed", "quantity", "rad/s", "required for constant_speed", "relative angular speed about the joint axis"),
        Key("torque", "quantity", "N*m", "required for constant_torque", "torque about the joint axis"),
    )),
    "`loads`": ("A constant force at a body point, or a torque, ground frame.", (
        Key("name", "string", "", "required", "the load's name"),
        Key("body", "string", "", "required", "the body it acts on"),
        Key("type", "one of `force`, `torque`", "", "required", "what it applies"),
        Key("point", "[quantity, quantity, quantity]", "m", "centre of mass", "point of a force, body frame"),
        Key("value", "[3 quantities]", "N or N*m", "required", "force or torque vector, ground frame"),
        Key("enabled", "boolean", "", "`true`", "switch the load off without removing it"),
    )),
    "`tracked_points`": ("A body point whose ground-frame path `simulate` writes (`P.x P.y P.z`) and plots.", (
        Key("name", "string", "", "required", "the point's name (its column prefix)"),
        Key("body", "string", "", "required", "the body it is fixed to"),
        Key("point", "[quantity, quantity, quantity]", "m", "required", "the point in the body's frame"),
    )),
}


def _keys(title: str) -> tuple[str, ...]:
    return tuple(key.name for key in SPATIAL_TABLES[title][1])


# The keys each table accepts: the documented tables above are the one definition.
BODY_KEYS = _keys("`bodies`")
JOINT_KEYS_BY_TYPE = {kind: _keys("`joints`, every type") for kind in SPATIAL_JOINT_TYPES}
JOINT_KEYS_BY_TYPE["cylindrical_clearance"] += _keys('`joints` with `type = "cylindrical_clearance"`')
JOINT_KEYS_BY_TYPE["spherical_clearance"] += _keys('`joints` with `type = "spherical_clearance"`')
LOAD_KEYS = _keys("`loads`")
DRIVER_KEYS = _keys("`drivers`")
TRACKED_POINT_KEYS = _keys("`tracked_points`")
ALL_JOINT_KEYS = tuple(dict.fromkeys(key for keys in JOINT_KEYS_BY_TYPE.values() for key in keys))


def _body(reader: _Reader, raw: dict, index: int) -> dict:
    name = raw.get("name") or reader.fail(f"bodies.{index}.name", "missing")
    key = f"bodies.{name}"
    for unknown in set(raw) - set(BODY_KEYS):
        reader.fail(f"{key}.{unknown}", f"unknown key; a body has {', '.join(BODY_KEYS)}")
    tensor = _inertia(reader, raw.get("inertia"), f"{key}.inertia")
    rotation = raw.get("rotation")
    if rotation is None:
        axis, angle = (0.0, 0.0, 1.0), 0.0
    else:
        if not isinstance(rotation, dict):
            reader.fail(f"{key}.rotation", f"expected a table {{axis, angle}}, got {rotation!r}")
        reader.keys(rotation, ROTATION_KEYS, f"{key}.rotation", "a rotation")
        axis = reader.axis(rotation.get("axis"), f"{key}.rotation.axis")
        angle = to_si(rotation.get("angle", 0.0), "angle", reader.source, f"{key}.rotation.angle")
    mass = to_si(raw.get("mass"), "mass", reader.source, f"{key}.mass")
    if not mass > 0:
        reader.fail(f"{key}.mass", "must be > 0")
    flexible = reader.section(Flexible, raw["flexible"], f"{key}.flexible") if "flexible" in raw else None
    return Entry(name=name, mass=mass, inertia=tensor, position=reader.vector(raw.get("position"), "length", f"{key}.position"),
                axis=axis, angle=angle, flexible=flexible)


def _inertia(reader: _Reader, inertia, key: str) -> list[list[float]]:
    """The inertia tensor about the centre of mass in body axes (kg m^2): three principal
    moments, each > 0, or a symmetric positive definite 3x3 tensor."""
    if isinstance(inertia, list) and len(inertia) == 3 and all(isinstance(row, list) for row in inertia):
        tensor = [list(reader.vector(row, "inertia", f"{key}[{i}]")) for i, row in enumerate(inertia)]
        if any(abs(tensor[i][j] - tensor[j][i]) > 1e-9 * max(abs(tensor[i][j]), abs(tensor[j][i]), 1e-300)
               for i in range(3) for j in range(i)):
            reader.fail(key, "must be a symmetric tensor")
        lowest = float(np.linalg.eigvalsh(np.asarray(tensor))[0])
        if not lowest > 0.0:
            reader.fail(key, f"must be positive definite, got a principal moment of {lowest:g} kg*m^2")
        return tensor
    principal = reader.vector(inertia, "inertia", key)
    for i, moment in enumerate(principal):
        if not moment > 0.0:
            reader.fail(f"{key}[{i}]", f"must be > 0, got {moment:g} kg*m^2")
    return [[principal[i] if i == j else 0.0 for j in range(3)] for i in range(3)]


def _check_flexible_bodies(reader: _Reader, bodies: list, joints: list, loads: list, tracked: list, materials: dict) -> None:
    """The planar format's checks (:func:`check_flexible_references`: a flexible body's
    material exists, joint and load points lie on its length), the same for tracked points,
    and a cylindrical clearance joint no longer than a flexible body it sits on."""
    by_name = {body["name"]: body for body in bodies}
    try:
        check_flexible_references(SimpleNamespace(bodies=bodies, joints=joints, loads=loads, materials=materials))
        for entry in tracked:
            check_point_on_body(by_name[entry["body"]], entry["point"], ["tracked_points", entry["name"], "point"])
    except FieldError as error:
        reader.fail(".".join(error.key), str(error))
    flexible = {body["name"]: body["flexible"] for body in bodies if body["flexible"] is not None}
    for joint in joints:
        if joint["type"] != "cylindrical_clearance":
            continue
        lengths = [flexible[body].length for body in joint["bodies"] if body in flexible]
        if lengths and joint["length"] > min(lengths) * (1.0 + END_TOLERANCE):
            reader.fail(f"joints.{joint['name']}.length", f"{joint['length']:g} m is longer than the flexible body it "
                                                          f"sits on ({min(lengths):g} m)")


def _contact(reader: _Reader, raw: dict, key: str) -> tuple[Any, str | None]:
    raw = dict(raw or {})
    marker = raw.get("stiffness") if raw.get("stiffness") in ("palmgren", "hertz") else None
    if marker:
        raw["stiffness"] = f"1 N/m^{float(raw.get('exponent', 1.5)):.12g}"
    return reader.section(Contact, raw, key), marker


def _joint(reader: _Reader, raw: dict, index: int, bodies: set, materials: dict) -> dict:
    name = raw.get("name") or reader.fail(f"joints.{index}.name", "missing")
    key = f"joints.{name}"
    kind = raw.get("type")
    if kind in PLANAR_ONLY_TYPES:
        reader.fail(f"{key}.type", f"{kind!r} is a planar joint; a dimension = 3 file uses cylindrical_clearance or spherical_clearance")
    if kind not in SPATIAL_JOINT_TYPES:
        reader.fail(f"{key}.type", f"unknown spatial joint type {kind!r}; choose from {', '.join(SPATIAL_JOINT_TYPES)}")
    pair = raw.get("bodies")
    if not isinstance(pair, list) or len(pair) != 2:
        reader.fail(f"{key}.bodies", "expected two body names")
    for body in pair:
        if body != "ground" and body not in bodies:
            reader.fail(f"{key}.bodies", f"no body named {body!r}")
    points = raw.get("points", [["0 m"] * 3, ["0 m"] * 3])
    if not isinstance(points, list) or len(points) != 2:
        reader.fail(f"{key}.points", "expected two points")
    joint = Entry(name=name, type=kind, bodies=tuple(pair),
                 points=[reader.vector(p, "length", f"{key}.points[{i}]") for i, p in enumerate(points)])
    if kind != "spherical" and kind != "spherical_clearance" or "axis" in raw:
        joint["axis"] = reader.axis(raw.get("axis"), f"{key}.axis")
    if "lubrication" in raw and kind != "cylindrical_clearance":
        reader.fail(f"{key}.lubrication", "only a cylindrical_clearance joint takes a lubrication table")
    # A key of another joint type is accepted (an override may change `type` and leave it).
    reader.keys(raw, ALL_JOINT_KEYS, key, "a joint")
    if kind in ("cylindrical_clearance", "spherical_clearance"):
        joint["contact"], joint["stiffness_marker"] = _contact(reader, raw.get("contact"), f"{key}.contact")
        joint["friction"] = reader.section(Friction, raw.get("friction"), f"{key}.friction")
        joint["clearance"] = to_si(raw.get("clearance"), "length", reader.source, f"{key}.clearance")
        if not joint["clearance"] > 0:
            reader.fail(f"{key}.clearance", "must be > 0")
        names = raw.get("materials", [])
        for i, material in enumerate(names):
            if material not in materials:
                reader.fail(f"{key}.materials[{i}]", f"no material named {material!r}")
        joint["materials"] = [materials[m] for m in names]
    if kind == "cylindrical_clearance":
        joint["bearing_radius"] = to_si(raw.get("bearing_radius"), "length", reader.source, f"{key}.bearing_radius")
        if not joint["bearing_radius"] > joint["clearance"]:
            reader.fail(f"{key}.bearing_radius", "must exceed the clearance")
        joint["length"] = to_si(raw.get("length"), "length", reader.source, f"{key}.length")
        if not 0.0 < joint["length"] <= MAX_CONTACT_LENGTH:
            reader.fail(f"{key}.length", f"must be > 0 and <= {MAX_CONTACT_LENGTH:g} m, got {joint['length']:g} m")
        slices = raw.get("slices", 10)
        if not isinstance(slices, int) or isinstance(slices, bool) or slices < 1:
            reader.fail(f"{key}.slices", f"must be an integer >= 1, got {slices!r}")
        joint["slices"] = slices
        joint["axial"] = raw.get("axial", "fixed")
        if joint["axial"] not in ("fixed", "free"):
            reader.fail(f"{key}.axial", f"must be 'fixed' or 'free', got {joint['axial']!r}")
        joint["initial_eccentricity"] = _initial_eccentricity(reader, raw, joint, key, size=2)
        joint["lubrication"] = _lubrication(reader, raw.get("lubrication"), joint["length"], f"{key}.lubrication")
    if kind == "spherical_clearance":
        joint["socket_radius"] = to_si(raw.get("socket_radius"), "length", reader.source, f"{key}.socket_radius")
        if joint["stiffness_marker"] == "hertz" and len(joint["materials"]) != 2:
            reader.fail(f"{key}.materials", 'required when contact.stiffness = "hertz" (give [ball, socket])')
        if not joint["clearance"] < joint["socket_radius"]:
            reader.fail(f"{key}.clearance", f"must be smaller than socket_radius ({joint['socket_radius']:g} m) so the "
                                            f"ball radius is positive, got {joint['clearance']:g} m")
        joint["initial_eccentricity"] = _initial_eccentricity(reader, raw, joint, key, size=3)
    return joint


def _initial_eccentricity(reader: _Reader, raw: dict, joint: dict, key: str, size: int) -> tuple:
    """The joint's ``initial_eccentricity`` (m, ``size`` components; centred by default),
    within the clearance as the planar format requires."""
    eccentricity = reader.vector(raw.get("initial_eccentricity", ["0 m"] * size), "length",
                                 f"{key}.initial_eccentricity", size=size)
    length = math.sqrt(sum(e * e for e in eccentricity))
    if length > joint["clearance"] * (1.0 + 1e-12):
        reader.fail(f"{key}.initial_eccentricity", f"|e0| = {length:g} m exceeds the clearance {joint['clearance']:g} m")
    return eccentricity


def _lubrication(reader: _Reader, raw, contact_length: float, key: str):
    """The planar ``[joints.lubrication]`` table; ``length`` defaults to the contact length."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        reader.fail(key, f"expected a table, got {raw!r}")
    return reader.section(Lubrication, {"length": f"{contact_length!r} m", **raw}, key)


def _load(reader: _Reader, raw: dict, index: int, bodies: set) -> dict:
    name = raw.get("name") or reader.fail(f"loads.{index}.name", "missing")
    key = f"loads.{name}"
    reader.keys(raw, LOAD_KEYS, key, "a load")
    if raw.get("body") not in bodies:
        reader.fail(f"{key}.body", f"no body named {raw.get('body')!r}")
    kind = raw.get("type")
    if kind not in ("force", "torque"):
        reader.fail(f"{key}.type", f"must be 'force' or 'torque', got {kind!r}")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        reader.fail(f"{key}.enabled", f"must be true or false, got {enabled!r}")
    point = reader.vector(raw.get("point", ["0 m"] * 3), "length", f"{key}.point") if kind == "force" else (0.0, 0.0, 0.0)
    value = reader.vector(raw.get("value"), "force" if kind == "force" else "torque", f"{key}.value")
    return Entry(name=name, body=raw["body"], type=kind, point=point, value=value, enabled=enabled)


def _tracked_point(reader: _Reader, raw: dict, index: int, bodies: set) -> dict:
    name = raw.get("name") or reader.fail(f"tracked_points.{index}.name", "missing")
    key = f"tracked_points.{name}"
    reader.keys(raw, TRACKED_POINT_KEYS, key, "a tracked point")
    if raw.get("body") not in bodies:
        reader.fail(f"{key}.body", f"no body named {raw.get('body')!r}")
    return dict(name=name, body=raw["body"], point=reader.vector(raw.get("point"), "length", f"{key}.point"))


def _driver(reader: _Reader, raw: dict, index: int, joints: dict) -> dict:
    name = raw.get("name") or reader.fail(f"drivers.{index}.name", "missing")
    key = f"drivers.{name}"
    reader.keys(raw, DRIVER_KEYS, key, "a driver")
    if joints.get(raw.get("joint")) != "revolute":
        reader.fail(f"{key}.joint", f"must name a revolute joint, got {raw.get('joint')!r}")
    kind = raw.get("type")
    if kind == "constant_speed":
        return Entry(name=name, joint=raw["joint"], type=kind,
                    speed=to_si(raw.get("speed"), "angular_velocity", reader.source, f"{key}.speed"), torque=0.0)
    if kind == "constant_torque":
        return Entry(name=name, joint=raw["joint"], type=kind, speed=0.0,
                    torque=to_si(raw.get("torque"), "torque", reader.source, f"{key}.torque"))
    reader.fail(f"{key}.type", f"must be constant_speed or constant_torque, got {kind!r}")


def spatial_from_dict(raw: dict, source: str) -> SpatialConfig:
    """Validate a raw ``dimension = 3`` mechanism."""
    reader = _Reader(source)
    reader.keys(raw, _keys("top level"), "", "a spatial mechanism file")
    materials = {name: reader.section(Material, value, f"materials.{name}") for name, value in raw.get("materials", {}).items()}
    bodies = [_body(reader, body, i) for i, body in enumerate(raw.get("bodies", []))]
    names = {b["name"] for b in bodies}
    joints = [_joint(reader, joint, i, names, materials) for i, joint in enumerate(raw.get("joints", []))]
    drivers = [_driver(reader, d, i, {j["name"]: j["type"] for j in joints}) for i, d in enumerate(raw.get("drivers", []))]
    loads = [_load(reader, load, i, names) for i, load in enumerate(raw.get("loads", []))]
    tracked = [_tracked_point(reader, p, i, names) for i, p in enumerate(raw.get("tracked_points", []))]
    _check_flexible_bodies(reader, bodies, joints, loads, tracked, materials)
    simulation = reader.section(Simulation, raw.get("simulation"), "simulation")
    if simulation.engine == "joint":
        raise ConfigError(source, "simulation.engine", JOINT_ENGINE_IS_PLANAR)
    return SpatialConfig(
        name=str(raw.get("name", "mechanism")), source=str(source), raw=raw,
        gravity=reader.vector(raw.get("gravity", ["0 m/s^2"] * 3), "acceleration", "gravity"), materials=materials,
        bodies=bodies, joints=joints, drivers=drivers, loads=loads, tracked_points=tracked,
        initial=_initial(reader, raw.get("initial"), bodies, joints),
        metrics=_metrics(reader, raw.get("metrics"), simulation, drivers),
        simulation=simulation)


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


def _initial(reader: _Reader, raw, bodies: list, joints: list) -> SpatialInitial:
    initial = reader.section(SpatialInitial, raw, "initial")
    try:
        check_initial(initial, [body["name"] for body in bodies],
                      [joint["name"] for joint in joints if joint.get("lubrication") is not None])
    except FieldError as error:
        reader.fail(".".join(error.key), str(error))
    return initial


def _metrics(reader: _Reader, raw, simulation: Simulation, drivers: list) -> Metrics:
    metrics = reader.section(Metrics, raw, "metrics")
    try:
        check_metrics(metrics, simulation.t_end, [d["speed"] for d in drivers if d["type"] == "constant_speed"])
    except FieldError as error:
        reader.fail(".".join(error.key), str(error))
    return metrics


def load_spatial(path, overrides=()) -> SpatialConfig:
    """Load a ``dimension = 3`` mechanism file with ``--set`` overrides."""
    raw, _ = _apply_overrides(load_toml(path), overrides)
    return spatial_from_dict(raw, str(path))


def is_spatial(raw: dict) -> bool:
    return raw.get("dimension", 2) == 3
