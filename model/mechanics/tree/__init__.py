"""Joint-coordinate engine for planar and spatial mechanisms (docs/engine.md).

The state carries the coordinates of the joints of a kinematic tree rooted at the ground
(one angle per revolute joint, one slide per prismatic joint, a relative quaternion per
spherical joint, the body's own pose for a body held only by clearance joints or beam
elements) and their velocities; clearance joints and beam elements are force elements.
The ideal joints that close a mechanism's loops are cut: their (independent) constraint rows alone
are enforced (Schur complement, Baumgarte terms, projection); a tree without them has no
constraint rows and no drift.
"""

from .mechanism import TreeMechanism as TreeMechanism
from .engine import tree_mechanism as tree_mechanism
from .spatial_mechanism import SpatialTreeMechanism as SpatialTreeMechanism
from .topology import Topology as Topology
from .topology import TreeJoint as TreeJoint
from .topology import UnsupportedMechanism as UnsupportedMechanism
from .mechanism_tree import tree_topology as tree_topology
