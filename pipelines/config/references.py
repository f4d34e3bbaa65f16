"""Cross-references of a mechanism: names unique, joints and drivers naming what exists."""

from __future__ import annotations

import math

from .fields import FieldError

GROUND = "ground"


def check_references(config) -> None:
    """Raise :class:`FieldError` for the first broken reference of a mechanism config."""
    _check_no_ground_body(config)
    _check_unique_names(config)
    _check_joint_references(config)
    _check_driver_references(config)


def _check_no_ground_body(config) -> None:
    for body in config.bodies:
        if body.name == GROUND:
            raise FieldError(
                ["bodies", GROUND, "name"], f'"{GROUND}" is the fixed frame and cannot be declared as a body'
            )


def _check_unique_names(config) -> None:
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


def _check_joint_references(config) -> None:
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
        if getattr(joint, "materials", None) is not None:
            for material in joint.materials:
                if material not in config.materials:
                    known = ", ".join(map(repr, config.materials)) or "none declared"
                    raise FieldError(
                        ["joints", joint.name, "materials"], f"unknown material {material!r}; materials: {known}"
                    )


def _check_driver_references(config) -> None:
    joints = {joint.name: joint for joint in config.joints}
    driven: set[str] = set()
    for driver in config.drivers:
        joint = joints.get(driver.joint)
        if getattr(joint, "type", None) != "revolute":
            revolute = ", ".join(repr(j.name) for j in config.joints if j.type == "revolute") or "none"
            found = f"is a {joint.type} joint" if joint is not None else "names no joint"
            raise FieldError(
                ["drivers", driver.name, "joint"],
                f"{driver.joint!r} {found}; a driver needs a revolute joint ({revolute})",
            )
        if driver.joint in driven:
            raise FieldError(["drivers", driver.name, "joint"], f"joint {driver.joint!r} already has a driver")
        driven.add(driver.joint)



def check_initial(initial, body_names, lubricated_joints) -> None:
    """Refuse requested velocities of bodies that do not exist and a quasi-static start of
    lubricated joints (their film force depends on the motion, so the elastic seat is not
    their equilibrium)."""
    for name in initial.requested_velocities():
        if name not in body_names:
            raise FieldError(["initial", "velocities", name],
                             f"no body named {name!r}; bodies are {', '.join(map(repr, body_names))}")
    if initial.clearance == "static" and lubricated_joints:
        raise FieldError(["initial", "clearance"],
                         f'"static" seats dry clearance joints only; {lubricated_joints[0]!r} is lubricated '
                         '(its film force depends on the motion): use "configured"')


def check_metrics(metrics, t_end: float, driver_speeds: list[float]) -> None:
    """The metrics' window must start before ``t_end`` (s); ``skip_revolutions`` needs a
    constant-speed driver (``driver_speeds``: rad/s of each, in the config's order; the first
    one's turns are counted)."""
    start = metrics.skip
    if metrics.skip_revolutions > 0.0:
        if not driver_speeds or driver_speeds[0] == 0.0:
            raise FieldError(["metrics", "skip_revolutions"],
                             "counts turns of the first constant-speed driver, and the mechanism has none turning; "
                             'give the window as a time (`skip = "5 ms"`)')
        start += metrics.skip_revolutions * 2.0 * math.pi / abs(driver_speeds[0])
    if start >= t_end:
        key = "skip_revolutions" if metrics.skip_revolutions > 0.0 else "skip"
        raise FieldError(["metrics", key], f"the metrics would start at {start:g} s, not before the end of the run "
                         f"(simulation.t_end = {t_end:g} s)")
