"""The kinematic tree of a planar or spatial mechanism: which joint places which body.

One breadth-first walk from the ground over the ideal joints (:func:`walk_tree`; planar:
revolute, prismatic, fixed; spatial: revolute, prismatic, cylindrical, spherical, fixed and
the axial hold of a cylindrical clearance joint) gives every body one parent joint; a body
no ideal joint reaches from the ground (held only by clearance joints) gets a free joint to
the ground (planar ``x, y, theta``; spatial position and unit quaternion), and the walk
goes on from it. An ideal joint whose two bodies the walk has already placed closes a loop:
it is cut, and its constraint rows are enforced on the tree's coordinates (the cut-joint
method; Jalón & Bayo 1994, ch. 3 and 5; Featherstone 2008, ch. 8, closed loops).
Clearance joints are force elements and take no part in the tree. A speed driver turns its
revolute joint's coordinate into a prescribed function of time. Everything here is static
(Python integers and strings); choosing a spatial loop's independent cut rows
(:func:`~.mechanism_tree.cut_rows`) evaluates the mechanism once, at its configured pose.
"""

from __future__ import annotations

from typing import NamedTuple

from ..mechanism import GROUND


class UnsupportedMechanism(ValueError):
    """The joint-coordinate engine does not apply to the mechanism (the reason says why)."""


class TreeJoint(NamedTuple):
    """The joint that places ``body`` relative to ``parent`` (a body index or ``GROUND``).

    ``kind``: an ideal joint's (``index`` into the mechanism's list of that kind: planar
    ``revolute_joints``, ``prismatic_joints``, ``fixed_joints``; spatial ``joints``),
    ``"axial"`` (spatial: a cylindrical clearance joint held axially, ``index`` into
    ``cylindrical_joints``) or ``"free"`` (``index`` -1). ``child_is_j``: whether ``body`` is
    the joint's ``body_j`` (an axial joint's journal body). ``coordinate``: the first entry
    of the joint's coordinates in the free coordinates ``z`` (None: none there);
    ``prescribed``: the entry of a driven revolute joint's angle in the prescribed
    coordinates ``p`` (None: not driven); ``rate``: the first entry of its velocities in
    ``zd`` (``coordinate`` in the plane; a spatial quaternion is four coordinates and three
    velocities).
    """

    body: int
    parent: int
    kind: str
    index: int
    child_is_j: bool
    coordinate: int | None
    prescribed: int | None
    rate: int | None = None


class Topology(NamedTuple):
    """The tree's joints in placing order (each parent before its children), the number
    of free coordinates, the speed drivers' indices in the order of ``p``, the cut
    joints ``(kind, index)`` that close the loops (their rows are the constraints of the
    tree's coordinates), the number of free velocities (``size`` in the plane) and, in
    space, the cut joints' independent rows (indices into the absolute engine's rows,
    :func:`model.mechanics.spatial.constraints.frame_jets` before any removal)."""

    joints: tuple[TreeJoint, ...]
    size: int
    speed_drivers: tuple[int, ...]
    cuts: tuple[tuple[str, int], ...] = ()
    rate_size: int = 0
    cut_rows: tuple[int, ...] = ()


# (coordinates, velocities) per joint kind: planar, and spatial (a quaternion is four
# coordinates and an angular velocity's three components)
PLANAR_SIZES = {"revolute": (1, 1), "prismatic": (1, 1), "fixed": (0, 0), "free": (3, 3)}
SPATIAL_SIZES = {"revolute": (1, 1), "prismatic": (1, 1), "cylindrical": (2, 2), "spherical": (4, 3),
                 "fixed": (0, 0), "axial": (6, 5), "free": (7, 6)}


def decoupled_joints(topology: Topology) -> tuple[TreeJoint, ...]:
    """The free joints whose body has no children: each moves its one body in the ground
    frame, its velocities the body's own."""
    parents = {joint.parent for joint in topology.joints}
    return tuple(joint for joint in topology.joints if joint.kind == "free" and joint.body not in parents)


def coupled_rates(topology: Topology, sizes: dict[str, tuple[int, int]]) -> tuple[int, ...]:
    """The velocities of every joint but :func:`decoupled_joints`, in order: the columns of
    ``J`` that depend on the state (``sizes``: :data:`PLANAR_SIZES` or :data:`SPATIAL_SIZES`)."""
    free = set(decoupled_joints(topology))
    return tuple(joint.rate + k for joint in topology.joints if joint.rate is not None and joint not in free
                 for k in range(sizes[joint.kind][1]))


def walk_tree(edges: list[tuple[str, int, int, int]], num_bodies: int, driven: dict[int, int],
              sizes: dict[str, tuple[int, int]]) -> Topology:
    """The tree of the joints ``edges`` (``(kind, index, body_i, body_j)``): a breadth-first
    walk from the ground, the joints that close loops cut, a ``"free"`` joint to the ground
    for a body the walk does not reach (and the walk on from it); ``driven`` maps a revolute
    joint's index to its speed driver, whose angle becomes prescribed; ``sizes`` gives each
    kind's numbers of coordinates and velocities."""
    placed, order, used, cuts = {GROUND}, [], set(), []
    frontier = [GROUND]
    while True:
        while frontier:
            parent = frontier.pop(0)
            for kind, index, body_i, body_j in edges:
                if (kind, index) in used or parent not in (body_i, body_j):
                    continue
                used.add((kind, index))
                child = body_j if body_i == parent else body_i
                if child in placed:
                    if kind == "revolute" and index in driven:
                        raise UnsupportedMechanism(f"its speed-driven revolute joint {index} closes a loop")
                    cuts.append((kind, index))
                    continue
                placed.add(child)
                order.append((child, parent, kind, index, child == body_j))
                frontier.append(child)
        loose = [body for body in range(num_bodies) if body not in placed]
        if not loose:
            break
        # a body no ideal joint reaches: a free joint to the ground, then its own subtree
        placed.add(loose[0])
        order.append((loose[0], GROUND, "free", -1, True))
        frontier.append(loose[0])
    joints, size, rate_size, speed_drivers = [], 0, 0, []
    for body, parent, kind, index, child_is_j in order:
        prescribed = coordinate = rate = None
        if kind == "revolute" and index in driven:
            prescribed = len(speed_drivers)
            speed_drivers.append(driven[index])
        elif sizes[kind][0]:
            coordinate, rate = size, rate_size
            size, rate_size = size + sizes[kind][0], rate_size + sizes[kind][1]
        joints.append(TreeJoint(body, parent, kind, index, child_is_j, coordinate, prescribed, rate))
    return Topology(tuple(joints), size, tuple(speed_drivers), tuple(cuts), rate_size)
