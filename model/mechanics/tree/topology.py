"""The kinematic tree of a planar mechanism: which joint places which body.

A breadth-first walk from the ground over the ideal joints (revolute, prismatic, fixed)
gives every body one parent joint; a body no ideal joint reaches from the ground (held only
by clearance joints) gets a planar free joint to the ground, and the walk goes on from it.
An ideal joint whose two bodies the walk has already placed closes a loop: it is cut, and
its constraint rows are enforced on the tree's coordinates (the cut-joint method; Jalón &
Bayo 1994, ch. 3 and 5; Featherstone 2008, ch. 8, closed loops). Clearance joints are
force elements and take no part in the tree. A speed driver turns its revolute joint's
coordinate into a prescribed function of time. Everything here is static (Python integers
and strings).
"""

from __future__ import annotations

from typing import NamedTuple

from ..mechanism import GROUND, Mechanism


class UnsupportedMechanism(ValueError):
    """The joint-coordinate engine does not apply to the mechanism (the reason says why)."""


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
    of free coordinates, the speed drivers' indices in the order of ``p`` and the cut
    joints ``(kind, index)`` that close the loops (their rows are the constraints of the
    tree's coordinates)."""

    joints: tuple[TreeJoint, ...]
    size: int
    speed_drivers: tuple[int, ...]
    cuts: tuple[tuple[str, int], ...] = ()


_SIZES = {"revolute": 1, "prismatic": 1, "fixed": 0, "free": 3}


def diagonal_coordinates(topology: Topology) -> tuple[int, ...]:
    """The coordinates of the free joints whose body has no children (a flexible body's
    segments held by beam elements only, a rocker held by clearance joints only): each
    moves one absolute coordinate of one body and nothing else, so its row and column of
    ``H = J^T M J`` hold only the diagonal entry (the body's mass or inertia)."""
    parents = {joint.parent for joint in topology.joints}
    return tuple(joint.coordinate + k for joint in topology.joints
                 if joint.kind == "free" and joint.body not in parents for k in range(3))


def tree_topology(mechanism: Mechanism) -> Topology:
    """The kinematic tree of ``mechanism`` with the ideal joints that close loops cut;
    :class:`UnsupportedMechanism` with the reason when a speed-driven joint would be cut. A flexible body's segments are bodies: the one an
    ideal joint places hangs on it, the others get free joints (the beam elements are
    force elements)."""
    driven = {}
    for number, driver in enumerate(mechanism.drivers):
        if driver.kind == "constant_speed":
            if driver.joint in driven:
                raise UnsupportedMechanism("two speed drivers act on one joint")
            driven[driver.joint] = number
    edges = ([("revolute", k, j) for k, j in enumerate(mechanism.revolute_joints)]
             + [("prismatic", k, j) for k, j in enumerate(mechanism.prismatic_joints)]
             + [("fixed", k, j) for k, j in enumerate(mechanism.fixed_joints)])
    placed, order, used, cuts = {GROUND}, [], set(), []
    frontier = [GROUND]
    while True:
        while frontier:
            parent = frontier.pop(0)
            for kind, index, joint in edges:
                if (kind, index) in used or parent not in (joint.body_i, joint.body_j):
                    continue
                used.add((kind, index))
                child = joint.body_j if joint.body_i == parent else joint.body_i
                if child in placed:
                    if kind == "revolute" and index in driven:
                        raise UnsupportedMechanism(f"its speed-driven revolute joint {index} closes a loop")
                    cuts.append((kind, index))
                    continue
                placed.add(child)
                order.append((child, parent, kind, index, child == joint.body_j))
                frontier.append(child)
        loose = [body for body in range(mechanism.num_bodies) if body not in placed]
        if not loose:
            break
        # a body no ideal joint reaches: a free joint to the ground, then its own subtree
        placed.add(loose[0])
        order.append((loose[0], GROUND, "free", -1, True))
        frontier.append(loose[0])
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
    return Topology(tuple(joints), size, tuple(speed_drivers), tuple(cuts))
