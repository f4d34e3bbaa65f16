"""The joint-coordinate engine's entry point: a mechanism description on the engine of its
dimension."""

from __future__ import annotations

from .mechanism import TreeMechanism
from .spatial_mechanism import SpatialTreeMechanism
from .mechanism_tree import tree_topology


def tree_mechanism(mechanism) -> TreeMechanism:
    """``mechanism`` (planar or spatial) on the joint-coordinate engine, a planar one's
    closed loops of ideal joints cut (:class:`~.spatial_mechanism.SpatialTreeMechanism` for a
    spatial one); :class:`~.topology.UnsupportedMechanism` where the engine does not apply
    (:func:`~.mechanism_tree.tree_topology`)."""
    engine = SpatialTreeMechanism if mechanism.dimension == 3 else TreeMechanism
    return engine(mechanism, tree_topology(mechanism))
