"""The kinematic tree of a planar mechanism: which joint places which body.

A breadth-first walk from the ground over the ideal joints (revolute, prismatic, fixed)
gives every body one parent joint; a body no ideal joint reaches (held only by clearance
joints) gets a planar free joint to the ground. Clearance joints are force elements and
take no part in the tree. A speed driver turns its revolute joint's coordinate into a
prescribed function of time. Everything here is static (Python integers and strings).
"""

from __future__ import annotations

from typing import NamedTuple

from ..mechanism import GROUND, Mechanism


class UnsupportedMechanism(ValueError):
    """The mechanism is not a planar rigid tree after cutting its clearance joints."""


class TreeJoint(NamedTuple):
    """The joint that places ``body`` relative to ``parent`` (a body index or ``GROUND``).

    ``kind``: ``"revolute"``, ``"prismatic"``, ``"fixed"`` (``index`` into the mechanism's
    list of that kind) or ``"free"`` (``index`` -1). ``child_is_j``: whether ``body`` is the
    joint's ``body_j``. ``coordinate``: the first entry of the joint's coordinates in the
    free coordinates ``z`` (None: none there); ``prescribed``: the entry of a driven revolute
    joint's angle in the prescribed coordinates ``p`` (None: not driven).
    """

    body: int
    parent: int
    kind: str
    index: int
    child_is_j: bool
    coordinate: int | None
    prescribed: int | None


class Topology(NamedTuple):
    """The tree's joints in placing order (each parent before its children), the number
    of free coordinates and the speed drivers' indices in the order of ``p``."""

    joints: tuple[TreeJoint, ...]
    size: int
    speed_drivers: tuple[int, ...]


_SIZES = {"revolute": 1, "prismatic": 1, "fixed": 0, "free": 3}


def tree_topology(mechanism: Mechanism) -> Topology:
    """The kinematic tree of ``mechanism``; :class:`UnsupportedMechanism` with the reason
    when it has flexible bodies, a worn bushing or a closed loop of ideal joints."""
    if mechanism.beam_chains:
        raise UnsupportedMechanism("it has flexible bodies")
    if any(joint.wear is not None for joint in mechanism.clearance_joints):
        raise UnsupportedMechanism("a clearance joint has a worn bushing")
    driven = {}
    for number, driver in enumerate(mechanism.drivers):
        if driver.kind == "constant_speed":
            if driver.joint in driven:
                raise UnsupportedMechanism("two speed drivers act on one joint")
            driven[driver.joint] = number
    edges = ([("revolute", k, j) for k, j in enumerate(mechanism.revolute_joints)]
             + [("prismatic", k, j) for k, j in enumerate(mechanism.prismatic_joints)]
             + [("fixed", k, j) for k, j in enumerate(mechanism.fixed_joints)])
    placed, order, used = {GROUND}, [], set()
    frontier = [GROUND]
    while frontier:
        parent = frontier.pop(0)
        for kind, index, joint in edges:
            if (kind, index) in used or parent not in (joint.body_i, joint.body_j):
                continue
            child = joint.body_j if joint.body_i == parent else joint.body_i
            if child in placed:
                raise UnsupportedMechanism(f"its ideal joints close a loop (the {kind} joint {index})")
            used.add((kind, index))
            placed.add(child)
            order.append((child, parent, kind, index, child == joint.body_j))
            frontier.append(child)
    unused = [(kind, index) for kind, index, _ in edges if (kind, index) not in used]
    if unused:
        raise UnsupportedMechanism(f"its ideal joints close a loop (the {unused[0][0]} joint {unused[0][1]})")
    order += [(body, GROUND, "free", -1, True) for body in range(mechanism.num_bodies) if body not in placed]
    joints, size, speed_drivers = [], 0, []
    for body, parent, kind, index, child_is_j in order:
        prescribed = None
        if kind == "revolute" and index in driven:
            prescribed = len(speed_drivers)
            speed_drivers.append(driven[index])
            coordinate = None
        else:
            coordinate = size if _SIZES[kind] else None
            size += _SIZES[kind]
        joints.append(TreeJoint(body, parent, kind, index, child_is_j, coordinate, prescribed))
    return Topology(tuple(joints), size, tuple(speed_drivers))
