"""The kinematic tree of a mechanism description, planar or spatial: its ideal joints as
the edges of :func:`~.topology.walk_tree`, the speed drivers' joints, and for a spatial
tree the independent rows of its cut joints (which need its forward kinematics)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ..spatial.constraints import ROWS, constraint_jacobian
from ..spatial.redundancy import independent_rows
from .spatial_kinematics import joint_coordinates, tree_motion
from .topology import PLANAR_SIZES, SPATIAL_SIZES, Topology, UnsupportedMechanism, walk_tree


def tree_topology(mechanism) -> Topology:
    """The kinematic tree of ``mechanism`` (planar :class:`~model.mechanics.mechanism.Mechanism`,
    or spatial :class:`~model.mechanics.spatial.SpatialMechanism`, its ideal joints that
    close loops cut); :class:`UnsupportedMechanism` with the reason when a speed-driven
    joint would be cut, or, in space, for a speed driver on a joint other than a revolute
    one. Clearance joints (cylindrical, worn or not, and spherical) are force elements: a
    body held only by them gets a free joint. A spatial loop's cut rows may depend on the
    tree's joints (a planar loop of spatial revolute joints repeats out-of-plane rows): only
    the independent ones are kept (:func:`cut_rows`). A flexible body's segments, planar or
    spatial, are bodies: the one an ideal joint places hangs on it, the others get free
    joints (the beam elements are force elements)."""
    if mechanism.dimension == 3:
        edges = [(j.kind, k, j.body_i, j.body_j) for k, j in enumerate(mechanism.joints)] + _axial_edges(mechanism)
        topology = walk_tree(edges, mechanism.num_bodies, _driven(mechanism, edges), SPATIAL_SIZES)
        return topology._replace(cut_rows=cut_rows(mechanism, topology)) if topology.cuts else topology
    edges = ([("revolute", k, j.body_i, j.body_j) for k, j in enumerate(mechanism.revolute_joints)]
             + [("prismatic", k, j.body_i, j.body_j) for k, j in enumerate(mechanism.prismatic_joints)]
             + [("fixed", k, j.body_i, j.body_j) for k, j in enumerate(mechanism.fixed_joints)])
    return walk_tree(edges, mechanism.num_bodies, _driven(mechanism, edges), PLANAR_SIZES)


def _driven(mechanism, edges) -> dict[int, int]:
    """Revolute joint index -> the speed driver acting on it."""
    driven = {}
    kinds = {index: kind for kind, index, _, _ in edges if kind != "axial"} if mechanism.dimension == 3 else None
    for number, driver in enumerate(mechanism.drivers):
        if driver.kind == "constant_speed":
            if driver.joint in driven:
                raise UnsupportedMechanism("two speed drivers act on one joint")
            if kinds is not None and kinds[driver.joint] != "revolute":
                raise UnsupportedMechanism(f"a speed driver acts on a {kinds[driver.joint]} joint")
            driven[driver.joint] = number
    return driven


def _axial_edges(mechanism) -> list[tuple[str, int, int, int]]:
    """The cylindrical clearance joints held axially (``axial_fixed``) whose axial row the
    absolute description keeps: each holds its journal on the bearing's cross-section plane,
    an ideal constraint the tree must carry. A row dropped as implied by the other joints
    (``kept_rows``, e.g. a planar loop) is satisfied by the tree's other joints."""
    row = sum(ROWS[joint.kind] for joint in mechanism.joints) + sum(
        driver.kind == "constant_speed" for driver in mechanism.drivers)
    edges = []
    for index, joint in enumerate(mechanism.cylindrical_joints):
        if not joint.axial_fixed:
            continue
        if mechanism.kept_rows is None or row in mechanism.kept_rows:
            edges.append(("axial", index, joint.bearing_body, joint.journal_body))
        row += 1
    return edges


def _spatial_row_ranges(mechanism) -> dict[tuple[str, int], range]:
    """Each spatial joint's rows ``(kind, index)`` in the absolute engine's row order
    (joints, speed drivers, axial rows of the clearance joints held axially), before any
    removal."""
    ranges, row = {}, 0
    for index, joint in enumerate(mechanism.joints):
        ranges[(joint.kind, index)] = range(row, row + ROWS[joint.kind])
        row += ROWS[joint.kind]
    row += sum(driver.kind == "constant_speed" for driver in mechanism.drivers)
    for index, joint in enumerate(mechanism.cylindrical_joints):
        if joint.axial_fixed:
            ranges[("axial", index)] = range(row, row + 1)
            row += 1
    return ranges


def cut_rows(mechanism, topology: Topology) -> tuple[int, ...]:
    """The independent rows of a spatial tree's cut joints: with ``G = Phi_v J`` (the cut
    rows' Jacobian on the tree's velocities at the tree's pose of the configured positions),
    a row is kept iff it raises the rank of the rows kept so far, the greedy choice of
    :func:`model.mechanics.spatial.redundancy.independent_rows` (the absolute engine's),
    so that the Schur complement ``G H^-1 G^T`` is regular. The choice is exact at that pose
    and holds away from singular poses. It needs the parameters' values
    (:class:`UnsupportedMechanism` under a trace)."""
    ranges = _spatial_row_ranges(mechanism)
    rows = tuple(row for cut in topology.cuts for row in ranges[cut])
    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(mechanism)):
        raise UnsupportedMechanism("its cut joints' independent rows need the parameters' values, not a trace")
    cut = dataclasses.replace(mechanism, kept_rows=rows)
    z, p = joint_coordinates(mechanism, topology, jnp.asarray(mechanism.initial_positions))
    motion = tree_motion(mechanism, topology, z, jnp.zeros(topology.rate_size, z.dtype), p, jnp.zeros(p.shape, z.dtype))
    coupling = np.asarray(constraint_jacobian(cut, motion.x, 0.0) @ motion.jacobian)
    return tuple(rows[k] for k in independent_rows(coupling))
